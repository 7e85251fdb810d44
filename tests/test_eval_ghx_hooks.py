"""Eval lifecycle hooks against the GitHub stand-in: fixture checks, resets, per-iteration seeds."""

from __future__ import annotations

import json
import re

import attrs
import pytest
import trio

from github_standin import MAIN_TOKEN, GitHubStandIn
from profiler_core import (
    AfterScenarioContext,
    BeforeScenarioContext,
    ProfilerError,
    RunContext,
    Scenario,
)
from profiler_eval_ghx.fixtures import FixtureError, seed_fixtures, write_manifest
from profiler_eval_ghx.github import GitHubClient
from profiler_eval_ghx.hooks import EvalHooks, scenario_fixture

REPO = "octo/eval-sandbox"


def _bind(scenario, manifest, variables):
    """Test binder: fills `{{var}}` from the fixture bindings (the real rules live in
    bindings.py)."""
    need = scenario_fixture(scenario)
    values = {}
    for var, target in need.bindings.items():
        name, *path = target.split(".")
        value = manifest.fixtures[name]
        for part in path:
            value = getattr(value, part) if hasattr(value, part) else value[part]
        values[var] = value
    values.update(variables)
    return attrs.evolve(
        scenario,
        prompt=re.sub(
            r"\{\{(\w+)\}\}", lambda m: str(values[m.group(1)]), scenario.prompt
        ),
    )


def _scenario(sid, requires, **fixture):
    return Scenario(
        id=sid,
        name=sid,
        prompt="Close issue #{{n}} ({{run_id}})",
        extensions={
            "fixture": {
                "repo": REPO,
                "requires": requires,
                "bindings": {"n": f"{requires[0]}.number"},
                **fixture,
            }
        },
    )


@pytest.fixture
def world(tmp_path, monkeypatch):
    with GitHubStandIn() as server:
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("GH_TOKEN", MAIN_TOKEN)
        client = GitHubClient(MAIN_TOKEN, base_url=server.url)
        yield server, client, tmp_path


def _run(tmp_path, scenarios, **fixtures):
    profile = tmp_path / "eval.yaml"
    profile.write_text("modes: [ghx]\n")
    return RunContext(
        run_id="run1",
        modes=("ghx", "baseline"),
        scenarios=scenarios,
        repetitions=1,
        models=("m",),
        extensions={
            "fixtures": {"repo": REPO, "manifest": "fixtures/m.json", **fixtures}
        },
        profile_path=str(profile),
    )


def test_scenario_fixture_reads_either_spelling():
    need = scenario_fixture(
        Scenario(
            id="a",
            name="a",
            prompt="p",
            extensions={"fixture": {"requires": ["pr"], "reseedPerIteration": True}},
        )
    )
    assert (
        need.requires == ("pr",)
        and need.reseed_per_iteration
        and not need.seed_per_iteration
    )
    assert scenario_fixture(Scenario(id="a", name="a", prompt="p")) is None


def test_before_run_names_missing_fixtures_and_the_seed_command(world):
    _, client, tmp_path = world
    hooks = EvalHooks(binder=_bind)
    run = _run(tmp_path, [_scenario("s-001", ["issue"]), _scenario("s-002", ["pr"])])
    with pytest.raises(FixtureError) as info:
        trio.run(hooks.before_run, run)
    message = str(info.value)
    assert message.startswith("missing fixtures: issue, pr (not in ")
    assert (
        f"profiler eval fixture seed --repo {REPO} --manifest "
        f"{tmp_path / 'fixtures' / 'm.json'} --name issue --name pr" in message
    )
    # A manifest with only one of them still names the other.
    write_manifest(
        trio.run(lambda: seed_fixtures(client, REPO, ["issue"])),
        tmp_path / "fixtures" / "m.json",
    )
    with pytest.raises(FixtureError, match=r"missing fixtures: pr \("):
        trio.run(hooks.before_run, run)


def test_before_run_without_a_fixtures_section():
    hooks = EvalHooks(binder=_bind)
    plain = RunContext(
        run_id="r",
        modes=("a",),
        scenarios=[Scenario(id="x", name="x", prompt="p")],
        repetitions=1,
    )
    trio.run(hooks.before_run, plain)  # not an eval profile: nothing to do
    needy = attrs.evolve(plain, scenarios=[_scenario("s-001", ["issue"])])
    with pytest.raises(
        FixtureError,
        match="s-001 require fixtures but the profile has no extensions.fixtures",
    ):
        trio.run(hooks.before_run, needy)


def test_seed_if_missing_seeds_and_writes_the_manifest(world):
    server, _, tmp_path = world
    hooks = EvalHooks(binder=_bind)
    run = _run(tmp_path, [_scenario("s-001", ["issue"])], seed_if_missing=True)
    trio.run(hooks.before_run, run)
    manifest = json.loads((tmp_path / "fixtures" / "m.json").read_text())
    assert list(manifest["fixtures"]) == ["issue"]
    assert (
        server.repo(REPO).issues[manifest["fixtures"]["issue"]["number"]]["state"]
        == "open"
    )


def test_before_mode_resets_everything_when_asked(world):
    server, client, tmp_path = world
    manifest = trio.run(lambda: seed_fixtures(client, REPO, ["pr", "issue"]))
    write_manifest(manifest, tmp_path / "fixtures" / "m.json")
    repo = server.repo(REPO)
    pr = manifest.fixtures["pr"]
    for reseed, expect_reset in ((False, False), (True, True)):
        trio.run(
            lambda: client.rest(
                "PUT",
                f"/repos/{REPO}/contents/x.txt",
                json={"message": "agent", "content": "eA==", "branch": pr.branch},
            )
        )
        hooks = EvalHooks(binder=_bind)
        run = _run(tmp_path, [_scenario("s-001", ["pr"])], reseed_between_modes=reseed)
        trio.run(hooks.before_run, run)
        trio.run(hooks.before_mode, "ghx", run)
        assert (repo.refs[pr.branch] == pr.metadata["originalSha"]) is expect_reset


def test_before_scenario_resets_and_binds(world):
    server, client, tmp_path = world
    manifest = trio.run(lambda: seed_fixtures(client, REPO, ["issue"]))
    write_manifest(manifest, tmp_path / "fixtures" / "m.json")
    number = manifest.fixtures["issue"].number
    scenario = _scenario("s-001", ["issue"], reseedPerIteration=True)
    run = _run(tmp_path, [scenario])
    hooks = EvalHooks(binder=_bind)
    trio.run(hooks.before_run, run)
    trio.run(
        lambda: client.rest(
            "PATCH", f"/repos/{REPO}/issues/{number}", json={"state": "closed"}
        )
    )
    bound = trio.run(
        hooks.before_scenario,
        BeforeScenarioContext(
            scenario=scenario, mode="ghx", model="m", iteration=0, run=run
        ),
    )
    assert bound.prompt == f"Close issue #{number} (run1)"
    assert (
        server.repo(REPO).issues[number]["state"] == "open"
    )  # reseedPerIteration reopened it


def test_seed_per_iteration_seeds_binds_and_cleans_up(world):
    server, client, tmp_path = world
    write_manifest(
        trio.run(
            lambda: seed_fixtures(client, REPO, ["issue_with_branch"], seed_id="base")
        ),
        tmp_path / "fixtures" / "m.json",
    )
    scenario = _scenario("s-001", ["issue_with_branch"], seedPerIteration=True)
    run = _run(tmp_path, [scenario])
    hooks = EvalHooks(binder=_bind)
    trio.run(hooks.before_run, run)
    repo = server.repo(REPO)
    numbers = []
    for iteration in (0, 1):
        bound = trio.run(
            hooks.before_scenario,
            BeforeScenarioContext(
                scenario=scenario, mode="ghx", model="m", iteration=iteration, run=run
            ),
        )
        number = int(re.search(r"#(\d+)", bound.prompt).group(1))
        numbers.append(number)
        branches = [
            b
            for b in repo.refs
            if b.startswith(f"ghx-eval/run1-m-ghx-s-001-{iteration}/")
        ]
        assert len(branches) == 1 and repo.issues[number]["state"] == "open"
        row = _row(scenario.id, iteration)
        trio.run(
            hooks.after_scenario,
            AfterScenarioContext(
                scenario=bound,
                mode="ghx",
                model="m",
                iteration=iteration,
                result=row,
                run=run,
            ),
        )
        assert repo.issues[number]["state"] == "closed" and branches[0] not in repo.refs
    assert numbers[0] != numbers[1]
    assert repo.issues[1]["state"] == "open"  # the manifest's own fixture is untouched


def test_after_scenario_failures_are_raised_once(world):
    server, client, tmp_path = world
    write_manifest(
        trio.run(lambda: seed_fixtures(client, REPO, ["issue"])),
        tmp_path / "fixtures" / "m.json",
    )
    scenario = _scenario("s-001", ["issue"], seedPerIteration=True)
    run = _run(tmp_path, [scenario])
    # No githubkit retries of the 500s here (its backoff is 1s, 4s, 9s): the hook's own
    # handling is under test.
    hooks = EvalHooks(
        binder=_bind, client_factory=lambda: GitHubClient.from_env(max_retries=0)
    )
    trio.run(hooks.before_run, run)
    bound = trio.run(
        hooks.before_scenario,
        BeforeScenarioContext(
            scenario=scenario, mode="ghx", model="m", iteration=0, run=run
        ),
    )
    server.fail_next("PATCH", r"/issues/\d+$", 500, times=10, message="boom")
    with pytest.raises(
        ProfilerError, match=r"fixture 'issue': cleanup failed: PATCH .* HTTP 500 boom"
    ):
        trio.run(
            hooks.after_scenario,
            AfterScenarioContext(
                scenario=bound,
                mode="ghx",
                model="m",
                iteration=0,
                result=_row("s-001", 0),
                run=run,
            ),
        )


def _row(scenario_id, iteration):
    from profiler_core import CostBreakdown, ProfileRow, TimingBreakdown, TokenBreakdown
    from profiler_core.model import ToolCallSummary

    return ProfileRow(
        run_id="run1",
        scenario_id=scenario_id,
        mode="ghx",
        model="m",
        iteration=iteration,
        started_at="2026-01-01T00:00:00Z",
        completed_at="2026-01-01T00:00:01Z",
        tokens=TokenBreakdown(),
        timing=TimingBreakdown(wall_ms=1000),
        tool_calls=ToolCallSummary(total=0),
        cost=CostBreakdown(),
        success=False,
        checkpoints_passed=0,
        checkpoints_total=0,
        provider="sim",
        session_id="s",
        agent_turns=0,
    )
