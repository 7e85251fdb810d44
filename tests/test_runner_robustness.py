"""A misbehaving provider cannot crash or freeze the run (issues 15.10, 15.11)."""

from __future__ import annotations

import time

import pytest
import trio
import trio.testing

from profiler_core import ModeConfig, PromptResult, Scenario
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer


def _options(tmp_path, provider, **kw):
    base = dict(
        provider=provider,
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do", timeout_ms=2000)],
        modes={"a": ModeConfig()},
        repetitions=2,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    base.update(kw)
    return RunOptions(**base)


class WrongTypes(FakeProvider):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    async def prompt(self, handle, text, timeout_ms=None):
        if self.kind == "dict":
            return {"text": "x"}
        if self.kind == "garbage":
            return PromptResult(text="x", metrics="garbage")
        return await super().prompt(handle, text, timeout_ms)

    def export_session(self, handle):
        return "not a trace" if self.kind == "trace" else super().export_session(handle)


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        (
            "dict",
            "provider 'fake' returned dict {'text': 'x'} from prompt, expected PromptResult",
        ),
        (
            "garbage",
            "provider 'fake' returned a PromptResult whose metrics is "
            "'garbage' from prompt, expected PromptMetrics",
        ),
        (
            "trace",
            "provider 'fake' returned str 'not a trace' from export_session, "
            "expected SessionTrace or None",
        ),
    ],
)
def test_wrong_types_become_error_rows_naming_the_plugin(
    tmp_path, profiler_plugin_manager, kind, message
):
    options = _options(tmp_path, WrongTypes(kind))
    options.plugin_manager = profiler_plugin_manager
    result = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    assert [(r.error, r.error_code) for r in result.rows] == [
        (message, "provider_error")
    ] * 2


class Blocking(FakeProvider):
    """Synchronous methods that block (a plugin written with time.sleep)."""

    def __init__(self, where, seconds):
        super().__init__()
        self.nonblocking_sync = False  # the default for any third-party provider
        self.where, self.seconds = where, seconds

    def create_session(self, params):
        if self.where == "create":
            time.sleep(self.seconds)
        return super().create_session(params)

    def destroy_session(self, handle):
        if self.where == "destroy":
            time.sleep(self.seconds)
        super().destroy_session(handle)


def test_a_blocking_create_session_still_times_out(tmp_path, profiler_plugin_manager):
    options = _options(
        tmp_path,
        Blocking("create", 2),
        scenarios=[Scenario(id="s1", name="S1", prompt="do", timeout_ms=300)],
        repetitions=1,
    )
    options.plugin_manager = profiler_plugin_manager
    t0 = time.monotonic()
    result = trio.run(run_profile_suite, options)
    assert time.monotonic() - t0 < 1.8
    assert result.rows[0].completion_reason == "timeout"


def test_a_blocking_destroy_is_abandoned_after_its_limit(
    tmp_path, profiler_plugin_manager
):
    options = _options(
        tmp_path, Blocking("destroy", 2), repetitions=1, destroy_timeout_s=0.3
    )
    options.plugin_manager = profiler_plugin_manager
    t0 = time.monotonic()
    result = trio.run(run_profile_suite, options)
    assert time.monotonic() - t0 < 1.8
    assert result.rows[0].success
