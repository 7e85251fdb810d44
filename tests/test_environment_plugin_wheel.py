"""A third-party execution environment: one module and one entry point, built into a
wheel, pip-installed into a
fresh venv, then a Harbor task run through it end to end (and its own tests use the contract kit).

The plugin (tests/fixtures/environment_plugin/agent_profiler_keeper.py) keeps one Docker
container per trial
running and ``docker exec``s into it; nothing of it lives in profiler_core. Under
``CI=true`` a Docker daemon
that cannot start fails this test.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from tests.sandbox_runtimes import containers_named, docker_daemon

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containers")]

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "tests" / "fixtures" / "environment_plugin" / "agent_profiler_keeper.py"
TASKS = ROOT / "tests" / "fixtures" / "trial_tasks"

KIT_TEST = """
from agent_profiler_keeper import KeeperEnvironment

pytest_plugins = ["profiler_core.testing.pytest_plugin"]


def test_keeper_keeps_the_contract(check_environment):
    assert check_environment(KeeperEnvironment) is None
"""


def _wheel(tmp_path: Path) -> Path:
    source = tmp_path / "agent-profiler-keeper"
    (source / "src").mkdir(parents=True)
    shutil.copy(PLUGIN, source / "src" / PLUGIN.name)
    (source / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "agent-profiler-keeper"
        version = "0.3.0"
        dependencies = ["agent-profiler"]

        [project.entry-points.agent_profiler]
        keeper = "agent_profiler_keeper"

        [tool.hatch.build.targets.wheel]
        only-include = ["src/agent_profiler_keeper.py"]
        sources = ["src"]
    """)
    )
    out = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("agent_profiler_keeper-*.whl")
    return wheel


def _venv(tmp_path: Path, wheel: Path) -> Path:
    """A fresh venv with the plugin's wheel installed; profiler_core and its
    dependencies come from this test environment."""
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [
            str(python),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    import profiler_core

    source = Path(profiler_core.__file__).resolve().parent.parent
    (Path(purelib) / "_parent_env.pth").write_text(
        "\n".join([str(source), *site.getsitepackages()]) + "\n"
    )
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    return venv


def test_a_wheel_of_one_module_runs_a_harbor_task_through_its_own_environment(tmp_path):
    with docker_daemon(tmp_path / "dockerd"):
        venv = _venv(tmp_path, _wheel(tmp_path))
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PROFILER_LOAD_PLUGINS")
        }
        listed = subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "profiler_core",
                "list-plugins",
                "--json",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert listed.returncode == 0, listed.stderr
        keeper = {p["name"]: p for p in json.loads(listed.stdout)}["keeper"]
        assert (
            keeper["distribution"] == "agent-profiler-keeper"
            and keeper["error"] is None
        )
        assert keeper["components"] == {"environments": ["keeper"]}

        work = tmp_path / "run"
        (work / "tasks").mkdir(parents=True)
        for name in ("image-env", "tests-replaced"):
            shutil.copytree(TASKS / name, work / "tasks" / name)
        (work / "profile.yaml").write_text(
            yaml.safe_dump(
                {
                    "modes": {"baseline": {"system_instructions": "Do the task."}},
                    "scenarios": {"path": "tasks", "format": "harbor"},
                    "provider": {"id": "oracle", "model": "none"},
                    "scorer": {"id": "verify"},
                    "execution": {
                        "repetitions": 1,
                        "warmup": False,
                        "sandbox": "keeper",
                        "pull": "never",
                    },
                    "output": {"results_dir": "results", "reports_dir": "reports"},
                }
            )
        )
        ran = subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "profiler_core",
                "run",
                "profile.yaml",
                "--run-id",
                "keeper-run",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=work,
            timeout=400,
        )
        assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
        found = [
            json.loads(line)
            for line in (work / "results" / "keeper-run.jsonl").read_text().splitlines()
            if line.strip()
        ]
        rewards = {
            r["scenarioId"]: (r["reward"], r.get("error"))
            for r in found
            if r["iteration"] >= 0
        }
        assert rewards == {"image-env": (1.0, None), "tests-replaced": (1.0, None)}
        assert (
            work
            / "reports"
            / "keeper-run"
            / "verifier"
            / "tests-replaced"
            / "baseline-iter-0"
            / "reward.txt"
        ).is_file()

        tests = tmp_path / "keeper-tests"
        tests.mkdir()
        (tests / "test_keeper.py").write_text(KIT_TEST)
        kit = subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:xdist",
                str(tests),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tests,
            timeout=300,
        )
        assert kit.returncode == 0, kit.stdout[-3000:] + kit.stderr[-2000:]
        assert not containers_named("docker", "keeper-"), (
            "the plugin left a container behind"
        )
