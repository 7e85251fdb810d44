"""Where the real agent programs (opencode, claude, codex) are found, and installing them from npm.

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

from ..errors import ConfigError

#: program -> the npm package that provides it, at the version the tests pin (the same as `.ci/install-agents`).
PACKAGES = {
    "opencode": "opencode-ai@1.18.33",
    "claude": "@anthropic-ai/claude-code@2.1.330",
    "codex": "@openai/codex@0.169.0",
}

#: The folder name a checkout keeps its agents in (git-ignored).
LOCAL_FOLDER = ".agents"


def cache_dir() -> Path:
    """The user's agent folder: ``$PROFILER_AGENTS_DIR``, else ``$XDG_CACHE_HOME/agent-profiler/agents``."""
    configured = os.environ.get("PROFILER_AGENTS_DIR")
    if configured:
        return Path(configured).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "agent-profiler" / "agents"


def search_dirs(cwd: Path | None = None) -> list[Path]:
    """The ``node_modules/.bin`` folders searched for an agent program, in order (existing or not)."""
    if os.environ.get("PROFILER_AGENTS_DIR"):
        return [cache_dir() / "node_modules" / ".bin"]
    here = (cwd or Path.cwd()).resolve()
    folders = [parent / LOCAL_FOLDER for parent in (here, *here.parents)]
    checkout = Path(__file__).resolve().parents[3]  # src/profiler_core/providers/agents.py -> the checkout
    if (checkout / "pyproject.toml").is_file():  # running from a source checkout, not an installed wheel
        folders.append(checkout / LOCAL_FOLDER)
    folders.append(cache_dir())
    return list(dict.fromkeys(folder / "node_modules" / ".bin" for folder in folders))


def find_installed(program: str, cwd: Path | None = None) -> str | None:
    """The path of ``program`` in the first of :func:`search_dirs` that has it executable, else None."""
    for folder in search_dirs(cwd):
        candidate = folder / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def install(
    programs: Sequence[str] = tuple(PACKAGES),
    folder: Path | None = None,
    *,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> Path:
    """Install ``programs`` from npm into ``folder`` (default: :func:`cache_dir`); the folder their programs are in."""
    unknown = [p for p in programs if p not in PACKAGES]
    if unknown:
        raise ConfigError(f"unknown agent(s) {', '.join(unknown)} (known: {', '.join(PACKAGES)})")
    npm = shutil.which("npm")
    if npm is None:
        raise ConfigError("npm not found: install Node.js and npm (e.g. `apt-get install nodejs npm`), then try again")
    target = folder or cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    if not (target / "package.json").exists():
        (target / "package.json").write_text('{"private": true}\n', encoding="utf-8")
    wanted = [PACKAGES[p] for p in programs]
    # No lock file: the versions are pinned here.
    command = [npm, "install", "--prefix", str(target), "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", *wanted]
    done = run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr or done.stdout or "").strip().splitlines()
        raise ConfigError(f"npm install into {target} failed (exit status {done.returncode}): {last[-1] if last else 'no output'}")
    return target / "node_modules" / ".bin"
