"""What a run counts as it goes: its rows (for the manifest) and its spending (for the budget)."""

from __future__ import annotations

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
        return RunCounts(expected=expected, completed=self.completed, errored=self.errored, succeeded=self.succeeded)


@attrs.define
class Budget:
    """What a run may spend, and what it has spent."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None
    cost_usd: float = 0.0
    tokens: int = 0

    def add(self, row: ProfileRow) -> None:
        """Count a finished cell's cost and tokens."""
        self.cost_usd += row.cost.total_usd or 0.0
        self.tokens += row.tokens.total

    @property
    def exhausted(self) -> bool:
        """True once the cost or token limit is reached."""
        return (self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd) or (
            self.max_tokens is not None and self.tokens >= self.max_tokens
        )

    def describe(self) -> str:
        """``$0.52 of $0.50; 120000 of 100000 tokens`` (the limits that are set)."""
        parts = []
        if self.max_cost_usd is not None:
            parts.append(f"${self.cost_usd:.4f} of ${self.max_cost_usd:g}")
        if self.max_tokens is not None:
            parts.append(f"{self.tokens} of {self.max_tokens} tokens")
        return "; ".join(parts)


__all__ = ["Budget", "Tally"]
