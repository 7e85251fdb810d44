"""The ``simulated`` provider: sessions, their options per mode, their traces."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from ...errors import ProfilerError
from ...model import (
    CreateSessionParams,
    PromptMetrics,
    PromptResult,
    ProviderConfig,
    SessionHandle,
    SessionTrace,
    TimingBreakdown,
    TokenBreakdown,
    TraceSummary,
)
from .costs import session_cost
from .draws import stable_seed
from .options import SimulatedOptions, build_options
from .session import Session

DEFAULT_TIMEOUT_MS = 120_000


@attrs.define
class _LiveSession:
    params: CreateSessionParams
    attempt: int
    options: SimulatedOptions
    result: PromptResult | None = None
    trace: SessionTrace | None = None


class SimulatedProvider:
    """A seeded simulator of a tool-using coding agent (for demos, tests and load tests).

    Options come from the constructor (the profile's ``provider.options``) and
    from ``init(config)`` (``config.options``: the same options merged with the
    mode's ``provider_overrides``); ``config.options`` win. ``init`` is called
    once per mode (``init_scope = "mode"``), and the options of every mode seen
    are kept, so each session follows its own mode's behaviour.
    """

    id = "simulated"
    init_scope = "mode"
    #: it edits no file, so it may run inside any trial's environment (and fails a
    #: task's own tests there)
    runs_in_trial = True
    #: its synchronous methods return at once: the runner calls them inline, not in a thread
    nonblocking_sync = True

    def __init__(self, **options: Any) -> None:
        """Build with default options, changed by any of :class:`SimulatedOptions`' fields."""
        self._base = dict(options)
        self._defaults = build_options([self._base], "provider 'simulated'")
        self._by_mode: dict[str, SimulatedOptions] = {}
        self._current: SimulatedOptions | None = None
        self._attempts: dict[tuple[str, str, str, int], int] = {}
        self._sessions: dict[str, _LiveSession] = {}

    def options_for(self, mode: str) -> SimulatedOptions:
        """The options sessions of ``mode`` run with."""
        return self._by_mode.get(mode) or self._current or self._defaults

    def init(self, config: ProviderConfig) -> None:
        """Take the options of ``config.mode`` (its overrides merged into ``config.options``)."""
        where = f"provider 'simulated' (mode {config.mode!r}, model {config.model!r})"
        options = build_options([self._base, dict(config.options)], where)
        self._by_mode[config.mode] = options
        self._current = options

    def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """Open a session; a retry of the same cell gets the next attempt number (and a
        fresh draw)."""
        key = (params.model, params.mode, params.scenario_id, params.iteration)
        attempt = self._attempts.get(key, 0) + 1
        self._attempts[key] = attempt
        options = self.options_for(params.mode)
        session_id = f"sim-{stable_seed(options.seed, *key, attempt):016x}"
        self._sessions[session_id] = _LiveSession(
            params=params, attempt=attempt, options=options
        )
        return SessionHandle(
            session_id=session_id,
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )

    def simulate(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Generate the session's answer without sleeping (``prompt`` = this + the scaled sleep)."""
        live = self._live(handle)
        session = Session(
            live.options,
            live.params,
            live.attempt,
            text,
            timeout_ms or DEFAULT_TIMEOUT_MS,
        )
        out = session.run()
        result = PromptResult(
            text=out.text,
            metrics=PromptMetrics(
                tokens=out.tokens,
                timing=TimingBreakdown(wall_ms=out.wall_ms, segments=out.segments),
                tool_calls=out.records,
                cost=session_cost(
                    live.params.model,
                    out.tokens,
                    live.options.prices,
                    live.options.cost_factor,
                ),
            ),
            completion_reason=out.completion,
        )
        live.result = result
        live.trace = SessionTrace(
            session_id=handle.session_id,
            events=out.events,
            turns=out.turns,
            summary=TraceSummary(
                total_turns=len(out.turns),
                total_tool_calls=len(out.records),
                total_tokens=out.tokens,
                total_duration=out.wall_ms,
            ),
        )
        return result

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Run the simulated session; with ``time_scale > 0`` really sleep its simulated
        wall time, scaled."""
        result = self.simulate(handle, text, timeout_ms)
        live = self._live(handle)
        if live.params.workspace is not None:
            _write_files(Path(live.params.workspace), live.options.writes)
        scale = live.options.time_scale
        if scale > 0:
            import trio

            await trio.sleep(result.metrics.timing.wall_ms / 1000 * scale)
        return result

    def export_session(self, handle: SessionHandle) -> SessionTrace:
        """The trace of the session (empty before the prompt), consistent with the prompt result."""
        live = self._live(handle)
        if live.trace is not None:
            return live.trace
        return SessionTrace(
            session_id=handle.session_id,
            events=(),
            turns=(),
            summary=TraceSummary(
                total_turns=0,
                total_tool_calls=0,
                total_tokens=TokenBreakdown(),
                total_duration=0,
            ),
        )

    def destroy_session(self, handle: SessionHandle) -> None:
        """Forget the session (whatever state it is in; unknown handles are ignored)."""
        self._sessions.pop(handle.session_id, None)

    def shutdown(self) -> None:
        """Drop live sessions; attempt counters survive so retries stay distinct."""
        self._sessions.clear()
        self._current = None

    def _live(self, handle: SessionHandle) -> _LiveSession:
        try:
            return self._sessions[handle.session_id]
        except KeyError:
            raise ProfilerError(
                f"provider 'simulated': unknown session {handle.session_id!r} "
                f"(destroyed, or never created)"
            ) from None


def _write_files(workspace: Path, writes: dict[str, str]) -> None:
    """The simulated agent's edits: each file written into its workspace."""
    for relative, content in writes.items():
        target = workspace / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
