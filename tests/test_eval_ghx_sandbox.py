"""Fixture writes stay in the sandbox repository, whatever a manifest names (issue 31.1).

The stand-in holds the sandbox and a second repository ("someone else's"); a
manifest naming the second one, a branch outside ``ghx-eval/`` or an item
without the fixture label is refused in one line, and the stand-in's request
log proves nothing was sent.
"""

from __future__ import annotations

import json
import re

import attrs
import pytest
import trio
from click.testing import CliRunner

from github_standin import MAIN_TOKEN, GitHubStandIn
from profiler_core import RunContext, Scenario
from profiler_core.cli import cli
from profiler_eval_ghx.fixtures import (
    EVAL_LABEL,
    FixtureError,
    cleanup,
    reset_manifest,
    seed_fixtures,
    write_manifest,
)
from profiler_eval_ghx.github import GitHubClient
from profiler_eval_ghx.hooks import EvalHooks

SANDBOX = "octo/eval-sandbox"
OTHER = "octo/precious"


@pytest.fixture
def world(tmp_path):
    with GitHubStandIn(repos=(SANDBOX, OTHER)) as server:
        client = GitHubClient(MAIN_TOKEN, base_url=server.url)
        manifest = trio.run(
            lambda: seed_fixtures(client, SANDBOX, ["pr", "issue"], seed_id="s1")
        )
        # Someone else's repository: an issue, a pull-request-like branch, and main
        # moved on by a commit.
        precious = server.repo(OTHER)
        old_main = precious.refs["main"]
        precious.refs["main"] = precious.add_commit(
            "their work", old_main, {"README.md": "theirs\n"}
        )
        trio.run(
            lambda: client.rest(
                "POST",
                f"/repos/{OTHER}/issues",
                json={"title": "their bug", "labels": ["bug"]},
            )
        )
        yield server, client, manifest, old_main, tmp_path


def _pointing_elsewhere(manifest, old_main):
    """The manifest edited to name the other repository's main branch and its issue #1."""
    pr = attrs.evolve(
        manifest.fixtures["pr"],
        repo=OTHER,
        branch="main",
        metadata={**manifest.fixtures["pr"].metadata, "originalSha": old_main},
    )
    issue = attrs.evolve(manifest.fixtures["issue"], repo=OTHER, number=1)
    return attrs.evolve(manifest, fixtures={"pr": pr, "issue": issue})


def _untouched(server, before):
    precious = server.repo(OTHER)
    assert precious.issues[1]["state"] == "open" and precious.issues[1]["_labels"] == [
        "bug"
    ]
    assert len(server.log) == before, server.log[
        before:
    ]  # not one request, not even a read


def test_reset_and_cleanup_refuse_a_manifest_naming_another_repository(world):
    server, client, manifest, old_main, _ = world
    bad = _pointing_elsewhere(manifest, old_main)
    main_now = server.repo(OTHER).refs["main"]
    before = len(server.log)
    with pytest.raises(FixtureError) as reset:
        trio.run(lambda: reset_manifest(client, bad, repo=SANDBOX))
    with pytest.raises(FixtureError) as closed:
        trio.run(lambda: cleanup(client, bad, repo=SANDBOX))
    for info in (reset, closed):
        message = str(info.value)
        assert "\n" not in message and message.startswith("refused: ")
        assert (
            f"fixture 'pr' is in {OTHER}" in message
            and "branch 'main'" in message
            and "nothing was sent" in message
        )
    _untouched(server, before)
    assert server.repo(OTHER).refs["main"] == main_now


def _writes(server, before):
    """The requests after ``before`` that change something on GitHub (reads are allowed:
    labels are read before writing)."""
    return [r for r in server.log[before:] if r[0] != "GET"]


def _one_line_refusal(info) -> str:
    message = str(info.value)
    assert "\n" not in message and message.startswith("refused: "), message
    return message


def _seeded_elsewhere(manifest):
    """A manifest wholly "seeded" in the other repository, its issue fixture pointing at
    their closed bug #1.

    Its labels claim the fixture label, so nothing in the file itself gives it away.
    """
    issue = attrs.evolve(manifest.fixtures["issue"], repo=OTHER, number=1)
    return attrs.evolve(manifest, repo=OTHER, fixtures={"issue": issue})


def _close_their_bug(server, client):
    trio.run(
        lambda: client.rest(
            "PATCH", f"/repos/{OTHER}/issues/1", json={"state": "closed"}
        )
    )
    return len(server.log)


def _their_bug_as_it_was(server):
    bug = server.repo(OTHER).issues[1]
    assert (bug["state"], bug["_labels"]) == ("closed", ["bug"])


@pytest.mark.parametrize("configured", [None, ""])
def test_without_a_configured_sandbox_the_manifest_does_not_become_one(
    world, configured
):
    server, client, manifest, _, _ = world
    bad = _seeded_elsewhere(manifest)
    before = _close_their_bug(server, client)
    for call in (
        lambda: reset_manifest(client, bad, repo=configured),
        lambda: cleanup(client, bad, repo=configured),
    ):
        with pytest.raises(FixtureError) as info:
            trio.run(call)
        message = _one_line_refusal(info)
        assert (
            "no sandbox repository configured: pass --repo OWNER/NAME, set GHX_EVAL_REPO"
            in message
            and "nothing was sent" in message
        )
    assert server.log[before:] == []  # not one request, not even a read
    _their_bug_as_it_was(server)


def test_an_item_without_the_fixture_label_on_github_is_neither_reopened_relabelled_nor_closed(
    world,
):
    server, client, manifest, _, _ = world
    bad = _seeded_elsewhere(manifest)
    before = _close_their_bug(server, client)
    # Even when the user names the other repository as the sandbox, its bug is not a fixture.
    for call in (
        lambda: reset_manifest(client, bad, repo=OTHER),
        lambda: cleanup(client, bad, repo=OTHER),
    ):
        with pytest.raises(FixtureError) as info:
            trio.run(call)
        message = _one_line_refusal(info)
        assert (
            f"issue #1 in {OTHER} (fixture 'issue') does not carry the label "
            f"'{EVAL_LABEL}' on GitHub" in message
        )
        assert "nothing was changed on GitHub" in message
    assert _writes(server, before) == []
    _their_bug_as_it_was(server)


def test_a_maintainers_issue_in_the_sandbox_is_not_touched_and_neither_is_the_rest_of_the_manifest(
    world,
):
    server, client, manifest, _, _ = world
    sandbox = server.repo(SANDBOX)
    theirs = trio.run(
        lambda: client.rest(
            "POST",
            f"/repos/{SANDBOX}/issues",
            json={"title": "a maintainer's issue", "labels": ["bug"]},
        )
    )["number"]
    trio.run(
        lambda: client.rest(
            "PATCH", f"/repos/{SANDBOX}/issues/{theirs}", json={"state": "closed"}
        )
    )
    # The pr fixture is genuine and its branch has moved: a reset would write to it,
    # were the manifest not refused whole.
    pr = manifest.fixtures["pr"]
    sandbox.refs[pr.branch] = moved = sandbox.add_commit(
        "agent", sandbox.refs[pr.branch], {"x.txt": "x\n"}
    )
    bad = attrs.evolve(
        manifest,
        fixtures={
            **manifest.fixtures,
            "issue": attrs.evolve(manifest.fixtures["issue"], number=theirs),
        },
    )
    before = len(server.log)
    for call in (
        lambda: reset_manifest(client, bad, repo=SANDBOX),
        lambda: cleanup(client, bad, repo=SANDBOX),
    ):
        with pytest.raises(FixtureError) as info:
            trio.run(call)
        assert (
            f"issue #{theirs} in {SANDBOX} (fixture 'issue') does not carry the label"
            in _one_line_refusal(info)
        )
    assert _writes(server, before) == []
    assert (sandbox.issues[theirs]["state"], sandbox.issues[theirs]["_labels"]) == (
        "closed",
        ["bug"],
    )
    assert (
        sandbox.refs[pr.branch] == moved
        and sandbox.issues[pr.number]["state"] == "open"
    )


def test_a_fixture_that_is_not_the_kind_it_claims_is_refused(world):
    server, client, manifest, _, _ = world
    issue = manifest.fixtures[
        "issue"
    ]  # labelled, but an issue: a "pr" pointing at it is not that fixture
    bad = attrs.evolve(
        manifest,
        fixtures={"pr": attrs.evolve(manifest.fixtures["pr"], number=issue.number)},
    )
    before = len(server.log)
    with pytest.raises(FixtureError) as info:
        trio.run(lambda: cleanup(client, bad, repo=SANDBOX))
    assert (
        f"fixture 'pr' names pr #{issue.number}, which is an issue on GitHub"
        in _one_line_refusal(info)
    )
    assert _writes(server, before) == []


def test_a_fixture_whose_label_was_removed_is_refused_not_relabelled(world):
    server, client, manifest, _, _ = world
    number = manifest.fixtures["issue"].number
    trio.run(
        lambda: client.rest(
            "PATCH",
            f"/repos/{SANDBOX}/issues/{number}",
            json={"labels": ["enhancement"]},
        )
    )
    before = len(server.log)
    with pytest.raises(
        FixtureError,
        match=rf"refused: issue #{number} in {SANDBOX} \(fixture 'issue'\) does not carry",
    ):
        trio.run(lambda: reset_manifest(client, manifest, ["issue"], repo=SANDBOX))
    assert _writes(server, before) == [] and server.repo(SANDBOX).issues[number][
        "_labels"
    ] == ["enhancement"]


def test_the_sandbox_still_works(world):
    server, client, manifest, _, _ = world
    trio.run(
        lambda: client.rest(
            "PATCH",
            f"/repos/{SANDBOX}/issues/{manifest.fixtures['issue'].number}",
            json={"state": "closed"},
        )
    )
    assert f"issue #{manifest.fixtures['issue'].number} reopened" in trio.run(
        lambda: reset_manifest(client, manifest, repo=SANDBOX)
    )
    actions = trio.run(
        lambda: cleanup(client, manifest, repo=SANDBOX.upper())
    )  # GitHub names compare without case
    assert len([a for a in actions if a.startswith("close")]) == 2
    assert all(i["state"] == "closed" for i in server.repo(SANDBOX).issues.values())


def test_cli_refuses_in_one_line_before_any_request(world, monkeypatch):
    server, _, manifest, old_main, tmp_path = world
    path = write_manifest(_pointing_elsewhere(manifest, old_main), tmp_path / "m.json")
    env = {"GITHUB_API_URL": server.url, "GH_TOKEN": MAIN_TOKEN}
    before = len(server.log)
    for command in (["reset"], ["cleanup"], ["cleanup", "--dry-run"]):
        result = CliRunner().invoke(
            cli,
            ["eval", "fixture", *command, "--repo", SANDBOX, "--manifest", str(path)],
            env=env,
        )
        assert result.exit_code == 1, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: refused: "), (
            result.output
        )
    _untouched(server, before)


def test_the_cli_takes_the_sandbox_from_the_user_and_refuses_in_one_line(world):
    server, client, manifest, _, tmp_path = world
    elsewhere = write_manifest(_seeded_elsewhere(manifest), tmp_path / "elsewhere.json")
    theirs = trio.run(
        lambda: client.rest(
            "POST",
            f"/repos/{SANDBOX}/issues",
            json={"title": "a maintainer's issue", "labels": ["bug"]},
        )
    )["number"]
    in_sandbox = write_manifest(
        attrs.evolve(
            manifest,
            fixtures={"issue": attrs.evolve(manifest.fixtures["issue"], number=theirs)},
        ),
        tmp_path / "in.json",
    )
    env = {"GITHUB_API_URL": server.url, "GH_TOKEN": MAIN_TOKEN, "GHX_EVAL_REPO": None}
    cases = [
        (
            [],
            elsewhere,
            {},
            "Error: refused: no sandbox repository configured: pass --repo OWNER/NAME",
            False,
        ),
        (
            [],
            elsewhere,
            {"GHX_EVAL_REPO": SANDBOX},
            f"Error: refused: the manifest was seeded in {OTHER}; fixture 'issue' is in {OTHER}",
            False,
        ),
        (
            ["--repo", SANDBOX],
            in_sandbox,
            {},
            f"Error: refused: issue #{theirs} in {SANDBOX} (fixture 'issue') "
            "does not carry the label",
            True,
        ),
    ]
    before = _close_their_bug(server, client)
    for flags, path, extra, expected, reads in cases:
        for command in (["reset"], ["cleanup"], ["cleanup", "--dry-run"]):
            start = len(server.log)
            result = CliRunner().invoke(
                cli,
                ["eval", "fixture", *command, *flags, "--manifest", str(path)],
                env={**env, **extra},
            )
            assert result.exit_code == 1, result.output
            assert result.output.strip().splitlines() == [
                result.output.strip()
            ] and result.output.startswith(expected), result.output
            assert _writes(server, start) == [] and (reads or server.log[start:] == [])
    _their_bug_as_it_was(server)
    assert server.repo(SANDBOX).issues[theirs]["state"] == "open" and server.repo(
        SANDBOX
    ).issues[theirs]["_labels"] == ["bug"]
    assert _writes(server, before) == []


def test_a_run_needs_a_configured_sandbox_before_any_session(world):
    server, _, manifest, _, tmp_path = world
    write_manifest(
        manifest, tmp_path / "fixtures" / "m.json"
    )  # a genuine manifest: the repository must still come from the profile
    profile = tmp_path / "eval.yaml"
    profile.write_text("modes: [ghx]\n")
    scenario = Scenario(
        id="s-1",
        name="s",
        prompt="p",
        extensions={"fixture": {"requires": ["issue"], "reseedPerIteration": True}},
    )
    run = RunContext(
        run_id="r1",
        modes=("ghx",),
        scenarios=[scenario],
        repetitions=1,
        models=("m",),
        profile_path=str(profile),
        extensions={"fixtures": {"manifest": "fixtures/m.json"}},
    )
    hooks = EvalHooks(
        client_factory=lambda: GitHubClient(MAIN_TOKEN, base_url=server.url)
    )
    before = len(server.log)
    with pytest.raises(
        FixtureError,
        match=rf"^{re.escape(str(profile))}: extensions.fixtures.repo: required, the "
        r"sandbox repository",
    ):
        trio.run(hooks.before_run, run)
    assert server.log[before:] == []


def test_a_run_refuses_such_a_manifest_before_any_session(world):
    server, _, manifest, old_main, tmp_path = world
    write_manifest(
        _pointing_elsewhere(manifest, old_main), tmp_path / "fixtures" / "m.json"
    )
    profile = tmp_path / "eval.yaml"
    profile.write_text("modes: [ghx]\n")
    scenario = Scenario(
        id="s-1",
        name="s",
        prompt="p",
        extensions={"fixture": {"requires": ["pr"], "reseedPerIteration": True}},
    )
    run = RunContext(
        run_id="r1",
        modes=("ghx",),
        scenarios=[scenario],
        repetitions=1,
        models=("m",),
        profile_path=str(profile),
        extensions={
            "fixtures": {
                "repo": SANDBOX,
                "manifest": "fixtures/m.json",
                "reseed_between_modes": True,
            }
        },
    )
    hooks = EvalHooks(
        client_factory=lambda: GitHubClient(MAIN_TOKEN, base_url=server.url)
    )
    before = len(server.log)
    with pytest.raises(FixtureError, match=rf"refused: .*fixture 'pr' is in {OTHER}"):
        trio.run(hooks.before_run, run)
    _untouched(server, before)
    assert (
        json.loads((tmp_path / "fixtures" / "m.json").read_text())["fixtures"]["pr"][
            "repo"
        ]
        == OTHER
    )
