"""The verifiers' reward wherever success is shown, and unknown costs that stay unknown.

A run with Harbor-style rewards (one failed row with its verifier's output) and an errored row is
written to disk; the export's rows table, report.md, report.html, results.csv, summary.json and the
viewer's rows table are read back.
"""

from __future__ import annotations

import csv
import json

import pytest

from profiler_core.dataset.tables import read_tables
from profiler_core.storage.runfiles import run_files
from synthetic_runs import grid, write_run

TAIL = "FAILED tests/test_outputs.py::test_sum - assert 3 == 4\n1 failed, 2 passed in 0.03s"


def _cell(mode: str, scenario: str, i: int) -> dict:
    failed = mode == "baseline" and scenario == "s2" and i == 1
    errored = mode == "fast" and scenario == "s1" and i == 0
    if errored:  # the agent never answered: no reward, no cost measured, no cost source
        return {"outcome": "error", "cost": 0.0}
    return {
        "outcome": "fail" if failed else "pass",
        "reward": 0.5 if failed else 1.0,
        "sub_rewards": (("tests", 0.0 if failed else 1.0), ("style", 1.0)),
        "verifier_output": ("collecting...\n" * 50 + TAIL) if failed else "3 passed",
        "extensions": (
            ("cost_source", "unknown"),
        ),  # the agent's cost has no price (as the fake model's)
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("reward")
    results = write_run(
        root, "run_r", grid(["baseline", "fast"], ["s1", "s2"], 2, _cell)
    )
    return root, results


def test_the_export_rows_table_has_the_reward_and_sub_rewards(run):
    root, results = run
    rows = read_tables(run_files(results, root / "reports"))["rows"]
    by_cell = {
        (m, s, i): k
        for k, (m, s, i) in enumerate(
            zip(rows["mode"], rows["scenario_id"], rows["iteration"], strict=True)
        )
    }
    failed = by_cell[("baseline", "s2", 1)]
    assert rows["reward"][failed] == 0.5
    assert json.loads(rows["sub_rewards"][failed]) == {"tests": 0.0, "style": 1.0}
    errored = by_cell[("fast", "s1", 0)]
    assert rows["reward"][errored] is None and rows["sub_rewards"][errored] is None


def test_report_md_and_html_show_mean_reward_and_the_failed_verifier_tail(run):
    root, _ = run
    md = (root / "reports" / "run_r" / "report.md").read_text()
    header = next(
        line
        for line in md.splitlines()
        if line.startswith("| Mode") and "Success" in line
    )
    assert "Mean reward" in header
    baseline = next(
        line for line in md.splitlines() if line.startswith("| baseline (baseline)")
    )
    assert "| 0.88 |" in baseline  # (1 + 1 + 1 + 0.5) / 4
    assert (
        "1 failed, 2 passed in 0.03s" in md and "collecting..." in md
    )  # the tail, the last lines
    html = (root / "reports" / "run_r" / "report.html").read_text()
    assert (
        "<dt>mean reward</dt><dd>0.88</dd>" in html
        and "<dt>mean reward</dt><dd>1.00</dd>" in html
    )
    assert "assert 3 == 4" in html


def test_results_csv_and_summary_json_carry_the_reward(run):
    root, _ = run
    with open(root / "reports" / "run_r" / "data" / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert "reward" in rows[0] and "extensions.reward_tests" in rows[0]
    failed = next(
        r
        for r in rows
        if r["mode"] == "baseline"
        and r["scenario_id"] == "s2"
        and r["iteration"] == "1"
    )
    assert (
        float(failed["reward"]) == 0.5
        and float(failed["extensions.reward_tests"]) == 0.0
    )
    summary = json.loads(
        (root / "reports" / "run_r" / "data" / "summary.json").read_text()
    )
    assert summary["modeSummaries"]["baseline"]["reward"] == {"mean": 0.875, "rows": 4}
    assert summary["modeSummaries"]["fast"]["reward"] == {"mean": 1.0, "rows": 3}


def test_an_errored_rows_cost_is_unknown_like_its_modes_other_rows(run):
    root, _ = run
    summary = json.loads(
        (root / "reports" / "run_r" / "data" / "summary.json").read_text()
    )
    for mode in ("baseline", "fast"):
        cost = summary["modeSummaries"][mode]["metrics"].get("cost_total_usd")
        # no row has a price: the median is unknown (null), never $0 because one row errored
        assert cost is None or cost["median"] is None, (mode, cost)
    md = (root / "reports" / "run_r" / "report.md").read_text()
    assert "$0.0000" not in md


def test_the_viewer_rows_table_shows_reward_and_unknown_cost(run):
    root, results = run
    from profiler_core.viewer.catalog import RunView
    from profiler_core.viewer.index import RowFilter
    from profiler_core.viewer.pages import rows_section

    view = RunView("run_r", run_files(results, root / "reports"))
    page = rows_section(view.rows(), RowFilter(), 1)
    assert "<th>Reward</th>" in page or ">Reward<" in page
    assert "<td>0.50</td>" in page and "<td>1.00</td>" in page
    assert "$0.0000" not in page and "<td>unknown</td>" in page


def test_a_run_of_one_mode_and_one_scenario_says_so_in_the_singular(tmp_path):
    write_run(tmp_path, "run_one", grid(["baseline"], ["s1"], 1))
    md = (tmp_path / "reports" / "run_one" / "report.md").read_text()
    html = (tmp_path / "reports" / "run_one" / "report.html").read_text()
    assert (
        "1 row · 1 mode · 1 scenario ·" in md
        and "1 run · 1 mode · 1 scenario ·" in html
    )
    assert "1 modes" not in md + html and "1 scenarios" not in md + html
