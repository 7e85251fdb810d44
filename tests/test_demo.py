"""The embedded default: `profiler init`, the demo profile, and the README's main command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from profiler_core.cli import cli
from profiler_core.cli.init import DEMO_FILES

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "demo"


def test_examples_demo_is_what_init_writes(tmp_path):
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    for name in DEMO_FILES:
        assert (tmp_path / "demo" / name).read_text() == (EXAMPLE / name).read_text(), (
            name
        )
    written = sorted(
        p.relative_to(EXAMPLE).as_posix()
        for p in EXAMPLE.rglob("*")
        if p.is_file() and "results" not in p.parts and "reports" not in p.parts
    )
    assert written == sorted(DEMO_FILES)


def test_init_refuses_to_overwrite(tmp_path):
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    again = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert again.exit_code == 1 and "already has" in again.output
    assert CliRunner().invoke(cli, ["init", str(tmp_path), "--force"]).exit_code == 0


def _readme_main_command() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("Install and run the main job", 1)[1]
    return re.search(r"```bash[^\n]*\n(.+?)\n```", section, re.S).group(1).strip()


@pytest.mark.slow
def test_readme_main_command_runs_the_demo_offline(tmp_path):
    command = _readme_main_command()
    # The command installs into .venv; here the package is already installed, so run its last part.
    assert command.endswith("profiler run examples/demo/profile.yaml"), command
    shutil.copytree(
        EXAMPLE,
        tmp_path / "examples" / "demo",
        ignore=shutil.ignore_patterns("results", "reports"),
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core", "run", "examples/demo/profile.yaml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Run run_")
    assert "baseline" in result.stdout and "with_skill" in result.stdout
    jsonl = next(
        (tmp_path / "examples" / "demo" / "results").glob("run_*[0-9a-f].jsonl")
    )
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(rows) == 2 * 5 * 10
    assert not any(r.get("error") for r in rows)
    assert (
        tmp_path
        / "examples"
        / "demo"
        / "reports"
        / jsonl.name.removesuffix(".jsonl")
        / "sessions"
    ).is_dir()


def test_demo_modes_differ_significantly(tmp_path):
    """The with_skill mode is cheaper and more reliable, and the statistics say it is real."""
    import trio

    from profiler_core.config.loader import load_profile
    from profiler_core.plugins.manager import get_plugin_manager
    from profiler_core.runner import options_from_config, run_profile_suite
    from profiler_core.stats import compare_groups, permutation_test

    shutil.copytree(
        EXAMPLE, tmp_path / "demo", ignore=shutil.ignore_patterns("results", "reports")
    )
    profile = tmp_path / "demo" / "profile.yaml"
    profile.write_text(
        profile.read_text().replace("time_scale: 0.002", "time_scale: 0")
    )
    config = load_profile(profile)
    options = options_from_config(
        config, get_plugin_manager(entrypoints=False), warmup=False
    )
    result = trio.run(run_profile_suite, options)
    by_mode = {
        m: [r for r in result.rows if r.mode == m] for m in ("baseline", "with_skill")
    }
    tokens = {
        m: np.array([r.tokens.total for r in rows], float)
        for m, rows in by_mode.items()
    }
    success = {
        m: np.array([r.success for r in rows], float) for m, rows in by_mode.items()
    }
    comparison = compare_groups(
        tokens["with_skill"], tokens["baseline"], permutations=2000, resamples=2000
    )
    assert comparison.reduction_pct > 20 and comparison.p_value < 0.01
    assert success["with_skill"].mean() > success["baseline"].mean()
    assert (
        permutation_test(
            success["with_skill"], success["baseline"], permutations=2000
        ).p_value
        < 0.05
    )


def test_the_stop_demo_ends_decided_long_before_its_maximum(tmp_path):
    """examples/demo/stop.yaml: its real effect (40% on cost and time) is decided in
    6-12 rounds (docs/planning.md)."""
    import trio

    from profiler_core.config.loader import load_profile
    from profiler_core.plugins.manager import get_plugin_manager
    from profiler_core.runner import options_from_config, run_profile_suite

    shutil.copytree(
        EXAMPLE, tmp_path / "demo", ignore=shutil.ignore_patterns("results", "reports")
    )
    profile = tmp_path / "demo" / "stop.yaml"
    profile.write_text(
        profile.read_text().replace("time_scale: 0.002", "time_scale: 0")
    )
    options = options_from_config(
        load_profile(profile), get_plugin_manager(entrypoints=False), run_id="stop"
    )
    result = trio.run(run_profile_suite, options)
    stop = json.loads(
        (tmp_path / "demo" / "results" / "stop.manifest.json").read_text()
    )["stop"]
    assert result.status == "completed" and stop["reason"] == "decided"
    assert 6 <= stop["repetitions"] <= 12 < stop["settings"]["max_repetitions"]
    assert result.counts.completed < 2 * 5 * stop["settings"]["max_repetitions"] / 2
