"""What an agent in a sandbox must not read at its host path: the tasks' answers and the
run's own records.

bwrap shows the host's file system read-only, so without this an agent could
read a verifier's hidden test files, a task's reference solution, the rows
already written to ``results/`` and the workspaces other sessions left under
``reports/``. The runner hides these paths from every agent job (the agent, an
``opencode serve``, the ``oracle``'s solution); set-up commands and verifiers
keep seeing them, and a verifier still gets its files copied in after the
agent. Containers show only the host's system folders, so there the paths are
hidden only where such a folder would show them.

A hidden file inside a git repository is in that repository's history too
(``git -C <tasks> show HEAD:tests/test.py``): the ``.git`` of every repository
holding a hidden path is hidden with it — a ``.git`` folder, or a ``.git``
file and the git folders it names (a worktree's or submodule's ``gitdir:``
and its common folder).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..model import Scenario

__all__ = ["hidden_from_agents"]


def hidden_from_agents(
    scenarios: Iterable[Scenario], *folders: str | Path
) -> tuple[Path, ...]:
    """Every scenario's verifier files and mounts and its solution's mounts, then
    ``folders`` (results, reports)."""
    paths: list[str | Path] = []
    for scenario in scenarios:
        for verifier in (
            *scenario.verify,
            *(v for step in scenario.steps for v in step.verify),
        ):
            paths += [
                *verifier.files.values(),
                *verifier.mounts.values(),
                *verifier.base_mounts.values(),
            ]
        for solution in (
            scenario.solution,
            *(step.solution for step in scenario.steps),
        ):
            if solution is not None:
                paths += list(solution.mounts.values())
    paths += folders
    # The real path: hidden there, it is hidden whichever link leads to it.
    real = [Path(p).resolve() for p in paths]
    histories = [git for path in real for git in _repository_of(path)]
    return tuple(dict.fromkeys([*real, *histories]))


def _repository_of(path: Path) -> list[Path]:
    """The git folders of the repository holding ``path`` (none when it is in none)."""
    for folder in (path, *path.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return [dot_git.resolve()]
        if dot_git.is_file():
            return [dot_git, *_named_by(dot_git)]
    return []


def _named_by(dot_git: Path) -> list[Path]:
    """The folders a ``.git`` file's ``gitdir:`` line names, and that folder's ``commondir``."""
    try:
        line = dot_git.read_text(encoding="utf-8", errors="replace")[:4096].strip()
    except OSError:
        return []
    if not line.startswith("gitdir:"):
        return []
    git_dir = (dot_git.parent / line.removeprefix("gitdir:").strip()).resolve()
    found = [git_dir]
    try:
        common = (
            (git_dir / "commondir")
            .read_text(encoding="utf-8", errors="replace")[:4096]
            .strip()
        )
    except OSError:
        return found
    if common:
        found.append((git_dir / common).resolve())
    return found
