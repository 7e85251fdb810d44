"""One run of an agent program as the profiler reads it: its JSON lines, when each came,
and how it ended.

Shared by the program started on the host or in a sandbox (_agent_process.py)
and the program run through an environment's contract (in_trial_contract.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from ..util.safefiles import read_tail

__all__ = ["AgentRun", "take_line"]


@attrs.define
class AgentRun:
    """One run of an agent program: its JSON lines (with the time each arrived) and how it ended."""

    pid: int
    started_at: datetime
    lines: list[dict[str, Any]] = attrs.Factory(list)
    #: seconds since the start at which each line arrived (parallel to ``lines``)
    arrivals: list[float] = attrs.Factory(list)
    #: lines that were not JSON (the agent's warnings), kept for error messages
    noise: list[str] = attrs.Factory(list)
    exit_code: int | None = None
    wall_ms: float = 0.0
    stderr_path: Path | None = None
    #: every line of standard output as printed, when the run keeps them (``keep_output``)
    output: list[str] | None = None

    def output_text(self) -> str:
        """Standard output as printed (empty unless the run kept it)."""
        return "\n".join(self.output or ())

    def stderr_tail(self, lines: int = 3) -> str:
        """The last lines of standard error, on one line (for error messages)."""
        if self.stderr_path is None:
            return ""
        text = read_tail(self.stderr_path, 64 << 10).decode(
            "utf-8", errors="replace"
        )  # never through a link
        kept = [line.strip() for line in text.splitlines() if line.strip()]
        return " | ".join(kept[-lines:])[-500:]


def take_line(
    run: AgentRun,
    raw: bytes,
    at: float,
    on_line: Callable[[dict[str, Any]], bool] | None,
) -> bool:
    """Keep one line; True when ``on_line`` asks to stop the agent."""
    if run.output is not None:
        run.output.append(raw.decode("utf-8", errors="replace").rstrip("\r"))
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        return False
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        run.noise.append(text[:500])
        return False
    run.lines.append(value)
    run.arrivals.append(at)
    return bool(on_line(value)) if on_line is not None else False
