"""Fixture lifecycle against the GitHub stand-in: seed, manifest, status, reset, cleanup."""

from __future__ import annotations

import json

import pytest
import stamina
import trio

from github_standin import MAIN_TOKEN, REVIEWER_TOKEN, GitHubStandIn
from profiler_eval_ghx.fixtures import (
    EVAL_LABEL,
    FixtureError,
    cleanup,
    cleanup_all,
    read_manifest,
    reset_manifest,
    seed_fixtures,
    seeder_for,
    status,
    write_manifest,
)
from profiler_eval_ghx.fixtures.lifecycle import RESET_ATTEMPTS
from profiler_eval_ghx.fixtures.seeders import seed_issue, seed_pr
from profiler_eval_ghx.github import GitHubClient

REPO = "octo/eval-sandbox"
ALL = [
    "pr",
    "issue",
    "issue_for_triage",
    "issue_bug_to_close",
    "issue_with_branch",
    "pr_with_mixed_threads",
]


@pytest.fixture
def standin():
    with GitHubStandIn() as server:
        yield server


@pytest.fixture
def client(standin):
    return GitHubClient(MAIN_TOKEN, base_url=standin.url)


def test_seeder_is_chosen_by_full_name_then_prefix():
    assert seeder_for("pr") is seed_pr
    assert seeder_for("pr_small") is seed_pr
    assert seeder_for("issue_for_triage").__name__ == "seed_issue_for_triage"
    assert seeder_for("issue_other") is seed_issue
    with pytest.raises(FixtureError, match="fixture 'release_v1': no seeder"):
        seeder_for("release_v1")


def test_full_lifecycle(standin, client, tmp_path):
    reviewer = GitHubClient(REVIEWER_TOKEN, base_url=standin.url)
    # An unrelated issue without the label must survive cleanup --all.
    trio.run(
        lambda: client.rest(
            "POST", f"/repos/{REPO}/issues", json={"title": "a user's issue"}
        )
    )

    manifest = trio.run(
        lambda: seed_fixtures(client, REPO, ALL, seed_id="t1", reviewer=reviewer)
    )
    path = write_manifest(manifest, tmp_path / "fixtures" / "manifest.json")
    raw = json.loads(path.read_text())
    assert (
        set(raw) == {"seedId", "createdAt", "repo", "fixtures"}
        and raw["seedId"] == "t1"
    )
    assert MAIN_TOKEN not in path.read_text() and REVIEWER_TOKEN not in path.read_text()
    loaded = read_manifest(path)
    assert loaded == manifest

    repo = standin.repo(REPO)
    fx = loaded.fixtures
    assert (
        fx["pr"].type == "pr" and repo.pulls[fx["pr"].number]["head"] == fx["pr"].branch
    )
    assert repo.refs[fx["pr"].branch] == fx["pr"].metadata["originalSha"]
    assert "bug" in repo.issues[fx["issue_bug_to_close"].number]["_labels"]
    assert (
        fx["issue_bug_to_close"].metadata["searchTerm"]
        in repo.issues[fx["issue_bug_to_close"].number]["title"]
    )
    assert set(fx["issue_with_branch"].metadata) >= {
        "headBranch",
        "baseBranch",
        "branchSha",
    }
    threads = repo.threads[fx["pr_with_mixed_threads"].number]
    assert [t["isResolved"] for t in threads] == [True, False, False]
    assert {t["comments"][0]["user"]["login"] for t in threads} == {"reviewer"}
    for resource in fx.values():
        assert EVAL_LABEL in repo.issues[resource.number]["_labels"]

    statuses = trio.run(status, client, loaded)
    assert [s.ok for s in statuses] == [True] * len(ALL), statuses

    # The agent pushes to the PR branch and closes the issue; reset puts both back.
    pr = fx["pr"]
    trio.run(
        lambda: client.rest(
            "PUT",
            f"/repos/{REPO}/contents/new.txt",
            json={"message": "agent", "content": "eA==", "branch": pr.branch},
        )
    )
    trio.run(
        lambda: client.rest(
            "PATCH",
            f"/repos/{REPO}/issues/{fx['issue'].number}",
            json={"state": "closed"},
        )
    )
    moved = trio.run(status, client, loaded)
    assert {s.name: s.ok for s in moved}["pr"] is False and "branch moved" in {
        s.name: s for s in moved
    }["pr"].problem
    done = trio.run(lambda: reset_manifest(client, loaded, repo=REPO))
    assert f"branch {pr.branch} -> {pr.metadata['originalSha'][:12]}" in done
    assert f"issue #{fx['issue'].number} reopened" in done
    assert repo.refs[pr.branch] == pr.metadata["originalSha"]
    assert all(s.ok for s in trio.run(status, client, loaded))

    # cleanup --dry-run changes nothing; cleanup --all closes exactly the labelled items.
    planned = trio.run(lambda: cleanup_all(client, REPO, dry_run=True))
    assert len([a for a in planned if a.startswith("close")]) == len(ALL)
    assert all(i["state"] == "open" for i in repo.issues.values())
    trio.run(lambda: cleanup_all(client, REPO))
    states = {n: i["state"] for n, i in repo.issues.items()}
    assert states[1] == "open"  # the user's issue
    assert all(states[r.number] == "closed" for r in fx.values())
    assert not [b for b in repo.refs if b.startswith("ghx-eval/")]
    assert "main" in repo.refs


def test_cleanup_closes_what_the_manifest_names(standin, client):
    first = trio.run(lambda: seed_fixtures(client, REPO, ["issue", "pr"], seed_id="a"))
    second = trio.run(lambda: seed_fixtures(client, REPO, ["issue"], seed_id="b"))
    actions = trio.run(lambda: cleanup(client, first, repo=REPO))
    assert actions == [
        f"close issue #{first.fixtures['issue'].number}",
        f"close pr #{first.fixtures['pr'].number}",
        f"delete branch {first.fixtures['pr'].branch}",
    ]
    repo = standin.repo(REPO)
    assert repo.issues[second.fixtures["issue"].number]["state"] == "open"


def test_a_failing_call_names_the_fixture_and_the_status(standin, client):
    standin.fail_next("POST", r"/pulls$", 422, message="Validation Failed")
    with pytest.raises(FixtureError) as info:
        trio.run(lambda: seed_fixtures(client, REPO, ["issue", "pr"], seed_id="x"))
    message = str(info.value)
    assert message.startswith(
        "fixture 'pr': POST /repos/octo/eval-sandbox/pulls: HTTP 422 Validation Failed"
    )
    assert "cleanup --all" in message


@pytest.fixture
def no_backoff():
    """stamina keeps its attempts but skips the waits."""
    stamina.set_testing(True, attempts=RESET_ATTEMPTS)
    try:
        yield
    finally:
        stamina.set_testing(False)


def test_reset_retries_then_reports(standin, no_backoff):
    client = GitHubClient(
        MAIN_TOKEN, base_url=standin.url, max_retries=0
    )  # stamina's retries, not githubkit's
    manifest = trio.run(lambda: seed_fixtures(client, REPO, ["pr"], seed_id="r"))
    standin.fail_next("PATCH", r"/git/refs/heads/", 502, times=2)
    trio.run(lambda: reset_manifest(client, manifest, repo=REPO))
    assert [r[2] for r in standin.requests("PATCH", "/git/refs/heads/")][-3:] == [
        502,
        502,
        200,
    ]
    standin.fail_next(
        "PATCH", r"/git/refs/heads/", 422, times=10, message="Reference update failed"
    )
    with pytest.raises(
        FixtureError,
        match=r"fixture 'pr': reset failed: PATCH .*HTTP 422 Reference update failed",
    ):
        trio.run(lambda: reset_manifest(client, manifest, repo=REPO))


def test_unreadable_manifest_is_one_line(tmp_path):
    with pytest.raises(
        FixtureError, match="manifest not found .*profiler eval fixture seed"
    ):
        read_manifest(tmp_path / "nope.json")
    bad = tmp_path / "m.json"
    bad.write_text(
        json.dumps(
            {
                "seedId": "x",
                "createdAt": "now",
                "repo": "o/r",
                "fixtures": {"a": {"type": "wiki", "number": 1, "repo": "o/r"}},
            }
        )
    )
    with pytest.raises(FixtureError, match=r"m.json: .*fixtures"):
        read_manifest(bad)
