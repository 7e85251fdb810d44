"""git run by the profiler on the host, next to folders an agent wrote: nothing of the
agent's is configuration.

A workspace's ``.git`` belongs to the agent once the session started: its
``config`` can name an ``fsmonitor``, hooks, filter drivers (chosen by a
``.gitattributes``), an external diff, and a ``.git`` *file* (``gitdir:``) or
link leads into another repository. So every git command of the host runs
with every configuration source the agent could reach disabled — no system or
global file (``HOME`` is a private empty folder), ``core.fsmonitor``,
``core.hooksPath``, ``core.attributesFile`` overridden on the command line —
with ``GIT_DIR`` and ``GIT_WORK_TREE`` explicit, and what the agent left is
compared (:func:`diff_stat`) in a private repository of the run's own: its
objects are borrowed read-only (``GIT_ALTERNATE_OBJECT_DIRECTORIES``), its
index is a private file, its configuration ours — no filter or diff driver
exists there for an attribute to select. The agent's ``.git`` is only read
(its ``HEAD`` and refs by Python, its objects by git), and only when it is a
plain folder.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path

from ..sandbox.commands import CommandResult, base_environment, run_command
from ..util.safefiles import read_beneath

__all__ = [
    "GIT_OVERRIDES",
    "agent_head",
    "diff_stat",
    "git_environment",
    "host_git",
    "init_private",
    "plain_git_dir",
    "resolve_commit",
]

#: ``-c`` options of every host git command: what the repository's own config could make git run.
GIT_OVERRIDES = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "core.pager=cat",
    "-c",
    "diff.external=",
    "-c",
    "advice.detachedHead=false",
    "-c",
    "safe.directory=*",
)
#: Seconds a git command of the report may take (a FIFO named .gitignore in the
#: workspace blocks git).
REPORT_TIMEOUT_S = 120
_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
#: git's hash of the empty tree
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def git_environment(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a host git command: no system or global configuration, no
    prompt, ``home`` (private) as HOME."""
    return base_environment(
        home,
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "XDG_CONFIG_HOME": str(home),
            **(extra or {}),
        },
    )


async def host_git(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout_s: float = 600
) -> CommandResult:
    """``git ARGS`` on the host with :data:`GIT_OVERRIDES`, a fresh private HOME and
    ``env`` (``GIT_DIR``...) added."""
    with tempfile.TemporaryDirectory(prefix="git-home-") as home:
        return await run_command(
            ["git", *GIT_OVERRIDES, *args],
            cwd=cwd,
            env=git_environment(Path(home), env),
            timeout_s=timeout_s,
        )


def plain_git_dir(folder: Path) -> Path | None:
    """``folder/.git`` when it is a real folder (not a ``gitdir:`` file, not a link)
    whose ``HEAD``, ``config``
    and ``packed-refs`` are regular files or absent (git would block on a FIFO there), else None."""
    try:
        if not stat.S_ISDIR(os.lstat(folder / ".git").st_mode):
            return None
        for name in ("HEAD", "config", "packed-refs"):
            if os.path.lexists(folder / ".git" / name) and not stat.S_ISREG(
                os.lstat(folder / ".git" / name).st_mode
            ):
                return None
    except OSError:
        return None
    return folder / ".git"


def agent_head(git_dir: Path) -> str | None:
    """The commit ``HEAD`` names in a ``.git`` folder the agent wrote, read without git
    (so without its config,
    whose includes could name a FIFO): ``HEAD``, its loose ref or ``packed-refs``, each
    bounded, no link followed."""
    try:
        head = read_beneath(git_dir, "HEAD", 4096).decode("ascii", "replace").strip()
        if _HEX.fullmatch(head):
            return head
        ref = head.removeprefix("ref:").strip()
        if (
            not head.startswith("ref:")
            or not ref.startswith("refs/")
            or ".." in ref.split("/")
        ):
            return None
        try:
            loose = read_beneath(git_dir, ref, 4096).decode("ascii", "replace").strip()
            return loose if _HEX.fullmatch(loose) else None
        except FileNotFoundError:
            packed = read_beneath(git_dir, "packed-refs", 64 << 20).decode(
                "utf-8", "replace"
            )
    except OSError:
        return None
    for line in packed.splitlines():
        commit, _, name = line.partition(" ")
        if name == ref and _HEX.fullmatch(commit):
            return commit
    return None


async def resolve_commit(git_dir: Path, rev: str = "HEAD") -> str | None:
    """The commit ``rev`` names in ``git_dir``, a repository of the user's or one the
    profiler just cloned (git
    reads its config: never use it on one the agent had; see :func:`agent_head`); None
    when it names none."""
    if rev.startswith("-"):
        return None
    result = await host_git(
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{rev}^{{commit}}",
        cwd=git_dir,
        env={"GIT_DIR": str(git_dir)},
        timeout_s=60,
    )
    commit = result.output.strip()
    return commit if result.ok and len(commit) in (40, 64) else None


async def init_private(private: Path) -> CommandResult | None:
    """Make ``private`` an empty bare repository of the run's own, unless it is one; the
    failed ``git init``, else None."""
    if (private / "HEAD").exists():
        return None
    made = await host_git("init", "--quiet", "--bare", str(private), cwd=private.parent)
    return None if made.ok else made


async def diff_stat(
    private: Path, objects: Path, base: str | None, work_tree: Path
) -> CommandResult:
    """``git diff --stat`` of ``work_tree`` (new files included) against the commit
    ``base`` (None: nothing),
    in the run's private bare repository ``private`` (see :func:`init_private`), reading
    ``objects`` without
    writing there."""
    failed = await init_private(private)
    if failed is not None:
        return failed
    with tempfile.TemporaryDirectory(
        prefix="git-index-", dir=private.parent
    ) as scratch:
        env = {
            "GIT_DIR": str(private),
            "GIT_WORK_TREE": str(work_tree),
            "GIT_INDEX_FILE": str(Path(scratch) / "index"),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects),
        }
        for args in (
            ("read-tree", base or _EMPTY_TREE),
            ("add", "--all", "--intent-to-add", "--", "."),
        ):
            step = await host_git(
                "-c",
                "core.bare=false",
                *args,
                cwd=work_tree,
                env=env,
                timeout_s=REPORT_TIMEOUT_S,
            )
            if not step.ok:
                return step
        return await host_git(
            "-c",
            "core.bare=false",
            "diff",
            "--stat",
            "--ignore-submodules=all",
            cwd=work_tree,
            env=env,
            timeout_s=REPORT_TIMEOUT_S,
        )
