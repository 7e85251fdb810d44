"""The suite's own set-up (tests/conftest.py) works both ways the README runs it:
serially and with pytest-xdist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("plugin", ["-pno:xdist", "-pxdist"])
def test_conftest_loads_with_and_without_xdist(plugin):
    # conftest implements an xdist hook; without the plugin it must not be an unknown hook.
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            plugin,
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "-q",
            "tests/test_suite_setup.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 tests collected" in out.stdout


def test_auto_starts_one_worker_per_core_plus_two(pytestconfig, monkeypatch):
    from conftest import _cores, pytest_xdist_auto_num_workers

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    assert _cores() >= 1 and pytest_xdist_auto_num_workers(pytestconfig) == _cores() + 2
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "5")
    assert (
        pytest_xdist_auto_num_workers(pytestconfig) is None
    )  # pytest-xdist's own hook reads it
