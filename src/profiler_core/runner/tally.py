"""What a run counts as it goes: its rows (for the manifest) and its spending (for the budget)."""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

from ..model import ProfileRow, RunCounts


@attrs.define
class Tally:
    """Counts of the rows a run has (what the manifest and the result report), without the rows."""

    completed: int = 0
    errored: int = 0
    succeeded: int = 0
    #: rows written by this invocation (not resumed ones)
    new: int = 0

    def add(self, row: ProfileRow, *, new: bool = True) -> None:
        """Count one row."""
        self.completed += 1
        self.errored += bool(row.error)
        self.succeeded += bool(row.success)
        self.new += new

    def counts(self, expected: int) -> RunCounts:
        """The manifest's counts."""
        return RunCounts(
            expected=expected,
            completed=self.completed,
            errored=self.errored,
            succeeded=self.succeeded,
        )


@attrs.define
class Budget:
    """What a run may spend, and what it has spent."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    #: wall time of this invocation, counted from ``start`` (the run's start, on its clock)
    max_duration_s: float | None = None
    cost_usd: float = 0.0
    tokens: int = 0
    clock: Callable[[], float] = time.monotonic
    started: float | None = None

    def start(self, clock: Callable[[], float] | None = None) -> None:
        """Start the time budget's clock (the run's own clock when given: a test's
        MockClock too)."""
        if clock is not None:
            self.clock = clock
        self.started = self.clock()

    @property
    def elapsed_s(self) -> float:
        """Seconds since ``start`` (0 before it)."""
        return 0.0 if self.started is None else self.clock() - self.started

    def add(self, row: ProfileRow) -> None:
        """Count a finished cell's cost and tokens."""
        self.cost_usd += row.cost.total_usd or 0.0
        self.tokens += row.tokens.total

    @property
    def exhausted(self) -> bool:
        """True once the cost, token or time limit is reached."""
        return (
            (self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd)
            or (self.max_tokens is not None and self.tokens >= self.max_tokens)
            or (
                self.max_duration_s is not None
                and self.elapsed_s >= self.max_duration_s
            )
        )

    def describe(self) -> str:
        """``$0.52 of $0.50; 120000 of 100000 tokens; 3601.2 of 3600 s`` (the limits
        that are set)."""
        parts = []
        if self.max_cost_usd is not None:
            parts.append(f"${self.cost_usd:.4f} of ${self.max_cost_usd:g}")
        if self.max_tokens is not None:
            parts.append(f"{self.tokens} of {self.max_tokens} tokens")
        if self.max_duration_s is not None:
            parts.append(f"{self.elapsed_s:.1f} of {self.max_duration_s:g} s")
        return "; ".join(parts)


__all__ = ["Budget", "Tally"]
