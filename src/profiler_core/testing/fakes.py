"""The fakes a test scripts: a provider, a scorer, the plugin registering them, a one-turn trace."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import attrs

from ..model import (
    CreateSessionParams,
    PromptMetrics,
    PromptResult,
    ProviderConfig,
    ScorerCheckResult,
    ScorerResult,
    SessionHandle,
    SessionTrace,
    TextOutputEvent,
    TimingBreakdown,
    TimingSegment,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    TraceSummary,
    Turn,
    TurnBoundaryEvent,
)
from ..model.record import Record
from ..plugins.markers import hookimpl


@attrs.frozen(repr=False, eq=False)
class Fail(Record):
    """Tell ``FakeProvider`` to raise this message on a prompt."""

    message: str = "provider failed"


@attrs.frozen(repr=False, eq=False)
class Hang(Record):
    """Tell ``FakeProvider`` to never answer a prompt (the runner must time it out)."""


def simple_trace(
    session_id: str,
    text: str,
    tool_calls: tuple[ToolCallRecord, ...],
    tokens: TokenBreakdown,
    wall_ms: float,
) -> SessionTrace:
    """A one-turn trace consistent with a prompt result."""
    now = datetime.now(UTC).isoformat()
    events: list[Any] = [
        ToolCallEvent(
            name=r.name,
            input={},
            output=None,
            duration_ms=r.duration_ms or 0,
            success=r.success,
            error=r.error,
        )
        for r in tool_calls
    ]
    events.append(TextOutputEvent(content=text, token_count=tokens.output))
    events.append(TurnBoundaryEvent(turn_number=1, timestamp=now))
    turn = Turn(
        number=1,
        events=tuple(events),
        start_timestamp=now,
        end_timestamp=now,
        duration_ms=wall_ms,
    )
    return SessionTrace(
        session_id=session_id,
        events=tuple(events),
        turns=(turn,),
        summary=TraceSummary(
            total_turns=1,
            total_tool_calls=len(tool_calls),
            total_tokens=tokens,
            total_duration=wall_ms,
        ),
    )


class FakeProvider:
    """An in-memory provider whose behaviour a test scripts.

    ``script(params, attempt)`` may return a ``PromptResult``, a ``Fail``, a
    ``Hang`` or ``None`` (the default answer). ``latency_s`` makes each prompt
    sleep (use trio's ``MockClock`` to keep tests instant). Every call is
    appended to ``calls`` so tests can check the order of operations.
    """

    id = "fake"

    def __init__(
        self,
        *,
        text: str = "done",
        tokens: TokenBreakdown | None = None,
        tool_calls: tuple[ToolCallRecord, ...] = (
            ToolCallRecord(name="bash", category="shell"),
        ),
        latency_s: float = 0.0,
        script: Callable[[CreateSessionParams, int], Any] | None = None,
        init_scope: str = "suite",
        provider_id: str | None = None,
    ) -> None:
        self.id = provider_id or type(self).id  # a subclass's class attribute counts
        self.init_scope = init_scope
        # In memory and instant: called inline (a thread hop would let MockClock jump
        # past timeouts).
        self.nonblocking_sync = True
        self.text = text
        self.tokens = tokens or TokenBreakdown(input=100, output=50)
        self.tool_calls = tuple(tool_calls)
        self.latency_s = latency_s
        self.script = script
        self.calls: list[tuple[Any, ...]] = []
        self.live_sessions: set[str] = set()
        self.configs: list[ProviderConfig] = []
        self._attempts: dict[tuple[str, str, int], int] = {}
        self._params: dict[str, tuple[CreateSessionParams, int]] = {}
        self._ids = itertools.count(1)

    def init(self, config: ProviderConfig) -> None:
        """Record the config."""
        self.configs.append(config)
        self.calls.append(("init", config.mode, config.model))

    def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """Open a numbered in-memory session."""
        key = (params.mode, params.scenario_id, params.iteration)
        attempt = self._attempts.get(key, 0) + 1
        self._attempts[key] = attempt
        session_id = f"fake-{next(self._ids)}"
        self._params[session_id] = (params, attempt)
        self.live_sessions.add(session_id)
        self.calls.append(
            ("create", params.mode, params.scenario_id, params.iteration, attempt)
        )
        return SessionHandle(
            session_id=session_id,
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Answer as scripted."""
        import trio

        params, attempt = self._params[handle.session_id]
        self.calls.append(
            ("prompt", params.mode, params.scenario_id, params.iteration, attempt)
        )
        outcome = self.script(params, attempt) if self.script else None
        if isinstance(outcome, Hang):
            await trio.sleep_forever()
        if self.latency_s:
            await trio.sleep(self.latency_s)
        if isinstance(outcome, Fail):
            raise RuntimeError(outcome.message)
        if isinstance(outcome, PromptResult):
            return outcome
        wall = self.latency_s * 1000
        return PromptResult(
            text=self.text,
            metrics=PromptMetrics(
                tokens=self.tokens,
                timing=TimingBreakdown(
                    wall_ms=wall,
                    segments=(TimingSegment(label="prompt", start_ms=0, end_ms=wall),),
                ),
                tool_calls=self.tool_calls,
            ),
        )

    def export_session(self, handle: SessionHandle) -> SessionTrace:
        """A one-turn trace of the default answer."""
        self.calls.append(("export", handle.session_id))
        return simple_trace(
            handle.session_id,
            self.text,
            self.tool_calls,
            self.tokens,
            self.latency_s * 1000,
        )

    def destroy_session(self, handle: SessionHandle) -> None:
        """Forget the session."""
        self.calls.append(("destroy", handle.session_id))
        self.live_sessions.discard(handle.session_id)

    def shutdown(self) -> None:
        """Record the shutdown."""
        self.calls.append(("shutdown",))


class FixedScorer:
    """A scorer that always returns the same verdict."""

    id = "fixed"

    def __init__(
        self,
        success: bool = True,
        passed: int | None = None,
        total: int = 1,
        error: str | None = None,
    ):
        self.success = success
        self.total = total
        self.passed = passed if passed is not None else (total if success else 0)
        self.error = error

    def evaluate(self, scenario, context) -> ScorerResult:
        """Return the fixed verdict with one detail per check."""
        details = tuple(
            ScorerCheckResult(
                id=f"check_{i + 1}",
                description=f"check {i + 1}",
                passed=i < self.passed,
            )
            for i in range(self.total)
        )
        return ScorerResult(
            success=self.success,
            passed=self.passed,
            total=self.total,
            details=details,
            error=self.error,
        )


def fake_plugin(
    *,
    provider: FakeProvider | None = None,
    scorer: FixedScorer | None = None,
    name: str = "fake",
) -> Any:
    """A plugin object registering the given fake provider and scorer instances."""

    class _FakePlugin:
        # The factories hand out the given instances; register(..., id=) names them
        # without building.
        @hookimpl
        def profiler_register_providers(self, register):
            if provider is not None:
                register(lambda **options: provider, id=provider.id)

        @hookimpl
        def profiler_register_scorers(self, register):
            if scorer is not None:
                register(lambda **options: scorer, id=scorer.id)

    plugin = _FakePlugin()
    plugin.__name__ = name  # type: ignore[attr-defined]
    return plugin
