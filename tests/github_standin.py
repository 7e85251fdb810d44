"""A stateful GitHub API stand-in for tests: REST and GraphQL on 127.0.0.1.

It speaks the subset the eval plugin uses (issues, labels, pull requests, refs,
commits, review comments and threads, GitHub App installation tokens) with
GitHub's status codes, answers anything else with 404, and logs every request.
The code under test reaches it through githubkit over real HTTP; nothing is
patched. GraphQL operations are recognised by their operation name.

Run it by hand with ``python tests/github_standin.py`` (prints its URL and token).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, unquote, urlsplit

MAIN_TOKEN = "ghp_standin_main_token"
REVIEWER_TOKEN = "ghp_standin_reviewer_token"


class Fail(Exception):
    """An HTTP error answer: status, message and extra headers."""

    def __init__(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Repo:
    """One repository's state."""

    def __init__(self, full_name: str, base_url: str) -> None:
        self.full_name = full_name
        self.base_url = base_url
        self.labels: dict[str, dict[str, Any]] = {}
        self.issues: dict[
            int, dict[str, Any]
        ] = {}  # issues and pull requests share numbers
        self.pulls: dict[int, dict[str, Any]] = {}
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.reviews: dict[int, list[dict[str, Any]]] = {}
        self.threads: dict[int, list[dict[str, Any]]] = {}
        self.refs: dict[str, str] = {}
        self.commits: dict[str, dict[str, Any]] = {}
        self.files: dict[str, dict[str, str]] = {}  # commit sha -> {path: content}
        self.next_number = 1
        root = self.add_commit("Initial commit", None, {"README.md": "# stand-in\n"})
        self.refs["main"] = root

    def add_commit(
        self, message: str, parent: str | None, files: dict[str, str]
    ) -> str:
        sha = hashlib.sha1(
            f"{message}{parent}{len(self.commits)}{json.dumps(files, sort_keys=True)}".encode()
        ).hexdigest()
        self.commits[sha] = {
            "sha": sha,
            "message": message,
            "parents": [parent] if parent else [],
        }
        self.files[sha] = files
        return sha

    def ancestors(self, sha: str) -> list[str]:
        out = []
        while sha:
            out.append(sha)
            parents = self.commits[sha]["parents"]
            sha = parents[0] if parents else ""
        return out


class GitHubStandIn:
    """The server and its state; use as a context manager (``with GitHubStandIn() as gh:``)."""

    def __init__(
        self,
        repos: tuple[str, ...] = ("octo/eval-sandbox",),
        *,
        app_public_key: str | None = None,
        app_id: int = 4242,
    ) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.standin = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.lock = threading.RLock()
        self.log: list[tuple[str, str, int, str]] = []  # method, path, status, identity
        self.tokens = {MAIN_TOKEN: "eval-bot", REVIEWER_TOKEN: "reviewer"}
        self.app_id = app_id
        self.app_public_key = app_public_key
        self.installation_id = 77
        self.faults: list[dict[str, Any]] = []
        self.ids = itertools.count(1000)
        self.repos = {name: Repo(name, self.url) for name in repos}
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------
    def __enter__(self) -> Self:
        self._thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.05},
            daemon=True,
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- test controls -----------------------------------------------------------
    def fail_next(
        self,
        method: str,
        path_pattern: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        message: str = "injected failure",
    ) -> None:
        """Answer the next ``times`` matching requests with ``status`` (e.g. a 403 with
        Retry-After)."""
        with self.lock:
            self.faults.append(
                {
                    "method": method,
                    "re": re.compile(path_pattern),
                    "status": status,
                    "times": times,
                    "headers": headers or {},
                    "message": message,
                }
            )

    def requests(
        self, method: str | None = None, contains: str = ""
    ) -> list[tuple[str, str, int, str]]:
        """Logged requests, filtered by method and a path fragment."""
        with self.lock:
            return [
                r
                for r in self.log
                if (method is None or r[0] == method) and contains in r[1]
            ]

    def repo(self, name: str = "octo/eval-sandbox") -> Repo:
        """The state of one repository."""
        return self.repos[name]

    # -- dispatch ----------------------------------------------------------------
    def handle(
        self, method: str, raw_path: str, headers: Any, body: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        split = urlsplit(raw_path)
        path = split.path
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        with self.lock:
            for fault in self.faults:
                if (
                    fault["times"] > 0
                    and fault["method"] == method
                    and fault["re"].search(path)
                ):
                    fault["times"] -= 1
                    self.log.append((method, path, fault["status"], "-"))
                    return (
                        fault["status"],
                        {"message": fault["message"]},
                        dict(fault["headers"]),
                    )
            identity = "-"
            try:
                identity = self._authenticate(path, headers.get("Authorization", ""))
                data = json.loads(body) if body else None
                status, payload = self._route(method, path, query, data, identity)
            except Fail as fail:
                self.log.append((method, path, fail.status, identity))
                return fail.status, {"message": fail.message}, fail.headers
            self.log.append((method, path, status, identity))
            return status, payload, {}

    def _authenticate(self, path: str, header: str) -> str:
        scheme, _, credential = header.partition(" ")
        if scheme.lower() == "bearer" and credential.count(".") == 2:
            return self._check_jwt(credential, path)
        if scheme.lower() in ("token", "bearer") and credential in self.tokens:
            return self.tokens[credential]
        raise Fail(401, "Bad credentials")

    def _check_jwt(self, token: str, path: str) -> str:
        import jwt

        if self.app_public_key is None:
            raise Fail(401, "no GitHub App configured")
        try:
            claims = jwt.decode(token, self.app_public_key, algorithms=["RS256"])
        except jwt.PyJWTError as exc:
            raise Fail(401, f"A JSON web token could not be decoded: {exc}") from None
        if str(claims.get("iss")) != str(self.app_id):
            raise Fail(401, "JWT issuer is not this app")
        if not (path.startswith("/app/") or path.endswith("/installation")):
            raise Fail(403, "a JWT can only call app endpoints")
        return f"app:{self.app_id}"

    def _repo(self, owner: str, name: str) -> Repo:
        repo = self.repos.get(f"{owner}/{name}")
        if repo is None:
            raise Fail(404, "Not Found")
        return repo

    def _route(
        self, method: str, path: str, query: dict[str, str], data: Any, who: str
    ) -> tuple[int, Any]:
        if method == "POST" and path == "/graphql":
            return 200, self._graphql(data or {}, who)
        m = re.fullmatch(r"/app/installations/(\d+)/access_tokens", path)
        if m and method == "POST":
            if int(m.group(1)) != self.installation_id:
                raise Fail(404, "Not Found")
            token = f"ghs_installation_{next(self.ids)}"
            self.tokens[token] = "eval-app[bot]"
            expires = (datetime.now(UTC) + timedelta(hours=1)).strftime(
                "%Y-%m-%dT%H:%M:%SZ"
            )
            return 201, {
                "token": token,
                "expires_at": expires,
                "permissions": {"issues": "write", "pull_requests": "write"},
            }
        m = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", path)
        if not m:
            raise Fail(404, "Not Found")
        repo = self._repo(m.group(1), m.group(2))
        rest = m.group(3) or ""
        if who.startswith("app:") and rest != "/installation":
            raise Fail(403, "a JWT can only call app endpoints")
        for pattern, verb, handler in _ROUTES:
            found = re.fullmatch(pattern, rest)
            if found and verb == method:
                return handler(
                    self,
                    repo,
                    *[unquote(g) for g in found.groups()],
                    query=query,
                    data=data or {},
                    who=who,
                )
        raise Fail(404, "Not Found")

    # -- REST handlers -------------------------------------------------------------
    def get_repo(self, repo: Repo, **_: Any) -> tuple[int, Any]:
        return 200, {
            "full_name": repo.full_name,
            "default_branch": "main",
            "private": False,
        }

    def get_installation(self, repo: Repo, **_: Any) -> tuple[int, Any]:
        return 200, {"id": self.installation_id, "app_id": self.app_id}

    def list_labels(self, repo: Repo, **_: Any) -> tuple[int, Any]:
        return 200, list(repo.labels.values())

    def get_label(self, repo: Repo, name: str, **_: Any) -> tuple[int, Any]:
        if name not in repo.labels:
            raise Fail(404, "Not Found")
        return 200, repo.labels[name]

    def create_label(self, repo: Repo, data: dict, **_: Any) -> tuple[int, Any]:
        name = data.get("name")
        if not name:
            raise Fail(422, "Validation Failed: name missing")
        if name in repo.labels:
            raise Fail(422, "Validation Failed: already_exists")
        repo.labels[name] = {
            "id": next(self.ids),
            "name": name,
            "color": data.get("color", "ededed"),
            "description": data.get("description", ""),
        }
        return 201, repo.labels[name]

    def _issue_json(self, repo: Repo, issue: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in issue.items() if not k.startswith("_")}
        out["labels"] = [repo.labels.get(n, {"name": n}) for n in issue["_labels"]]
        out["html_url"] = (
            f"https://github.example/{repo.full_name}/{'pull' if issue['number'] in repo.pulls else 'issues'}/{issue['number']}"
        )
        if issue["number"] in repo.pulls:
            out["pull_request"] = {
                "url": f"{self.url}/repos/{repo.full_name}/pulls/{issue['number']}"
            }
        return out

    def _ensure_labels(self, repo: Repo, names: list[str]) -> list[str]:
        for name in names:
            # GitHub creates unknown labels on the fly when an issue names them.
            repo.labels.setdefault(
                name,
                {
                    "id": next(self.ids),
                    "name": name,
                    "color": "ededed",
                    "description": "",
                },
            )
        return list(dict.fromkeys(names))

    def _new_issue(self, repo: Repo, data: dict, who: str) -> dict[str, Any]:
        if not data.get("title"):
            raise Fail(422, "Validation Failed: title missing")
        number = repo.next_number
        repo.next_number += 1
        issue = {
            "id": next(self.ids),
            "node_id": f"I_{repo.full_name}_{number}",
            "number": number,
            "title": data["title"],
            "body": data.get("body") or "",
            "state": "open",
            "user": {"login": who},
            "created_at": _now(),
            "_labels": self._ensure_labels(repo, list(data.get("labels") or [])),
        }
        repo.issues[number] = issue
        repo.comments[number] = []
        return issue

    def create_issue(
        self, repo: Repo, data: dict, who: str, **_: Any
    ) -> tuple[int, Any]:
        return 201, self._issue_json(repo, self._new_issue(repo, data, who))

    def list_issues(self, repo: Repo, query: dict, **_: Any) -> tuple[int, Any]:
        state = query.get("state", "open")
        wanted = [n for n in query.get("labels", "").split(",") if n]
        items = [
            self._issue_json(repo, i)
            for i in sorted(repo.issues.values(), key=lambda i: -i["number"])
            if (state == "all" or i["state"] == state)
            and all(n in i["_labels"] for n in wanted)
        ]
        page, per_page = int(query.get("page", 1)), int(query.get("per_page", 30))
        return 200, items[(page - 1) * per_page : page * per_page]

    def _issue(self, repo: Repo, number: str) -> dict[str, Any]:
        issue = repo.issues.get(int(number))
        if issue is None:
            raise Fail(404, "Not Found")
        return issue

    def get_issue(self, repo: Repo, number: str, **_: Any) -> tuple[int, Any]:
        return 200, self._issue_json(repo, self._issue(repo, number))

    def update_issue(
        self, repo: Repo, number: str, data: dict, **_: Any
    ) -> tuple[int, Any]:
        issue = self._issue(repo, number)
        if "state" in data:
            if data["state"] not in ("open", "closed"):
                raise Fail(422, "Validation Failed: state")
            issue["state"] = data["state"]
            if issue["number"] in repo.pulls:
                repo.pulls[issue["number"]]["state"] = data["state"]
        for key in ("title", "body"):
            if key in data:
                issue[key] = data[key]
        if "labels" in data:
            issue["_labels"] = self._ensure_labels(repo, list(data["labels"]))
        return 200, self._issue_json(repo, issue)

    def add_labels(
        self, repo: Repo, number: str, data: dict, **_: Any
    ) -> tuple[int, Any]:
        issue = self._issue(repo, number)
        issue["_labels"] = self._ensure_labels(
            repo, issue["_labels"] + list(data.get("labels") or [])
        )
        return 200, [repo.labels[n] for n in issue["_labels"]]

    def remove_label(
        self, repo: Repo, number: str, name: str, **_: Any
    ) -> tuple[int, Any]:
        issue = self._issue(repo, number)
        if name not in issue["_labels"]:
            raise Fail(404, "Label does not exist")
        issue["_labels"].remove(name)
        return 200, [repo.labels[n] for n in issue["_labels"]]

    def create_comment(
        self, repo: Repo, number: str, data: dict, who: str, **_: Any
    ) -> tuple[int, Any]:
        self._issue(repo, number)
        comment = {
            "id": next(self.ids),
            "node_id": f"IC_{next(self.ids)}",
            "body": data.get("body", ""),
            "user": {"login": who},
            "created_at": _now(),
        }
        repo.comments[int(number)].append(comment)
        return 201, comment

    def list_comments(self, repo: Repo, number: str, **_: Any) -> tuple[int, Any]:
        self._issue(repo, number)
        return 200, repo.comments[int(number)]

    def get_ref(self, repo: Repo, branch: str, **_: Any) -> tuple[int, Any]:
        if branch not in repo.refs:
            raise Fail(404, "Not Found")
        return 200, {
            "ref": f"refs/heads/{branch}",
            "object": {"sha": repo.refs[branch], "type": "commit"},
        }

    def matching_refs(self, repo: Repo, prefix: str, **_: Any) -> tuple[int, Any]:
        return 200, [
            {"ref": f"refs/heads/{b}", "object": {"sha": s, "type": "commit"}}
            for b, s in sorted(repo.refs.items())
            if b.startswith(prefix)
        ]

    def create_ref(self, repo: Repo, data: dict, **_: Any) -> tuple[int, Any]:
        ref, sha = data.get("ref", ""), data.get("sha", "")
        if not ref.startswith("refs/heads/") or sha not in repo.commits:
            raise Fail(422, "Validation Failed: ref or sha")
        branch = ref[len("refs/heads/") :]
        if branch in repo.refs:
            raise Fail(422, "Reference already exists")
        repo.refs[branch] = sha
        return 201, {"ref": ref, "object": {"sha": sha, "type": "commit"}}

    def update_ref(
        self, repo: Repo, branch: str, data: dict, **_: Any
    ) -> tuple[int, Any]:
        if branch not in repo.refs:
            raise Fail(422, "Reference does not exist")
        sha = data.get("sha", "")
        if sha not in repo.commits:
            raise Fail(422, "Object does not exist")
        if not data.get("force") and repo.refs[branch] not in repo.ancestors(sha):
            raise Fail(422, "Update is not a fast forward")
        repo.refs[branch] = sha
        return 200, {
            "ref": f"refs/heads/{branch}",
            "object": {"sha": sha, "type": "commit"},
        }

    def delete_ref(self, repo: Repo, branch: str, **_: Any) -> tuple[int, Any]:
        if repo.refs.pop(branch, None) is None:
            raise Fail(422, "Reference does not exist")
        return 204, None

    def put_contents(
        self, repo: Repo, file_path: str, data: dict, **_: Any
    ) -> tuple[int, Any]:
        branch = data.get("branch", "main")
        if branch not in repo.refs:
            raise Fail(404, f"Branch {branch} not found")
        parent = repo.refs[branch]
        files = {
            **repo.files[parent],
            file_path: base64.b64decode(data.get("content", "")).decode(),
        }
        sha = repo.add_commit(data.get("message", "update"), parent, files)
        repo.refs[branch] = sha
        return 201, {
            "content": {"path": file_path},
            "commit": {"sha": sha, "message": data.get("message", "")},
        }

    def create_pull(
        self, repo: Repo, data: dict, who: str, **_: Any
    ) -> tuple[int, Any]:
        head, base = data.get("head", ""), data.get("base", "")
        if head not in repo.refs or base not in repo.refs:
            raise Fail(422, "Validation Failed: head or base does not exist")
        if repo.refs[head] == repo.refs[base]:
            raise Fail(422, f"Validation Failed: No commits between {base} and {head}")
        issue = self._new_issue(repo, data, who)
        repo.pulls[issue["number"]] = {
            "head": head,
            "base": base,
            "state": "open",
            "draft": bool(data.get("draft")),
        }
        repo.reviews[issue["number"]] = []
        repo.threads[issue["number"]] = []
        return 201, self._pull_json(repo, issue["number"])

    def _pull(self, repo: Repo, number: str) -> dict[str, Any]:
        pull = repo.pulls.get(int(number))
        if pull is None:
            raise Fail(404, "Not Found")
        return pull

    def _pull_json(self, repo: Repo, number: int) -> dict[str, Any]:
        pull, issue = repo.pulls[number], repo.issues[number]
        return {
            **self._issue_json(repo, issue),
            "state": pull["state"],
            "draft": pull["draft"],
            "head": {"ref": pull["head"], "sha": repo.refs.get(pull["head"])},
            "base": {"ref": pull["base"], "sha": repo.refs.get(pull["base"])},
        }

    def get_pull(self, repo: Repo, number: str, **_: Any) -> tuple[int, Any]:
        self._pull(repo, number)
        return 200, self._pull_json(repo, int(number))

    def update_pull(
        self, repo: Repo, number: str, data: dict, **kw: Any
    ) -> tuple[int, Any]:
        self._pull(repo, number)
        self.update_issue(
            repo,
            number,
            {k: v for k, v in data.items() if k in ("state", "title", "body")},
        )
        return 200, self._pull_json(repo, int(number))

    def pull_commits(self, repo: Repo, number: str, **_: Any) -> tuple[int, Any]:
        pull = self._pull(repo, number)
        base = set(
            repo.ancestors(repo.refs.get(pull["base"], ""))
            if pull["base"] in repo.refs
            else []
        )
        head = repo.refs.get(pull["head"])
        shas = [s for s in (repo.ancestors(head) if head else []) if s not in base]
        return 200, [
            {
                "sha": s,
                "commit": {"message": repo.commits[s]["message"]},
                "parents": [{"sha": p} for p in repo.commits[s]["parents"]],
            }
            for s in reversed(shas)
        ]

    def list_reviews(self, repo: Repo, number: str, **_: Any) -> tuple[int, Any]:
        self._pull(repo, number)
        return 200, repo.reviews[int(number)]

    def create_review(
        self, repo: Repo, number: str, data: dict, who: str, **_: Any
    ) -> tuple[int, Any]:
        self._pull(repo, number)
        states = {
            "APPROVE": "APPROVED",
            "REQUEST_CHANGES": "CHANGES_REQUESTED",
            "COMMENT": "COMMENTED",
        }
        review = {
            "id": next(self.ids),
            "user": {"login": who},
            "body": data.get("body", ""),
            "state": states.get(data.get("event", "COMMENT"), "PENDING"),
            "submitted_at": _now(),
        }
        repo.reviews[int(number)].append(review)
        return 200, review

    def create_review_comment(
        self, repo: Repo, number: str, data: dict, who: str, **_: Any
    ) -> tuple[int, Any]:
        pull = self._pull(repo, number)
        if (
            not data.get("body")
            or not data.get("path")
            or data.get("commit_id") not in repo.commits
        ):
            raise Fail(422, "Validation Failed: body, path and commit_id are required")
        if data["path"] not in repo.files.get(repo.refs.get(pull["head"], ""), {}):
            raise Fail(422, "Validation Failed: path could not be resolved")
        comment = {
            "id": next(self.ids),
            "node_id": f"PRRC_{next(self.ids)}",
            "body": data["body"],
            "path": data["path"],
            "line": data.get("line"),
            "user": {"login": who},
            "created_at": _now(),
        }
        repo.threads[int(number)].append(
            {
                "id": f"PRRT_{next(self.ids)}",
                "isResolved": False,
                "isOutdated": False,
                "path": data["path"],
                "line": data.get("line"),
                "comments": [comment],
            }
        )
        return 201, comment

    # -- GraphQL -------------------------------------------------------------------
    def _graphql(self, data: dict, who: str) -> dict[str, Any]:
        query = data.get("query", "")
        m = re.match(r"\s*(query|mutation)\s+(\w+)", query)
        variables = data.get("variables") or {}
        handler = _GRAPHQL.get(m.group(2)) if m else None
        if handler is None:
            return {
                "data": None,
                "errors": [
                    {
                        "message": "stand-in does not know operation "
                        f"{m.group(2) if m else '(anonymous)'}"
                    }
                ],
            }
        try:
            return {"data": handler(self, variables, who)}
        except Fail as fail:
            return {
                "data": None,
                "errors": [{"type": "NOT_FOUND", "message": fail.message}],
            }

    def _gql_repo(self, v: dict) -> Repo:
        repo = self.repos.get(f"{v.get('owner')}/{v.get('name')}")
        if repo is None:
            raise Fail(
                404,
                "Could not resolve to a Repository with the name "
                f"'{v.get('owner')}/{v.get('name')}'.",
            )
        return repo

    def _gql_issue(self, repo: Repo, issue: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": issue["node_id"],
            "number": issue["number"],
            "title": issue["title"],
            "state": issue["state"].upper(),
            "url": f"https://github.example/{repo.full_name}/issues/{issue['number']}",
            "body": issue["body"],
            "labels": {"nodes": [{"name": n} for n in issue["_labels"]]},
        }

    def gql_issue_view(self, v: dict, who: str) -> dict[str, Any]:
        repo = self._gql_repo(v)
        issue = repo.issues.get(int(v["number"]))
        if issue is None or issue["number"] in repo.pulls:
            raise Fail(
                404, f"Could not resolve to an Issue with the number of {v['number']}."
            )
        return {"repository": {"issue": self._gql_issue(repo, issue)}}

    def gql_issue_comments(self, v: dict, who: str) -> dict[str, Any]:
        repo = self._gql_repo(v)
        issue = self._issue(repo, v["number"])
        comments = repo.comments[issue["number"]]
        start = int(v.get("after") or 0)
        page = comments[start : start + int(v.get("first") or 30)]
        end = start + len(page)
        nodes = [
            {
                "id": c["node_id"],
                "body": c["body"],
                "author": {"login": c["user"]["login"]},
                "createdAt": c["created_at"],
                "url": f"https://github.example/c/{c['id']}",
            }
            for c in page
        ]
        return {
            "repository": {
                "issue": {
                    "comments": {
                        "nodes": nodes,
                        "pageInfo": {
                            "hasNextPage": end < len(comments),
                            "endCursor": str(end) if page else None,
                        },
                    }
                }
            }
        }

    def gql_issue_linked_prs(self, v: dict, who: str) -> dict[str, Any]:
        repo = self._gql_repo(v)
        issue = self._issue(repo, v["number"])
        pattern = re.compile(
            rf"\b(close[sd]?|fix(e[sd])?|resolve[sd]?)\s+#{issue['number']}\b",
            re.IGNORECASE,
        )
        nodes = [
            {
                "number": n,
                "title": repo.issues[n]["title"],
                "state": "OPEN" if p["state"] == "open" else "CLOSED",
                "url": f"https://github.example/{repo.full_name}/pull/{n}",
            }
            for n, p in sorted(repo.pulls.items())
            if pattern.search(repo.issues[n]["body"] or "")
        ]
        return {
            "repository": {
                "issue": {"closedByPullRequestsReferences": {"nodes": nodes}}
            }
        }

    def gql_pr_view(self, v: dict, who: str) -> dict[str, Any]:
        repo = self._gql_repo(v)
        pull = repo.pulls.get(int(v["number"]))
        if pull is None:
            raise Fail(
                404,
                f"Could not resolve to a PullRequest with the number of {v['number']}.",
            )
        issue = repo.issues[int(v["number"])]
        return {
            "repository": {
                "pullRequest": {
                    **self._gql_issue(repo, issue),
                    "url": f"https://github.example/{repo.full_name}/pull/{issue['number']}",
                    "isDraft": pull["draft"],
                    "headRefName": pull["head"],
                    "baseRefName": pull["base"],
                    "headRefOid": repo.refs.get(pull["head"]),
                }
            }
        }

    def gql_pr_threads(self, v: dict, who: str) -> dict[str, Any]:
        repo = self._gql_repo(v)
        self._pull(repo, v["number"])
        threads = repo.threads[int(v["number"])]
        start = int(v.get("after") or 0)
        page = threads[start : start + int(v.get("first") or 50)]
        end = start + len(page)
        nodes = [
            {
                "id": t["id"],
                "isResolved": t["isResolved"],
                "isOutdated": t["isOutdated"],
                "path": t["path"],
                "line": t["line"],
                "comments": {
                    "nodes": [
                        {
                            "id": c["node_id"],
                            "body": c["body"],
                            "author": {"login": c["user"]["login"]},
                            "createdAt": c["created_at"],
                        }
                        for c in t["comments"]
                    ]
                },
            }
            for t in page
        ]
        return {
            "repository": {
                "pullRequest": {
                    "reviewThreads": {
                        "nodes": nodes,
                        "pageInfo": {
                            "hasNextPage": end < len(threads),
                            "endCursor": str(end) if page else None,
                        },
                    }
                }
            }
        }

    def gql_resolve_thread(self, v: dict, who: str) -> dict[str, Any]:
        for repo in self.repos.values():
            for threads in repo.threads.values():
                for thread in threads:
                    if thread["id"] == v.get("threadId"):
                        thread["isResolved"] = True
                        return {
                            "resolveReviewThread": {
                                "thread": {"id": thread["id"], "isResolved": True}
                            }
                        }
        raise Fail(
            404,
            f"Could not resolve to a node with the global id of '{v.get('threadId')}'",
        )


_ROUTES = [
    (r"", "GET", GitHubStandIn.get_repo),
    (r"/installation", "GET", GitHubStandIn.get_installation),
    (r"/labels", "GET", GitHubStandIn.list_labels),
    (r"/labels", "POST", GitHubStandIn.create_label),
    (r"/labels/([^/]+)", "GET", GitHubStandIn.get_label),
    (r"/issues", "GET", GitHubStandIn.list_issues),
    (r"/issues", "POST", GitHubStandIn.create_issue),
    (r"/issues/(\d+)", "GET", GitHubStandIn.get_issue),
    (r"/issues/(\d+)", "PATCH", GitHubStandIn.update_issue),
    (r"/issues/(\d+)/labels", "POST", GitHubStandIn.add_labels),
    (r"/issues/(\d+)/labels/([^/]+)", "DELETE", GitHubStandIn.remove_label),
    (r"/issues/(\d+)/comments", "GET", GitHubStandIn.list_comments),
    (r"/issues/(\d+)/comments", "POST", GitHubStandIn.create_comment),
    (r"/git/ref/heads/(.+)", "GET", GitHubStandIn.get_ref),
    (r"/git/matching-refs/heads/(.*)", "GET", GitHubStandIn.matching_refs),
    (r"/git/refs", "POST", GitHubStandIn.create_ref),
    (r"/git/refs/heads/(.+)", "PATCH", GitHubStandIn.update_ref),
    (r"/git/refs/heads/(.+)", "DELETE", GitHubStandIn.delete_ref),
    (r"/contents/(.+)", "PUT", GitHubStandIn.put_contents),
    (r"/pulls", "POST", GitHubStandIn.create_pull),
    (r"/pulls/(\d+)", "GET", GitHubStandIn.get_pull),
    (r"/pulls/(\d+)", "PATCH", GitHubStandIn.update_pull),
    (r"/pulls/(\d+)/commits", "GET", GitHubStandIn.pull_commits),
    (r"/pulls/(\d+)/reviews", "GET", GitHubStandIn.list_reviews),
    (r"/pulls/(\d+)/reviews", "POST", GitHubStandIn.create_review),
    (r"/pulls/(\d+)/comments", "POST", GitHubStandIn.create_review_comment),
]

_GRAPHQL = {
    "IssueView": GitHubStandIn.gql_issue_view,
    "IssueComments": GitHubStandIn.gql_issue_comments,
    "IssueLinkedPullRequests": GitHubStandIn.gql_issue_linked_prs,
    "PullRequestView": GitHubStandIn.gql_pr_view,
    "PullRequestReviewThreads": GitHubStandIn.gql_pr_threads,
    "ResolveReviewThread": GitHubStandIn.gql_resolve_thread,
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, payload, headers = self.server.standin.handle(
            self.command, self.path, self.headers, body
        )  # type: ignore[attr-defined]
        raw = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        if raw:
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(raw)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

    def log_message(
        self, format: str, *args: Any
    ) -> None:  # the stand-in keeps its own log
        pass


if __name__ == "__main__":  # pragma: no cover - manual use
    with GitHubStandIn() as standin:
        print(f"GITHUB_API_URL={standin.url} GH_TOKEN={MAIN_TOKEN}", flush=True)
        threading.Event().wait()
