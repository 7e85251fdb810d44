"""Results on disk: one JSONL line per row, a run manifest, analysis bundles.

Each row is written with one ``write`` of the whole line and flushed, so a
crash leaves at most one truncated last line, which the reader reports and
skips. The manifest is replaced atomically.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs

from ..errors import StoreError
from ..model import ProfileRow, RunManifest, SessionAnalysisBundle
from ..model.record import Record
from ..util.redact import Redactor
from ..util.textclean import clean_json_bytes, replaced_note
from .lines import iter_lines
from .paths import atomic_write_text, check_run_id, inside, open_output, refuse_links
from .serde import from_json, to_json, unstructure
from .tracestore import TraceRecord, TraceStoreWriter, record_json

if TYPE_CHECKING:  # pragma: no cover
    from ..model import SessionTrace


@attrs.frozen(repr=False, eq=False)
class RunPaths(Record):
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


class RowWriter:
    """Appends rows (and analysis bundles) to a run's JSONL files; writes session traces."""

    def __init__(
        self,
        paths: RunPaths,
        redactor: Redactor | None = None,
        trace_store: Path | None = None,
    ) -> None:
        self.paths = paths
        self.redact = redactor or Redactor()
        paths.results_dir.mkdir(parents=True, exist_ok=True)
        # The analysis file and the trace store open on first use: a link planted there
        # is refused now, before any session.
        refuse_links(
            paths.analysis, *([trace_store] if trace_store is not None else [])
        )
        # The file names, made once: a row's write names its file only when it fails.
        self._rows_path, self._analysis_path = paths.jsonl, paths.analysis
        self._rows: IO[str] = open_output(self._rows_path, "a")  # closed in close()
        self._analysis: IO[str] | None = None
        self._traces = (
            TraceStoreWriter(trace_store) if trace_store is not None else None
        )

    def write_trace(self, path: Path, trace: SessionTrace) -> None:
        """Serialise, redact and write a session trace now (atomically); a failure names
        the file."""
        self.write_trace_text(path, trace_file_text(trace, self.redact))

    def write_trace_text(self, path: Path, text: str) -> None:
        """Write a trace file's already redacted text (``trace_file_text``) atomically;
        a failure names the file."""
        # <sessions>/<scenario>/<file>: a scenario folder must not lead out of the
        # sessions folder (a planted link).
        inside(path.parent.parent, path.parent)
        try:
            atomic_write_text(path, text)
        except OSError as exc:
            raise StoreError(
                f"{path}: cannot write the session trace ({exc.strerror or exc})"
            ) from None

    def append_trace(self, record: TraceRecord) -> None:
        """Serialise, redact and append a session trace to the run's trace store (one
        line, flushed)."""
        self.append_trace_line(self.redact(record_json(record)))

    def append_trace_line(self, line: str) -> None:
        """Append one already redacted store line (``record_json`` of a record) to the
        run's trace store."""
        if self._traces is None:
            raise StoreError(f"{self.paths.jsonl}: this run writes no trace store")
        self._traces.append(line)

    def remove_stale_temporaries(self, folder: Path, pattern: str = "**/.*.tmp") -> int:
        """Delete temporary files (``atomic_write_text``'s) an interrupted run left in
        ``folder``; how many."""
        removed = 0
        for tmp in folder.glob(pattern) if folder.is_dir() else ():
            tmp.unlink(missing_ok=True)
            removed += 1
        return removed

    def write_row(self, row: ProfileRow) -> None:
        """Append one row as one whole line, flushed; a failed write (full disk) names the file."""
        _append(
            self._rows,
            self._rows_path,
            self.redact(to_json(row)) + "\n",
            "a result row",
        )

    def write_analysis(self, bundle: SessionAnalysisBundle) -> None:
        """Append one iteration's analysis results."""
        if self._analysis is None:
            try:
                self._analysis = open_output(self._analysis_path, "a")
            except OSError as exc:
                raise StoreError(
                    f"{self._analysis_path}: cannot open for appending ({exc.strerror or exc})"
                ) from None
        _append(
            self._analysis,
            self._analysis_path,
            self.redact(to_json(bundle)) + "\n",
            "an analysis bundle",
        )

    def close(self) -> list[str]:
        """Close the files; return the problems met doing so (e.g. the last write of a
        full disk)."""
        problems = []
        for f, path in (
            (self._rows, self.paths.jsonl),
            (self._analysis, self.paths.analysis),
        ):
            if f is None:
                continue
            try:
                f.close()  # closes the file even when its final flush fails
            except OSError as exc:
                problems.append(
                    f"{path}: cannot finish writing ({exc.strerror or exc})"
                )
        if self._traces is not None and (problem := self._traces.close()):
            problems.append(problem)
        return problems


def trace_file_text(trace: SessionTrace, redact: Redactor) -> str:
    """A session trace as its own file holds it: indented JSON, redacted, with a final newline."""
    return redact(to_json(trace, indent=2)) + "\n"


def _append(f: IO[str], path: Path, line: str, what: str) -> None:
    """Write and flush one line; an OSError (full disk, file size limit) becomes a
    StoreError naming the file."""
    try:
        f.write(line)
        f.flush()
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot append {what} ({exc.strerror or exc})"
        ) from None


def write_manifest(
    path: Path, manifest: RunManifest, redactor: Redactor | None = None
) -> None:
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


@attrs.frozen(repr=False, eq=False)
class ReadResult(Record):
    """Rows read from a JSONL file, and the lines that could not be read."""

    rows: list[Any]
    problems: list[str]
    truncated_last_line: bool = False


def read_jsonl(path: Path, cls: type = ProfileRow) -> ReadResult:
    """Read rows; a malformed line is reported (file:line: why) and skipped, never fatal."""
    rows: list[Any] = []
    problems: list[str] = []
    truncated = False
    lines = list(iter_lines(path))
    for index, (number, line) in enumerate(lines):
        if (
            b"\\u" in line
        ):  # a NUL or half an emoji becomes U+FFFD, as in the report's reader
            line, replaced = clean_json_bytes(line)
            if replaced:
                problems.append(replaced_note(f"{path}:{number}", replaced))
        try:
            rows.append(from_json(line, cls, source=f"{path}:{number}"))
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - ValidationError with the path, or anything odd
            is_last = index == len(lines) - 1
            if is_last and not line.endswith(b"\n"):
                truncated = True
                problems.append(
                    f"{path}:{number}: truncated last line (the run was "
                    "probably interrupted); skipped"
                )
            else:
                problems.append(str(exc))
    return ReadResult(rows=rows, problems=problems, truncated_last_line=truncated)


def repair_truncated_tail(path: Path, cls: type = ProfileRow) -> str | None:
    """Make a JSONL file safe to append to (resume); what was done, or None when nothing was needed.

    A last line without its newline that still parses as a whole ``cls`` is kept
    (only the newline is added); a torn one is cut off, and the message names it.
    Nothing more than that one line is ever cut: a tail holding carriage returns
    (a file with CR line ends reads as one long line), one that does not start
    like a record, or a file whose last complete line is not a ``cls`` either,
    is refused with a ``StoreError`` and the file is left untouched.
    """
    if not path.exists() or path.stat().st_size == 0:
        return None
    with open_output(path, "r+b") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - 1))
        if f.read(1) == b"\n":
            return None
        start_of_last = _start_of_last_line(f, size)
        f.seek(start_of_last)
        tail = f.read()
        line_number = _count_newlines(f, start_of_last) + 1
        try:
            from_json(tail, cls, source=f"{path}:{line_number}")
        except Exception:  # noqa: BLE001 - any failure to parse means the line was torn
            _check_only_one_torn_line(f, path, start_of_last, tail, line_number, cls)
            f.truncate(start_of_last)
            return (
                f"{path}:{line_number}: dropped a torn last line ({len(tail)} "
                "bytes) left by an interrupted run"
            )
        f.seek(0, os.SEEK_END)
        f.write(b"\n")
        return (
            f"{path}:{line_number}: kept a complete last line that had lost its newline"
        )


def _start_of_last_line(f: IO[bytes], size: int) -> int:
    block = 65536
    pos = size
    while pos > 0:
        start = max(0, pos - block)
        f.seek(start)
        chunk = f.read(pos - start)
        cut = chunk.rfind(b"\n")
        if cut != -1:
            return start + cut + 1
        pos = start
    return 0


def _check_only_one_torn_line(
    f: IO[bytes], path: Path, start: int, tail: bytes, line_number: int, cls: type
) -> None:
    """Refuse (file untouched) to cut a tail that is not one torn record of a file of records."""
    untouched = "refusing to cut it; the file is left untouched"
    if b"\r" in tail:
        raise StoreError(
            f"{path}:{line_number}: the last {len(tail)} bytes hold carriage "
            "returns (CR line ends?), not one torn "
            f"line; {untouched} (convert the line ends to \\n and resume again)"
        )
    if not tail.lstrip().startswith(b"{"):
        raise StoreError(
            f"{path}:{line_number}: the last line does not start like a JSON record; {untouched}"
        )
    previous = b""
    while start > 0 and not previous.strip():  # the last non-blank complete line
        end, start = start, _start_of_last_line(f, start - 1)
        f.seek(start)
        previous = f.read(end - start)
    if previous.strip():
        try:
            from_json(previous, cls, source=f"{path}:{line_number - 1}")
        except Exception as exc:  # noqa: BLE001 - any failure: this is not a file of such records
            raise StoreError(
                f"{path}: does not hold {_records(cls)} ({exc}); {untouched}"
            ) from None


def _records(cls: type) -> str:
    return {
        "ProfileRow": "result rows",
        "SessionAnalysisBundle": "analysis bundles",
        "TraceRecord": "trace records",
    }.get(cls.__name__, "records")


def _count_newlines(f: IO[bytes], end: int) -> int:
    f.seek(0)
    count, done = 0, 0
    while done < end:
        chunk = f.read(min(1 << 20, end - done))
        if not chunk:
            break
        count += chunk.count(b"\n")
        done += len(chunk)
    return count


def _lock_fd(path: Path) -> int:
    """A descriptor of the lock file, opened without following a link planted at its
    name (the file object is closed)."""
    with open_output(path, "r+b", buffering=0) as f:
        return os.dup(f.fileno())


#: Times a lock file removed under us is opened again before giving up.
_LOCK_ATTEMPTS = 5


def _names(fd: int, path: Path) -> bool:
    """True when ``fd`` is the file at ``path`` now (not one removed, or replaced, since
    it was opened)."""
    try:
        now = os.lstat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)


class RunLock:
    """An OS lock on a run while it is written: a second writer is refused; a killed
    process leaves no lock behind."""

    def __init__(self, paths: RunPaths) -> None:
        self.path = paths.results_dir / f"{paths.run_id}.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise StoreError naming the process that holds it."""
        try:
            import fcntl
        except ImportError:  # not on POSIX: no lock, as before
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(_LOCK_ATTEMPTS):
            fd = _lock_fd(self.path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = (
                    os.read(fd, 32).decode("ascii", "replace").strip()
                    or "another process"
                )
                os.close(fd)
                raise StoreError(
                    f"run {self.path.stem!r} is being written by process "
                    f"{holder}; wait for it to end "
                    "(two writers would record cells twice)"
                ) from None
            if _names(fd, self.path):
                os.ftruncate(fd, 0)
                os.write(fd, str(os.getpid()).encode())
                self._fd = fd
                return
            # Its holder removed the file between our open and our lock: that lock guards nothing
            # (a third writer may hold a new file at the name). Open the name again.
            os.close(fd)
        raise StoreError(
            f"{self.path}: the lock file keeps being replaced; is another "
            "writer starting and stopping?"
        )

    def release(self) -> None:
        """Drop the lock and its file (removed while still locked: a writer that opened
        it meanwhile sees it gone)."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)  # closing releases the flock
            self._fd = None


class StoredRows(Sequence[Any]):
    """A run's rows (or analysis bundles) as a read-only sequence, read from its JSONL on first use.

    The runner keeps no list of what it wrote; ``ProfileSuiteResult.rows`` is one of
    these, so a run of any length holds its rows in memory only if someone asks.
    """

    def __init__(
        self, path: Path, cls: type, order: Callable[[Any], Any] | None = None
    ) -> None:
        self.path = path
        self.cls = cls
        self.order = order
        self._items: tuple[Any, ...] | None = None

    def stream(self) -> Iterator[Any]:
        """Every item in file order, one at a time (nothing kept)."""
        if self._items is not None:
            yield from self._items
            return
        if not self.path.exists():
            return
        for number, line in iter_lines(self.path):
            if b"\\u" in line:
                line = clean_json_bytes(line)[0]
            try:
                yield from_json(line, self.cls, source=f"{self.path}:{number}")
            # a torn or foreign line is the reader's problem, not the summary's
            except Exception:  # noqa: BLE001
                continue

    def _load(self) -> tuple[Any, ...]:
        if self._items is None:
            items = list(self.stream())
            if self.order is not None:
                items.sort(key=self.order)
            self._items = tuple(items)
        return self._items

    def __len__(self) -> int:
        return len(self._load())

    def __getitem__(self, index: Any) -> Any:
        return self._load()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._load())

    def __eq__(self, other: object) -> bool:
        return tuple(self._load()) == (
            tuple(other) if isinstance(other, Sequence) else other
        )

    def __repr__(self) -> str:
        return f"StoredRows({str(self.path)!r})"
