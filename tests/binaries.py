"""Find the real programs some tests drive; in CI a missing one fails the test instead
of skipping it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AGENT_BIN = ROOT / ".agents" / "node_modules" / ".bin"
INSTALL_HINT = (
    "run `bash .ci/install-agents` (installs the agents of "
    "src/profiler_core/config/agents.toml from npm into .agents/)"
)


def in_ci() -> bool:
    """True under CI (`CI=true`), where a missing binary is a failure, never a skip."""
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def missing(what: str, hint: str) -> None:
    """Fail in CI, skip on a developer's machine: `what` is not installed."""
    message = f"{what} not found: {hint}"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def agent_binary(name: str, env_var: str | None = None) -> Path:
    """Path of an agent program (a `program` of the registry of agents): env var, then
    .agents/, then PATH."""
    if env_var and os.environ.get(env_var):
        return Path(os.environ[env_var])
    local = AGENT_BIN / name
    if local.exists():
        return local
    found = shutil.which(name)
    if found:
        return Path(found)
    missing(name, INSTALL_HINT)
    raise AssertionError("unreachable")


def system_binary(*names: str, hint: str) -> str:
    """Path of the first of `names` on PATH (e.g. chromium), or fail in CI / skip locally."""
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    missing(" / ".join(names), hint)
    raise AssertionError("unreachable")


HARBOR_HINT = (
    "run `bash .ci/install-harbor` (Harbor in .harbor-venv/, an interpreter of its "
    "own) or set PROFILER_HARBOR_PYTHON"
)


def harbor_interpreter() -> str:
    """The Python that has Harbor installed: ``$PROFILER_HARBOR_PYTHON``, else
    ``.harbor-venv/`` (fail in CI / skip locally)."""
    found = os.environ.get("PROFILER_HARBOR_PYTHON")
    if found:
        return found
    local = ROOT / ".harbor-venv" / "bin" / "python"
    if (local.parent / "harbor").exists():
        return str(local)
    missing("harbor (PROFILER_HARBOR_PYTHON or .harbor-venv)", HARBOR_HINT)
    raise AssertionError("unreachable")
