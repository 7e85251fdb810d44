"""Results on disk: one JSONL line per row, a run manifest, analysis bundles.

Each row is written with one ``write`` of the whole line and flushed, so a
crash leaves at most one truncated last line, which the reader reports and
skips. The manifest is replaced atomically.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import attrs

from .errors import StoreError
from .model import ProfileRow, RunManifest, SessionAnalysisBundle
from .paths import check_run_id
from .redact import Redactor
from .serde import from_json, to_json, unstructure


@attrs.frozen
class RunPaths:
    """Where one run's files live (the run id is checked to be one safe path segment)."""

    results_dir: Path
    run_id: str = attrs.field(validator=lambda _self, _attr, value: check_run_id(value))

    @property
    def jsonl(self) -> Path:
        """``results/<runId>.jsonl``"""
        return self.results_dir / f"{self.run_id}.jsonl"

    @property
    def manifest(self) -> Path:
        """``results/<runId>.manifest.json``"""
        return self.results_dir / f"{self.run_id}.manifest.json"

    @property
    def analysis(self) -> Path:
        """``results/<runId>.analysis.jsonl``"""
        return self.results_dir / f"{self.run_id}.analysis.jsonl"


_tmp_counter = itertools.count()


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so readers see the old or the new content, never half of it."""
    # A name unique to this process and call (cheaper than mkstemp's random retries, same safety).
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{next(_tmp_counter)}.tmp")
    try:
        try:
            f = open(tmp, "x", encoding="utf-8")  # noqa: SIM115
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            f = open(tmp, "x", encoding="utf-8")  # noqa: SIM115
        with f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class BackgroundFileWriter:
    """Writes whole files (atomically) from one worker thread.

    Creating a file costs ~0.5 ms of kernel time on ext4; done here it overlaps
    with the runner's work instead of adding to every iteration.
    """

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Path, str] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []

    def write(self, path: Path, text: str) -> None:
        """Queue ``text`` to be written to ``path``."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="agent-profiler-writer", daemon=True)
            self._thread.start()
        self._queue.put((path, text))

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            path, text = item
            try:
                atomic_write_text(path, text)
            except OSError as exc:
                self.errors.append(f"could not write {path}: {exc}")

    def close(self) -> list[str]:
        """Wait until every queued file is written; return the errors."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        return self.errors


class RowWriter:
    """Appends rows (and analysis bundles) to a run's JSONL files; writes session traces."""

    def __init__(self, paths: RunPaths, redactor: Redactor | None = None) -> None:
        self.paths = paths
        self.redact = redactor or Redactor()
        paths.results_dir.mkdir(parents=True, exist_ok=True)
        self._rows: IO[str] = open(paths.jsonl, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._analysis: IO[str] | None = None
        self._files = BackgroundFileWriter()

    def write_file(self, path: Path, text: str) -> None:
        """Write a whole file (a session trace) in the background, redacted."""
        self._files.write(path, self.redact(text))

    def write_row(self, row: ProfileRow) -> None:
        """Append one row as one whole line, flushed."""
        self._rows.write(self.redact(to_json(row)) + "\n")
        self._rows.flush()

    def write_analysis(self, bundle: SessionAnalysisBundle) -> None:
        """Append one iteration's analysis results."""
        if self._analysis is None:
            self._analysis = open(self.paths.analysis, "a", encoding="utf-8")  # noqa: SIM115
        self._analysis.write(self.redact(to_json(bundle)) + "\n")
        self._analysis.flush()

    def close(self) -> list[str]:
        """Close the files, wait for background writes; return their errors."""
        self._rows.close()
        if self._analysis is not None:
            self._analysis.close()
        return self._files.close()


def write_manifest(path: Path, manifest: RunManifest, redactor: Redactor | None = None) -> None:
    """Write the manifest atomically."""
    text = json.dumps(unstructure(manifest), indent=2, ensure_ascii=False)
    atomic_write_text(path, (redactor or Redactor())(text) + "\n")


def read_manifest(path: Path) -> RunManifest:
    """Read a run manifest."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StoreError(f"{path}: run manifest not found") from None
    return from_json(text, RunManifest, source=str(path))


@attrs.frozen
class ReadResult:
    """Rows read from a JSONL file, and the lines that could not be read."""

    rows: list[Any]
    problems: list[str]
    truncated_last_line: bool = False


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) of the non-empty lines of a (possibly gzipped) JSONL file."""
    try:
        with _open_text(path) as f:
            for number, line in enumerate(f, start=1):
                if line.strip():
                    yield number, line
    except FileNotFoundError:
        raise StoreError(f"{path}: file not found") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: cannot read ({exc})") from None


def read_jsonl(path: Path, cls: type = ProfileRow) -> ReadResult:
    """Read rows; a malformed line is reported (file:line: why) and skipped, never fatal."""
    rows: list[Any] = []
    problems: list[str] = []
    truncated = False
    lines = list(iter_lines(path))
    for index, (number, line) in enumerate(lines):
        try:
            rows.append(from_json(line, cls, source=f"{path}:{number}"))
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - ValidationError with the path, or anything odd
            is_last = index == len(lines) - 1
            if is_last and not line.endswith("\n"):
                truncated = True
                problems.append(f"{path}:{number}: truncated last line (the run was probably interrupted); skipped")
            else:
                problems.append(str(exc))
    return ReadResult(rows=rows, problems=problems, truncated_last_line=truncated)


def repair_truncated_tail(path: Path) -> bool:
    """Cut a truncated last line off a JSONL file before appending to it (resume)."""
    if not path.exists() or path.stat().st_size == 0:
        return False
    with open(path, "rb+") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 1))
        if f.read(1) == b"\n":
            return False
        # Find the last newline and truncate after it.
        block = 65536
        pos = size
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            cut = chunk.rfind(b"\n")
            if cut != -1:
                f.truncate(start + cut + 1)
                return True
            pos = start
        f.truncate(0)
        return True
