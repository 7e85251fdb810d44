"""Where the real agent programs (those of the registry of agents) are found, and
installing them from npm.

A provider runs its option ``binary``, else ``$<AGENT>_BIN``, else the program
on PATH; when none is set, these folders are searched, in this order:

1. ``.agents/node_modules/.bin`` in the current directory or any parent
   (``bash .ci/install-agents`` installs there in a checkout);
2. the same folder in the checkout this package runs from (an editable install);
3. the user's agent cache, where ``profiler agents install`` puts them:
   ``$XDG_CACHE_HOME/agent-profiler/agents`` (``~/.cache/agent-profiler/agents``).

``$PROFILER_AGENTS_DIR``, when set, replaces all three: it is the one folder
installed into and searched.

See docs/agents.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from ..config.agents import AgentSpec, by_program, registry
from ..errors import ConfigError

#: The folder name a checkout keeps its agents in (git-ignored).
LOCAL_FOLDER = ".agents"


def cache_dir() -> Path:
    """The user's agent folder: ``$PROFILER_AGENTS_DIR``, else
    ``$XDG_CACHE_HOME/agent-profiler/agents``."""
    configured = os.environ.get("PROFILER_AGENTS_DIR")
    if configured:
        return Path(configured).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "agent-profiler" / "agents"


def search_dirs(cwd: Path | None = None) -> list[Path]:
    """The ``node_modules/.bin`` folders searched for an agent program, in order
    (existing or not)."""
    if os.environ.get("PROFILER_AGENTS_DIR"):
        return [cache_dir() / "node_modules" / ".bin"]
    here = (cwd or Path.cwd()).resolve()
    folders = [parent / LOCAL_FOLDER for parent in (here, *here.parents)]
    checkout = (
        Path(__file__).resolve().parents[3]
    )  # src/profiler_core/providers/agents.py -> the checkout
    if (
        checkout / "pyproject.toml"
    ).is_file():  # running from a source checkout, not an installed wheel
        folders.append(checkout / LOCAL_FOLDER)
    folders.append(cache_dir())
    return list(dict.fromkeys(folder / "node_modules" / ".bin" for folder in folders))


def find_installed(program: str, cwd: Path | None = None) -> str | None:
    """The path of ``program`` in the first of :func:`search_dirs` that has it
    executable, else None."""
    for folder in search_dirs(cwd):
        candidate = folder / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def resolve(names: Sequence[str]) -> list[AgentSpec]:
    """The registry rows of ``names`` (agent names such as ``claude-code``, or their
    programs such as ``claude``)."""
    rows = registry()
    chosen, unknown = [], []
    for name in names:
        row = rows.get(name) or by_program(name)
        if row is None or not row.package:
            unknown.append(name)
        else:
            chosen.append(row)
    if unknown:
        known = ", ".join(n for n, r in rows.items() if r.package)
        raise ConfigError(f"unknown agent(s) {', '.join(unknown)} (known: {known})")
    return list(dict.fromkeys(chosen))


def install(
    names: Sequence[str] = (),
    folder: Path | None = None,
    *,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> Path:
    """Install the agents ``names`` (default: every one of the registry) from npm into
    ``folder``; their programs' folder."""
    rows = resolve(names) if names else [r for r in registry().values() if r.package]
    npm = shutil.which("npm")
    if npm is None:
        raise ConfigError(
            "npm not found: install Node.js and npm (e.g. `apt-get install "
            "nodejs npm`), then try again"
        )
    target = folder or cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    if not (target / "package.json").exists():
        (target / "package.json").write_text('{"private": true}\n', encoding="utf-8")
    wanted = list(dict.fromkeys(row.npm_spec for row in rows))
    # No lock file: the versions are pinned in the registry.
    command = [
        npm,
        "install",
        "--prefix",
        str(target),
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        *wanted,
    ]
    done = run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr or done.stdout or "").strip().splitlines()
        raise ConfigError(
            f"npm install into {target} failed (exit status {done.returncode}): "
            f"{last[-1] if last else 'no output'}"
        )
    return target / "node_modules" / ".bin"


def install_hint(name: str) -> str:
    """How to install the registry's agent ``name``, for a 'not found' message."""
    from ..config.agents import agent

    row = agent(name)
    return (
        f"install it with `profiler agents install {name}` (npm package {row.npm_spec})"
    )
