"""A recorded agent session (a transcript another tool wrote), measured as if the
profiler had run it."""

from __future__ import annotations

from pathlib import Path

import attrs

from ._validators import as_tuple
from .metrics import CostSource
from .record import Record
from .row import CheckpointResult
from .session import PromptResult
from .trace import SessionTrace


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RecordedVerification(Record):
    """What a recorded session's verifiers said (a Harbor trial's verifier): replayed as
    the runner's verification."""

    checks: tuple[CheckpointResult, ...] = attrs.field(default=(), converter=as_tuple)
    #: the reward (0-1); None when none was recorded (or it lies outside 0-1: then only
    #: in ``scores``)
    reward: float | None = None
    #: named rewards, as ``reward_<name>`` metrics of the row
    scores: dict[str, float] = attrs.Factory(dict)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RecordedSession(Record):
    """One recorded agent session, measured as if the profiler had run it."""

    session_id: str
    #: the model the file names (the most used one when several answered); None when it names none
    model: str | None
    started_at: str | None
    completed_at: str | None
    #: the first user message
    prompt: str
    #: the agent's final text
    text: str
    result: PromptResult
    trace: SessionTrace
    #: the file it came from
    file: str
    #: where in the file ("path", "path:12", "path[3]") - for messages
    source: str
    format: str
    #: where ``result.metrics.cost`` came from: the file, computed from prices, or unknown ($0)
    cost_source: CostSource
    #: a scenario id the file itself names (the original's ``Run.scenarioId``)
    scenario_hint: str | None = None
    #: why the session ended in error, when it did
    error: str | None = None
    #: things worth telling the user (missing usage, orphan tool results...)
    warnings: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    #: the subagent whose own transcript this is (Claude Code's ``agentId``); None for a
    #: main session
    agent_id: str | None = None
    #: what the session's verifiers said, when the recording holds it (a Harbor trial)
    verification: RecordedVerification | None = None

    @property
    def stem(self) -> str:
        """The file name without its extension (the default scenario id)."""
        return Path(self.file).stem


__all__ = ["RecordedSession", "RecordedVerification"]
