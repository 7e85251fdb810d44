"""The ``transcripts`` provider: replays recorded sessions as if they were live.

Options (profile ``provider.options``)::

    provider:
      id: transcripts
      options:
        format: claude-code              # openai | anthropic | claude-code | opencode | trace
        files: ["recordings/*.jsonl"]    # paths or globs, relative to the current directory
        on_exhausted: error              # or "cycle" (reuse sessions when iterations
        outnumber them)
        time_scale: 0                    # > 0: really wait recorded wall time x time_scale
        scenario: null                   # a scenario id: every session is a recording of it

Every file is parsed when the provider is built, so ``profiler validate``
reports a bad recording before anything runs. Each session belongs to one
scenario: ``scenario`` when given, else the scenario id the file names
(``scenarioId`` of ``openai``/``anthropic`` runs), else its file stem. For
iteration ``i`` of scenario ``s`` the provider answers with session ``i`` of
the sessions of ``s``, or of every session, in file order, when none belongs
to ``s``. The warmup iteration (-1) replays the first. Once the sessions run
out the iteration fails (``on_exhausted: error``, the default: repeating a
recording would fake independent repetitions) or starts over (``cycle``).

A session that ended in an error is answered as one: the PromptResult carries
the recorded ``error``, so the row is an error row with its measurements. A
cost the importer computed from prices is left to the cost collector, which
prices each recorded model call (at its own model's price when the session
used several, else at the row's model's; ``cost_source: computed``); a cost
the file recorded is the provider's. Subagent transcripts given with their
main session are part of it (``attach_subagents``).
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import ConfigError, ProfilerError
from ..importers import (
    FORMATS,
    RecordedSession,
    attach_subagents,
    check_format,
    load_sessions,
)
from ..model import (
    CostBreakdown,
    CreateSessionParams,
    PromptResult,
    ProviderConfig,
    SessionHandle,
    SessionTrace,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..model.recorded import RecordedVerification

__all__ = ["TranscriptsProvider", "replayed_result", "resolve_files"]

_EXHAUSTED = ("error", "cycle")


def resolve_files(
    files: Any, where: str = "provider 'transcripts': option 'files'"
) -> list[Path]:
    """Paths and globs (relative to the current directory) -> existing files, in the
    given order, each once."""
    if isinstance(files, str):
        files = [files]
    if (
        not isinstance(files, (list, tuple))
        or not files
        or not all(isinstance(f, str) and f for f in files)
    ):
        raise ConfigError(
            f"{where}: expected a non-empty list of paths or globs, got {files!r}"
        )
    found: list[Path] = []
    for i, pattern in enumerate(files):
        expanded = Path(pattern).expanduser()
        if glob.has_magic(str(expanded)):
            matches = sorted(
                Path(p)
                for p in glob.glob(str(expanded), recursive=True)
                if Path(p).is_file()
            )
            if not matches:
                raise ConfigError(f"{where}[{i}]: {pattern!r} matched no file")
        else:
            if not expanded.is_file():
                raise ConfigError(f"{where}[{i}]: {pattern!r}: file not found")
            matches = [expanded]
        found.extend(m for m in matches if m not in found)
    return found


class TranscriptsProvider:
    """Replays recorded sessions (one per iteration) through the runner, for comparison
    with live ones."""

    id = "transcripts"
    init_scope = "suite"
    #: its synchronous methods return at once: the runner calls them inline, not in a thread
    nonblocking_sync = True

    def __init__(
        self,
        *,
        format: str,
        files: list[str] | str,
        on_exhausted: str = "error",
        time_scale: float = 0,
        scenario: str | None = None,
    ) -> None:
        """Parse every file now, so a bad recording fails the profile before anything runs."""
        if not isinstance(format, str):
            raise ConfigError(
                "provider 'transcripts': option 'format': expected one of "
                f"{', '.join(FORMATS)}, got {format!r}"
            )
        try:
            self.format = check_format(format)
        except ConfigError as exc:
            raise ConfigError(
                f"provider 'transcripts': option 'format': {exc}"
            ) from None
        if on_exhausted not in _EXHAUSTED:
            raise ConfigError(
                "provider 'transcripts': option 'on_exhausted': expected "
                f"'error' or 'cycle', got {on_exhausted!r}"
            )
        if (
            isinstance(time_scale, bool)
            or not isinstance(time_scale, (int, float))
            or time_scale < 0
        ):
            raise ConfigError(
                "provider 'transcripts': option 'time_scale': expected a "
                f"number >= 0, got {time_scale!r}"
            )
        if scenario is not None and (not isinstance(scenario, str) or not scenario):
            raise ConfigError(
                "provider 'transcripts': option 'scenario': expected a "
                f"scenario id, got {scenario!r}"
            )
        sessions: list[RecordedSession] = []
        for path in resolve_files(files):
            try:
                sessions.extend(load_sessions(self.format, path))
            except ProfilerError as exc:
                raise ConfigError(f"provider 'transcripts': {exc}") from None
        self._setup(
            attach_subagents(sessions),
            on_exhausted=on_exhausted,
            time_scale=float(time_scale),
            scenario=scenario,
        )

    @classmethod
    def from_sessions(
        cls,
        sessions: Sequence[RecordedSession],
        *,
        scenario: str | None = None,
        on_exhausted: str = "error",
        recorded_times: bool = False,
        assigned: dict[tuple[str, str, int], RecordedSession] | None = None,
    ) -> TranscriptsProvider:
        """A provider replaying sessions already loaded (``profiler import`` parses
        every file first).

        With ``recorded_times`` each row says when its session happened, not when it was replayed;
        ``assigned`` names the session of each (mode, scenario id, iteration) instead of
        the pick rule.
        """
        provider = cls.__new__(cls)
        provider.format = sessions[0].format if sessions else FORMATS[0]
        provider._setup(
            list(sessions), on_exhausted=on_exhausted, time_scale=0.0, scenario=scenario
        )
        provider.recorded_times = recorded_times
        provider.assigned = dict(assigned or {})
        return provider

    def _setup(
        self,
        sessions: list[RecordedSession],
        *,
        on_exhausted: str,
        time_scale: float,
        scenario: str | None,
    ) -> None:
        if not sessions:
            raise ConfigError("provider 'transcripts': the files hold no session")
        self.sessions = sessions
        self.on_exhausted = on_exhausted
        self.time_scale = time_scale
        self.scenario = scenario
        self.recorded_times = False
        self.assigned: dict[tuple[str, str, int], RecordedSession] = {}
        self._live: dict[str, tuple[RecordedSession, int]] = {}

    def scenario_of(self, session: RecordedSession) -> str:
        """The scenario a session is a recording of: the ``scenario`` option, the file's
        own id, else the file stem."""
        return (
            self.scenario or session.scenario_hint or session.stem or session.session_id
        )

    def pool(self, scenario_id: str) -> list[RecordedSession]:
        """The sessions replayed for ``scenario_id``: its own recordings, else all of them."""
        named = [s for s in self.sessions if self.scenario_of(s) == scenario_id]
        return named or self.sessions

    def pick(self, scenario_id: str, iteration: int, mode: str = "") -> RecordedSession:
        """The session replayed for one iteration (see the module docstring for the rule)."""
        if (mode, scenario_id, iteration) in self.assigned:
            return self.assigned[(mode, scenario_id, iteration)]
        pool = self.pool(scenario_id)
        index = max(iteration, 0)
        if index >= len(pool):
            if self.on_exhausted == "error":
                raise ProfilerError(
                    "transcripts: no recorded session left for scenario "
                    f"{scenario_id!r} iteration {iteration} "
                    f"({len(pool)} session(s) match; lower the repetitions or "
                    "set on_exhausted: cycle)"
                )
            index %= len(pool)
        return pool[index]

    def init(self, config: ProviderConfig) -> None:
        """Nothing to start: the sessions were loaded when the provider was built."""

    def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """Choose the recording this iteration replays."""
        session = self.pick(params.scenario_id, params.iteration, params.mode)
        handle = SessionHandle(
            session_id=session.session_id,
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )
        # The same recording may be replayed by concurrent iterations (other modes):
        # count the users.
        _, users = self._live.get(handle.session_id, (session, 0))
        self._live[handle.session_id] = (session, users + 1)
        return handle

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """The recorded answer; with ``time_scale > 0`` after waiting its wall time, scaled."""
        session = self._session(handle)
        if self.time_scale > 0:
            import trio

            await trio.sleep(
                session.result.metrics.timing.wall_ms / 1000 * self.time_scale
            )
        return replayed_result(session)

    def export_session(self, handle: SessionHandle) -> SessionTrace:
        """The recorded trace."""
        return self._session(handle).trace

    def destroy_session(self, handle: SessionHandle) -> None:
        """Release the recording (unknown handles are ignored)."""
        entry = self._live.get(handle.session_id)
        if entry is None:
            return
        session, users = entry
        if users <= 1:
            del self._live[handle.session_id]
        else:
            self._live[handle.session_id] = (session, users - 1)

    def shutdown(self) -> None:
        """Forget live replays."""
        self._live.clear()

    def session_times(self, handle: SessionHandle) -> tuple[str, str] | None:
        """When the replayed session happened (``profiler import``); None in a profile's
        replay run."""
        return recorded_times(self._session(handle)) if self.recorded_times else None

    def session_verification(
        self, handle: SessionHandle
    ) -> RecordedVerification | None:
        """What the recording's verifiers said (a Harbor trial's reward), or None when
        it holds none."""
        return self._session(handle).verification

    def _session(self, handle: SessionHandle) -> RecordedSession:
        try:
            return self._live[handle.session_id][0]
        except KeyError:
            raise ProfilerError(
                f"transcripts: unknown session {handle.session_id!r}"
            ) from None


def recorded_times(session: RecordedSession) -> tuple[str, str]:
    """When a session happened; for a file without timestamps, its modification time
    plus the recorded wall time."""
    if session.started_at and session.completed_at:
        return session.started_at, session.completed_at
    try:
        moment = datetime.fromtimestamp(Path(session.file).stat().st_mtime, tz=UTC)
    except OSError:
        moment = datetime.now(UTC)
    end = moment + timedelta(milliseconds=session.result.metrics.timing.wall_ms)
    return _iso(moment), _iso(end)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def replayed_result(session: RecordedSession) -> PromptResult:
    """The PromptResult a replay answers with: the recorded error kept, a computed cost
    left to the cost collector."""
    result = session.result
    if session.cost_source == "computed":
        # The importer priced the tokens with the recorded model; the row's model
        # decides the price in a run.
        result = attrs.evolve(
            result, metrics=attrs.evolve(result.metrics, cost=CostBreakdown())
        )
    if session.error and not result.error:
        result = attrs.evolve(result, error=session.error)
    return result
