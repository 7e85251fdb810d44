"""``profiler plan`` against a pilot run of the simulated provider, and ``profiler run
--dry-run``."""

from __future__ import annotations

import math
import shutil
import textwrap
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from click.testing import CliRunner

from profiler_core.cli import cli
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.runner.stopping import row_value
from profiler_core.storage.store import read_jsonl

ROOT = Path(__file__).resolve().parent.parent

PROFILE = """
modes:
  baseline: {system_instructions: "Use the shell."}
  better:
    system_instructions: "Use the skill."
    provider_overrides: {success_rate: 0.9, cost_factor: 0.8, time_factor: 0.8}
scenarios: {path: scenarios, set: core}
provider: {id: simulated, model: sim-small, options: {seed: 3, success_rate: 0.6}}
analyzers: []
execution:
  concurrency: 4
  warmup: false
  stop: {max_repetitions: 20}
output: {session_export: false}
"""


@pytest.fixture(scope="module")
def manager():
    return get_plugin_manager()


@pytest.fixture(scope="module")
def project(tmp_path_factory, manager):
    """A profile with a stop rule, and a 3-repetition pilot of it run through `profiler run`."""
    folder = tmp_path_factory.mktemp("plan")
    shutil.copytree(ROOT / "examples/demo/scenarios", folder / "scenarios")
    profile = folder / "profile.yaml"
    profile.write_text(textwrap.dedent(PROFILE), encoding="utf-8")
    pilot_profile = folder / "pilot.yaml"
    pilot_profile.write_text(
        textwrap.dedent(PROFILE).replace(
            "stop: {max_repetitions: 20}", "repetitions: 3"
        ),
        encoding="utf-8",
    )
    result = invoke(manager, "run", pilot_profile, "--run-id", "pilot1", "--no-report")
    assert result.exit_code == 0, result.output
    return folder


def invoke(manager, *args, input=None):
    return CliRunner().invoke(
        cli, [str(a) for a in args], obj=manager, input=input, catch_exceptions=False
    )


def results(project: Path) -> set[str]:
    return {p.name for p in (project / "results").glob("*.jsonl")}


def test_plan_from_a_pilot_run(project, manager):
    result = invoke(
        manager,
        "plan",
        project / "profile.yaml",
        "--pilot",
        "pilot1",
        "--detect",
        "cost:10%",
    )
    assert result.exit_code == 0, result.output
    out = result.output
    # Two modes, one model: the error is shared by the 3 metrics of the one comparison
    # (family-wise, issue 41).
    assert (
        "from pilot pilot1 (30 sessions); power 80%, confidence 0.95 shared by 3 tests"
        in out
    )
    lines = {
        line.split()[3]: line.split()
        for line in out.splitlines()
        if line.startswith("better vs baseline")
    }
    assert sorted(lines) == ["cost", "success", "wall_ms"]
    # The fixed design starts from the normal formula on the pilot's paired cost
    # differences and, since
    # issue 41, allows for the SD's uncertainty: never fewer rounds than the SD taken as
    # exact, and the
    # range spans the formula at the SD's 10th and 90th percentiles.
    rows = read_jsonl(project / "results/pilot1.jsonl").rows
    pairs = {}
    for r in rows:
        pairs.setdefault((r.scenario_id, r.iteration), {})[r.mode] = row_value(
            r, "cost"
        )
    d = np.array([p["better"] - p["baseline"] for p in pairs.values()])
    base = np.array([p["baseline"] for p in pairs.values()])
    z = NormalDist().inv_cdf(1 - 0.05 / 3 / 2) + NormalDist().inv_cdf(0.8)
    naive = math.ceil((z * d.std(ddof=1) / (0.1 * base.mean())) ** 2 / 5)
    low, high = (int(x) for x in lines["cost"][9].strip("()").split("-"))
    assert low <= naive <= int(lines["cost"][8]) <= high
    assert (
        "Sessions, cost and time at concurrency 4 (from the pilot's sessions):" in out
    )
    assert f"fixed design, {max(int(v[8]) for v in lines.values())} repetitions:" in out
    assert (
        "a pilot of" in out and "pairs (~" in out
    )  # 25 pairs of a pilot: it recommends a bigger one
    assert "stop: decided, at most (20): 200 sessions, $" in out


def test_a_bigger_effect_needs_fewer_repetitions(project, manager):
    def fixed(detect: str) -> int:
        out = invoke(
            manager,
            "plan",
            project / "profile.yaml",
            "--pilot",
            str(project / "results/pilot1.jsonl"),
            "--detect",
            detect,
        ).output
        return int(
            next(
                line.split()[8]
                for line in out.splitlines()
                if line.split()[3:4] == ["cost"]
            )
        )

    assert fixed("cost:50%") < fixed("cost:10%")


def test_plan_refuses_bad_input_in_one_line(project, manager):
    for args, message in (
        (
            ["--detect", "costs:10%"],
            "Error: --detect 'costs:10%': unknown metric 'costs'",
        ),
        (
            ["--detect", "success:10%"],
            "Error: --detect 'success:10%': give success's effect as in "
            "percentage points (success:10pp)",
        ),
        (
            ["--detect", "cost"],
            "Error: --detect 'cost': expected METRIC:EFFECT such as cost:10% or success:10pp",
        ),
        (["--pilot", "nope"], "Error: --pilot nope: no such run in"),
    ):
        result = CliRunner().invoke(
            cli, ["plan", str(project / "profile.yaml"), *args], obj=manager
        )
        assert result.exit_code == 1
        assert result.output.startswith(message), result.output
        assert "Traceback" not in result.output


def test_plan_without_a_pilot_asks_then_runs_one(project, manager):
    before = results(project)
    declined = CliRunner().invoke(
        cli, ["plan", str(project / "profile.yaml")], obj=manager, input="n\n"
    )
    assert declined.exit_code == 1 and "Aborted" in declined.output
    assert (
        "plan needs a pilot of 30 sessions (3 repetitions of every cell); estimated cost $"
        in declined.output
    )
    assert results(project) == before  # nothing ran
    accepted = invoke(
        manager,
        "plan",
        project / "profile.yaml",
        "--pilot-repetitions",
        "2",
        input="y\n",
    )
    assert accepted.exit_code == 0, accepted.output
    assert (
        "Run the pilot now? [y/N]: y" in accepted.output
        and "Pilot run " in accepted.output
    )
    new = results(project) - before
    assert len(new) == 1
    assert len(read_jsonl(project / "results" / new.pop()).rows) == 2 * 5 * 2
    assert "from pilot run_" in accepted.output and "(20 sessions)" in accepted.output


def test_dry_run_prints_the_matrix_and_an_estimate_and_starts_nothing(project, manager):
    # A pilot of profile.yaml itself, here rather than left by another test: the tests
    # run in any order (xdist).
    pilot = invoke(
        manager,
        "plan",
        project / "profile.yaml",
        "--pilot-repetitions",
        "2",
        input="y\n",
    )
    assert pilot.exit_code == 0, pilot.output
    before = results(project)
    result = invoke(manager, "run", project / "profile.yaml", "--dry-run")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "nothing is started" in out
    assert (
        "repetitions: 3 to 20 (execution.stop: decided; a round = 10 sessions)" in out
    )
    assert "sessions:    30 to 200" in out
    # The pilot ran the same profile file: its sessions give the estimate, with a range.
    assert "earlier run(s) of the same profile file" in out
    line = next(x for x in out.splitlines() if "at max_repetitions: cost $" in x)
    assert "90% range $" in line and "at concurrency 4" in line
    assert results(project) == before
    fixed = invoke(manager, "run", project / "pilot.yaml", "--dry-run").output
    assert "sessions:    1 x 2 x 5 x 3 = 30" in fixed
    assert (
        "earlier run(s) of the same profile (pilot1" in fixed
    )  # same hash: the pilot itself


def test_dry_run_without_an_earlier_run(tmp_path, manager):
    shutil.copytree(
        ROOT / "examples/demo",
        tmp_path / "demo",
        ignore=shutil.ignore_patterns("results", "reports"),
    )
    out = invoke(manager, "run", tmp_path / "demo/profile.yaml", "--dry-run").output
    assert "sessions:    1 x 2 x 5 x 10 = 100 (+ up to 2 warm-up sessions)" in out
    assert "estimate:    none (no earlier run of this profile" in out
    assert not (tmp_path / "demo/results").exists()


def test_plan_answers_how_many_rows_a_gate_needs(project, manager):
    """`plan --gate cost:+10%`: the rows per mode two runs like the pilot need for
    compare to catch a change past it."""
    pilot = read_jsonl(project / "results/pilot1.jsonl").rows

    def rows_needed(*extra: str) -> int:
        result = invoke(
            manager,
            "plan",
            project / "profile.yaml",
            "--pilot",
            "pilot1",
            "--gate",
            "cost:+10%",
            *extra,
        )
        assert result.exit_code == 0, result.output
        line = next(
            line
            for line in result.output.splitlines()
            if line.strip().startswith("cost:+10% baseline:")
        )
        return int(line.split("~", 1)[1].split()[0])

    # An independent reckoning: per scenario the log-ratio of two independent runs'
    # means has variance
    # 2 s² / (n m²); the scenarios average with equal weights; rows = N ((z_a + z_b) se / margin)².
    by_scenario: dict[str, list[float]] = {}
    for r in pilot:
        if r.mode == "baseline":
            by_scenario.setdefault(r.scenario_id, []).append(row_value(r, "cost"))
    var = [
        2 * np.var(v, ddof=1) / (len(v) * np.mean(v) ** 2) for v in by_scenario.values()
    ]
    se = math.sqrt(sum(var)) / len(var)
    z = NormalDist().inv_cdf(0.95) + NormalDist().inv_cdf(0.8)
    n = sum(len(v) for v in by_scenario.values())
    expected = n * (z * se / (math.log(1.2) - math.log(1.1))) ** 2
    assert rows_needed() == math.ceil(expected)
    assert rows_needed("--margin", "30") < rows_needed("--margin", "5")
