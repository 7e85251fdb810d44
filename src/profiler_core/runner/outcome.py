"""What one attempt of a cell produces, and the failures inside it that are worth a retry."""

from __future__ import annotations

from typing import Any

import attrs

from ..model import ProfileRow, SessionAnalysisBundle, SessionTrace


@attrs.define
class IterationOutcome:
    """What one iteration produced."""

    row: ProfileRow
    trace: SessionTrace | None
    bundle: SessionAnalysisBundle | None
    #: the session was rate limited; wait this long (seconds, None: unknown) before trying again
    retry_after: float | None = None
    rate_limited: bool = False
    #: the trace as it is written (redacted), when an analysis worker serialised it;
    #: None: serialise it here
    trace_text: str | None = None


#: what a plugin method may raise that becomes an error row: ``SystemExit`` too (a plugin calling
#: ``sys.exit()`` must not end the run); ``KeyboardInterrupt`` and trio's ``Cancelled`` still pass
PLUGIN_ERRORS: tuple[type[BaseException], ...] = (Exception, SystemExit)


class IterationError(Exception):
    """A failure inside an iteration that is worth a retry."""

    def __init__(
        self,
        message: str,
        reason: str = "error",
        code: str = "error",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.code = code
        self.retry_after = retry_after


def analyzer_failure(analyzer: Any, exc: BaseException) -> str:
    """How a raising analyzer is reported, inline and in an analysis worker alike."""
    return f"analyzer {analyzer.name!r} failed: {type(exc).__name__}: {exc}"


__all__ = ["IterationError", "IterationOutcome", "analyzer_failure"]
