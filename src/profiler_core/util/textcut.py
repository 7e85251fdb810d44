"""Long offending values are cut before they reach an error message (no 1 MB echo)."""

from __future__ import annotations

import functools
import re
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
    """A bounded ``repr`` of an offending value: strings cut with their length,
    containers shallow and short."""
    if isinstance(value, str):
        return (
            repr(value)
            if len(value) <= limit
            else f"{value[:limit]!r}…({len(value)} chars)"
        )
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value.bit_length() > 600
    ):
        return (
            "an integer of "
            f"{len(str(abs(value))) if value.bit_length() < 14000 else 'over 4000'} "
            "digits"
        )
    return cut(_REPR.repr(value), limit)


def cut_lines(text: str, limit: int = 4 * LIMIT) -> str:
    """Every line of a message cut to ``limit`` characters, control characters escaped
    (the CLI's last guard)."""
    return "\n".join(cut(printable(line), limit) for line in text.split("\n"))


#: Characters that must not reach a terminal as they are: C0 controls (ESC starts escape
#: sequences, CR
#: overwrites a line), DEL, C1 controls, bidirectional overrides ("Trojan Source") and
#: lone surrogates
#: (half an emoji, which no terminal encoding can write).
_UNPRINTABLE = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
_UNPRINTABLE_OR_BREAK = "[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


@functools.cache
def _pattern(one_line: bool) -> re.Pattern[str]:
    # Compiled when first needed: a class reaching past U+00FF costs ~1 ms to compile, and
    # most text printed (ASCII, no controls) never needs it.
    return re.compile(_UNPRINTABLE_OR_BREAK if one_line else _UNPRINTABLE)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control character shown escaped (``\\x1b``, ``\\u202e``):
    data printed as text.

    Newlines and tabs stay unless ``one_line`` (for a name in a table cell).
    """
    # Every character of both classes is one str.isprintable() refuses (controls, format
    # characters, surrogates): text it accepts holds none of them.
    if text.isprintable():
        return text
    pattern = _pattern(one_line)
    return pattern.sub(_escape, text) if pattern.search(text) else text


def rich_text(value: Any) -> Any:
    """``value`` as a rich ``Text`` (never parsed as markup), one line, control
    characters escaped: data in a table."""
    from rich.text import Text

    return Text(printable(str(value), one_line=True))
