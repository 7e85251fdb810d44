"""JSONL files read as bytes: each non-blank line with its byte offset, and one line read back by its offset.

What lets a reader index a big file in one pass and then seek to one line
(``profiler view``), or stream a file twice without holding it (the exports).
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import IO

#: Read buffer for one pass over a file.
BUFFER = 1 << 20


def open_binary(path: Path) -> IO[bytes]:
    """A results, analysis or trace file for reading bytes, gunzipped when it starts with gzip's magic bytes.

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
    """(byte offset, line) of every non-blank line, newline included; the offset is into the uncompressed stream."""
    offset = 0
    with open_binary(path) as f:
        for line in f:
            if line.strip():
                yield offset, line
            offset += len(line)


def read_at(path: Path, offset: int, length: int) -> bytes:
    """``length`` bytes of ``path`` from ``offset`` (a gzip file decompresses up to there)."""
    with open_binary(path) as f:
        f.seek(offset)
        return f.read(length)


__all__ = ["BUFFER", "open_binary", "read_at", "scan_lines"]
