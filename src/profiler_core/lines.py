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
    """A results or trace file for reading bytes (gzip when it ends in ``.gz``)."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]  # a GzipFile reads bytes like any binary file
    return open(path, "rb", buffering=BUFFER)


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
