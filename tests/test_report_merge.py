"""`profiler report A B ...`: several runs in one report, modes renamed per file, globs,
never overwriting (issue 16.12)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import trio
import trio.testing

from profiler_core import ModeConfig, Scenario, TokenBreakdown
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer

PROFILER = Path(sys.executable).with_name("profiler")


def _run(tmp_path, manager, run_id, tokens):
    options = RunOptions(
        provider=FakeProvider(tokens=TokenBreakdown(input=tokens, output=10)),
        scorer=FixedScorer(),
        scenarios=[Scenario(id=f"s{i}", name="S", prompt="do") for i in range(3)],
        modes={"imported": ModeConfig()},
        repetitions=2,
        warmup=False,
        run_id=run_id,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = manager
    trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )


def _report(tmp_path, *args):
    return subprocess.run(
        [str(PROFILER), "report", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_two_runs_compared_as_two_modes(tmp_path, profiler_plugin_manager):
    _run(tmp_path, profiler_plugin_manager, "run_old", 1000)
    _run(tmp_path, profiler_plugin_manager, "run_new", 400)
    out = _report(
        tmp_path,
        "run_old",
        "run_new",
        "--as-mode",
        "run_old=old",
        "--as-mode",
        "run_new=new",
        "--baseline",
        "old",
    )
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "reports" / "merged-run_old__run_new"
    summary = json.loads((folder / "data" / "summary.json").read_text())
    assert summary["modes"] == ["old", "new"] and summary["rows"] == 12
    title = (folder / "report.md").read_text().splitlines()[0]
    assert (
        title.startswith("# Report: merged-run")
        and "run_old" in title
        and "run_new" in title
    )
    # Again: a second merged report goes beside the first, never over it.
    again = _report(
        tmp_path,
        "run_old",
        "run_new",
        "--as-mode",
        "run_old=old",
        "--as-mode",
        "run_new=new",
    )
    assert (
        again.returncode == 0
        and (tmp_path / "reports" / "merged-run_old__run_new-2" / "report.md").is_file()
    )


def test_glob_and_bad_as_mode(tmp_path, profiler_plugin_manager):
    _run(tmp_path, profiler_plugin_manager, "run_g1", 100)
    _run(tmp_path, profiler_plugin_manager, "run_g2", 200)
    out = _report(
        tmp_path,
        "results/run_g*.jsonl",
        "--as-mode",
        "run_g1=one",
        "--as-mode",
        "run_g2=two",
    )
    assert out.returncode == 0, out.stderr
    assert "rows from results/run_g1.jsonl, results/run_g2.jsonl" in out.stdout
    bad = _report(tmp_path, "run_g1", "run_g2", "--as-mode", "nope")
    assert bad.returncode == 1 and bad.stderr.startswith(
        "Error: --as-mode 'nope': expected FILE=MODE"
    )
    unknown = _report(tmp_path, "run_g1", "run_g2", "--as-mode", "run_zz=x")
    assert unknown.returncode == 1 and "run_zz: no such input" in unknown.stderr
    none = _report(tmp_path, "results/nothing-*.jsonl")
    assert none.returncode == 1 and "no results file matches" in none.stderr
