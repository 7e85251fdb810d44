"""Questions asked of an installed Harbor in its own interpreter: its version, its
agents, its environments' preflight.

Harbor needs Python >= 3.12 and this package supports 3.11, so Harbor is
never imported here: a short script runs in the interpreter of the ``harbor``
program (its ``#!`` line) and answers in one JSON line. It asks Harbor what
Harbor itself asks: ``AgentFactory.registered_names()`` (what ``harbor run -a``
accepts and ``harbor agents list`` prints) and ``EnvironmentFactory.run_preflight``
(what ``harbor run`` checks before it queues a trial: Daytona's, E2B's,
Modal's ... API key variables, a missing extra, a missing CLI). See
docs/providers/harbor.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import attrs

from ..model.record import Record

__all__ = [
    "HarborInstall",
    "environment_problem",
    "find_harbor",
    "harbor_path",
    "probe",
]

#: seconds one question may take (importing Harbor takes one or two)
PROBE_TIMEOUT_S = 120.0

# Runs in Harbor's interpreter: argv[1] is "agents" or "preflight", argv[2] the environment type.
_SCRIPT = r"""
import json, sys
from importlib.metadata import version
out = {"version": version("harbor")}
try:
    if sys.argv[1] == "agents":
        from harbor.agents.factory import AgentFactory
        out["agents"] = AgentFactory.registered_names()
    else:
        from harbor.environments.factory import EnvironmentFactory
        from harbor.models.environment_type import EnvironmentType
        known = EnvironmentFactory.registered_names()
        if sys.argv[2] not in known:
            out["problem"] = f"unknown Harbor environment {sys.argv[2]!r} (known: {', '.join(known)})"
        else:
            try:
                EnvironmentFactory.run_preflight(EnvironmentType(sys.argv[2]), kwargs=json.loads(sys.argv[3]))
            except SystemExit as exc:
                out["problem"] = str(exc.code)
            except Exception as exc:
                out["problem"] = str(exc)
except ImportError as exc:
    out["error"] = f"this Harbor lacks {exc.name or exc}"
print(json.dumps(out))
"""


@attrs.frozen(repr=False, eq=False)
class HarborInstall(Record):
    """An installed Harbor: its program and interpreter."""

    program: Path
    python: Path


def harbor_path(program: str | os.PathLike[str]) -> str:
    """PATH with the harbor program's own folder first (its helpers, e.g.
    podman-compose, live beside it)."""
    return os.pathsep.join([str(Path(program).parent), os.environ.get("PATH", "")])


def find_harbor(program: str = "harbor") -> HarborInstall | None:
    """The Harbor whose program is ``program`` (a path, or a name on PATH) and its
    interpreter, else None."""
    found = shutil.which(program)
    if found is None:
        return None
    path = Path(found).absolute()
    python = path.with_name("python")
    try:
        first = path.read_bytes()[:512].split(b"\n", 1)[0].decode("utf-8", "replace")
    except OSError:
        return None
    # A console script names its interpreter on its first line; a venv's python is
    # beside it otherwise.
    if first.startswith("#!") and " " not in first[2:].strip():
        python = Path(first[2:].strip())
    return HarborInstall(program=path, python=python) if python.exists() else None


def probe(install: HarborInstall, *args: str) -> dict[str, object]:
    """Harbor's answer to one question (``agents``, or ``preflight ENV KWARGS_JSON``);
    ``error`` says why there is none."""
    env = {**os.environ, "PATH": harbor_path(install.program), "PYTHONUNBUFFERED": "1"}
    try:
        done = subprocess.run(
            [str(install.python), "-c", _SCRIPT, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"{install.python}: {exc}"}
    lines = done.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        answer = None
    if not isinstance(answer, dict):
        last = (done.stderr.strip().splitlines() or ["no answer"])[-1]
        return {
            "error": f"{install.python} could not ask Harbor (is it installed there, and "
            f">= 0.26?): {last}"
        }
    return answer


def environment_problem(
    install: HarborInstall, environment: str, kwargs: dict[str, object] | None = None
) -> str | None:
    """What Harbor's preflight of ``environment`` says is missing (credentials, an
    extra, a CLI), in one line; None when ready."""
    answer = probe(install, "preflight", environment, json.dumps(kwargs or {}))
    problem = answer.get("problem") or answer.get("error")
    return " ".join(str(problem).split()) if problem else None
