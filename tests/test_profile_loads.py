"""A profile is read once per command: the commands count their reads of the profile file.

``run``, ``run --resume``, ``report`` and ``compare`` run in this process (click's
runner) on the demo profile, with every ``read_data_file`` of the profile counted.
The workers that build components of their own (analysis workers, Ray workers) get
the driver's loaded profile: a real analysis worker builds the analyzers with the
profile file gone.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
import trio
import yaml
from click.testing import CliRunner

import profiler_core.config.profile as profile_module
from profiler_core.cli.app import cli
from profiler_core.util.redact import Redactor


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """The demo profile, small: one repetition, no warm-up, no simulated waiting."""
    subprocess.run(
        [sys.executable, "-m", "profiler_core", "init", str(tmp_path / "demo")],
        check=True,
        capture_output=True,
    )
    path = tmp_path / "demo" / "profile.yaml"
    profile = yaml.safe_load(path.read_text())
    profile["provider"]["options"]["time_scale"] = 0
    profile["execution"] = {"repetitions": 1, "warmup": False, "concurrency": 2}
    path.write_text(yaml.safe_dump(profile))
    return path


@pytest.fixture
def reads(monkeypatch, demo: Path) -> list[str]:
    """The reads of the demo's profile file from now on (one entry per read)."""
    found: list[str] = []
    real = profile_module.read_data_file

    def counted(path, *args, **kwargs):
        if Path(path).resolve() == demo.resolve():
            found.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(profile_module, "read_data_file", counted)
    return found


def profiler(demo: Path, *args: str) -> None:
    done = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert done.exit_code == 0, done.output


def test_each_command_reads_the_profile_at_most_once(demo, reads, monkeypatch):
    monkeypatch.chdir(demo.parent)
    quiet = ("--progress", "none", "--no-report")
    profiler(demo, "run", str(demo), "--run-id", "first", *quiet)
    assert len(reads) == 1
    profiler(demo, "run", str(demo), "--resume", "first", *quiet)
    assert len(reads) == 2  # the resume read it once, its recorded flags being the same
    profiler(demo, "run", str(demo), "--run-id", "second", "--mode", "baseline", *quiet)
    assert len(reads) == 3
    results = demo.parent / "results"
    for command in (
        ["report", str(results / "first.jsonl"), "--out", str(demo.parent / "r")],
        ["compare", str(results / "first.jsonl"), str(results / "second.jsonl")],
    ):
        profiler(demo, *command)
        assert len(reads) == 3, command  # reports read results, never the profile


def test_a_resume_applies_its_recorded_flags_without_reading_again(
    demo, reads, monkeypatch
):
    monkeypatch.chdir(demo.parent)
    quiet = ("--progress", "none", "--no-report")
    profiler(demo, "run", str(demo), "--run-id", "flags", "--mode", "baseline", *quiet)
    del reads[:]
    profiler(demo, "run", str(demo), "--resume", "flags", "--mode", "baseline", *quiet)
    assert len(reads) == 1  # the flags given again are the recorded ones
    del reads[:]
    # A resume that must apply flags it was not given parses the data again, with them:
    # it does not read the file again.
    profiler(demo, "run", str(demo), "--resume", "flags", *quiet)
    assert len(reads) == 1


def test_an_analysis_worker_builds_from_the_drivers_profile_not_the_file(demo, caplog):
    from profiler_core.plugins.manager import get_plugin_manager
    from profiler_core.runner.analysis_pool import analysis_pool
    from profiler_core.runner.build import build_analyzers

    manager = get_plugin_manager()
    config = profile_module.load_profile(demo, registry=manager.registry)
    analyzers, problems = build_analyzers(config, manager.registry)
    assert not problems and analyzers
    demo.unlink()  # a worker that read the file would fail to build them from it

    async def start() -> None:
        async with analysis_pool(
            1,
            profile_path=str(demo),
            overrides={},
            analyzers=analyzers,
            redactor=Redactor(),
            profile=config,
        ) as pool:
            assert pool is not None

    with caplog.at_level(logging.INFO, logger="agent_profiler"):
        trio.run(start)
    assert "analyzers built from the profile" in caplog.text, caplog.text
