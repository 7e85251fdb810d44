"""A run's session traces in one append-only file: ``<reports>/<runId>/sessions/traces.jsonl``.

Creating a file costs the kernel far more than appending a line to an open one
(0.05–1 ms against ~5 µs on the 2-core VMs we measure on, see ``bench/``), so by
default a run appends each exported trace as one JSON line with its cell's key.
The last line for a cell wins: a cell retried after a crash between its trace
and its row appends again. ``profiler traces export`` writes the one-file-per-
session layout (``<scenarioId>/<mode>-iter-<n>.json``) from a store, and
``profiler analyze`` reads a store as it reads trace files. ``output.trace_format:
files`` writes that layout during the run instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO

import attrs
import orjson

from ..errors import StoreError
from ..model import SessionTrace
from ..model._validators import non_empty, non_negative
from ..model.record import Record
from .lines import iter_lines, open_binary
from .paths import inside, open_output, safe_name
from .serde import from_json, to_json

#: The store's file name inside a run's ``sessions`` folder.
TRACES_FILE = "traces.jsonl"
#: ``output.trace_format`` values: one store per run, or one file per session.
TRACE_FORMATS = ("jsonl", "files")

Key = tuple[str, str, str, int]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TraceRecord(Record):
    """One line of a trace store: a cell's key and its session trace."""

    scenario_id: str = attrs.field(validator=non_empty)
    mode: str = attrs.field(validator=non_empty)
    model: str  # "" when a provider runs without a model name
    iteration: int = attrs.field(validator=non_negative)
    trace: SessionTrace
    #: the run had several models: its per-session file names carry the model
    multi_model: bool = False

    @property
    def key(self) -> Key:
        """(model, mode, scenario id, iteration), as a row's ``cell``."""
        return (self.model, self.mode, self.scenario_id, self.iteration)


def trace_file_path(
    sessions_dir: Path, scenario_id: str, mode: str, iteration: int, model: str | None
) -> Path:
    """``<sessions_dir>/<scenarioId>/<mode>-iter-<n>.json`` (``<mode>+<model>`` when
    several models run).

    Ids become safe, distinct file names (``paths.safe_name``): no id can leave the folder
    or share another's file.
    """
    stem = f"{safe_name(mode)}+{safe_name(model)}" if model else safe_name(mode)
    return sessions_dir / safe_name(scenario_id) / f"{stem}-iter-{iteration}.json"


class TraceStoreWriter:
    """Appends trace records to one store, opened on the first record and flushed after each."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def append(self, text: str) -> None:
        """Append one record's (already redacted, one-line) JSON; a failed write names the file."""
        try:
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = open_output(self.path, "a")  # closed in close()
            self._file.write(text + "\n")
            self._file.flush()
        except OSError as exc:
            raise StoreError(
                f"{self.path}: cannot write the session trace ({exc.strerror or exc})"
            ) from None

    def close(self) -> str | None:
        """Close the store; the problem met doing so, or None."""
        if self._file is None:
            return None
        try:
            self._file.close()
        except OSError as exc:
            return f"{self.path}: cannot finish writing ({exc.strerror or exc})"
        finally:
            self._file = None
        return None


def record_json(record: TraceRecord) -> str:
    """One store line (without its newline)."""
    return to_json(record)


def find_store(path: Path) -> Path:
    """The store ``path`` names: the file itself, a run's ``sessions`` folder, or its
    report folder."""
    for folder in (path, path / "sessions"):
        for name in (TRACES_FILE, TRACES_FILE + ".gz"):
            if (folder / name).is_file():
                return folder / name
    if path.is_file():
        return path
    raise StoreError(
        f"{path}: no trace store here (expected {TRACES_FILE}, a run's sessions "
        "folder or its report folder)"
    )


def _record(
    path: Path, number: int, line: bytes, problems: list[str] | None
) -> TraceRecord | None:
    """The record on one line, or None with the reason in ``problems`` (a torn last line
    says so)."""
    try:
        return from_json(line.decode("utf-8"), TraceRecord, source=f"{path}:{number}")
    except UnicodeDecodeError:
        message = f"{path}:{number}: not UTF-8 text"
    except Exception as exc:  # noqa: BLE001 - a torn or edited line costs that line, not the store
        message = str(exc)
    if problems is not None:
        problems.append(
            f"{path}:{number}: truncated last line; skipped"
            if not line.endswith(b"\n")
            else message
        )
    return None


def iter_records(
    path: Path, problems: list[str] | None = None
) -> Iterator[TraceRecord]:
    """Every record of a store in file order; a line that does not read is reported in
    ``problems`` and skipped."""
    for number, line in iter_lines(path):
        record = _record(path, number, line, problems)
        if record is not None:
            yield record


def latest_records(
    path: Path, problems: list[str] | None = None
) -> dict[Key, TraceRecord]:
    """The last record of each cell, in the order cells first appear (all in memory: see
    ``iter_latest``)."""
    latest: dict[Key, TraceRecord] = {}
    for record in iter_records(path, problems):
        latest[record.key] = record
    return latest


def iter_latest(
    path: Path, problems: list[str] | None = None
) -> Iterator[tuple[TraceRecord, bool]]:
    """(record, model in file names) for the last record of each cell, one at a time.

    Two passes, so no more than one trace is in memory: the first reads only the
    keys, the second builds the records that no later line of their cell supersedes.
    """
    last: dict[Key, int] = {}
    superseded: set[int] = set()
    for number, line in iter_lines(path):
        key = _key(line)
        if key is not None:
            if key in last:
                superseded.add(last[key])
            last[key] = number
    several = len({key[0] for key in last}) > 1
    for number, line in iter_lines(path):
        if number in superseded:
            continue
        record = _record(path, number, line, problems)
        if record is not None:
            yield record, several or record.multi_model


def _key(line: bytes) -> Key | None:
    try:
        data = orjson.loads(line)
        key = (data["model"], data["mode"], data["scenarioId"], data["iteration"])
    except (orjson.JSONDecodeError, TypeError, KeyError):
        return None
    return (
        key
        if all(isinstance(k, str) for k in key[:3]) and type(key[3]) is int
        else None
    )


def export_files(
    store: Path, out_dir: Path, problems: list[str] | None = None
) -> list[Path]:
    """Write each cell's latest trace to ``out_dir`` in the one-file-per-session layout;
    the files written."""
    from .paths import atomic_write_text

    written = []
    for record, with_model in iter_latest(store, problems):
        target = trace_file_path(
            out_dir,
            record.scenario_id,
            record.mode,
            record.iteration,
            record.model if with_model else None,
        )
        inside(
            out_dir, target.parent
        )  # a scenario folder planted as a link must not lead out of out_dir
        try:
            atomic_write_text(target, to_json(record.trace, indent=2) + "\n")
        except OSError as exc:
            raise StoreError(
                f"{target}: cannot write the session trace ({exc.strerror or exc})"
            ) from None
        written.append(target)
    return written


#: The keys of a store line.
_RECORD_KEYS = frozenset({"scenarioId", "mode", "model", "iteration", "trace"})


def is_store(path: Path) -> bool:
    """Whether ``path`` is a trace store: named ``traces.jsonl[.gz]``, or its first line
    is an object with a record's keys."""
    if path.name in (TRACES_FILE, TRACES_FILE + ".gz"):
        return True
    try:
        with open_binary(path) as f:
            first = f.readline()
    except (OSError, EOFError):
        return False
    if not first.lstrip().startswith(b"{"):
        return False
    try:
        data = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(data, dict) and data.keys() >= _RECORD_KEYS
