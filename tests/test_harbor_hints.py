"""Harbor tasks named the wrong way get one line that says what to write; the oracle is
refused before the run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROFILER = [sys.executable, "-m", "profiler_core"]


def _profile(
    folder: Path, path: str, *, harbor: bool, provider: str = "simulated"
) -> Path:
    fmt = "\n  format: harbor" if harbor else ""
    profile = folder / "profile.yaml"
    profile.write_text(
        f"modes:\n  a: {{system_instructions: x}}\nscenarios:\n  path: {path}{fmt}\n"
        f"provider: {{id: {provider}, model: sim-small}}\nscorer: {{id: "
        f"verify}}\nexecution: {{repetitions: 1, warmup: false, sandbox: "
        f"bwrap}}\n"
    )
    return profile


@pytest.fixture
def tasks(tmp_path) -> Path:
    shutil.copytree(
        ROOT / "examples" / "tasks",
        tmp_path / "tasks",
        ignore=shutil.ignore_patterns("profile.yaml", "results", "reports"),
    )
    return tmp_path


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("tasks", "its folders hold Harbor tasks (task.toml)"),
        ("tasks/fix-median", "it is a Harbor task (task.toml)"),
    ],
)
def test_a_task_folder_without_format_harbor_gets_the_hint(tasks, path, says):
    out = subprocess.run(
        [*PROFILER, "validate", str(_profile(tasks, path, harbor=False))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    first = out.stderr.splitlines()[0]
    assert first.startswith("Error: ") and "scenarios.path: no scenario files" in first
    assert says in first and "add `format: harbor` under scenarios" in first


def test_the_oracle_without_harbor_tasks_is_refused_by_validate_and_before_the_run(
    tmp_path,
):
    demo = ROOT / "examples" / "demo"
    profile = _profile(
        tmp_path, str(demo / "scenarios"), harbor=False, provider="oracle"
    )
    out = subprocess.run(
        [*PROFILER, "validate", str(profile)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    assert (
        "provider oracle: none of the 5 scenarios has a reference solution"
        in out.stderr
        and "format: harbor" in out.stderr
    )
    # A copy: the run takes its lock in the profile's own results folder before it is
    # refused, and examples/ stays untouched (tests/conftest.py)
    copy = shutil.copytree(
        demo, tmp_path / "demo", ignore=shutil.ignore_patterns("results", "reports")
    )
    run = subprocess.run([*PROFILER, "run", str(copy / "profile.yaml"), "--provider", "oracle", "--progress", "none"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode != 0 and "has a reference solution" in run.stderr
    assert "model ''" not in run.stderr
    assert not (tmp_path / "results").exists() and not list(copy.glob("results/*"))
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_the_oracle_on_harbor_tasks_validates(tasks):
    out = subprocess.run(
        [
            *PROFILER,
            "validate",
            str(_profile(tasks, "tasks", harbor=True, provider="oracle")),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
