"""Reports: numbers against independent computations, the six files, bad input, the CLI."""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from profiler_core import (
    CheckpointResult,
    CostBreakdown,
    ProfileRow,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallSummary,
    stats,
    to_json,
)
from profiler_core.cli.report import report_command
from profiler_core.errors import ProfilerError, StoreError
from profiler_core.report import format as fmt
from profiler_core.report import write_report
from profiler_core.report.load import load_rows
from profiler_core.stats.grouped import grouped_descriptive

# ---------------------------------------------------------------- a hand-made run
#
# Two modes x two scenarios x 6 iterations. "fast" is cheaper; s1 has two
# checks, s2 none. Successes: base s1 6/6, s2 4/6; fast s1 5/6, s2 6/6.

MODES = ("base", "fast")
SCENARIOS = ("s1", "s2")
REPS = 6
COST = {
    ("base", "s1"): [0.10, 0.12, 0.11, 0.13, 0.09, 0.10],
    ("base", "s2"): [0.20, 0.22, 0.19, 0.25, 0.21, 0.18],
    ("fast", "s1"): [0.07, 0.08, 0.06, 0.09, 0.07, 0.08],
    ("fast", "s2"): [0.15, 0.14, 0.16, 0.13, 0.17, 0.15],
}
WALL = {
    ("base", "s1"): [1000, 1200, 1100, 900, 1050, 980],
    ("base", "s2"): [2000, 2100, 1900, 2300, 2050, 1950],
    ("fast", "s1"): [1010, 1190, 1120, 880, 1060, 990],
    ("fast", "s2"): [2020, 2080, 1880, 2330, 2040, 1960],
}
SUCCESS = {("base", "s1"): 6, ("base", "s2"): 4, ("fast", "s1"): 5, ("fast", "s2"): 6}


def make_row(mode_: str, scen: str, it: int, **over) -> ProfileRow:
    """One valid row of the hand-made run (``over`` replaces fields)."""
    mode = mode_
    cost = COST[(mode, scen)][it]
    ok = it < SUCCESS[(mode, scen)]
    checks = ()
    if scen == "s1":
        checks = (
            CheckpointResult(id="c1", description="file exists", passed=True),
            CheckpointResult(id="c2", description="tests pass", passed=ok),
        )
    fields = {
        "run_id": "run_t",
        "scenario_id": scen,
        "mode": mode,
        "model": "m1",
        "iteration": it,
        "started_at": f"2026-01-01T00:{it:02d}:00Z",
        "completed_at": f"2026-01-01T00:{it:02d}:30Z",
        "tokens": TokenBreakdown(input=int(cost * 10000), output=100 + it, reasoning=0),
        "timing": TimingBreakdown(wall_ms=WALL[(mode, scen)][it]),
        "tool_calls": ToolCallSummary(
            total=3 + it % 2, by_category={"file": 2, "shell": 1 + it % 2}
        ),
        "cost": CostBreakdown(
            total_usd=cost, input_usd=cost * 0.7, output_usd=cost * 0.3
        ),
        "success": ok,
        "checkpoints_passed": sum(c.passed for c in checks),
        "checkpoints_total": len(checks),
        "checkpoint_details": checks,
        "provider": "sim",
        "session_id": f"ses-{mode}-{scen}-{it}",
        "agent_turns": 2 + it % 3,
        "extensions": {
            "judge_score": 0.5 + 0.05 * it + (0.1 if mode == "fast" else 0),
            "note": f"n{it}",
        },
    }
    fields.update(over)
    return ProfileRow(**fields)


def all_rows() -> list[ProfileRow]:
    return [make_row(m, s, i) for m in MODES for s in SCENARIOS for i in range(REPS)]


def write_rows(path: Path, rows, extra_lines: list[str] = ()) -> Path:
    path.write_text(
        "".join(to_json(r) + "\n" for r in rows) + "".join(extra_lines),
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The report of the hand-made run (written once for the module)."""
    tmp = tmp_path_factory.mktemp("hand")
    results = write_rows(tmp / "run_t.jsonl", all_rows())
    written = write_report(results, tmp / "report", parallel=False)
    return written, json.loads(written.summary.read_text()), written.md.read_text()


def values(mode: str, table: dict) -> np.ndarray:
    """A mode's values in (scenario, iteration) order: the pairing order."""
    return np.array([v for s in SCENARIOS for v in table[(mode, s)]], dtype=float)


def comparison(summary: dict, metric: str) -> dict:
    (comp,) = summary["comparisons"]
    return next(m for m in comp["metrics"] if m["metric"] == metric)


# ---------------------------------------------------------------- numbers


def test_reduction_point_estimate_equals_ratio_of_medians(report):
    _, summary, md = report
    a, b = values("fast", COST), values("base", COST)
    expected = (1 - np.median(a) / np.median(b)) * 100
    got = comparison(summary, "cost_total_usd")
    assert got["reductionPct"] == pytest.approx(expected, rel=1e-12)
    assert got["median"] == pytest.approx(np.median(a)) and got[
        "baselineMedian"
    ] == pytest.approx(np.median(b))
    assert fmt.pct(expected) in md


def test_reduction_ci_is_the_paired_bootstrap_of_the_engine_and_plausible(report):
    _, summary, md = report
    a, b = values("fast", COST), values("base", COST)
    got = comparison(summary, "cost_total_usd")
    engine = stats.bootstrap_reduction_ci(a, b, paired=True, seed=42)
    assert got["ci95"] == pytest.approx([engine.lower, engine.upper], rel=1e-12)
    # Independently: a plain numpy paired bootstrap (other seed) lands within a couple of points.
    rng = np.random.default_rng(7)
    cells = rng.integers(0, a.size, size=(20000, a.size))
    red = (1 - np.median(a[cells], axis=1) / np.median(b[cells], axis=1)) * 100
    lo, hi = np.percentile(red, [2.5, 97.5])
    assert got["ci95"][0] == pytest.approx(lo, abs=3.0)
    assert got["ci95"][1] == pytest.approx(hi, abs=3.0)
    assert got["ci95"][0] < got["reductionPct"] < got["ci95"][1]
    assert fmt.ci(*got["ci95"]) in md


def test_p_value_is_the_exact_sign_flip_test_and_holm_adjusted(report):
    _, summary, _ = report
    a, b = values("fast", COST), values("base", COST)
    d = a - b
    # All 2^12 sign flips, enumerated independently.
    flips = np.array(list(itertools.product([1, -1], repeat=d.size)))
    null = flips @ d / d.size
    expected_p = np.mean(np.abs(null) >= abs(d.mean()) - 1e-12)
    got = comparison(summary, "cost_total_usd")
    assert got["pValue"] == pytest.approx(expected_p, rel=1e-9)
    # Holm across this comparison's metrics, recomputed.
    (comp,) = summary["comparisons"]
    ps = np.array([m["pValue"] for m in comp["metrics"]])
    order = np.argsort(ps, kind="stable")
    scaled = np.minimum(
        np.maximum.accumulate(ps[order] * (len(ps) - np.arange(len(ps)))), 1
    )
    adjusted = np.empty_like(ps)
    adjusted[order] = scaled
    assert [m["pValueAdjusted"] for m in comp["metrics"]] == pytest.approx(
        list(adjusted)
    )
    assert got["significant"] == (got["pValueAdjusted"] < 0.05)
    assert comp["paired"] is True


def test_cohens_d_is_the_pooled_sd_formula(report):
    _, summary, _ = report
    a, b = values("fast", WALL), values("base", WALL)
    pooled = math.sqrt(
        ((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1))
        / (a.size + b.size - 2)
    )
    got = comparison(summary, "latency_wall_ms")
    assert got["effectSize"] == pytest.approx((a.mean() - b.mean()) / pooled)
    # Wall time barely differs: not significant, and the cheaper cost is.
    assert got["significant"] is False
    assert comparison(summary, "cost_total_usd")["verdict"] == "better"


def wilson(c: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = c / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def test_success_rate_wilson_interval_and_pass_k(report):
    _, summary, md = report
    for mode in MODES:
        got = summary["modeSummaries"][mode]["success"]
        c = sum(SUCCESS[(mode, s)] for s in SCENARIOS)
        n = REPS * len(SCENARIOS)
        assert (got["successes"], got["trials"]) == (c, n)
        assert got["rate"] == pytest.approx(c / n)
        assert got["wilson95"] == pytest.approx(list(wilson(c, n)), abs=1e-12)
        # k = repetitions: pass^k is 1 for a scenario that always passed, else 0; pass@k
        # 1 if any passed.
        assert got["k"] == REPS
        per = [SUCCESS[(mode, s)] for s in SCENARIOS]
        assert got["passHatK"] == pytest.approx(
            np.mean([math.comb(c_, REPS) / math.comb(REPS, REPS) for c_ in per])
        )
        assert got["passAtK"] == pytest.approx(
            np.mean([1.0 if c_ else 0.0 for c_ in per])
        )
        assert got["passAt1"] == pytest.approx(np.mean([c_ / REPS for c_ in per]))
        lo, hi = wilson(c, n)
        assert f"{fmt.rate(c / n)} [{fmt.rate(lo)}, {fmt.rate(hi)}] ({c}/{n})" in md
    assert summary["modeSummaries"]["base"]["success"]["passHatK"] == 0.5
    assert f"pass^{REPS}" in md and "50.0%" in md


def test_success_difference_and_per_scenario_descriptives(report):
    _, summary, _ = report
    comp = summary["comparisons"][0]["success"]
    assert comp["differencePp"] == pytest.approx((11 / 12 - 10 / 12) * 100)
    cell = summary["scenarioSummaries"]["s2"]["modes"]["fast"]["metrics"][
        "cost_total_usd"
    ]
    ref = stats.compute_descriptive(COST[("fast", "s2")])
    for field in (
        "count",
        "mean",
        "median",
        "p90",
        "p95",
        "min",
        "max",
        "iqr",
        "stddev",
        "cv",
    ):
        assert cell[field] == pytest.approx(getattr(ref, field), rel=1e-12), field


def test_scenario_without_checks_says_no_checks(report):
    _, summary, md = report
    assert summary["scenarioSummaries"]["s2"]["noChecks"] is True
    assert summary["scenarioSummaries"]["s1"]["noChecks"] is False
    assert summary["scenarioSummaries"]["s2"]["modes"]["base"]["checkpoints"] is None
    assert "**s2**: no checks" in md
    c2 = next(
        c for c in summary["scenarioSummaries"]["s1"]["checkpoints"] if c["id"] == "c2"
    )
    assert c2["modes"]["fast"] == {"passed": 5, "total": 6}


def test_exports_csv_json_and_metrics(report):
    written, summary, _ = report
    rows = list(csv.DictReader(written.csv.open(encoding="utf-8")))
    assert len(rows) == 24
    first = rows[0]
    assert (
        first["mode"] == "base"
        and first["scenario_id"] == "s1"
        and first["iteration"] == "0"
    )
    assert first["tokens_input"] == "1000" and first["cost_total_usd"] == "0.1"
    assert first["success"] == "true" and first["extensions.note"] == "n0"
    assert first["tool_calls_by_category.shell"] == "1"
    assert rows[5]["checkpoints_failed"] == ""
    base_s1_failed = [
        r
        for r in rows
        if r["mode"] == "fast" and r["scenario_id"] == "s1" and r["checkpoints_failed"]
    ]
    assert [r["checkpoints_failed"] for r in base_s1_failed] == ["c2"]
    data = json.loads(written.json.read_text())
    assert len(data) == 24 and data[3]["sessionId"] == "ses-base-s1-3"
    names = [m["name"] for m in summary["metrics"]]
    assert names[:2] == ["cost_total_usd", "latency_wall_ms"]
    assert "judge_score" in names and "tool_calls_category_shell" in names
    # Constant metrics (reasoning tokens are always 0) are listed, not compared.
    assert "tokens_reasoning" in summary["omittedConstantMetrics"]
    assert written.html.read_text().count("<svg") >= 5


def test_html_links_comparison_rows_to_per_scenario_details(report):
    written, _, _ = report
    page = written.html.read_text()
    assert (
        'href="#metric-cost_total_usd"' in page and 'id="metric-cost_total_usd"' in page
    )
    assert 'id="scenario-s1"' in page and 'href="#scenario-s1"' in page
    assert "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    ).replace('xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    assert "<script" not in page


# ---------------------------------------------------------------- the original's rows


def test_parity_rows_produce_all_six_files(parity_dir, tmp_path):
    written = write_report(parity_dir / "report-rows.jsonl.gz", tmp_path / "r")
    for path in (
        written.md,
        written.analysis_md,
        written.html,
        written.csv,
        written.json,
        written.summary,
    ):
        assert path.is_file() and path.stat().st_size > 0, path
    assert written.rows == 1_000 and written.warnings == ()
    summary = json.loads(written.summary.read_text())
    assert summary["modes"] == ["mode_a", "mode_b"] and len(summary["scenarios"]) == 10
    assert summary["modeSummaries"]["mode_a"]["success"]["successes"] == 464
    assert summary["k"] == 50
    comp = summary["comparisons"][0]
    assert comp["paired"] is True and comp["mode"] == "mode_b"
    with written.csv.open(encoding="utf-8") as f:
        assert sum(1 for _ in f) == 1_001
    assert len(json.loads(written.json.read_text())) == 1_000
    md = written.md.read_text()
    assert "## Comparison: mode_b vs mode_a" in md and "## Verdict" in md
    assert "No session analysis data available" in written.analysis_md.read_text()
    page = written.html.read_text()
    assert page.count("<svg") >= 6 and "mode_b" in page


# ---------------------------------------------------------------- statistics helpers


def test_grouped_descriptive_matches_compute_descriptive():
    rng = np.random.default_rng(3)
    values_ = rng.lognormal(3, 1, 500)
    values_[rng.integers(0, 500, 40)] = np.nan
    groups = rng.integers(0, 7, 500)
    got = grouped_descriptive(values_, groups, 8)
    for g in range(7):
        sample = values_[(groups == g) & ~np.isnan(values_)]
        ref = stats.compute_descriptive(sample)
        for field in (
            "count",
            "mean",
            "median",
            "p90",
            "p95",
            "min",
            "max",
            "iqr",
            "stddev",
            "cv",
        ):
            assert got[field][g] == pytest.approx(getattr(ref, field), rel=1e-9), (
                g,
                field,
            )
    assert got["count"][7] == 0 and math.isnan(got["median"][7])


@pytest.mark.parametrize("paired", [False, True])
def test_large_sample_p_value_agrees_with_the_permutation_test(paired):
    rng = np.random.default_rng(11)
    a = rng.gamma(2.0, 10.0, 400)
    b = a + rng.normal(0.5, 6.0, 400) if paired else rng.gamma(2.0, 10.4, 400)
    exact = stats.permutation_test(a, b, paired=paired, seed=42).p_value
    approx = stats.permutation_test_normal(a, b, paired=paired).p_value
    assert 0.001 < exact < 0.9
    assert approx == pytest.approx(exact, abs=0.015)


def test_modes_with_different_cells_are_compared_unpaired(tmp_path):
    rows = all_rows()[:-1]  # fast lost its last s2 iteration
    written = write_report(
        write_rows(tmp_path / "r.jsonl", rows), tmp_path / "out", parallel=False
    )
    comp = json.loads(written.summary.read_text())["comparisons"][0]
    assert comp["paired"] is False and "not paired" in comp["pairing"]


def test_unknown_cost_is_missing_not_zero(tmp_path):
    rows = [
        make_row(
            m,
            s,
            i,
            cost=CostBreakdown(),
            extensions={"cost_source": "unknown"}
            if m == "fast"
            else {"cost_source": "provider"},
        )
        for m in MODES
        for s in SCENARIOS
        for i in range(REPS)
    ]
    table = load_rows(write_rows(tmp_path / "r.jsonl", rows))
    from profiler_core.report.summary import metric_columns

    _, columns, _ = metric_columns(table)
    modes = np.array(table.categorical["mode"].labels())
    assert np.isnan(columns["cost_total_usd"][modes == "fast"]).all()
    assert (columns["cost_total_usd"][modes == "base"] == 0).all()


def test_baseline_option_and_manifest(tmp_path):
    from profiler_core.model import PluginRecord, RunManifest
    from profiler_core.storage.store import write_manifest

    results = write_rows(tmp_path / "run_t.jsonl", all_rows())
    write_manifest(
        tmp_path / "run_t.manifest.json",
        RunManifest(run_id="run_t", profile_hash="h", started_at="2026-01-01T00:00:00Z", provider="sim-provider",
                    modes=("fast", "base"), repetitions=REPS, plugins=(PluginRecord(name="myplug", version="1.2"),),
                    metric_units={"judge_score": "score"}),
    )  # fmt: skip
    written = write_report(results, tmp_path / "a", parallel=False)
    summary = json.loads(written.summary.read_text())
    assert summary["baseline"] == "fast" and summary["modes"] == ["fast", "base"]
    md = written.md.read_text()
    assert "sim-provider" in md and "myplug 1.2" in md
    assert (
        next(m for m in summary["metrics"] if m["name"] == "judge_score")["unit"]
        == "score"
    )
    written = write_report(results, tmp_path / "b", baseline="base", parallel=False)
    assert json.loads(written.summary.read_text())["baseline"] == "base"
    with pytest.raises(ProfilerError, match="baseline 'nope'.*modes: fast, base"):
        write_report(results, tmp_path / "c", baseline="nope", parallel=False)


def test_analysis_md_shows_only_findings_that_differ(tmp_path):
    results = write_rows(tmp_path / "run_t.jsonl", all_rows())
    lines = []
    for mode in MODES:
        for i in range(3):
            lines.append(json.dumps({
                "sessionId": f"s-{mode}-{i}", "scenarioId": "s1", "mode": mode, "model": "m1", "iteration": i,
                "results": {"efficiency": {"analyzer": "efficiency", "summary": "", "findings": {
                    "turns": {"type": "number", "value": 3 + i + (5 if mode == "fast" else 0), "unit": "turns"},
                    "same": {"type": "number", "value": 1, "unit": "x"},
                    "tools": {"type": "list", "values": ["bash"] if mode == "base" else ["bash", "mytool"]},
                }}},
            }))  # fmt: skip
    lines.append("{broken")
    (tmp_path / "run_t.analysis.jsonl").write_text("\n".join(lines) + "\n")
    written = write_report(results, tmp_path / "out", parallel=False)
    text = written.analysis_md.read_text()
    assert "| turns | 4 turns | 9 turns |" in text
    assert "| same |" not in text
    assert "<summary>tools</summary>" in text and "mytool" in text
    assert any("run_t.analysis.jsonl:7" in w for w in written.warnings)


# ---------------------------------------------------------------- bad input


def test_missing_file_is_one_clear_error(tmp_path):
    with pytest.raises(StoreError, match=r"nope\.jsonl: results file not found"):
        write_report(tmp_path / "nope.jsonl", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_empty_file_is_one_clear_error(tmp_path):
    (tmp_path / "e.jsonl").write_text("")
    with pytest.raises(StoreError, match="results file is empty"):
        write_report(tmp_path / "e.jsonl", tmp_path / "out")


def test_malformed_lines_are_counted_skipped_and_named(tmp_path):
    good = all_rows()
    bad_type = json.loads(to_json(good[0]))
    bad_type["tokens"]["input"] = "many"
    missing = json.loads(to_json(good[1]))
    del missing["mode"]
    lines = [to_json(r) + "\n" for r in good[:10]]
    lines.insert(2, "not json at all\n")
    lines.insert(5, json.dumps(bad_type) + "\n")
    lines.insert(7, json.dumps(missing) + "\n")
    lines.append(to_json(good[10])[:50])  # truncated last line, no newline
    path = tmp_path / "r.jsonl"
    path.write_text("".join(lines))
    written = write_report(path, tmp_path / "out", parallel=False)
    assert written.rows == 10
    warnings = written.warnings
    assert len(warnings) == 4
    assert warnings[0].startswith(f"{path}:3: not valid JSON")
    assert warnings[1].startswith(f"{path}:6:") and "tokens.input" in warnings[1]
    assert warnings[2].startswith(f"{path}:8:") and "mode" in warnings[2]
    assert (
        warnings[3]
        == f"{path}:14: truncated last line (the run was probably interrupted); skipped"
    )
    md = written.md.read_text()
    assert "(4 malformed lines skipped)" in md and f"{path}:6" in md
    assert len(json.loads(written.json.read_text())) == 10


def test_many_malformed_lines_are_summarised(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(to_json(r) + "\n" for r in all_rows()) + "{}\n" * 30)
    table = load_rows(path)
    assert table.skipped == 30 and len(table.problems) == 21
    assert table.problems[-1] == f"{path}: 10 more malformed line(s) skipped"


def test_only_malformed_lines_is_an_error(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("{}\n[1]\n")
    with pytest.raises(
        StoreError, match=r"no valid rows \(2 malformed line\(s\); first: .*r\.jsonl:1:"
    ):
        write_report(path, tmp_path / "out")
    assert not (tmp_path / "out" / "data" / "results.json").exists()


def test_gzip_input(tmp_path):
    path = tmp_path / "r.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("".join(to_json(r) + "\n" for r in all_rows()))
    assert load_rows(path).n == 24


# ---------------------------------------------------------------- CLI


def test_cli_run_id_lookup_and_default_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("results").mkdir()
    write_rows(Path("results") / "run_t.jsonl", all_rows())
    result = CliRunner().invoke(report_command, ["run_t"])
    assert result.exit_code == 0, result.output
    assert Path("reports/run_t/report.html").is_file()
    assert "Report:   reports/run_t/report.html" in result.output


def test_cli_errors_are_one_line(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        report_command, ["missing_run", "--results-dir", str(tmp_path)]
    )
    assert result.exit_code == 1
    assert (
        result.output.strip().count("\n") == 0
        and "no run 'missing_run'" in result.output
    )
    result = runner.invoke(report_command, [str(tmp_path / "x.jsonl")])
    assert result.exit_code == 1 and "results file not found" in result.output
    path = write_rows(tmp_path / "r.jsonl", all_rows())
    result = runner.invoke(
        report_command, [str(path), "--out", str(tmp_path / "o"), "--baseline", "zzz"]
    )
    assert result.exit_code == 1 and "--baseline 'zzz'" in result.output


def test_cli_prints_skipped_lines(tmp_path):
    path = write_rows(tmp_path / "r.jsonl", all_rows(), ["oops\n"])
    result = CliRunner().invoke(
        report_command, [str(path), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 0
    assert f"warning: {path}:25: not valid JSON" in result.output


# ---------------------------------------------------------------- two processes


def test_two_process_read_and_csv_give_identical_files(tmp_path, monkeypatch):
    from profiler_core.report import exports, load

    rows = [to_json(r) + "\n" for r in all_rows()]
    rows.insert(3, "broken one\n")
    rows.insert(20, '{"mode": 1}\n')
    rows[15] = (
        to_json(
            make_row(
                "fast", "s1", 2, extensions={"late_metric": 7, "note": {"nested": True}}
            )
        )
        + "\n"
    )
    path = tmp_path / "r.jsonl"
    path.write_text("".join(rows))
    sequential = write_report(path, tmp_path / "seq", parallel=False)
    monkeypatch.setattr(load, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(exports, "PARALLEL_ROWS", 2)
    # Earlier tests in this process may leave idle worker threads (trio's thread cache), which make
    # can_fork() refuse; they hold no lock the child needs, so fork here regardless.
    monkeypatch.setattr(load, "can_fork", lambda: True)
    split = load._split_point(path)
    assert split is not None and 0 < split < path.stat().st_size
    from profiler_core.report import parallel

    calls = []
    monkeypatch.setattr(
        parallel,
        "merge",
        lambda a, b, real=parallel.merge: calls.append("merge") or real(a, b),
    )
    real_halves = parallel.write_halves
    monkeypatch.setattr(
        parallel, "write_halves", lambda *a: calls.append("csv") or real_halves(*a)
    )
    forked = write_report(
        path, tmp_path / "par"
    )  # small file: no HTML helper, but forks for rows and CSV
    assert calls == ["merge", "csv"]
    assert forked.warnings == sequential.warnings
    assert forked.warnings[0].startswith(f"{path}:4:") and forked.warnings[
        1
    ].startswith(f"{path}:21:")
    assert forked.csv.read_bytes() == sequential.csv.read_bytes()
    # The forked reader writes its rows straight into results.json: same rows, a few
    # spaces of padding.
    assert json.loads(forked.json.read_text()) == json.loads(
        sequential.json.read_text()
    )
    # (the padding is the size of the rejected lines in the first half, "broken one\n", plus 2)
    assert (
        forked.json.stat().st_size - sequential.json.stat().st_size
        == len("broken one\n") + 2
    )
    a = json.loads(sequential.summary.read_text())
    b = json.loads(forked.summary.read_text())
    a.pop("generatedAt"), b.pop("generatedAt")
    assert a == b


def test_one_mode_odd_names_and_undefined_reductions(tmp_path):
    odd = "<b>|x</b>"
    rows = [make_row("base", s, i, mode=odd) for s in SCENARIOS for i in range(REPS)]
    written = write_report(
        write_rows(tmp_path / "one.jsonl", rows), tmp_path / "one", parallel=False
    )
    page = written.html.read_text()
    assert "<b>|x</b>" not in page and "&lt;b&gt;|x&lt;/b&gt;" in page
    assert "Only one mode" in page and "\\|x" in written.md.read_text()
    assert json.loads(written.summary.read_text())["comparisons"] == []
    # A baseline whose median is 0 gives an undefined reduction (null), never 0.
    rows = [
        make_row(m, s, i, agent_turns=(0 if m == "base" else 3 + i))
        for m in MODES
        for s in SCENARIOS
        for i in range(REPS)
    ]
    written = write_report(
        write_rows(tmp_path / "zero.jsonl", rows), tmp_path / "zero", parallel=False
    )
    turns = comparison(json.loads(written.summary.read_text()), "agent_turns")
    assert (
        turns["reductionPct"] is None and "baseline (b) median is 0" in turns["reason"]
    )
    assert (
        turns["verdict"] == "worse"
    )  # the means differ significantly and lower is better
    assert written.html.read_text().count("<svg") >= 5


def test_two_process_read_when_one_half_has_no_valid_row(tmp_path, monkeypatch):
    from profiler_core.report import load

    monkeypatch.setattr(load, "PARALLEL_MIN_BYTES", 0)
    good = [to_json(r) + "\n" for r in all_rows()[:4]]
    bad = ["x" * 3000 + "\n"] * 2
    for name, lines, valid in (("first", bad + good, 4), ("second", good + bad, 4)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(lines))
        collected: list[bytes] = []
        table = load.load_rows(
            path, sink=collected.append
        )  # a plain callable: the lines-file route
        assert table.n == valid and table.skipped == 2
        assert [json.loads(x)["iteration"] for x in collected] == [0, 1, 2, 3]
        written = write_report(path, tmp_path / name)  # results.json: the splice route
        assert [r["iteration"] for r in json.loads(written.json.read_text())] == [
            0,
            1,
            2,
            3,
        ]


def test_html_helper_process_renders_the_page_or_falls_back(tmp_path, monkeypatch):
    import profiler_core.report as report_pkg
    from profiler_core.report import worker

    path = write_rows(tmp_path / "r.jsonl", all_rows())
    results = []
    real_wait = worker.HtmlWorker.wait

    def spy_wait(self, *a):
        results.append(real_wait(self, *a))
        return results[-1]

    monkeypatch.setattr(worker.HtmlWorker, "wait", spy_wait)
    monkeypatch.setattr(report_pkg, "_start_worker", lambda p: worker.HtmlWorker())
    helped = write_report(path, tmp_path / "helped")
    assert results == [None]  # the helper wrote the page
    assert "<svg" in helped.html.read_text()

    class Broken(worker.HtmlWorker):
        def submit(self, job):
            super().submit({**job, "summary": None})

    monkeypatch.setattr(report_pkg, "_start_worker", lambda p: Broken())
    fallback = write_report(path, tmp_path / "fallback")
    assert results[-1] is not None and "AttributeError" in results[-1]
    assert fallback.html.read_text().count("<svg") == helped.html.read_text().count(
        "<svg"
    )
