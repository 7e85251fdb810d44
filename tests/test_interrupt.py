"""Ctrl-C twice: the profiler always exits 130, at any moment of the cleanup, without a
traceback (issue 15.13)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

PROFILER = Path(sys.executable).with_name("profiler")

pytestmark = pytest.mark.slow


def _profile(tmp_path: Path) -> Path:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s1.json").write_text(
        '{"id": "s1", "name": "S", "prompt": "do"}'
    )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        textwrap.dedent("""
        modes: {a: {}, b: {}}
        scenarios: {path: scenarios}
        provider: {id: simulated, options: {time_scale: 0.05}}
        execution: {repetitions: 50, warmup: false, concurrency: 4}
    """)
    )
    return profile


def _interrupt_twice(
    profile: Path, first_after: float, second_after: float | None
) -> tuple[int, str]:
    process = subprocess.Popen(
        [str(PROFILER), "run", str(profile), "--progress", "none", "--no-report"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=profile.parent,
    )
    try:
        assert process.stdout is not None
        line = (
            process.stdout.readline()
        )  # "Run run_..." is printed just before the matrix starts
        assert line.startswith("Run "), line
        time.sleep(first_after)
        process.send_signal(signal.SIGINT)
        if second_after is not None:
            time.sleep(second_after)
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, err


@pytest.mark.parametrize("second_after", [0.0, 0.005, 0.015, 0.03, 0.05, 0.1, 0.3])
def test_a_second_ctrl_c_always_exits_130(tmp_path, second_after):
    code, err = _interrupt_twice(_profile(tmp_path), 0.5, second_after)
    assert code == 130, err
    assert "Traceback" not in err


def test_one_ctrl_c_stops_cleanly_with_130_and_the_run_can_resume(tmp_path):
    profile = _profile(tmp_path)
    code, err = _interrupt_twice(profile, 0.5, None)
    assert code == 130 and "Traceback" not in err
    assert "Resume with: profiler run" in err
