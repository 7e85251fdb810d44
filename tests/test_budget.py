"""Run budgets (execution.max_cost_usd / max_tokens) and --time-limit (issue 16.15)."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from profiler_core import ModeConfig, Scenario
from profiler_core.config.loader import ProfileErrors, load_profile
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.storage.store import read_jsonl
from profiler_core.testing import FakeProvider, FixedScorer


def _options(tmp_path, manager, **kw):
    base = dict(
        provider=FakeProvider(),
        scorer=FixedScorer(),  # 150 tokens a cell
        scenarios=[Scenario(id=f"s{i}", name="S", prompt="do") for i in range(5)],
        modes={"a": ModeConfig(), "b": ModeConfig()},
        repetitions=2,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        run_id="run_budget",
    )
    base.update(kw)
    options = RunOptions(**base)
    options.plugin_manager = manager
    return options


def _run(options):
    return trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )


def test_no_new_cell_once_the_budget_is_spent_and_resume_with_more_continues(
    tmp_path, profiler_plugin_manager
):
    result = _run(_options(tmp_path, profiler_plugin_manager, max_tokens=600))
    assert result.status == "budget_exhausted"
    assert (
        len(result.rows) == 4
    )  # 4 x 150 tokens reach the limit; nothing starts after that
    manifest = json.loads(
        (tmp_path / "results" / "run_budget.manifest.json").read_text()
    )
    assert manifest["status"] == "budget_exhausted" and any(
        "budget spent (600 of 600 tokens)" in w for w in manifest["warnings"]
    )
    previous = read_jsonl(tmp_path / "results" / "run_budget.jsonl").rows
    resumed = _run(
        _options(
            tmp_path,
            profiler_plugin_manager,
            max_tokens=100_000,
            previous_rows=previous,
        )
    )
    assert resumed.status == "completed"
    cells = [r.cell for r in read_jsonl(tmp_path / "results" / "run_budget.jsonl").rows]
    assert len(cells) == len(set(cells)) == 20


def test_time_limit_caps_every_session(tmp_path, profiler_plugin_manager):
    options = _options(
        tmp_path,
        profiler_plugin_manager,
        provider=FakeProvider(latency_s=2.0),
        time_limit_ms=500,
        repetitions=1,
    )
    result = _run(options)
    assert {r.completion_reason for r in result.rows} == {"timeout"}
    assert {r.error for r in result.rows} == {"timed out after 500 ms"}


def test_budget_keys_are_checked_and_do_not_change_the_profile_hash(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.json").write_text(
        '{"id": "s", "name": "S", "prompt": "p"}'
    )
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "modes: {a: {}}\nscenarios: {path: scenarios}\nexecution: "
        "{max_cost_usd: -1, max_tokens: 0}\n"
    )
    with pytest.raises(ProfileErrors) as info:
        load_profile(profile)
    assert any(
        "execution.max_cost_usd: expected a number > 0" in p
        for p in info.value.problems
    )
    assert any("execution.max_tokens" in p for p in info.value.problems)
    profile.write_text(
        "modes: {a: {}}\nscenarios: {path: scenarios}\nexecution: {max_cost_usd: 0.5}\n"
    )
    low = load_profile(profile)
    profile.write_text(
        "modes: {a: {}}\nscenarios: {path: scenarios}\nexecution: {max_cost_usd: 5}\n"
    )
    high = load_profile(profile)
    assert (low.execution.max_cost_usd, high.execution.max_cost_usd) == (0.5, 5.0)
    assert (
        low.profile_hash() == high.profile_hash()
    )  # a raised budget may resume the same run


def test_a_time_budget_stops_new_cells_and_says_so(tmp_path, profiler_plugin_manager):
    """``max_duration_s``: past it no new cell starts (on the run's clock), the running
    ones finish."""
    options = _options(
        tmp_path,
        profiler_plugin_manager,
        provider=FakeProvider(latency_s=10.0),
        max_duration_s=25.0,
    )
    result = _run(options)
    assert result.status == "budget_exhausted"
    assert (
        len(result.rows) == 3
    )  # cells start at 0, 10 and 20 s; at 30 s the 25 s are spent
    manifest = json.loads(
        (tmp_path / "results" / "run_budget.manifest.json").read_text()
    )
    assert any("budget spent (30.0 of 25 s)" in w for w in manifest["warnings"])


def test_max_duration_is_checked_like_the_other_budget_keys(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s.json").write_text(
        '{"id": "s", "name": "S", "prompt": "p"}'
    )
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "modes: {a: {}}\nscenarios: {path: scenarios}\nexecution: {max_duration_s: 0}\n"
    )
    with pytest.raises(ProfileErrors) as info:
        load_profile(profile)
    assert any(
        "execution.max_duration_s: expected a number > 0" in p
        for p in info.value.problems
    )
    profile.write_text(
        "modes: {a: {}}\nscenarios: {path: scenarios}\nexecution: {max_duration_s: 3600}\n"
    )
    with_limit = load_profile(profile)
    profile.write_text("modes: {a: {}}\nscenarios: {path: scenarios}\n")
    assert with_limit.execution.max_duration_s == 3600
    assert (
        with_limit.profile_hash() == load_profile(profile).profile_hash()
    )  # more time may resume the same run
