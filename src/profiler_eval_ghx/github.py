"""GitHub access for the eval plugin: githubkit over HTTP, configured from the environment.

The base URL comes from ``GITHUB_API_URL`` (as ``gh`` does), so GitHub
Enterprise and the tests' stand-in server work unchanged. The token comes from
``GH_TOKEN`` / ``GITHUB_TOKEN`` and is only ever handed to githubkit: it is
never part of a message, a manifest or a log line. Rate limits are githubkit's
own retry decision (it reads ``Retry-After`` and ``x-ratelimit-reset``),
bounded here in count and in wait.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from profiler_core import ProfilerError
from profiler_core.util.redact import Redactor, redact_text

DEFAULT_API_URL = "https://api.github.com"
#: every request gives up after this many seconds (connect, read, write, pool)
DEFAULT_TIMEOUT_S = 30.0
#: a rate limit that resets later than this is an error, not a wait
DEFAULT_MAX_WAIT_S = 60.0
DEFAULT_MAX_RETRIES = 3


class GitHubError(ProfilerError):
    """A GitHub call failed; ``status`` is the HTTP status (``None`` when no response came)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def api_url(env: Mapping[str, str] | None = None) -> str:
    """The REST base URL: ``GITHUB_API_URL`` or https://api.github.com."""
    env = os.environ if env is None else env
    return (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")


def token_from_env(env: Mapping[str, str] | None = None) -> str | None:
    """The token of the main identity: ``GH_TOKEN``, else ``GITHUB_TOKEN`` (as ``gh``
    reads them)."""
    env = os.environ if env is None else env
    return env.get("GH_TOKEN") or env.get("GITHUB_TOKEN") or None


class _OneLineRetries(logging.Filter):
    """githubkit logs each retry with the failed request's traceback: keep one redacted
    line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Drop the traceback, add the reason, mask secrets."""
        reason = ""
        if record.exc_info and record.exc_info[1] is not None:
            reason = f": {describe(record.exc_info[1])[0]}; retrying"
        record.msg, record.args = (
            redact_text(f"GitHub: {record.getMessage()}{reason}"),
            (),
        )
        record.exc_info, record.exc_text = None, None
        return True


def quiet_githubkit_retries() -> None:
    """Make githubkit's retry warnings one line without a traceback or a token (once per
    process)."""
    logger = logging.getLogger("githubkit")
    if not any(isinstance(f, _OneLineRetries) for f in logger.filters):
        logger.addFilter(_OneLineRetries())


class BoundedRetry:
    """githubkit retry decision: rate limits and 5xx retried a few times, never waiting long.

    githubkit computes the wait from ``Retry-After`` (secondary limits) or
    ``x-ratelimit-reset`` (primary limits); a reset further away than
    ``max_wait_s`` fails at once instead of stalling a run for an hour.
    """

    def __init__(
        self,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_wait_s: float = DEFAULT_MAX_WAIT_S,
    ) -> None:
        from githubkit.retry import RetryChainDecision, RetryRateLimit, RetryServerError

        self.max_wait = timedelta(seconds=max_wait_s)
        self._decide = RetryChainDecision(
            RetryRateLimit(max_retries), RetryServerError(max_retries)
        )

    def __call__(self, exc, retry_count: int):
        from githubkit.typing import RetryOption

        option = self._decide(exc, retry_count)
        if not option.do_retry:
            return option
        if option.retry_after is not None and option.retry_after > self.max_wait:
            return RetryOption(False)
        # githubkit sleeps 60s when the wait is falsy, and `Retry-After: 0` gives timedelta(0).
        return RetryOption(
            True, max(option.retry_after or timedelta(), timedelta(seconds=0.5))
        )


def describe(exc: BaseException) -> tuple[str, int | None]:
    """A one-line reason and the HTTP status of a githubkit/httpx failure (no token, no headers)."""
    from githubkit.exception import (
        GraphQLFailed,
        RateLimitExceeded,
        RequestFailed,
        RequestTimeout,
    )

    if isinstance(exc, GitHubError):
        return str(exc), exc.status
    if isinstance(exc, RateLimitExceeded):
        wait = int(exc.retry_after.total_seconds())
        return (
            f"HTTP {exc.response.status_code} rate limited (resets in {wait}s)",
            exc.response.status_code,
        )
    if isinstance(exc, RequestFailed):
        status = exc.response.status_code
        try:
            message = exc.response.json().get("message", "")
        except Exception:  # noqa: BLE001 - a non-JSON error body still has a status
            message = ""
        return f"HTTP {status}" + (f" {message}" if message else ""), status
    if isinstance(exc, GraphQLFailed):
        messages = "; ".join(e.message for e in exc.response.errors or ())
        return f"GraphQL error: {messages}", None
    if isinstance(exc, RequestTimeout):
        return "request timed out", None
    inner = getattr(exc, "exc", None)
    return f"request failed: {type(inner or exc).__name__}: {inner or exc}", None


class GitHubClient:
    """REST and GraphQL calls through one githubkit ``GitHub`` (async, no HTTP cache)."""

    def __init__(
        self,
        auth: Any,
        *,
        base_url: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_wait_s: float = DEFAULT_MAX_WAIT_S,
    ) -> None:
        from githubkit import GitHub

        self.base_url = (base_url or api_url()).rstrip("/")
        # A server may echo the token back in an error message: every message is masked with it.
        self._redact = Redactor(extra_values=[auth] if isinstance(auth, str) else [])
        quiet_githubkit_retries()
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.max_wait_s = max_wait_s
        # No HTTP cache: checkpoints must see GitHub's state now, not a revalidated copy.
        self.gh = GitHub(
            auth,
            base_url=self.base_url + "/",
            timeout=timeout_s,
            http_cache=False,
            auto_retry=BoundedRetry(max_retries=max_retries, max_wait_s=max_wait_s),
            user_agent="agent-profiler-eval-ghx",
        )

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, **kwargs: Any
    ) -> GitHubClient:
        """A client with the token and base URL of the environment; no token is an error."""
        token = token_from_env(env)
        if not token:
            raise GitHubError("no GitHub token: set GH_TOKEN (or GITHUB_TOKEN)")
        return cls(token, base_url=api_url(env), **kwargs)

    def __repr__(self) -> str:  # never show the token
        return f"GitHubClient({self.base_url})"

    def with_auth(self, auth: Any) -> GitHubClient:
        """A client for the same API and limits acting as another identity."""
        return GitHubClient(
            auth,
            base_url=self.base_url,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            max_wait_s=self.max_wait_s,
        )

    async def rest(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
    ) -> Any:
        """One REST call; returns the decoded JSON (``None`` for 204) or raises ``GitHubError``."""
        try:
            response = await self.gh.arequest(
                method, path, json=json, params=dict(params or {})
            )
        except Exception as exc:  # noqa: BLE001 - every failure becomes one GitHubError line
            reason, status = describe(exc)
            raise GitHubError(
                self._redact(f"{method} {path}: {reason}"), status=status
            ) from None
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    async def paginate(
        self, path: str, *, params: Mapping[str, Any] | None = None, limit: int = 1000
    ) -> list[Any]:
        """Every item of a REST list endpoint (``per_page=100``, following pages up to
        ``limit``)."""
        items: list[Any] = []
        page = 1
        while len(items) < limit:
            batch = await self.rest(
                "GET", path, params={**(params or {}), "per_page": 100, "page": page}
            )
            items.extend(batch)
            if len(batch) < 100:
                break
            page += 1
        return items[:limit]

    async def graphql(
        self, query: str, variables: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """One GraphQL call; returns ``data`` or raises ``GitHubError`` with GraphQL's messages."""
        try:
            return await self.gh.async_graphql(query, dict(variables or {}))
        except Exception as exc:  # noqa: BLE001
            reason, status = describe(exc)
            raise GitHubError(
                self._redact(f"GraphQL {_operation(query)}: {reason}"), status=status
            ) from None

    async def as_app_installation(
        self, app_id: int | str, private_key: str, repo: str
    ) -> GitHubClient:
        """A client acting as a GitHub App's installation on ``repo`` (githubkit makes the JWT)."""
        import githubkit

        # Through Any: type-checking these two constructors makes pyright bind
        # githubkit's generated schema
        # types (about 1,600 files, 20% of every pyright run).
        # tests/test_eval_ghx_github.py calls them for real.
        kit: Any = githubkit
        owner, name = split_repo(repo)
        app = self.with_auth(kit.AppAuthStrategy(str(app_id), private_key))
        installation = await app.rest("GET", f"/repos/{owner}/{name}/installation")
        return self.with_auth(
            kit.AppInstallationAuthStrategy(
                str(app_id), private_key, int(installation["id"])
            )
        )


async def second_identity(
    client: GitHubClient, repo: str, env: Mapping[str, str] | None = None
) -> GitHubClient | None:
    """The reviewer identity for seeding review threads, from the environment; ``None``
    if not configured.

    ``GHX_EVAL_APP_ID`` with ``GHX_EVAL_APP_PRIVATE_KEY`` (PEM text) or
    ``GHX_EVAL_APP_PRIVATE_KEY_PATH`` selects a GitHub App installation;
    ``GHX_EVAL_REVIEWER_TOKEN`` a second user's token.
    """
    env = os.environ if env is None else env
    app_id = env.get("GHX_EVAL_APP_ID")
    if app_id:
        key = env.get("GHX_EVAL_APP_PRIVATE_KEY")
        if not key and env.get("GHX_EVAL_APP_PRIVATE_KEY_PATH"):
            key = (
                Path(env["GHX_EVAL_APP_PRIVATE_KEY_PATH"])
                .expanduser()
                .read_text(encoding="utf-8")
            )
        if not key:
            raise GitHubError(
                "GHX_EVAL_APP_ID is set but neither GHX_EVAL_APP_PRIVATE_KEY "
                "nor GHX_EVAL_APP_PRIVATE_KEY_PATH is"
            )
        return await client.as_app_installation(app_id, key, repo)
    if env.get("GHX_EVAL_REVIEWER_TOKEN"):
        return client.with_auth(env["GHX_EVAL_REVIEWER_TOKEN"])
    return None


def split_repo(repo: str) -> tuple[str, str]:
    """``owner/name`` -> (owner, name); anything else is a ``GitHubError``."""
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise GitHubError(f"expected a repository as owner/name, got {repo!r}")
    return owner, name


def _operation(query: str) -> str:
    words = query.split("(")[0].split("{")[0].split()
    return words[1] if len(words) > 1 else "query"
