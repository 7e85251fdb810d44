"""`profiler compare --fail-on newly-failing[:Npp]` on a crafted pair of runs: per
scenario, in JUnit and Markdown."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from profiler_core.compare.newly_failing import NewlyFailingGate
from profiler_core.errors import ConfigError
from synthetic_runs import grid, write_run

PROFILER = [sys.executable, "-m", "profiler_core"]

#: (mode, scenario) -> iterations that fail, of 4, in each run
BASE = {
    ("a", "s1"): set(),
    ("a", "s2"): set(),
    ("a", "s3"): {0},
    ("b", "s1"): set(),
    ("b", "s2"): {0, 1},
}
NEW = {
    ("a", "s1"): {3},
    ("a", "s2"): set(),
    ("a", "s3"): {0, 1, 2},
    ("b", "s1"): set(),
    ("b", "s2"): {0},
}


def _run(root: Path, run_id: str, fails: dict) -> Path:
    cells = [c for c in grid(["a", "b"], ["s1", "s2", "s3"], 4, lambda m, s, i: {"outcome": "fail" if i in fails.get((m, s), ()) else "pass"})
             if (c.mode, c.scenario) in fails]  # fmt: skip
    return write_run(root, run_id, cells, report=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("newly")
    return _run(root, "base", BASE), _run(root, "new", NEW), root


def _compare(base: Path, new: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PROFILER, "compare", str(base), str(new), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("text", "points"),
    [
        ("newly-failing", None),
        ("newly-failing:25pp", 25.0),
        ("newly-failing:-10pp", 10.0),
        ("newly-failing: 0pp", 0.0),
    ],
)
def test_the_gate_parses(text, points):
    assert NewlyFailingGate.parse(text).points == points


@pytest.mark.parametrize(
    "text", ["newly-failing:10%", "newly-failing:abc", "newly-failing:+"]
)
def test_a_bad_gate_says_what_is_expected(text):
    with pytest.raises(ConfigError, match="expected newly-failing"):
        NewlyFailingGate.parse(text)


def test_all_pass_to_any_fail_fails_the_gate_per_scenario_in_junit_and_markdown(
    runs, tmp_path
):
    base, new, _ = runs
    out = _compare(
        base,
        new,
        "--fail-on",
        "newly-failing",
        "--junit",
        str(tmp_path / "c.xml"),
        "--markdown",
        str(tmp_path / "c.md"),
    )
    assert out.returncode == 1, out.stderr
    assert "Outcome: REGRESSION (exit 1)" in out.stdout
    assert (
        "newly-failing: 1 of 5 scenarios fail it" in out.stdout
        and "a / s1: newly failing: passed 4/4 in BASE, 3/4 in NEW" in out.stdout
    )
    suite = [
        c
        for c in ET.parse(tmp_path / "c.xml").getroot().iter("testcase")
        if c.get("classname", c.get("name", ""))
        and "newly-failing" in c.get("name", "")
    ]
    by_name = {c.get("name"): c for c in suite}
    assert set(by_name) == {f"newly-failing: {m} / {s}" for m, s in BASE}
    assert by_name["newly-failing: a / s1"].find("failure") is not None
    assert all(
        by_name[f"newly-failing: {k}"].find("failure") is None
        for k in ("a / s2", "a / s3", "b / s1", "b / s2")
    )
    md = (tmp_path / "c.md").read_text()
    assert "### `newly-failing`: **1 scenario fails it**" in md
    assert "| a | s1 | 4/4 | 3/4 | -25 pp | **newly failing** |" in md
    assert "| a | s3 | 3/4 | 1/4 | -50 pp | ok |" in md  # it was not all-pass in BASE


def test_a_drop_of_n_points_fails_the_gate(runs, tmp_path):
    base, new, _ = runs
    out = _compare(base, new, "--fail-on", "newly-failing:50pp", "--json")
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    gate = doc["scenarioGates"][0]
    failed = {(s["mode"], s["scenario"]) for s in gate["scenarios"] if s["failed"]}
    assert failed == {("a", "s3")}  # 75% -> 25%; a/s1 dropped only 25 points
    ok = _compare(base, new, "--fail-on", "newly-failing:60pp")
    assert ok.returncode == 0 and "Outcome: no regression (exit 0)" in ok.stdout


def test_the_same_run_passes_the_gate(runs):
    base, _, _ = runs
    out = _compare(base, base, "--fail-on", "newly-failing")
    assert (
        out.returncode == 0 and "newly-failing: 0 of 5 scenarios fail it" in out.stdout
    )


def test_a_bad_gate_on_the_command_line_is_one_line(runs):
    base, new, _ = runs
    out = _compare(base, new, "--fail-on", "newly-failing:5%")
    assert (
        out.returncode == 1
        and len(out.stderr.strip().splitlines()) == 1
        and "expected newly-failing" in out.stderr
    )
