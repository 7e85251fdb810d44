"""What an agent in a sandbox must not read at its host path: the tasks' answers and the run's own records.

bwrap shows the host's file system read-only, so without this an agent could
read a verifier's hidden test files, a task's reference solution, the rows
already written to ``results/`` and the workspaces other sessions left under
``reports/``. The runner hides these paths from every agent job (the agent, an
``opencode serve``, the ``oracle``'s solution); set-up commands and verifiers
keep seeing them, and a verifier still gets its files copied in after the
agent. Containers show only the host's system folders, so there the paths are
hidden only where such a folder would show them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..model import Scenario

__all__ = ["hidden_from_agents"]


def hidden_from_agents(scenarios: Iterable[Scenario], *folders: str | Path) -> tuple[Path, ...]:
    """Every scenario's verifier files and mounts and its solution's mounts, then ``folders`` (results, reports)."""
    paths: list[str | Path] = []
    for scenario in scenarios:
        for verifier in scenario.verify:
            paths += [*verifier.files.values(), *verifier.mounts.values()]
        if scenario.solution is not None:
            paths += list(scenario.solution.mounts.values())
    paths += folders
    # The real path: hidden there, it is hidden whichever link leads to it.
    return tuple(dict.fromkeys(Path(p).resolve() for p in paths))
