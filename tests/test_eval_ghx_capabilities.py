"""Capabilities the checkpoints call, answered by the GitHub stand-in through githubkit."""

from __future__ import annotations

import stat
import sys

import pytest
import trio

from github_standin import MAIN_TOKEN, REVIEWER_TOKEN, GitHubStandIn
from profiler_eval_ghx.capabilities import (
    CapabilityResult,
    GhxCliExecutor,
    GitHubCapabilities,
    default_executor,
)
from profiler_eval_ghx.fixtures import seed_fixtures
from profiler_eval_ghx.github import GitHubClient

REPO = "octo/eval-sandbox"
BASE = {"owner": "octo", "name": "eval-sandbox"}


@pytest.fixture(scope="module")
def world():
    with GitHubStandIn() as server:
        client = GitHubClient(MAIN_TOKEN, base_url=server.url)
        reviewer = GitHubClient(REVIEWER_TOKEN, base_url=server.url)
        manifest = trio.run(
            lambda: seed_fixtures(
                client,
                REPO,
                ["issue", "pr_with_mixed_threads"],
                seed_id="c",
                reviewer=reviewer,
            )
        )
        issue = manifest.fixtures["issue"].number
        pr = manifest.fixtures["pr_with_mixed_threads"].number

        async def activity():
            for body in ("first", "second", "third"):
                await client.rest(
                    "POST",
                    f"/repos/{REPO}/issues/{issue}/comments",
                    json={"body": body},
                )
            await reviewer.rest(
                "POST",
                f"/repos/{REPO}/pulls/{pr}/reviews",
                json={"event": "APPROVE", "body": "ok"},
            )
            fix = await client.rest(
                "PUT",
                f"/repos/{REPO}/contents/fix.txt",
                json={"message": "fix", "content": "eA==", "branch": "main"},
            )
            await client.rest(
                "POST",
                f"/repos/{REPO}/git/refs",
                json={"ref": "refs/heads/fix", "sha": fix["commit"]["sha"]},
            )
            await client.rest(
                "PUT",
                f"/repos/{REPO}/contents/fix2.txt",
                json={"message": "fix 2", "content": "eA==", "branch": "fix"},
            )
            linked = await client.rest(
                "POST",
                f"/repos/{REPO}/pulls",
                json={
                    "title": "Fix it",
                    "head": "fix",
                    "base": "main",
                    "body": f"Fixes #{issue}",
                },
            )
            return linked["number"]

        linked = trio.run(activity)
        yield server, GitHubCapabilities(client), issue, pr, linked


def run(executor, task, input):
    return trio.run(executor.run, task, input)


def test_issue_view(world):
    _, caps, issue, _, _ = world
    result = run(caps, "issue.view", {**BASE, "issueNumber": issue})
    assert result.ok, result.error
    assert set(result.data) == {
        "id",
        "number",
        "title",
        "state",
        "url",
        "body",
        "labels",
    }
    assert result.data["number"] == issue and result.data["state"] == "OPEN"
    assert result.data["labels"] == ["ghx-eval-fixture"]
    # `repo: owner/name` and a numeric string are accepted too
    assert (
        run(caps, "issue.view", {"repo": REPO, "number": str(issue)}).data
        == result.data
    )


def test_issue_comments_paginate(world):
    _, caps, issue, _, _ = world
    page = run(caps, "issue.comments.list", {**BASE, "issueNumber": issue, "first": 2})
    assert [c["body"] for c in page.data["items"]] == ["first", "second"]
    assert page.data["pageInfo"]["hasNextPage"] is True
    rest = run(
        caps,
        "issue.comments.list",
        {**BASE, "issueNumber": issue, "after": page.data["pageInfo"]["endCursor"]},
    )
    assert [c["body"] for c in rest.data["items"]] == ["third"] and rest.data["items"][
        0
    ]["authorLogin"] == "eval-bot"


def test_issue_relations_prs(world):
    _, caps, issue, _, linked = world
    result = run(caps, "issue.relations.prs.list", {**BASE, "issueNumber": issue})
    assert [p["number"] for p in result.data["items"]] == [linked]


def test_pr_view_reviews_commits(world):
    _, caps, _, pr, linked = world
    view = run(caps, "pr.view", {**BASE, "prNumber": pr}).data
    assert (
        view["number"] == pr
        and view["state"] == "OPEN"
        and view["headRefName"].startswith("ghx-eval/")
    )
    reviews = run(caps, "pr.reviews.list", {**BASE, "prNumber": pr}).data["items"]
    assert [(r["authorLogin"], r["state"]) for r in reviews] == [
        ("reviewer", "APPROVED")
    ]
    commits = run(caps, "pr.commits.list", {**BASE, "prNumber": linked}).data["items"]
    assert [c["message"] for c in commits] == [
        "fix 2"
    ]  # "fix" went to main: not the PR's
    own = run(caps, "pr.commits.list", {**BASE, "prNumber": pr}).data["items"]
    assert [c["message"] for c in own] == ["ghx-eval: pr_with_mixed_threads"]


def test_pr_threads_unresolved_only_by_default(world):
    _, caps, _, pr, _ = world
    open_only = run(caps, "pr.threads.list", {**BASE, "prNumber": pr}).data
    assert len(open_only["items"]) == 2 and not any(
        t["isResolved"] for t in open_only["items"]
    )
    everything = run(
        caps, "pr.threads.list", {**BASE, "prNumber": pr, "unresolvedOnly": False}
    ).data
    assert [t["isResolved"] for t in everything["items"]] == [True, False, False]
    assert everything["items"][0]["comments"][0]["authorLogin"] == "reviewer"


def test_repo_labels(world):
    _, caps, _, _, _ = world
    names = {
        label["name"] for label in run(caps, "repo.labels.list", BASE).data["items"]
    }
    assert {"ghx-eval-fixture"} <= names


def test_failures_are_results_with_a_reason(world):
    caps = world[1]
    missing = run(caps, "issue.view", {**BASE, "issueNumber": 999})
    assert missing == CapabilityResult(
        ok=False,
        error="issue.view: GraphQL IssueView: GraphQL error: Could not resolve to an "
        "Issue with the number of 999.",
    )
    assert "unknown capability 'issue.delete'" in run(caps, "issue.delete", BASE).error
    assert (
        run(caps, "pr.view", {"owner": "octo"}).error
        == "pr.view: input needs `owner` and `name` (or `repo: owner/name`)"
    )
    gone = run(caps, "pr.reviews.list", {**BASE, "prNumber": 999})
    assert not gone.ok and "HTTP 404" in gone.error


def test_default_executor_reads_the_environment(world, monkeypatch):
    server, _, issue, _, _ = world
    monkeypatch.setenv("GITHUB_API_URL", server.url)
    monkeypatch.setenv("GH_TOKEN", MAIN_TOKEN)
    assert run(default_executor({}), "issue.view", {**BASE, "issueNumber": issue}).ok
    monkeypatch.delenv("GH_TOKEN")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    assert "no GitHub token" in run(default_executor({}), "issue.view", BASE).error
    assert isinstance(
        default_executor({"executor": "ghx", "ghx_bin": "/opt/ghx"}), GhxCliExecutor
    )
    with pytest.raises(ValueError, match="executor"):
        default_executor({"executor": "carrier-pigeon"})


def _fake_ghx(tmp_path, body: str):
    script = tmp_path / "ghx"
    script.write_text(f"#!{sys.executable}\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_ghx_cli_executor_passes_task_and_input(tmp_path):
    ghx = _fake_ghx(
        tmp_path,
        "import json, sys\n"
        "task = sys.argv[2]; assert sys.argv[1] == 'run' and sys.argv[3:] == ['--input', '-']\n"
        "data = json.load(sys.stdin)\n"
        "print(json.dumps({'ok': True, 'data': {'task': task, 'input': data}}))",
    )
    result = trio.run(
        GhxCliExecutor(ghx).run,
        "issue.view",
        {"owner": "o", "name": "r", "issueNumber": 3},
    )
    assert result == CapabilityResult(
        ok=True,
        data={
            "task": "issue.view",
            "input": {"owner": "o", "name": "r", "issueNumber": 3},
        },
    )
    failing = _fake_ghx(
        tmp_path,
        "import json; print(json.dumps({'ok': False, 'error': {'code': "
        "'NOT_FOUND', 'message': 'no such issue'}}))",
    )
    assert (
        trio.run(GhxCliExecutor(failing).run, "issue.view", {}).error == "no such issue"
    )


def test_ghx_cli_executor_failures(tmp_path):
    broken = _fake_ghx(
        tmp_path, "import sys; print('boom', file=sys.stderr); sys.exit(3)"
    )
    assert (
        trio.run(GhxCliExecutor(broken).run, "issue.view", {}).error
        == "issue.view: ghx gave no result envelope (boom)"
    )
    # An input bigger than a pipe holds: ghx is gone before it is all written, and still says why.
    big = {"body": "x" * 1_000_000}
    assert (
        trio.run(GhxCliExecutor(broken).run, "issue.view", big).error
        == "issue.view: ghx gave no result envelope (boom)"
    )
    assert (
        "cannot start"
        in trio.run(
            GhxCliExecutor(str(tmp_path / "absent")).run, "issue.view", {}
        ).error
    )
    slow = _fake_ghx(tmp_path, "import time; time.sleep(30)")
    result = trio.run(GhxCliExecutor(slow, timeout_s=0.5).run, "issue.view", {})
    assert result.error == "issue.view: ghx did not answer within 0.5s"
