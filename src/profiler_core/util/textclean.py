"""Strings that cannot be written: lone surrogates and NUL characters become U+FFFD
where they enter.

A JavaScript agent can write half an emoji (``"\\ud83d"``): valid JSON, but no
UTF-8 file or terminal can hold it, so a trace holding one used to fail every
write that followed. A NUL character ends strings in C tools and shows up as a
raw NUL byte in Markdown, HTML and CSV. Both are replaced by U+FFFD (the
replacement character, what a UTF-8 decoder puts for a bad byte) when data is
read from a file (transcripts, traces, rows, analysis bundles), and the reader
says so with a warning naming the file and line. Data a provider hands over
in memory is cleaned the same way just before it is written (``serde.dumps``).
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

REPLACEMENT = "\ufffd"

_BAD = "[\x00\ud800-\udfff]"


@functools.cache
def _bad() -> re.Pattern[str]:
    # Compiled when first needed: the surrogates' range makes it ~1 ms to compile, and a
    # run's text is clean (the ASCII fast path below) but for the rare bad value.
    return re.compile(_BAD)


# In JSON text: a \uXXXX escape of NUL or of any surrogate (pairs are told apart below).
_ESCAPE = re.compile(rb"(\\+)u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
_HIGH = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW = re.compile(rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}")

log = logging.getLogger("agent_profiler")


def clean_str(text: str) -> tuple[str, int]:
    """``text`` with lone surrogates and NUL characters replaced by U+FFFD, and how many
    were replaced."""
    if text.isascii() and "\x00" not in text:
        return text, 0
    # A surrogate pair inside a str (from json.loads of "\ud83d\ude00") is already one character,
    # so every surrogate code point left in a str is a lone one.
    return _bad().subn(REPLACEMENT, text)


def clean_value(value: Any) -> tuple[Any, int]:
    """Plain JSON data with every string (keys included) cleaned; the data itself when
    nothing changed."""
    if isinstance(value, str):
        return clean_str(value)
    if isinstance(value, dict):
        total, out = 0, {}
        for key, item in value.items():
            new_key, n = clean_str(key) if isinstance(key, str) else (key, 0)
            new_item, m = clean_value(item)
            out[new_key] = new_item
            total += n + m
        return (out, total) if total else (value, 0)
    if isinstance(value, list | tuple):
        items = [clean_value(item) for item in value]
        total = sum(n for _, n in items)
        return (
            (
                (
                    type(value)(item for item, _ in items)
                    if isinstance(value, tuple)
                    else [item for item, _ in items]
                ),
                total,
            )
            if total
            else (value, 0)
        )
    return value, 0


def may_need_cleaning(text: str | bytes) -> bool:
    """Whether JSON text can decode to a NUL or a lone surrogate (only ``\\u`` escapes
    can make them)."""
    if isinstance(text, bytes):
        return b"\\u" in text
    return "\\u" in text


def clean_json_bytes(line: bytes) -> tuple[bytes, int]:
    """JSON text with each escape of NUL or of a lone surrogate turned into ``\\ufffd``;
    how many were."""

    def replace(match: re.Match[bytes]) -> bytes:
        slashes = match.group(1)
        if (
            len(slashes) % 2 == 0
        ):  # "\\u0000" is a backslash and the text u0000, not an escape
            return match.group()
        escape = match.group()[len(slashes) - 1 :]
        start, end = match.start(), match.end()
        if _HIGH.fullmatch(escape) and _LOW.match(line, end):
            return match.group()  # the first half of a pair
        if (
            _LOW.fullmatch(escape)
            and start >= 6
            and _HIGH.fullmatch(line, start - 6, start)
        ):
            return match.group()  # the second half of a pair
        counter[0] += 1
        return slashes[:-1] + b"\\ufffd"

    counter = [0]
    cleaned = _ESCAPE.sub(replace, line)
    return cleaned, counter[0]


#: the words every such warning carries
REPLACED = "replaced by U+FFFD"


def replaced_note(where: str, count: int) -> str:
    """The one line saying that ``count`` characters at ``where`` (``file:line``) were replaced."""
    return f"{where}: {count} lone surrogate(s) or NUL character(s) {REPLACED}"


def warn_replaced(where: str, count: int) -> str:
    """Log (and return) :func:`replaced_note` as a warning."""
    message = replaced_note(where, count)
    log.warning("%s", message)
    return message
