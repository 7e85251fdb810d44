"""Smoke test of bench/: ``run_all.py --quick --json`` runs and reports every figure
(not a benchmark)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN_ALL = ROOT / "bench" / "run_all.py"

# The keys of issue 9, written out here (not imported) so a renamed key fails this test.
ISSUE_KEYS = {
    "suite_overhead_ms_per_iter",
    "suite_latency_ms_c1",
    "suite_latency_ms_c8",
    "bootstrap_ci_ms",
    "bootstrap_reduction_ci_ms",
    "permutation_test_ms",
    "compare_groups_ms",
    "report_10k_ms",
    "report_10k_peak_rss_mb",
    "analyze_100k_events_ms",
    "report_1m_ms",
    "report_1m_peak_rss_mb",
    # issue 18
    "suite_latency_ms_c32",
    "suite_overhead_ms_per_iter_2k",
    "suite_overhead_ms_per_iter_20k",
    "suite_peak_rss_mb_2k",
    "suite_peak_rss_mb_20k",
    "ray_latency_ms_c8",
    "ray_overhead_ms_per_cell",
    # issue 18.4: analysis workers
    "big_traces_ms_per_iter_inline",
    "big_traces_ms_per_iter_workers",
    "big_traces_loop_stall_ms_inline",
    "big_traces_loop_stall_ms_workers",
    # issue 30: start-up, whole processes
    "startup_help_s",
    "startup_list_plugins_s",
    "startup_completion_s",
    "startup_validate_s",
    "startup_run_report_s",
    "startup_run_no_report_s",
}
RAY = {"ray_latency_ms_c8", "ray_overhead_ms_per_cell"}
REPORT_10K = {"report_10k_ms", "report_10k_peak_rss_mb"}
REPORT_1M = {"report_1m_ms", "report_1m_peak_rss_mb"}


def _env(parity_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env["PROFILER_BENCH_ANCHOR"] = str(parity_dir)
    return env


def _report_exists(env: dict[str, str]) -> bool:
    probe = [sys.executable, "-m", "profiler_core", "report", "--help"]
    return (
        subprocess.run(
            probe, check=False, env=env, capture_output=True, timeout=30
        ).returncode
        == 0
    )


def _load_run_all():
    spec = importlib.util.spec_from_file_location("bench_run_all", RUN_ALL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_quick_json_has_every_key_numeric(parity_dir):
    env = _env(parity_dir)
    proc = subprocess.run(
        [sys.executable, str(RUN_ALL), "--quick", "--json"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, (
        proc.stdout
    )  # exactly one JSON object, nothing else on stdout
    figures = json.loads(lines[0])
    assert set(figures) == ISSUE_KEYS
    # Without --scale the 1M-row report is not run; the 10k one only once `profiler report` exists.
    may_be_null = set(REPORT_1M) | (set() if _report_exists(env) else REPORT_10K)
    if importlib.util.find_spec("ray") is None and os.environ.get("CI") != "true":
        may_be_null |= RAY  # an optional extra; CI installs it
    for key, value in figures.items():
        if value is None:
            assert key in may_be_null, f"{key} is null: {proc.stderr}"
            continue
        assert isinstance(value, int | float) and not isinstance(value, bool), key
        assert math.isfinite(value) and value > 0, (key, value)


def test_replicated_rows_get_new_iteration_numbers(tmp_path, parity_dir):
    run_all = _load_run_all()
    target = tmp_path / "rows.jsonl"
    count = run_all.replicate_rows(
        parity_dir / "report-rows.jsonl.gz", target, copies=3, limit=40
    )
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert count == len(rows) == 120
    cells = {(r["mode"], r["scenarioId"], r["iteration"]) for r in rows}
    assert len(cells) == 120  # every copy is a new cell, not a duplicate
    assert len({r["sessionId"] for r in rows}) == 120
    with gzip.open(parity_dir / "report-rows.jsonl.gz", "rt") as f:
        first = json.loads(f.readline())
    span = 1 + max(
        json.loads(line)["iteration"] for line in target.read_text().splitlines()[:40]
    )
    shifted = rows[40 * 2]
    assert shifted["iteration"] == first["iteration"] + 2 * span
    assert {
        k: v for k, v in shifted.items() if k not in ("iteration", "sessionId")
    } == {k: v for k, v in first.items() if k not in ("iteration", "sessionId")}


@pytest.mark.parametrize(
    ("c1", "c8", "expected"),
    [
        (2000.0, 250.0, "8.00x (target >= 7x) ok"),
        (2000.0, 300.0, "6.67x (target >= 7x) MISSED"),
    ],
)
def test_latency_speedup_verdict(c1, c8, expected):
    run_all = _load_run_all()
    figures = dict.fromkeys(ISSUE_KEYS)
    figures.update(suite_latency_ms_c1=c1, suite_latency_ms_c8=c8)
    assert run_all._verdict("suite_latency_ms_c8", c8, figures).endswith(expected)


def test_bench_decoders_prints_each_decoders_cost_per_row(parity_dir):
    script = ROOT / "bench" / "bench_decoders.py"
    env = _env(parity_dir)
    out = subprocess.run(
        [sys.executable, str(script), "--repeat", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("1,000 rows")  # the parity rows in the repository
    costs = {line.split()[0]: float(line.split()[1]) for line in lines[1:]}
    assert {"columnar", "orjson+cattrs"} <= set(costs)
    assert all(cost > 0 for cost in costs.values())


def test_bench_workspace_measures_every_way_and_finds_the_hard_link_hazard():
    """The workspace benchmark runs (``--quick``) and tells that only a hard-linked copy
    lets an edit reach the source."""
    bench = Path(__file__).resolve().parent.parent / "bench" / "bench_workspace.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert sorted(result["ways"]) == [
        "clone",
        "clone-copy",
        "copy",
        "hardlink",
        "reflink",
    ]
    assert {way: f["edit_changes_source"] for way, f in result["ways"].items()} == {
        "clone": False,
        "clone-copy": False,
        "copy": False,
        "hardlink": True,
        "reflink": False,
    }
    assert all(f["prepare_ms"] > 0 for f in result["ways"].values())
    assert sorted(result["after"]) == [
        "keep",
        "report in place",
        "report private",
    ] and all(v > 0 for v in result["after"].values())
