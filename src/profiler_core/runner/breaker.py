"""Stopping a run whose agent cannot work at all (a model endpoint that is down), instead of trying every cell.

When a (model, mode)'s warm-up failed and its first cell then fails the same
way — or, without a warm-up, its first ``FIRST_CELLS`` cells all fail the same
way (timeouts aside: a slow agent is worth measuring) — every other cell would
fail like them, each after its own timeout. The
run stops there with one line naming the error (which, for the agent
providers, names the model endpoint). Only failures of the session itself
count (the provider could not run it, it timed out, the session ended in an
error); a verifier, scorer or set-up error says nothing about the endpoint.
"""

from __future__ import annotations

import re

from ..model import ProfileRow

#: Without a warm-up: this many first cells of a (model, mode) failing the same way stop the run.
FIRST_CELLS = 3
#: Error codes that say the session could not run.
SESSION_FAILURES = frozenset({"provider_error", "session_error", "timeout"})

Key = tuple[str, str]
#: Hex ids and numbers in an error message.
_NUMBERS = re.compile(r"[0-9a-f]{6,}|\d+")


class Breaker:
    """Watches the first sessions of each (model, mode); ``check`` says when the run must stop."""

    def __init__(self, first_cells: int = FIRST_CELLS) -> None:
        self.first_cells = first_cells
        self._warmups: dict[Key, str] = {}
        #: the failures seen from each group's first cells, while they are all the same
        self._streaks: dict[Key, list[str]] = {}
        self._settled: set[Key] = set()

    def warmup(self, key: Key, row: ProfileRow) -> None:
        """Remember how a group's warm-up ended."""
        if row.error and row.error_code in SESSION_FAILURES:
            self._warmups[key] = _shape(row)

    def check(self, key: Key, row: ProfileRow) -> str | None:
        """A message when this row shows the group's agent cannot work; None otherwise."""
        if key in self._settled:
            return None
        if not row.error or row.error_code not in SESSION_FAILURES:
            self._settled.add(key)  # one session ran: the endpoint works
            return None
        shape = _shape(row)
        streak = self._streaks.setdefault(key, [])
        if streak and streak[-1] != shape:
            self._settled.add(key)  # failures that differ: not one dead endpoint
            return None
        streak.append(shape)
        warmed = self._warmups.get(key) == shape
        # A session that timed out may only be slow, which is worth measuring: timeouts stop a run only
        # when the warm-up timed out too.
        if warmed or (len(streak) >= self.first_cells and row.error_code != "timeout"):
            what = "the warm-up and the first session" if warmed else f"the first {len(streak)} sessions"
            return (
                f"model {key[0]!r}, mode {key[1]!r}: {what} failed the same way, so every cell would: {row.error} "
                "(stopping the run; check the agent and its model endpoint, then --resume)"
            )
        return None


def _shape(row: ProfileRow) -> str:
    """An error without its numbers (ids, ports, durations), so two failures of one cause compare equal."""
    return f"{row.error_code}:" + _NUMBERS.sub("#", row.error or "")[:200]


__all__ = ["Breaker"]
