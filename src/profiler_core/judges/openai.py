"""The ``openai`` judge provider: any OpenAI-compatible ``POST {base_url}/chat/completions``.

Works with OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio, OpenRouter and
other servers speaking the chat-completions protocol. The API key is read from
the environment variable named by ``api_key_env`` at every call and is never
stored on the object, put in an error message or logged.
"""

from __future__ import annotations

import email.utils
import ipaddress
import logging
import math
import os
import random
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError, ProfilerError
from ..model import JudgeRequest, JudgeResponse, TokenBreakdown
from ..util.numbers import is_finite_number
from . import JudgeError

__all__ = ["DEFAULT_BASE_URL", "OpenAIJudge", "is_loopback_url", "parse_retry_after"]

log = logging.getLogger("agent_profiler.judge")

DEFAULT_BASE_URL = "https://api.openai.com/v1"

# The statuses OpenAI's own SDK retries: timeouts, conflicts, rate limits and server errors.
_RETRY_STATUSES = frozenset({408, 409, 429})
_EXCERPT_CHARS = 300


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` points at this machine (a local server may need no API key)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_retry_after(
    headers: Mapping[str, str], *, now: float | None = None
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP
    date); None if absent."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms) / 1000
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value)
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        value = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, value) if math.isfinite(value) else None


def _display_url(url: str) -> str:
    # Credentials in a URL (https://user:pass@host) must not reach messages.
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _scrub(text: str, secret: str | None) -> str:
    # A server may echo the request's headers in its error body.
    return text.replace(secret, "[REDACTED]") if secret else text


def _error_excerpt(response: Any) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    if (
        isinstance(data, dict)
        and isinstance(data.get("error"), dict)
        and data["error"].get("message")
    ):
        text = str(data["error"]["message"])
    else:
        text = response.text
    text = " ".join(text.split())
    return text[:_EXCERPT_CHARS] + ("..." if len(text) > _EXCERPT_CHARS else "")


class OpenAIJudge:
    """A judge model behind an OpenAI-compatible chat-completions endpoint."""

    id = "openai"

    def __init__(
        self,
        *,
        model: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0,
        seed: int | None = None,
        timeout_s: float = 60,
        max_retries: int = 3,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        max_tokens: int | None = None,
        json_mode: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        api_key: Any = None,
    ) -> None:
        where = "judge 'openai': options"
        if api_key is not None:
            # Accepted only to refuse it clearly; never echo the value.
            raise ConfigError(
                f"{where}.api_key: keys are never read from the profile; put "
                "the key in the environment "
                f"variable named by api_key_env (default OPENAI_API_KEY)"
            )
        if not isinstance(model, str) or not model:
            raise ConfigError(
                f"{where}.model: expected the judge model's name (judge.model "
                f"in the profile), got {model!r}"
            )
        _http_url(base_url, f"{where}.base_url")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ConfigError(
                f"{where}.api_key_env: expected the name of an environment "
                f"variable, got {api_key_env!r}"
            )
        _number(temperature, f"{where}.temperature", minimum=0)
        if seed is not None:
            _integer(seed, f"{where}.seed")
        _number(timeout_s, f"{where}.timeout_s", minimum=0, exclusive=True)
        _integer(max_retries, f"{where}.max_retries", minimum=0)
        _number(backoff_base_s, f"{where}.backoff_base_s", minimum=0)
        _number(backoff_max_s, f"{where}.backoff_max_s", minimum=0)
        if max_tokens is not None:
            _integer(max_tokens, f"{where}.max_tokens", minimum=1)
        if not isinstance(json_mode, bool):
            raise ConfigError(
                f"{where}.json_mode: expected true or false, got {json_mode!r}"
            )
        if extra_body is not None and not isinstance(extra_body, Mapping):
            raise ConfigError(
                f"{where}.extra_body: expected a mapping, got {type(extra_body).__name__}"
            )
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.seed = seed
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.backoff_base_s = float(backoff_base_s)
        self.backoff_max_s = float(backoff_max_s)
        self.max_tokens = max_tokens
        self.json_mode = json_mode
        self.extra_body = dict(extra_body or {})
        self._ssl_context: Any = None
        # Fail before the agent runs for hours only to have every judge call refused.
        self._api_key()

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={_display_url(self.base_url)!r})"

    @property
    def url(self) -> str:
        """The chat-completions endpoint."""
        return f"{self.base_url}/chat/completions"

    def _api_key(self) -> str | None:
        key = os.environ.get(self.api_key_env) or None
        if key is None and not is_loopback_url(self.base_url):
            raise ConfigError(
                f"judge 'openai': the environment variable {self.api_key_env} "
                "is not set; the API key is read "
                "from the environment (never from the profile); set it, or "
                "point base_url at a local server"
            )
        return key

    def request_body(self, request: JudgeRequest) -> dict[str, Any]:
        """The JSON body sent for one request."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system_prompt},
                {"role": "user", "content": request.user_prompt},
            ],
            "temperature": self.temperature,
        }
        if self.seed is not None:
            body["seed"] = self.seed
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
        body.update(self.extra_body)
        return body

    def _backoff(self, attempt: int) -> float:
        delay = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
        # Jitter so concurrent iterations rate-limited together do not retry in lockstep.
        return delay * random.uniform(0.5, 1.0)

    async def judge(self, request: JudgeRequest) -> JudgeResponse:
        """Send one request, retrying transport errors, 408/409/429 and 5xx; raise
        ``JudgeError`` when it fails."""
        # Imported when a judge is called: built-in plugin modules load on every CLI start.
        import httpx
        import trio

        key = self._api_key()
        headers = {"Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = self.request_body(request)
        shown = _display_url(self.url)
        attempts = 1 + self.max_retries
        if self._ssl_context is None:
            # Building the CA bundle costs ~40 ms; a client per call (no client outlives
            # a trio run) reuses it.
            self._ssl_context = httpx.create_ssl_context()
        async with httpx.AsyncClient(
            timeout=self.timeout_s, follow_redirects=False, verify=self._ssl_context
        ) as client:
            for attempt in range(1, attempts + 1):
                retry_after: float | None = None
                try:
                    # httpx's timeout is per read; this bounds the whole exchange
                    # (a trickling server).
                    with trio.fail_after(self.timeout_s):
                        response = await client.post(
                            self.url, json=body, headers=headers
                        )
                        await response.aread()
                except trio.TooSlowError:
                    problem = f"no complete answer within {self.timeout_s:g} s"
                except httpx.TransportError as exc:
                    problem = (
                        f"{type(exc).__name__}: "
                        f"{_scrub(str(exc), key) or 'connection failed'}"
                    )
                else:
                    if response.is_success:
                        return self._parse(response, key)
                    problem = (
                        f"HTTP {response.status_code}: "
                        f"{_scrub(_error_excerpt(response), key)}"
                    )
                    if (
                        response.status_code not in _RETRY_STATUSES
                        and response.status_code < 500
                    ):
                        hint = (
                            f" (check the key in ${self.api_key_env})"
                            if response.status_code in (401, 403)
                            else ""
                        )
                        raise JudgeError(
                            f"judge 'openai': POST {shown} failed: {problem}{hint}"
                        )
                    retry_after = parse_retry_after(response.headers)
                if attempt == attempts:
                    break
                delay = (
                    min(self.backoff_max_s, retry_after)
                    if retry_after is not None
                    else self._backoff(attempt)
                )
                log.info(
                    "judge 'openai': %s (attempt %d of %d); retrying in %.2f s",
                    problem,
                    attempt,
                    attempts,
                    delay,
                )
                await trio.sleep(delay)
        raise JudgeError(
            f"judge 'openai': POST {shown} failed after {attempts} attempt(s); "
            f"last error: {problem}"
        )

    def _parse(self, response: Any, key: str | None) -> JudgeResponse:
        shown = _display_url(self.url)
        try:
            data = response.json()
        except ValueError:
            excerpt = _scrub(" ".join(response.text.split())[:_EXCERPT_CHARS], key)
            raise JudgeError(
                f"judge 'openai': {shown} answered HTTP {response.status_code} "
                f"with a body that is not JSON: {excerpt!r}"
            ) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if (
            not isinstance(choices, list)
            or not choices
            or not isinstance(choices[0], dict)
        ):
            raise JudgeError(
                f"judge 'openai': {shown}: response has no choices[0] (expected "
                "a chat.completion object)"
            )
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            # Some servers return content parts; the judge only needs their text.
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not isinstance(content, str):
            # No text (a refusal, a tool call): the scorer treats it as unparseable and asks again.
            log.info(
                "judge 'openai': choices[0].message has no text content (finish_reason=%r)",
                choices[0].get("finish_reason"),
            )
            content = ""
        usage, cost = _usage(data.get("usage"))
        model = (
            data.get("model")
            if isinstance(data.get("model"), str) and data.get("model")
            else self.model
        )
        return JudgeResponse(
            text=content,
            token_count=usage.total if usage is not None else None,
            usage=usage,
            cost_usd=cost,
            model=model,
        )


def _usage(raw: Any) -> tuple[TokenBreakdown | None, float | None]:
    if not isinstance(raw, dict):
        return None, None
    from ..metrics.usage import (
        normalize_usage,
    )  # lazy: only needed once a judge answers

    try:
        usage = normalize_usage(
            raw, provider="openai", where="judge 'openai' response usage"
        )
    except ProfilerError as exc:
        # Some local servers report partial usage; the verdicts still count, the tokens are unknown.
        log.warning("%s", exc)
        usage = None
    cost = raw.get("cost")  # OpenRouter reports the price it charged
    if not is_finite_number(cost) or cost < 0:
        cost = None
    return usage, (float(cost) if cost is not None else None)


def _http_url(value: Any, where: str) -> None:
    """An http(s) URL with a host, or one line saying what was expected."""
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{where}: expected an http(s) URL such as {DEFAULT_BASE_URL!r}, got {value!r}"
        )


def _integer(value: Any, where: str, *, minimum: int | None = None) -> None:
    """An integer (not a bool), at least ``minimum`` when one is given."""
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and minimum is not None:
        ok = value >= minimum
    if not ok:
        bound = f" >= {minimum}" if minimum is not None else ""
        raise ConfigError(f"{where}: expected an integer{bound}, got {value!r}")


def _number(value: Any, where: str, *, minimum: float, exclusive: bool = False) -> None:
    ok = is_finite_number(value) and (
        value > minimum if exclusive else value >= minimum
    )
    if not ok:
        relation = ">" if exclusive else ">="
        raise ConfigError(
            f"{where}: expected a number {relation} {minimum:g}, got {value!r}"
        )
