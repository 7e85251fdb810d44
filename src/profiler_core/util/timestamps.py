"""Timestamps as the original writes them: ISO 8601 in UTC with milliseconds,
``2026-01-01T00:00:23.638Z``."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def iso(moment: datetime) -> str:
    """``moment`` as ``2026-01-01T00:00:23.638Z`` (a naive datetime is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (
        moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


#: (a second since the epoch, its ``%Y-%m-%dT%H:%M:%S``): one tuple, replaced whole, so
#: threads read a matching pair.
_LAST_SECOND: tuple[int, str] = (-1, "")


def now_iso() -> str:
    """The current time, as ``iso`` writes it."""
    # What iso(datetime.now(UTC)) writes (both floor the clock to the millisecond) at a fraction of
    # its cost: the runner stamps every cell twice, many times a second, so the second's
    # text is kept.
    global _LAST_SECOND
    ns = time.time_ns()
    second = ns // 1_000_000_000
    last = _LAST_SECOND
    if last[0] != second:
        last = _LAST_SECOND = (
            second,
            time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)),
        )
    return f"{last[1]}.{ns // 1_000_000 % 1000:03d}Z"


def parse_iso(text: str) -> datetime | None:
    """An ISO 8601 string (``Z`` or an offset; none means UTC) as an aware datetime, or
    None if it is not one."""
    try:
        moment = datetime.fromisoformat(text)
    except (ValueError, AttributeError, TypeError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
