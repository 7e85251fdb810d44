"""How many sessions run at once: fixed, or ``auto`` — raised while sessions succeed,
halved on rate limits.

With ``execution.concurrency: auto`` the run starts with two sessions at once,
adds one after every ``grow_after`` sessions that finished without a rate
limit (up to ``max_concurrency``), and halves on a ``RateLimitedError``; new
cells wait out the ``Retry-After`` the provider reported before they start.
"""

from __future__ import annotations

import math

import trio

#: sessions at once when an ``auto`` run starts
AUTO_START = 2


class Pacer:
    """The run's concurrency limit and its rate-limit pause."""

    def __init__(
        self, concurrency: int | None, max_concurrency: int = 16, grow_after: int = 4
    ) -> None:
        self.adaptive = concurrency is None
        self.max = max_concurrency if self.adaptive else int(concurrency or 1)
        self.limiter = trio.CapacityLimiter(
            min(AUTO_START, self.max) if self.adaptive else self.max
        )
        self.grow_after = grow_after
        self._streak = 0
        #: the highest level known to work: one below where a rate limit came (probed
        #: again after a long streak)
        self._ceiling = self.max
        self._resume_at = -math.inf
        self.rate_limits = 0

    @property
    def current(self) -> int:
        """Sessions allowed at once now."""
        return int(self.limiter.total_tokens)

    async def wait_turn(self) -> None:
        """Sleep until a rate-limit pause (``Retry-After``) is over."""
        while (delay := self._resume_at - trio.current_time()) > 0:
            await trio.sleep(delay)

    async def acquire(self, token: object) -> None:
        """A slot for a new cell, taken only outside a rate-limit pause (one may begin
        while we wait)."""
        while True:
            await self.wait_turn()
            await self.limiter.acquire_on_behalf_of(token)
            if self._resume_at <= trio.current_time():
                return
            self.limiter.release_on_behalf_of(token)

    def succeeded(self) -> None:
        """A session finished without a rate limit: after a streak, allow one more at once."""
        if not self.adaptive:
            return
        self._streak += 1
        if self._streak >= 10 * self.grow_after and self._ceiling < self.max:
            self._ceiling += (
                1  # a long clean streak: the limit may have lifted, probe one higher
            )
        if self._streak % self.grow_after == 0 and self.current < min(
            self._ceiling, self.max
        ):
            self.limiter.total_tokens = self.current + 1

    def rate_limited(self, retry_after: float | None, tries: int = 1) -> float:
        """A session was rate limited: halve (auto) and pause new starts; the seconds to wait.

        The wait is the provider's ``retry_after``, else an exponential back-off by the
        session's number of rate-limited tries (1, 2, 4 ... 60 s).
        """
        self.rate_limits += 1
        self._streak = 0
        if self.adaptive:
            self._ceiling = max(1, min(self._ceiling, self.current - 1))
            if self.current > 1:
                self.limiter.total_tokens = max(1, self.current // 2)
        wait = retry_after if retry_after is not None else min(60.0, 2.0 ** (tries - 1))
        self._resume_at = max(self._resume_at, trio.current_time() + wait)
        return wait
