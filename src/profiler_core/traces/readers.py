"""Strict readers of recorded files: JSON and JSONL, timestamps, and field checks that
name where a value is wrong (``<file>:<line>: expected ...``)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..storage.serde import json_message
from ..util.numbers import is_number
from ..util.textclean import clean_value, may_need_cleaning, warn_replaced


def parse_time(value: Any, where: str) -> datetime:
    """An ISO 8601 string or an epoch number (ms when > 1e11, else s) as an aware datetime."""
    if isinstance(value, bool):
        raise ValidationError(f"{where}: expected a timestamp, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise ValidationError(
                f"{where}: timestamp {value!r} is out of range"
            ) from None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValidationError(
                f"{where}: expected an ISO 8601 timestamp, got {value!r}"
            ) from None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    raise ValidationError(
        f"{where}: expected a timestamp (ISO 8601 string or epoch number), got "
        f"{type(value).__name__}"
    )


def expect_mapping(
    value: Any, where: str, what: str = "an object"
) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else a ValidationError naming ``where``."""
    if not isinstance(value, Mapping):
        raise ValidationError(f"{where}: expected {what}, got {_kind(value)}")
    return value


def expect_list(value: Any, where: str, what: str = "a list") -> list[Any]:
    """``value`` if it is a JSON array, else a ValidationError naming ``where``."""
    if not isinstance(value, list):
        raise ValidationError(f"{where}: expected {what}, got {_kind(value)}")
    return value


def optional_str(value: Any, where: str) -> str | None:
    """A string or None; anything else is an error."""
    if value is None or isinstance(value, str):
        return value
    raise ValidationError(f"{where}: expected a string, got {_kind(value)}")


def number(value: Any, where: str) -> float | int | None:
    """A number >= 0 or None; anything else is an error."""
    if value is None:
        return None
    if not is_number(value) or value < 0:
        raise ValidationError(f"{where}: expected a number >= 0, got {value!r}")
    return value


def _kind(value: Any) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def keys_of(value: Any) -> str:
    """``{'a', 'b'}`` for error messages about foreign objects."""
    if isinstance(value, Mapping):
        return (
            "keys {"
            + ", ".join(repr(k) for k in sorted(value, key=str)[:8])
            + (", ..." if len(value) > 8 else "")
            + "}"
        )
    return _kind(value)


#: the largest file ``profiler import`` reads (a trace of that size is already far
#: beyond any real session's)
MAX_IMPORT_BYTES = 1 << 30


def read_text(path: Path) -> str:
    """A file's text; a missing, unreadable, binary, special or oversized file is a
    ValidationError naming it.

    Only a regular file is read: a FIFO would wait for a writer forever and
    ``/dev/zero`` never ends.
    """
    try:
        fd = os.open(
            path,
            os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0),
        )
    except FileNotFoundError:
        raise ValidationError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise ValidationError(f"{path}: is a directory, expected a file") from None
    except OSError as exc:
        raise ValidationError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ValidationError(f"{path}: is a directory, expected a file")
        if not stat.S_ISREG(info.st_mode):
            raise ValidationError(
                f"{path}: is not a regular file (a FIFO, socket or device); expected a file"
            )
        try:
            data = f.read(MAX_IMPORT_BYTES + 1)
        except OSError as exc:
            raise ValidationError(
                f"{path}: cannot read ({exc.strerror or exc})"
            ) from None
    if len(data) > MAX_IMPORT_BYTES:
        raise ValidationError(
            f"{path}: larger than {MAX_IMPORT_BYTES >> 20} MiB; refusing to import it"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"{path}: not a UTF-8 text file") from None
    return text.replace("\r\n", "\n").replace(
        "\r", "\n"
    )  # universal newlines, as a text-mode read gives


def iter_jsonl(path: Path, text: str | None = None) -> Iterator[tuple[int, Any]]:
    """Yield (line number, value) for each non-empty line; a bad line names its number
    (truncated last line included)."""
    text = read_text(path) if text is None else text
    lines = text.split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            value = load_json(line, f"{path}:{index + 1}")
        except json.JSONDecodeError as exc:
            if index == last and not text.endswith("\n"):
                raise ValidationError(
                    f"{path}:{index + 1}: truncated last line (not valid JSON: "
                    f"{json_problem(exc)}); "
                    "was the file copied while the session was still being written?"
                ) from None
            raise ValidationError(
                f"{path}:{index + 1}: not valid JSON ({json_problem(exc)})"
            ) from None
        yield index + 1, absent_nulls(value)


def read_json_records(path: Path) -> list[tuple[str, Any]]:
    """The JSON values of a file holding one JSON document, or one JSON value per line (JSONL).

    Returns (where, value) pairs; a top-level JSON array gives one pair per item.
    """
    text = read_text(path)
    stripped = text.strip()
    if not stripped:
        raise ValidationError(f"{path}: empty file")
    first_line = stripped.split("\n", 1)[0]
    if "\n" in stripped and _parses(first_line):
        return [(f"{path}:{n}", value) for n, value in iter_jsonl(path, text)]
    try:
        value = load_json(text, str(path))
    except json.JSONDecodeError as exc:
        hint = truncation_hint(exc, text)
        raise ValidationError(
            f"{path}: not valid JSON ({json_problem(exc, line=True)}){hint}"
        ) from None
    value = absent_nulls(value)
    if isinstance(value, list):
        return [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    return [(str(path), value)]


def load_json(text: str, where: str) -> Any:
    """``json.loads``, with lone surrogates and NUL characters replaced by U+FFFD and a
    warning naming ``where``."""
    value = json.loads(text)
    if may_need_cleaning(text):
        value, replaced = clean_value(value)
        if replaced:
            warn_replaced(where, replaced)
    return value


#: Keys whose values are the agent's own data (tool inputs and outputs): kept exactly as
#: recorded, nulls included.
_VERBATIM = frozenset({"input", "arguments", "output", "toolUseResult", "metadata"})


def absent_nulls(value: Any) -> Any:
    """``value`` with every ``null`` member of a JSON object left out: a null optional
    field is an absent one.

    Tools that re-save a session write ``null`` where the agent wrote ``false``
    or nothing (``"is_error": null``); reading null as absent lets one reader
    take both. The agent's own data (tool inputs and outputs) is kept as it is.
    """
    if isinstance(value, dict):
        return {
            k: (v if k in _VERBATIM else absent_nulls(v))
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        return [absent_nulls(item) for item in value]
    return value


def json_problem(exc: json.JSONDecodeError, *, line: bool = False) -> str:
    """``Unterminated string at line 3 column 12`` (json's own wording ends in a
    dangling "starting at")."""
    message = json_message(exc)
    where = f"line {exc.lineno} column {exc.colno}" if line else f"column {exc.colno}"
    return f"{message} at {where}"


def truncation_hint(exc: json.JSONDecodeError, text: str) -> str:
    """`` - the file looks truncated`` when the JSON stops mid-way (the document ends
    inside a value)."""
    ended = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
    return " - the file looks truncated" if ended else ""


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True
