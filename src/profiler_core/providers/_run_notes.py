"""What the CLI agents' providers (Claude Code, Codex) add to a finished run the same way."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..model import TimingSegment


def retried_note(retries: Sequence[Any]) -> str:
    """`` (after N model retries)`` for an error message, when the agent retried."""
    if not retries:
        return ""
    noun = "retry" if len(retries) == 1 else "retries"
    return f" (after {len(retries)} model {noun})"


def with_startup(
    segments: Sequence[TimingSegment], started_at: datetime
) -> list[TimingSegment]:
    """The recorded segments after a ``startup`` one: from the program's start to its first
    model request, what starting the agent costs (none without segments)."""
    if not segments:
        return list(segments)
    start_ms = round(started_at.timestamp() * 1000, 3)
    first = min(s.start_ms for s in segments)
    startup = TimingSegment(
        label="startup", start_ms=start_ms, end_ms=max(start_ms, first)
    )
    return [startup, *segments]
