"""Long offending values are cut before they reach an error message (no 1 MB echo)."""

from __future__ import annotations

import reprlib
from typing import Any

#: Characters of an offending value shown in a message.
LIMIT = 200

_REPR = reprlib.Repr()  # Python 3.11 takes no keyword arguments here
_REPR.maxlevel = 4
_REPR.maxdict = _REPR.maxlist = _REPR.maxtuple = _REPR.maxset = 8
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = LIMIT


def cut(text: str, limit: int = LIMIT) -> str:
    """``text`` when it is short, else its first ``limit`` characters and ``…(N chars)``."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text)} chars)"


def shown(value: Any, limit: int = LIMIT) -> str:
    """A bounded ``repr`` of an offending value: strings cut with their length, containers shallow and short."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else f"{value[:limit]!r}…({len(value)} chars)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 600:
        return f"an integer of {len(str(abs(value))) if value.bit_length() < 14000 else 'over 4000'} digits"
    return cut(_REPR.repr(value), limit)


def cut_lines(text: str, limit: int = 4 * LIMIT) -> str:
    """Every line of a message cut to ``limit`` characters (the CLI's last guard)."""
    return "\n".join(cut(line, limit) for line in text.split("\n"))
