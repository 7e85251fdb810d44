"""The stop rule (``profiler_core.runner.stopping``), the ``execution.stop`` profile
keys and the manifest's ``stop``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from profiler_core.config.loader import ProfileErrors, parse_profile
from profiler_core.config.schema import StopSettings
from profiler_core.model import (
    CostBreakdown,
    ProfileRow,
    RunManifest,
    StopRecord,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallSummary,
)
from profiler_core.runner.stopping import (
    Observations,
    StopRule,
    row_value,
    settings_from_record,
    settings_record,
)
from profiler_core.storage.serde import from_json, to_json

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ("s1", "s2", "s3", "s4")


def row(mode: str, scenario: str, iteration: int, *, success: bool = True, cost: float = 0.01, wall: float = 1000.0,
        model: str = "m", error: str | None = None, extensions: dict | None = None) -> ProfileRow:  # fmt: skip
    """One row with the fields a stop rule reads."""
    return ProfileRow(
        run_id="r", scenario_id=scenario, mode=mode, model=model, iteration=iteration,
        started_at="2026-01-01T00:00:00Z", completed_at="2026-01-01T00:00:01Z",
        tokens=TokenBreakdown(input=100, output=10), timing=TimingBreakdown(wall_ms=wall),
        tool_calls=ToolCallSummary(), cost=CostBreakdown(total_usd=cost), success=success,
        checkpoints_passed=int(success), checkpoints_total=1, provider="p", session_id=f"{mode}-{scenario}-{iteration}",
        error=error, extensions=extensions or {},
    )  # fmt: skip


def simulated_rows(
    rounds: int, *, success=(0.7, 0.7), cost_factor=1.0, seed=0, models=("m",)
) -> list[ProfileRow]:
    """Rows of a baseline and a candidate mode: success Bernoulli, cost and wall time
    log-normal (times ``cost_factor``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in models:
        for mode, rate, factor in (
            ("base", success[0], 1.0),
            ("cand", success[1], cost_factor),
        ):
            for it in range(rounds):
                for scen in SCENARIOS:
                    rows.append(
                        row(mode, scen, it, model=model, success=bool(rng.random() < rate),
                            cost=factor * float(rng.lognormal(-4.5, 0.5)), wall=factor * float(rng.lognormal(9, 0.4)))
                    )  # fmt: skip
    return rows


def rule(**settings) -> StopRule:
    return StopRule(
        settings=StopSettings(**settings), baseline="base", modes=("base", "cand")
    )


def first_stop(r: StopRule, rows, limit: int):
    for rounds in range(1, limit + 1):
        decision = r.check(rows, rounds=rounds)
        if decision.stop:
            return decision
    raise AssertionError("never stopped")


# ---------------------------------------------------------------- decisions


def test_a_clear_difference_is_decided_with_its_direction():
    rows = simulated_rows(40, success=(0.3, 0.95), cost_factor=0.5)
    decision = first_stop(rule(max_repetitions=40), rows, 40)
    assert decision.reason == "decided"
    assert decision.rounds < 40
    outcome = {c.metric: c.outcome for c in decision.comparisons}
    assert outcome["success"] == "higher"
    assert outcome["cost"] == "lower"
    cost = next(c for c in decision.comparisons if c.metric == "cost")
    assert cost.upper < 0 and cost.relative(cost.estimate) == pytest.approx(-50, abs=15)
    # Three metrics share the 5% error rate.
    assert all(
        c.confidence == pytest.approx(1 - 0.05 / 3) for c in decision.comparisons
    )


def test_identical_modes_are_decided_equivalent_only_within_the_margin():
    rows = simulated_rows(200, success=(0.8, 0.8), cost_factor=1.0, seed=3)
    wide = first_stop(
        rule(max_repetitions=200, metrics=("cost",), margins={"cost": "20%"}), rows, 200
    )
    assert wide.reason == "decided"
    assert wide.comparisons[0].outcome == "equivalent"
    narrow = first_stop(
        rule(max_repetitions=200, metrics=("cost",), margins={"cost": "1%"}), rows, 200
    )
    # A narrower margin needs more rounds (or is not reached at all).
    assert narrow.rounds > wide.rounds


def test_min_max_and_budget_reasons():
    rows = simulated_rows(10, success=(0.0, 1.0), cost_factor=0.2)
    r = rule(min_repetitions=4, max_repetitions=6, metrics=("success",))
    assert not r.check(
        rows, rounds=3
    ).stop  # decided already, but below min_repetitions
    assert r.check(rows, rounds=4).reason == "decided"
    undecidable = rule(
        min_repetitions=1, max_repetitions=6, metrics=("cost",), margins={"cost": 0}
    )
    same = simulated_rows(10, cost_factor=1.0, seed=9)
    assert undecidable.check(same, rounds=5).stop is False
    assert undecidable.check(same, rounds=5, budget_exhausted=True).reason == "budget"
    assert undecidable.check(same, rounds=6).reason == "max_repetitions"


def test_rows_beyond_the_rounds_and_warmups_are_ignored():
    rows = simulated_rows(5, success=(0.1, 0.9))
    r = rule(metrics=("success",))
    base = r.check(rows, rounds=3)
    extra = rows + [
        row("cand", "s1", 3, success=False),
        row("base", "s1", -1, success=True),
    ]
    again = r.check(extra, rounds=3)
    assert [(c.lower, c.upper, c.pairs) for c in again.comparisons] == [
        (c.lower, c.upper, c.pairs) for c in base.comparisons
    ]
    assert base.comparisons[0].pairs == 3 * len(SCENARIOS)


def test_errored_pairs_are_left_out_and_many_errors_block_a_decision():
    rows = simulated_rows(20, success=(0.1, 0.95), cost_factor=0.5)
    errored = [
        row("cand", "s1", it, success=False, cost=0.0, error="boom") for it in range(20)
    ]
    kept = [
        r for r in rows if not (r.mode == "cand" and r.scenario_id == "s1")
    ] + errored
    decision = rule(metrics=("success", "cost")).check(kept, rounds=20)
    assert all(c.pairs == 20 * 3 for c in decision.comparisons)  # s1's pairs are out
    assert {c.metric: c.outcome for c in decision.comparisons} == {
        "success": "higher",
        "cost": "lower",
    }
    all_bad = [r for r in rows if r.mode == "base"] + [
        row("cand", s, it, error="boom") for s in SCENARIOS for it in range(20) if (it + len(s)) % 2
    ] + [r for r in rows if r.mode == "cand" and (r.iteration + len(r.scenario_id)) % 2 == 0]  # fmt: skip
    blocked = rule(metrics=("success",)).check(all_bad, rounds=20)
    assert blocked.comparisons[0].outcome == "undecided"
    assert blocked.comparisons[0].why.startswith("too many errors (40 of 80 cand rows)")


def test_every_model_is_a_comparison_of_its_own():
    rows = simulated_rows(6, models=("m1", "m2"))
    decision = rule().check(rows, rounds=6)
    assert sorted({(c.model, c.metric) for c in decision.comparisons}) == sorted(
        (m, k) for m in ("m1", "m2") for k in ("success", "cost", "wall_ms")
    )


def test_cost_reads_like_the_report():
    assert (
        row_value(
            row("a", "s", 0, cost=0.5, extensions={"cost_total_usd": 0.25}), "cost"
        )
        == 0.25
    )
    assert math.isnan(
        row_value(
            row("a", "s", 0, cost=0.0, extensions={"cost_source": "unknown"}), "cost"
        )
    )
    assert row_value(row("a", "s", 0, wall=12.0), "wall_ms") == 12.0
    obs = Observations.from_rows(
        [row("a", "s", -1), row("a", "s", 0, success=False)], ["success"]
    )
    assert obs.values["success"].tolist() == [0.0]


def test_the_record_goes_into_the_manifest_and_back():
    rows = simulated_rows(10, success=(0.0, 1.0))
    settings = StopSettings(
        metrics=("success",), margins={"success": "3pp"}, min_repetitions=3
    )
    decision = StopRule(
        settings=settings, baseline="base", modes=("base", "cand")
    ).check(rows, rounds=3)
    record = decision.record()
    assert record == StopRecord(
        reason="decided", repetitions=3, settings=settings_record(settings)
    )
    manifest = RunManifest(run_id="r", profile_hash="h", started_at="t", stop=record)
    again = from_json(to_json(manifest), RunManifest)
    assert again == manifest
    assert settings_from_record(again.stop.settings) == settings
    assert "stop" not in to_json(
        RunManifest(run_id="r", profile_hash="h", started_at="t")
    )
    with pytest.raises(ValueError, match="does not stop"):
        StopRule(settings=settings, baseline="base", modes=("base", "cand")).check(
            rows, rounds=2
        ).record()


# ---------------------------------------------------------------- the profile keys


def parse(execution, modes=("a", "b"), overrides=None):
    data = {
        "modes": {m: {} for m in modes},
        "scenarios": {"path": str(ROOT / "examples/demo/scenarios")},
        "execution": execution,
    }
    return parse_profile(data, base_dir=ROOT, source="p.yaml", overrides=overrides)


def test_stop_defaults_and_shorthand():
    config = parse({"stop": "decided"})
    stop = config.execution.stop
    assert stop == StopSettings()
    assert (
        stop.min_repetitions,
        stop.max_repetitions,
        stop.metrics,
        stop.confidence,
    ) == (3, 50, ("success", "cost", "wall_ms"), 0.95)
    assert stop.margin("cost") == (0.05, "relative") and stop.margin("success") == (
        0.05,
        "points",
    )
    assert stop.margin("wall_ms") == (0.05, "relative")
    # The matrix is as long as the most rounds the rule may run.
    assert config.execution.repetitions == 50
    assert StopRule.for_config(config).baseline == "a"
    assert parse({}).execution.stop is None and StopRule.for_config(parse({})) is None
    custom = parse(
        {"stop": {"margins": {"wall_ms": 250, "success": 0.1}, "baseline": "b"}}
    ).execution.stop
    assert custom.margin("wall_ms") == (250.0, "absolute") and custom.margin(
        "success"
    ) == (0.1, "absolute")


def test_stop_problems_are_one_line_each():
    with pytest.raises(ProfileErrors) as exc:
        parse(
            {"repetitions": 5, "stop": {"rule": "asap", "min_repetitions": 9, "max_repetitions": 4, "metrics": ["costs"],
                                        "margins": {"cost": "3pp", "success": "5%", "wall": "1%"}, "confidence": 95,
                                        "baseline": "zz"}},
        )  # fmt: skip
    assert exc.value.problems == [
        "p.yaml: execution.stop.rule: expected `decided`, got 'asap'",
        "p.yaml: execution.stop.metrics[0]: expected one of success, cost, "
        "wall_ms, tokens, tool_calls, turns, got 'costs'",
        "p.yaml: execution.stop.margins.wall: expected one of success, cost, "
        "wall_ms, tokens, tool_calls, turns, got 'wall'",
        "p.yaml: execution.stop.confidence: expected a number between 0 and 1, "
        "such as 0.95, got 95",
    ]
    with pytest.raises(ProfileErrors) as exc:
        parse(
            {
                "repetitions": 5,
                "stop": {
                    "min_repetitions": 9,
                    "max_repetitions": 4,
                    "margins": {"cost": "3pp", "success": "5%"},
                    "baseline": "zz",
                },
            }
        )
    assert exc.value.problems == [
        "p.yaml: execution.stop: cannot be used with execution.repetitions "
        "(the stop rule decides the repetitions; remove one of them)",
        "p.yaml: execution.stop.min_repetitions: expected at most max_repetitions (4), got 9",
        "p.yaml: execution.stop.margins.cost: percentage points (pp) are for "
        "success; write a percentage (5%) or a number",
        "p.yaml: execution.stop.margins.success: a success margin is in "
        "percentage points: write it as 5pp (or 0.05)",
        "p.yaml: execution.stop.baseline: unknown mode 'zz' (modes: a, b)",
    ]
    with pytest.raises(
        ProfileErrors, match=r"--repetitions: cannot be used with execution.stop"
    ):
        parse({"stop": "decided"}, overrides={"repetitions": 3})
    with pytest.raises(
        ProfileErrors,
        match=r"execution.stop: needs at least two modes to compare \(the run has 1\)",
    ):
        parse({"stop": "decided"}, modes=("a",))
    with pytest.raises(
        ProfileErrors,
        match=r"execution.stop: expected `decided` or a mapping, got string 'soon'",
    ):
        parse({"stop": "soon"})


# ---------------------------------------------------------------- the report of a stopped run


def write_run(tmp_path, rows, stop):
    from profiler_core.storage.store import write_manifest

    results = tmp_path / "run_s.jsonl"
    results.write_text("".join(to_json(r) + "\n" for r in rows), encoding="utf-8")
    manifest = RunManifest(run_id="run_s", profile_hash="h", started_at="2026-01-01T00:00:00Z", modes=("base", "cand"),
                           repetitions=50, stop=stop)  # fmt: skip
    write_manifest(tmp_path / "run_s.manifest.json", manifest)
    return results


def test_the_report_says_why_the_run_stopped_and_uses_the_sequences(tmp_path):
    import json

    from profiler_core.report import write_report

    rows = [
        r
        for r in simulated_rows(12, success=(0.1, 0.95), cost_factor=0.5)
        if r.iteration < 12
    ]
    settings = StopSettings(metrics=("success", "cost"))
    decision = first_stop(
        StopRule(settings=settings, baseline="base", modes=("base", "cand")), rows, 12
    )
    assert decision.reason == "decided"
    written = write_report(
        write_run(tmp_path, rows, decision.record()),
        tmp_path / "report",
        parallel=False,
    )
    md = written.md.read_text(encoding="utf-8")
    assert (
        f"Stopped after {decision.rounds} of at most 50 repetitions: every comparison was decided"
        in md
    )
    assert "## Sequential decisions" in md
    assert (
        f"| {decision.rounds} |" in md
    )  # the Run table's repetitions are the rounds run
    cost = next(c for c in decision.comparisons if c.metric == "cost")
    # The verdict's cost finding is the sequence's, not the bootstrap's.
    finding = next(
        line for line in md.splitlines() if line.startswith("- ✅ **Cost:**")
    )
    assert (
        "confidence sequence" in finding
        and "lower" in finding
        and "Holm" not in finding
    )
    assert written.verdict[0].startswith(f"Stopped after {decision.rounds}")
    summary = json.loads(written.summary.read_text(encoding="utf-8"))
    assert (
        summary["stop"]["reason"] == "decided"
        and summary["stop"]["repetitions"] == decision.rounds
    )
    got = next(c for c in summary["stop"]["comparisons"] if c["metric"] == "cost")
    assert (got["lower"], got["upper"], got["decision"]) == (
        pytest.approx(cost.lower),
        pytest.approx(cost.upper),
        "lower",
    )
    html = written.html.read_text(encoding="utf-8")
    assert 'class="stopped"' in html and "<th>Confidence sequence</th>" in html
    # Tokens were not a stop metric: their finding is the ordinary one, marked as not
    # valid after stopping
    # (the run's length was chosen by peeking at the other metrics), and it claims no significance.
    tokens = next(
        line
        for line in md.splitlines()
        if line.startswith("- ") and "**Tokens:**" in line
    )
    assert (
        "Holm-adjusted" in tokens
        and "not valid after stopping" in tokens
        and "✅" not in tokens
    )
    # Wall time was no stop metric either (the rule decided success and cost): its
    # winner line is marked too.
    speed_winner = next(v for v in written.verdict if v.startswith("Speed:"))
    assert "significantly better" not in speed_winner and speed_winner.endswith(
        "(not valid after stopping)"
    )
    assert not next(v for v in written.verdict if v.startswith("Cost:")).endswith(
        "(not valid after stopping)"
    )
    # The error is the whole run's, and said so.
    assert "5% error for the whole run shared by its 2 intervals" in md


def test_the_headline_counts_rows_in_flight_apart_from_the_decision(tmp_path):
    """Rows of the round after the decision (in flight when the rule stopped) are
    counted apart, never as decided on."""
    from profiler_core.report import write_report

    rows = [
        r
        for r in simulated_rows(13, success=(0.1, 0.95), cost_factor=0.5)
        if r.iteration < 12
    ]
    settings = StopSettings(metrics=("success", "cost"))
    decision = first_stop(
        StopRule(settings=settings, baseline="base", modes=("base", "cand")), rows, 12
    )
    kept = [r for r in rows if r.iteration < decision.rounds]
    late = [r for r in rows if r.iteration == decision.rounds][:3]
    written = write_report(
        write_run(tmp_path, kept + late, decision.record()),
        tmp_path / "report",
        parallel=False,
    )
    assert (
        "; 3 rows of later rounds were in flight when it stopped: they are in "
        "the other statistics, not in the decision" in written.verdict[0]
    )
    pairs = {c.pairs for c in decision.comparisons}
    assert pairs == {decision.rounds * len(SCENARIOS)}


def test_a_report_without_a_stop_record_is_unchanged(tmp_path):
    from profiler_core.report import write_report

    rows = simulated_rows(4, success=(0.1, 0.95), cost_factor=0.5)
    written = write_report(
        write_run(tmp_path, rows, None), tmp_path / "report", parallel=False
    )
    md = written.md.read_text(encoding="utf-8")
    assert (
        "Stopped after" not in md
        and "Sequential decisions" not in md
        and "confidence sequence" not in md
    )


def test_the_benchmark_runs_and_prints_its_figures():
    # A smoke test of bench/bench_sequential.py (its figures mean nothing at 40 experiments).
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, str(ROOT / "bench/bench_sequential.py"), "--experiments", "40"],
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""}, capture_output=True, text=True, timeout=300, check=True,
    ).stdout  # fmt: skip
    assert "A/B: success 60% -> 75%, cost -20%" in out
    assert (
        sum(
            line.lstrip().startswith(("success ", "cost ")) for line in out.splitlines()
        )
        == 8
    )
    assert "the run: stops after" in out and "StopRule.check on 500 rows" in out
