"""A run under a stop rule (``execution.stop: decided``): rounds, and when the answer is clear.

The run's cells are scheduled round by round (one repetition of every cell,
each round in ``execution.order``). When a round is complete — every cell of it
and of the rounds before has its final row — the stop rule looks at the rows so
far (``profiler_core.runner.stopping``); once it says stop, no new cell starts. Cells of
the next round that already started finish and are kept: the rule ignores rows
beyond the rounds it was asked about, so they never bias a decision.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence

from ..model import ProfileRow
from .executors.base import Cell
from .stopping import StopDecision, StopRule

log = logging.getLogger("agent_profiler")


class Rounds:
    """Which rounds are complete, and the stop rule's decision once it stops the run."""

    def __init__(
        self, rule: StopRule, todo: Sequence[Cell], previous: Sequence[ProfileRow]
    ) -> None:
        self.rule = rule
        self._left = Counter(cell[3] for cell in todo)
        #: the rows the rule sees: every row of the run so far (warm-ups aside), resumed
        #: ones included
        self.rows: list[ProfileRow] = [row for row in previous if row.iteration >= 0]
        self.complete = self._complete_from(0)
        self.decision: StopDecision | None = None
        if self.complete:  # a resumed run: its recorded rounds may already settle it
            decision = rule.check(self.rows, rounds=self.complete)
            self.decision = decision if decision.stop else None

    @property
    def stopped(self) -> bool:
        """True once the rule said stop: no new cell may start."""
        return self.decision is not None

    def add(self, row: ProfileRow) -> StopDecision | None:
        """Count a cell's final row; the decision, when the rounds it completes settle
        the question (once)."""
        self.rows.append(row)
        self._left[row.iteration] -= 1
        complete = self._complete_from(self.complete)
        made = None
        while self.complete < complete and self.decision is None:
            self.complete += 1
            decision = self.rule.check(self.rows, rounds=self.complete)
            log.info(
                "round %d complete: %d comparison(s) still open",
                self.complete,
                len(decision.undecided),
            )
            if decision.stop:
                self.decision = made = decision
        self.complete = max(self.complete, complete)
        return made

    def final(self, *, budget_exhausted: bool) -> StopDecision | None:
        """At the end of the run: the decision, or why it ended without one
        (``budget``), over its complete rounds."""
        if self.decision is not None or self.complete == 0:
            return self.decision
        decision = self.rule.check(
            self.rows, rounds=self.complete, budget_exhausted=budget_exhausted
        )
        return decision if decision.stop else None

    def _complete_from(self, start: int) -> int:
        """The number of leading rounds with no cell left (checked from round ``start`` on)."""
        done = start
        while done < self.rule.max_repetitions and self._left.get(done, 0) <= 0:
            done += 1
        return done


def round_major(
    todo: Sequence[Cell], order: Callable[[list[Cell]], list[Cell]]
) -> list[Cell]:
    """The cells round by round (iteration 0 of every cell, then 1, ...), each round in
    ``order``."""
    rounds = sorted({cell[3] for cell in todo})
    return [cell for r in rounds for cell in order([c for c in todo if c[3] == r])]


__all__ = ["Rounds", "round_major"]
