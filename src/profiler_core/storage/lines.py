"""JSONL files read as bytes: each non-blank line with its byte offset, and one line
read back by its offset.

What lets a reader index a big file in one pass and then seek to one line
(``profiler view``), or stream a file twice without holding it (the exports).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..errors import StoreError

#: Read buffer for one pass over a file.
BUFFER = 1 << 20


def open_binary(path: Path) -> IO[bytes]:
    """A results, analysis or trace file for reading bytes, gunzipped when it starts
    with gzip's magic bytes.

    The one opener of every reader of the project's JSONL files (a ``.gz`` name or not).
    """
    f = open(path, "rb", buffering=BUFFER)  # noqa: SIM115 - returned to the caller, who closes it
    try:
        magic = f.read(2)
        f.seek(0)
    except OSError:
        f.close()
        raise
    if magic == b"\x1f\x8b":
        return gzip.open(f, "rb")  # type: ignore[return-value]  # a GzipFile reads bytes like any binary file
    return f


def scan_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(byte offset, line) of every non-blank line, newline included; the offset is into
    the uncompressed stream."""
    offset = 0
    with open_binary(path) as f:
        for line in f:
            if line.strip():
                yield offset, line
            offset += len(line)


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield (line number, raw line) of the non-empty lines of a (possibly gzipped) JSONL file.

    Bytes, not text: a byte that is not UTF-8 spoils its own line (which the
    decoder names), not the whole file, as in the report's reader.
    """
    try:
        with open_binary(path) as f:
            for number, line in enumerate(f, start=1):
                if line.strip():
                    yield number, line
    except FileNotFoundError:
        raise StoreError(f"{path}: file not found") from None
    except (OSError, EOFError) as exc:
        raise StoreError(f"{path}: cannot read ({exc})") from None


def read_at(path: Path, offset: int, length: int) -> bytes:
    """``length`` bytes of ``path`` from ``offset`` (a gzip file decompresses up to there)."""
    with open_binary(path) as f:
        f.seek(offset)
        return f.read(length)


__all__ = ["BUFFER", "iter_lines", "open_binary", "read_at", "scan_lines"]
