"""A session trace's events grouped into turns (a turn ends at its boundary event), for
the viewer and the exports."""

from __future__ import annotations

from typing import Any

import attrs

from ..model import SessionTrace, TurnBoundaryEvent
from ..model.record import Record


@attrs.frozen(repr=False, eq=False)
class TurnEvents(Record):
    """One turn: its number, its events (boundaries left out) and, when the trace has
    it, its duration and times."""

    number: int
    events: tuple[Any, ...]
    duration_ms: float | None = None
    start: str | None = None
    end: str | None = None
    #: the turn's exact tokens when the trace recorded them per model call
    #: (``Turn.tokens``, a TokenBreakdown,
    #: which the wire recorder is to fill); None: only the events' estimated counts are known
    tokens: Any = None

    @property
    def estimated_tokens(self) -> int:
        """The events' own token counts summed: estimates (characters / 4) unless the
        trace recorded them."""
        return sum(getattr(ev, "token_count", 0) or 0 for ev in self.events)

    @property
    def exact_tokens(self) -> int | None:
        """The turn's exact total tokens, when the trace has per-call figures; else None."""
        total = getattr(self.tokens, "total", None)
        return total if isinstance(total, int) else None


def turns_of(trace: SessionTrace) -> list[TurnEvents]:
    """The trace's events by turn; events after the last boundary form one more turn."""
    known = {t.number: t for t in trace.turns}
    events = trace.events or tuple(ev for t in trace.turns for ev in t.events)
    turns: list[TurnEvents] = []
    current: list[Any] = []
    number = 1

    def close(n: int) -> None:
        t = known.get(n)
        turns.append(
            TurnEvents(
                n,
                tuple(current),
                t.duration_ms if t else None,
                t.start_timestamp if t else None,
                t.end_timestamp if t else None,
                getattr(t, "tokens", None),
            )
        )

    for event in events:
        if isinstance(event, TurnBoundaryEvent):
            close(event.turn_number)
            number = event.turn_number + 1
            current = []
        else:
            current.append(event)
    if current:
        close(number)
    return turns


__all__ = ["TurnEvents", "turns_of"]
