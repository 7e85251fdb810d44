"""Fixture writes stay in the sandbox repository, whatever a manifest names (issue 31.1).

The stand-in holds the sandbox and a second repository ("someone else's"); a
manifest naming the second one, a branch outside ``ghx-eval/`` or an item
without the fixture label is refused in one line, and the stand-in's request
log proves nothing was sent.
"""

from __future__ import annotations

import json

import attrs
import pytest
import trio
from click.testing import CliRunner

from github_standin import MAIN_TOKEN, GitHubStandIn
from profiler_core import RunContext, Scenario
from profiler_core.cli import cli
from profiler_eval_ghx.fixtures import EVAL_LABEL, FixtureError, cleanup, reset_manifest, seed_fixtures, write_manifest
from profiler_eval_ghx.github import GitHubClient
from profiler_eval_ghx.hooks import EvalHooks

SANDBOX = "octo/eval-sandbox"
OTHER = "octo/precious"


@pytest.fixture
def world(tmp_path):
    with GitHubStandIn(repos=(SANDBOX, OTHER)) as server:
        client = GitHubClient(MAIN_TOKEN, base_url=server.url)
        manifest = trio.run(lambda: seed_fixtures(client, SANDBOX, ["pr", "issue"], seed_id="s1"))
        # Someone else's repository: an issue, a pull-request-like branch, and main moved on by a commit.
        precious = server.repo(OTHER)
        old_main = precious.refs["main"]
        precious.refs["main"] = precious.add_commit("their work", old_main, {"README.md": "theirs\n"})
        trio.run(lambda: client.rest("POST", f"/repos/{OTHER}/issues", json={"title": "their bug", "labels": ["bug"]}))
        yield server, client, manifest, old_main, tmp_path


def _pointing_elsewhere(manifest, old_main):
    """The manifest edited to name the other repository's main branch and its issue #1."""
    pr = attrs.evolve(manifest.fixtures["pr"], repo=OTHER, branch="main", metadata={**manifest.fixtures["pr"].metadata, "originalSha": old_main})
    issue = attrs.evolve(manifest.fixtures["issue"], repo=OTHER, number=1)
    return attrs.evolve(manifest, fixtures={"pr": pr, "issue": issue})


def _untouched(server, before):
    precious = server.repo(OTHER)
    assert precious.issues[1]["state"] == "open" and precious.issues[1]["_labels"] == ["bug"]
    assert len(server.log) == before, server.log[before:]  # not one request, not even a read


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
        assert f"fixture 'pr' is in {OTHER}" in message and "branch 'main'" in message and "nothing was sent" in message
    _untouched(server, before)
    assert server.repo(OTHER).refs["main"] == main_now


def test_the_manifests_own_repository_is_the_sandbox_when_none_is_configured(world):
    server, client, manifest, old_main, _ = world
    # The whole manifest "seeded" in the other repository: branch main is still refused...
    elsewhere = attrs.evolve(_pointing_elsewhere(manifest, old_main), repo=OTHER)
    before = len(server.log)
    with pytest.raises(FixtureError, match=r"refused: fixture 'pr' names branch 'main', not one under ghx-eval/"):
        trio.run(lambda: reset_manifest(client, elsewhere))
    _untouched(server, before)
    # ...and an issue without the fixture label is looked at, never closed.
    only_issue = attrs.evolve(elsewhere, fixtures={"issue": elsewhere.fixtures["issue"]})
    with pytest.raises(FixtureError, match=rf"refused: issue #1 in {OTHER} does not carry the label '{EVAL_LABEL}'; it was not closed"):
        trio.run(lambda: cleanup(client, only_issue))
    assert [r[0] for r in server.log[before:]] == ["GET"]
    assert server.repo(OTHER).issues[1]["state"] == "open"


def test_the_sandbox_still_works(world):
    server, client, manifest, _, _ = world
    trio.run(lambda: client.rest("PATCH", f"/repos/{SANDBOX}/issues/{manifest.fixtures['issue'].number}", json={"state": "closed"}))
    assert f"issue #{manifest.fixtures['issue'].number} reopened" in trio.run(lambda: reset_manifest(client, manifest, repo=SANDBOX))
    actions = trio.run(lambda: cleanup(client, manifest, repo=SANDBOX.upper()))  # GitHub names compare without case
    assert len([a for a in actions if a.startswith("close")]) == 2
    assert all(i["state"] == "closed" for i in server.repo(SANDBOX).issues.values())


def test_cli_refuses_in_one_line_before_any_request(world, monkeypatch):
    server, _, manifest, old_main, tmp_path = world
    path = write_manifest(_pointing_elsewhere(manifest, old_main), tmp_path / "m.json")
    env = {"GITHUB_API_URL": server.url, "GH_TOKEN": MAIN_TOKEN}
    before = len(server.log)
    for command in (["reset"], ["cleanup"], ["cleanup", "--dry-run"]):
        result = CliRunner().invoke(cli, ["eval", "fixture", *command, "--repo", SANDBOX, "--manifest", str(path)], env=env)
        assert result.exit_code == 1, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: refused: "), result.output
    _untouched(server, before)


def test_a_run_refuses_such_a_manifest_before_any_session(world):
    server, _, manifest, old_main, tmp_path = world
    write_manifest(_pointing_elsewhere(manifest, old_main), tmp_path / "fixtures" / "m.json")
    profile = tmp_path / "eval.yaml"
    profile.write_text("modes: [ghx]\n")
    scenario = Scenario(id="s-1", name="s", prompt="p", extensions={"fixture": {"requires": ["pr"], "reseedPerIteration": True}})
    run = RunContext(
        run_id="r1", modes=("ghx",), scenarios=[scenario], repetitions=1, models=("m",), profile_path=str(profile),
        extensions={"fixtures": {"repo": SANDBOX, "manifest": "fixtures/m.json", "reseed_between_modes": True}},
    )
    hooks = EvalHooks(client_factory=lambda: GitHubClient(MAIN_TOKEN, base_url=server.url))
    before = len(server.log)
    with pytest.raises(FixtureError, match=rf"refused: .*fixture 'pr' is in {OTHER}"):
        trio.run(hooks.before_run, run)
    _untouched(server, before)
    assert json.loads((tmp_path / "fixtures" / "m.json").read_text())["fixtures"]["pr"]["repo"] == OTHER
