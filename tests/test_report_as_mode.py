"""`profiler report --as-mode` over files of several modes keeps every row; problems
name the user's files (issue 31.19)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import trio
import trio.testing

from profiler_core import ModeConfig, Scenario, TokenBreakdown
from profiler_core.report.merge import merge_results
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer

PROFILER = [sys.executable, "-m", "profiler_core"]


def two_mode_run(tmp_path: Path, manager, run_id: str) -> Path:
    """A run of two modes x 3 scenarios x 2 repetitions (12 rows)."""
    options = RunOptions(
        provider=FakeProvider(tokens=TokenBreakdown(input=100, output=10)), scorer=FixedScorer(),
        scenarios=[Scenario(id=f"s{i}", name="S", prompt="do") for i in range(3)],
        modes={"baseline": ModeConfig(), "with_skill": ModeConfig()},
        repetitions=2, warmup=False, run_id=run_id,
        results_dir=str(tmp_path / "results"), reports_dir=str(tmp_path / "reports"),
    )  # fmt: skip
    options.plugin_manager = manager
    trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    return tmp_path / "results" / f"{run_id}.jsonl"


def report(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PROFILER, "report", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_as_mode_on_a_file_of_two_modes_keeps_every_row_and_both_modes(
    tmp_path, profiler_plugin_manager
):
    two_mode_run(tmp_path, profiler_plugin_manager, "run_x")
    done = report(tmp_path, "run_x", "--as-mode", "run_x=old")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no duplicate cells, no temporary file named
    summary = json.loads(
        (tmp_path / "reports" / "merged-run_x" / "data" / "summary.json").read_text()
    )
    assert summary["rows"] == 12 and summary["modes"] == [
        "old/baseline",
        "old/with_skill",
    ]


def test_two_runs_of_two_modes_become_four_modes(tmp_path, profiler_plugin_manager):
    two_mode_run(tmp_path, profiler_plugin_manager, "run_a")
    two_mode_run(tmp_path, profiler_plugin_manager, "run_b")
    done = report(
        tmp_path,
        "run_a",
        "run_b",
        "--as-mode",
        "run_a=old",
        "--as-mode",
        "run_b=new",
        "--baseline",
        "old/baseline",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(
        (
            tmp_path / "reports" / "merged-run_a__run_b" / "data" / "summary.json"
        ).read_text()
    )
    assert summary["rows"] == 24
    assert summary["modes"] == [
        "old/baseline",
        "old/with_skill",
        "new/baseline",
        "new/with_skill",
    ]


def test_problems_name_the_input_and_its_line_not_the_merged_file(
    tmp_path, profiler_plugin_manager
):
    good = two_mode_run(tmp_path, profiler_plugin_manager, "run_g")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text().splitlines()[0] + "\n\nnot json\n")
    done = report(tmp_path, str(good), str(bad), "--as-mode", "bad=b")
    assert done.returncode == 0, done.stderr
    assert f"warning: {bad}:3: not valid JSON" in done.stderr
    assert "profiler-report-" not in done.stderr  # the temporary merged file
    page = (tmp_path / "reports" / "merged-run_g__run_g" / "report.html").read_text()
    assert f"{bad}:3:" in page and "profiler-report-" not in page


def test_merged_lines_map_back_to_their_inputs(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"mode": "m"}\n\n{"mode": "m"}\n')
    b.write_text('{"mode": "p"}\n{"mode": "q"}\n')
    merged = merge_results([a, b], tmp_path / "merged.jsonl", {"b": "new"})
    assert merged.rows == 4
    rows = [
        json.loads(line)
        for line in (tmp_path / "merged.jsonl").read_text().splitlines()
        if line
    ]
    assert [r["mode"] for r in rows] == ["m", "m", "new/p", "new/q"]
    assert merged.locate(f"{tmp_path / 'merged.jsonl'}:5: bad") == f"{b}:2: bad"
    assert merged.locate(f"{tmp_path / 'merged.jsonl'}:2: blank") == f"{a}:2: blank"
    assert (
        merged.locate(f"{tmp_path / 'merged.jsonl'}: 2 duplicated rows")
        == f"the merged inputs ({a}, {b}): 2 duplicated rows"
    )
