"""concurrency: auto — raised while sessions succeed, halved on rate limits, Retry-After
honoured (issue 18.2)."""

from __future__ import annotations

import trio
import trio.testing

from profiler_core import ModeConfig, RateLimitedError, Scenario
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer


class Limited(FakeProvider):
    """A model API that refuses (429) while more than `limit` sessions are in flight."""

    def __init__(self, limit, retry_after=None):
        super().__init__(latency_s=1.0)
        self.limit, self.retry_after = limit, retry_after
        self.in_flight = self.peak = 0
        self.refusals: list[float] = []
        self.starts: list[float] = []

    async def prompt(self, handle, text, timeout_ms=None):
        self.in_flight += 1
        try:
            self.peak = max(self.peak, self.in_flight)
            if self.in_flight > self.limit:
                self.refusals.append(trio.current_time())
                raise RateLimitedError(
                    "429 Too Many Requests", retry_after=self.retry_after
                )
            self.starts.append(trio.current_time())
            return await super().prompt(handle, text, timeout_ms)
        finally:
            self.in_flight -= 1


def _run(tmp_path, manager, provider, **kw):
    options = RunOptions(
        provider=provider,
        scorer=FixedScorer(),
        scenarios=[Scenario(id=f"s{i}", name="S", prompt="do") for i in range(10)],
        modes={"a": ModeConfig()},
        repetitions=4,
        warmup=False,
        allowed_retries=0,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        **kw,
    )
    options.plugin_manager = manager
    events = []

    class Watch:
        from profiler_core import hookimpl

        @hookimpl
        def profiler_progress(self, event):
            if event.kind == "iteration_completed":
                events.append(event.concurrency)

    options.hooks = [Watch()]
    result = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    return result, events


def test_auto_settles_at_or_below_the_limit_with_no_errored_row(
    tmp_path, profiler_plugin_manager
):
    provider = Limited(limit=4)
    result, concurrency = _run(
        tmp_path,
        profiler_plugin_manager,
        provider,
        concurrency=None,
        max_concurrency=12,
    )
    assert len(result.rows) == 40 and all(
        r.error is None and r.success for r in result.rows
    )
    assert all(
        r.attempts == 1 for r in result.rows
    )  # a rate limit does not use up a retry
    assert provider.refusals  # it did probe above the limit...
    assert max(concurrency) > 2  # ...after growing from its start of 2,
    assert concurrency[-1] <= 4  # and settled at or below the limit


def test_retry_after_is_waited_out_before_new_cells_start(
    tmp_path, profiler_plugin_manager
):
    provider = Limited(limit=2, retry_after=30.0)
    result, _ = _run(tmp_path, profiler_plugin_manager, provider, concurrency=3)
    assert all(r.error is None for r in result.rows)
    first = provider.refusals[0]
    # Nothing new started in the 30 s after the first refusal (running ones may finish).
    assert not [t for t in provider.starts if first < t < first + 30.0]


def test_fixed_concurrency_is_not_changed(tmp_path, profiler_plugin_manager):
    provider = Limited(limit=100)
    _, concurrency = _run(tmp_path, profiler_plugin_manager, provider, concurrency=3)
    assert set(concurrency) == {3} and provider.peak == 3
