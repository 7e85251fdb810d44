"""The code passes ruff (C901 included), mypy, pyright and import-linter with the
project's configuration (pyproject.toml): they run with the tests, in CI too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean():
    ruff = Path(sys.executable).with_name("ruff")
    out = subprocess.run(
        [
            str(ruff),
            "check",
            "--output-format",
            "concise",
            "src",
            "tests",
            "bench",
            "examples",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_format_leaves_the_code_as_it_is():
    """The code stays as ``ruff format`` writes it (line length in pyproject.toml)."""
    ruff = Path(sys.executable).with_name("ruff")
    out = subprocess.run(
        [str(ruff), "format", "--check", "src", "tests", "bench", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_mypy_is_clean():
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_import_layers_hold():
    """The layers, the no-cycles rule and the plugins' public-API rule (docs/architecture.md)."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow
def test_pyright_is_clean():
    """pyright in basic mode ([tool.pyright] in pyproject.toml), beside mypy."""
    pyright = Path(sys.executable).with_name("pyright")
    # --pythonpath: the imports resolve in the environment running the tests, wherever
    # its venv lives
    out = subprocess.run(
        [str(pyright), "--outputjson", "--pythonpath", sys.executable],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    report = json.loads(out.stdout)
    problems = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] in ("error", "warning")
    ]
    assert problems == [] and out.returncode == 0, "\n".join(problems) or out.stderr
