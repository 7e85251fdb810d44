"""GitHub capabilities the checkpoints call (`issue.view`, `pr.reviews.list`, ...).

Interface shared by the checkpoint scorer and the GitHub client
(``CapabilityResult``, ``CapabilityExecutor``), the GitHub implementation
(``GitHubCapabilities``), one running an installed ``ghx`` (``GhxCliExecutor``)
and ``default_executor(options)`` choosing between them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import attrs


@attrs.frozen(kw_only=True)
class CapabilityResult:
    """The outcome of one capability call: ``data`` when ``ok``, else ``error`` says why."""

    ok: bool
    data: Any = None
    error: str | None = None


class CapabilityExecutor(Protocol):
    """Runs a capability task (e.g. ``issue.view``) with its input against GitHub."""

    async def run(self, task: str, input: dict[str, Any]) -> CapabilityResult: ...


# -- GitHub implementations ------------------------------------------------------
#
# Inputs follow ghx: ``owner``, ``name`` and ``issueNumber`` / ``prNumber``
# (``repo: "owner/name"`` and ``number`` are accepted too). Outputs are plain
# JSON so conditions can walk them: ``items.length``, ``items.0.comments``.

_ISSUE_VIEW = """query IssueView($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) { id number title state url body labels(first: 100) { nodes { name } } }
  }
}"""

_ISSUE_COMMENTS = """query IssueComments($owner: String!, $name: String!, $number: Int!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      comments(first: $first, after: $after) {
        nodes { id body author { login } createdAt url }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}"""

_ISSUE_PRS = """query IssueLinkedPullRequests($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    issue(number: $number) {
      closedByPullRequestsReferences(first: 50, includeClosedPrs: true) { nodes { number title state url } }
    }
  }
}"""

_PR_VIEW = """query PullRequestView($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      id number title state url body isDraft headRefName baseRefName headRefOid labels(first: 100) { nodes { name } }
    }
  }
}"""

PR_THREADS_QUERY = """query PullRequestReviewThreads($owner: String!, $name: String!, $number: Int!, $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: $first, after: $after) {
        nodes { id isResolved isOutdated path line comments(first: 50) { nodes { id body author { login } createdAt } } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}"""


def _target(input: Mapping[str, Any], number_key: str) -> tuple[str, str, int]:
    """(owner, name, number) from a capability input; a missing field is a ``ValueError``."""
    owner, name = input.get("owner"), input.get("name")
    if (not owner or not name) and isinstance(input.get("repo"), str):
        owner, _, name = input["repo"].partition("/")
    number = input.get(number_key, input.get("number"))
    if not owner or not name:
        raise ValueError("input needs `owner` and `name` (or `repo: owner/name`)")
    if isinstance(number, bool) or not isinstance(number, int):
        if isinstance(number, str) and number.isdigit():
            number = int(number)
        else:
            raise ValueError(
                f"input needs `{number_key}` as an integer, got {number!r}"
            )
    return str(owner), str(name), number


def _labels(node: Mapping[str, Any]) -> list[str]:
    return [label["name"] for label in (node.get("labels") or {}).get("nodes") or []]


def _login(node: Mapping[str, Any] | None) -> str | None:
    return (node or {}).get("login")


class GitHubCapabilities:
    """The capabilities the checkpoints use, answered by GitHub's GraphQL and REST APIs."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._tasks = {
            "issue.view": self.issue_view,
            "issue.comments.list": self.issue_comments_list,
            "issue.relations.prs.list": self.issue_prs_list,
            "pr.view": self.pr_view,
            "pr.reviews.list": self.pr_reviews_list,
            "pr.threads.list": self.pr_threads_list,
            "pr.commits.list": self.pr_commits_list,
            "repo.labels.list": self.repo_labels_list,
        }

    @property
    def tasks(self) -> tuple[str, ...]:
        """Every task this executor answers."""
        return tuple(self._tasks)

    async def run(self, task: str, input: dict[str, Any]) -> CapabilityResult:
        """Run ``task``; an unknown task, a bad input or a failed call is ``ok=False``
        with the reason."""
        from .github import GitHubError

        handler = self._tasks.get(task)
        if handler is None:
            return CapabilityResult(
                ok=False,
                error=f"unknown capability {task!r} (known: {', '.join(self._tasks)})",
            )
        try:
            return CapabilityResult(ok=True, data=await handler(input or {}))
        except (ValueError, GitHubError) as exc:
            return CapabilityResult(ok=False, error=f"{task}: {exc}")

    async def issue_view(self, input: Mapping[str, Any]) -> dict[str, Any]:
        """``{id, number, title, state, url, body, labels: [names]}``."""
        owner, name, number = _target(input, "issueNumber")
        data = await self.client.graphql(
            _ISSUE_VIEW, {"owner": owner, "name": name, "number": number}
        )
        issue = data["repository"]["issue"]
        return {
            **{k: issue[k] for k in ("id", "number", "title", "state", "url", "body")},
            "labels": _labels(issue),
        }

    async def issue_comments_list(self, input: Mapping[str, Any]) -> dict[str, Any]:
        """``{items: [{id, body, authorLogin, createdAt, url}], pageInfo}`` (``first``
        default 30)."""
        owner, name, number = _target(input, "issueNumber")
        variables = {
            "owner": owner,
            "name": name,
            "number": number,
            "first": int(input.get("first", 30)),
            "after": input.get("after"),
        }
        comments = (await self.client.graphql(_ISSUE_COMMENTS, variables))[
            "repository"
        ]["issue"]["comments"]
        items = [
            {
                "id": c["id"],
                "body": c["body"],
                "authorLogin": _login(c.get("author")),
                "createdAt": c["createdAt"],
                "url": c["url"],
            }
            for c in comments["nodes"]
        ]
        return {"items": items, "pageInfo": comments["pageInfo"]}

    async def issue_prs_list(self, input: Mapping[str, Any]) -> dict[str, Any]:
        """``{items: [{number, title, state, url}]}``: pull requests that close the issue."""
        owner, name, number = _target(input, "issueNumber")
        data = await self.client.graphql(
            _ISSUE_PRS, {"owner": owner, "name": name, "number": number}
        )
        return {
            "items": list(
                data["repository"]["issue"]["closedByPullRequestsReferences"]["nodes"]
            )
        }

    async def pr_view(self, input: Mapping[str, Any]) -> dict[str, Any]:
        """``{id, number, title, state, url, body, isDraft, headRefName, baseRefName,
        headRefOid, labels}``."""
        owner, name, number = _target(input, "prNumber")
        pr = (
            await self.client.graphql(
                _PR_VIEW, {"owner": owner, "name": name, "number": number}
            )
        )["repository"]["pullRequest"]
        return {**{k: v for k, v in pr.items() if k != "labels"}, "labels": _labels(pr)}

    async def pr_reviews_list(self, input: Mapping[str, Any]) -> dict[str, Any]:
        """``{items: [{id, authorLogin, state, body, submittedAt}]}`` (REST)."""
        owner, name, number = _target(input, "prNumber")
        reviews = await self.client.paginate(
            f"/repos/{owner}/{name}/pulls/{number}/reviews"
        )
        return {
            "items": [
                {
                    "id": r["id"],
                    "authorLogin": _login(r.get("user")),
                    "state": r["state"],
                    "body": r.get("body") or "",
                    "submittedAt": r.get("submitted_at"),
                }
                for r in reviews
            ]
        }

    async def pr_threads_list(self, input: Mapping[str, Any]) -> dict[str, Any]:
        """``{items: [{id, isResolved, isOutdated, path, line, comments: [...]}],
        pageInfo, filterApplied}``.

        ``unresolvedOnly`` (default true) keeps the threads still open, as ghx does.
        """
        owner, name, number = _target(input, "prNumber")
        unresolved_only = input.get("unresolvedOnly", True) is not False
        variables = {
            "owner": owner,
            "name": name,
            "number": number,
            "first": int(input.get("first", 50)),
            "after": input.get("after"),
        }
        threads = (await self.client.graphql(PR_THREADS_QUERY, variables))[
            "repository"
        ]["pullRequest"]["reviewThreads"]
        items = [
            {
                "id": t["id"],
                "isResolved": t["isResolved"],
                "isOutdated": t.get("isOutdated", False),
                "path": t.get("path"),
                "line": t.get("line"),
                "comments": [
                    {
                        "id": c["id"],
                        "body": c["body"],
                        "authorLogin": _login(c.get("author")),
                        "createdAt": c["createdAt"],
                    }
                    for c in t["comments"]["nodes"]
                ],
            }
            for t in threads["nodes"]
            if not (unresolved_only and t["isResolved"])
        ]
        return {
            "items": items,
            "pageInfo": threads["pageInfo"],
            "filterApplied": {"unresolvedOnly": unresolved_only},
        }

    async def pr_commits_list(self, input: Mapping[str, Any]) -> dict[str, Any]:
        """``{items: [{sha, message}]}``, oldest first (REST)."""
        owner, name, number = _target(input, "prNumber")
        commits = await self.client.paginate(
            f"/repos/{owner}/{name}/pulls/{number}/commits"
        )
        return {
            "items": [
                {"sha": c["sha"], "message": c["commit"]["message"]} for c in commits
            ]
        }

    async def repo_labels_list(self, input: Mapping[str, Any]) -> dict[str, Any]:
        """``{items: [{name, color, description}]}`` (REST)."""
        owner, name = input.get("owner"), input.get("name")
        if (not owner or not name) and isinstance(input.get("repo"), str):
            owner, _, name = input["repo"].partition("/")
        if not owner or not name:
            raise ValueError("input needs `owner` and `name` (or `repo: owner/name`)")
        labels = await self.client.paginate(f"/repos/{owner}/{name}/labels")
        return {
            "items": [
                {
                    "name": lab["name"],
                    "color": lab.get("color"),
                    "description": lab.get("description") or "",
                }
                for lab in labels
            ]
        }


class GhxCliExecutor:
    """Runs capabilities through an installed ``ghx`` (``ghx run TASK --input -``) for
    ghx's exact results."""

    def __init__(
        self,
        binary: str = "ghx",
        *,
        timeout_s: float = 60.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.binary = binary
        self.timeout_s = timeout_s
        self.env = dict(env) if env is not None else None

    async def run(self, task: str, input: dict[str, Any]) -> CapabilityResult:
        """Run ghx and read its result envelope ``{ok, data, error}`` from stdout."""
        import json
        import subprocess

        import trio

        from profiler_core.util.processes import end_process_group, track_group

        try:
            process = await trio.lowlevel.open_process(
                [self.binary, "run", task, "--input", "-"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                start_new_session=True,
            )
        except OSError as exc:
            return CapabilityResult(
                ok=False,
                error=f"{task}: cannot start {self.binary}: {exc.strerror or exc}",
            )
        track_group(process.pid)
        stdout, stderr = bytearray(), bytearray()
        try:
            with trio.fail_after(self.timeout_s):
                async with trio.open_nursery() as nursery:

                    async def pump(stream, sink):
                        async for chunk in stream:
                            sink.extend(chunk)

                    nursery.start_soon(pump, process.stdout, stdout)
                    nursery.start_soon(pump, process.stderr, stderr)
                    stdin = process.stdin
                    assert stdin is not None  # opened with PIPE
                    try:
                        await stdin.send_all(json.dumps(input).encode())
                    except trio.BrokenResourceError:
                        pass  # ghx ended without reading all its input: what it printed says why
                    await stdin.aclose()
                await process.wait()
        except trio.TooSlowError:
            return CapabilityResult(
                ok=False, error=f"{task}: ghx did not answer within {self.timeout_s:g}s"
            )
        finally:
            await end_process_group(
                process, grace_s=5.0
            )  # by its PID, with anything it started
        try:
            envelope = json.loads(stdout.decode() or "null")
        except (json.JSONDecodeError, UnicodeDecodeError):
            envelope = None
        if not isinstance(envelope, dict) or "ok" not in envelope:
            tail = stderr.decode(errors="replace").strip().splitlines()[-1:] or [
                f"exit status {process.returncode}"
            ]
            return CapabilityResult(
                ok=False, error=f"{task}: ghx gave no result envelope ({tail[0]})"
            )
        error = envelope.get("error")
        if isinstance(error, dict):
            error = error.get("message") or str(error)
        return CapabilityResult(
            ok=bool(envelope["ok"]), data=envelope.get("data"), error=error
        )


def default_executor(options: Mapping[str, Any]) -> CapabilityExecutor:
    """The executor a scorer uses: ``options["executor"]`` is ``"github"`` (default) or ``"ghx"``.

    ``ghx_bin`` names the ghx binary; ``api_url`` overrides ``GITHUB_API_URL``.
    The token always comes from the environment (``GH_TOKEN`` / ``GITHUB_TOKEN``).
    """
    kind = options.get("executor", "github")
    if kind == "ghx":
        return GhxCliExecutor(str(options.get("ghx_bin", "ghx")))
    if kind != "github":
        raise ValueError(f"executor: expected 'github' or 'ghx', got {kind!r}")
    from .github import GitHubClient, api_url, token_from_env

    token = token_from_env()
    if not token:
        return _Unavailable("no GitHub token: set GH_TOKEN (or GITHUB_TOKEN)")
    return GitHubCapabilities(
        GitHubClient(token, base_url=options.get("api_url") or api_url())
    )


class _Unavailable:
    """An executor that fails every call with one reason (e.g. no token)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def run(self, task: str, input: dict[str, Any]) -> CapabilityResult:
        return CapabilityResult(ok=False, error=f"{task}: {self.reason}")
