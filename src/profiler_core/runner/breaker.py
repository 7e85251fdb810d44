"""Stopping a run whose agent cannot work at all (a model endpoint that is down),
instead of trying every cell.

When a (model, mode)'s warm-up failed and its first cell then fails the same
way — or, without a warm-up, its first ``FIRST_CELLS`` cells all fail the same
way (timeouts aside: a slow agent is worth measuring) — every other cell would
fail like them, each after its own timeout. The run stops there with one line
naming the error (which, for the agent providers, names the model endpoint).

One broken scenario is not a dead endpoint: its warm-up and its first cell fail
alike too (the warm-up runs the first scenario). So the failures must come from
at least two scenarios, unless the error itself is about the endpoint
(connection refused, a host name that does not resolve, 401/403), which no
scenario causes. Only failures of the session itself count (the provider could
not run it, it timed out, the session ended in an error); a verifier, scorer or
set-up error says nothing about the endpoint.
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
#: Errors about the endpoint itself, whatever the scenario: refused, unresolvable,
#: unreachable, unauthorised.
_ENDPOINT_ERRORS = re.compile(
    r"connection refused|econnrefused|connect(ion)? error|failed to "
    r"connect|could not connect|cannot connect"
    r"|name or service not known|nodename nor servname|temporary failure in "
    r"name resolution|getaddrinfo|enotfound"
    r"|no address associated|network is unreachable|no route to host|ehostunreach"
    r"|\b401\b|\b403\b|unauthori[sz]ed|forbidden|invalid (x-)?api[ _-]?key|authentication",
    re.IGNORECASE,
)


def names_the_endpoint(message: str) -> bool:
    """True when an error is about the endpoint (refused, DNS, unreachable, 401/403),
    not about a scenario."""
    return bool(_ENDPOINT_ERRORS.search(message))


class Breaker:
    """Watches the first sessions of each (model, mode); ``check`` says when the run must stop."""

    def __init__(self, first_cells: int = FIRST_CELLS) -> None:
        self.first_cells = first_cells
        #: how each group's warm-up failed, and on which scenario
        self._warmups: dict[Key, tuple[str, str]] = {}
        #: the failures seen from each group's first cells (shape, scenario), while they
        #: are all the same
        self._streaks: dict[Key, list[tuple[str, str]]] = {}
        self._settled: set[Key] = set()

    def warmup(self, key: Key, row: ProfileRow) -> None:
        """Remember how a group's warm-up ended."""
        if row.error and row.error_code in SESSION_FAILURES:
            self._warmups[key] = (_shape(row), row.scenario_id)

    def check(self, key: Key, row: ProfileRow) -> str | None:
        """A message when this row shows the group's agent cannot work; None otherwise."""
        if key in self._settled:
            return None
        if not row.error or row.error_code not in SESSION_FAILURES:
            self._settled.add(key)  # one session ran: the endpoint works
            return None
        shape = _shape(row)
        streak = self._streaks.setdefault(key, [])
        if streak and streak[-1][0] != shape:
            self._settled.add(key)  # failures that differ: not one dead endpoint
            return None
        streak.append((shape, row.scenario_id))
        warmup = self._warmups.get(key)
        warmed = warmup is not None and warmup[0] == shape
        scenarios = {scenario for _, scenario in streak}
        if warmup is not None and warmed:
            scenarios.add(warmup[1])
        # One scenario failing every time is that scenario's fault, unless the error is
        # the endpoint's.
        if len(scenarios) < 2 and not names_the_endpoint(row.error):
            return None
        # A session that timed out may only be slow, which is worth measuring: timeouts
        # stop a run only when the warm-up timed out too.
        enough = len(streak) >= self.first_cells and row.error_code != "timeout"
        if not (warmed or enough):
            return None
        return (
            f"model {key[0]!r}, mode {key[1]!r}: {_what_failed(warmed, len(streak))} "
            f"failed the same way, so every cell would: {row.error} "
            "(stopping the run; check the agent and its model endpoint, then --resume)"
        )


def _what_failed(warmed: bool, sessions: int) -> str:
    """Which sessions failed alike, as the stop's message says it."""
    if warmed and sessions == 1:
        return "the warm-up and the first session"
    if warmed:
        return f"the warm-up and the first {sessions} sessions"
    return f"the first {sessions} sessions"


def _shape(row: ProfileRow) -> str:
    """An error without its numbers (ids, ports, durations), so two failures of one
    cause compare equal."""
    return f"{row.error_code}:" + _NUMBERS.sub("#", row.error or "")[:200]


__all__ = ["Breaker", "names_the_endpoint"]
