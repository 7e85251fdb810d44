"""A run read lazily: a columnar index of its rows in one pass, then one seek per session.

Opening a run reads its results file once, decoding only the few fields the
rows table shows (msgspec skips the rest of each line in C) and keeping each
row's byte offset. A session page then seeks to its row, its trace and its
analysis bundle and decodes those three lines only: the traces of a run are
never all in memory, and the trace store is indexed (cell -> offset) the first
time a session of the run is opened. A cell written twice (a resumed run) shows
its last row, as the report counts it.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import attrs
import msgspec
import numpy as np

from ..model import ProfileRow, SessionAnalysisBundle, SessionTrace
from ..serde import from_json
from ..tracestore import TraceRecord, trace_file_path

Cell = tuple[str, str, str, int]

#: Read buffer for the one pass over a file.
_BUFFER = 1 << 20


class _Tokens(msgspec.Struct):
    total: float = 0.0


class _Timing(msgspec.Struct, rename="camel"):
    wall_ms: float = 0.0


class _Cost(msgspec.Struct, rename="camel"):
    total_usd: float = 0.0


class _ToolCalls(msgspec.Struct):
    total: float = 0.0
    failed: float = 0.0


class _Brief(msgspec.Struct, rename="camel"):
    """The fields of a row the table shows; msgspec skips the others without building them."""

    scenario_id: str
    mode: str
    iteration: int
    model: str = ""
    success: bool = False
    tokens: _Tokens = msgspec.field(default_factory=_Tokens)
    timing: _Timing = msgspec.field(default_factory=_Timing)
    cost: _Cost = msgspec.field(default_factory=_Cost)
    tool_calls: _ToolCalls = msgspec.field(default_factory=_ToolCalls)
    checkpoints_passed: float = 0.0
    checkpoints_total: float = 0.0
    agent_turns: float | None = None
    completion_reason: str = "stop"
    error: str | None = None
    error_code: str | None = None
    attempts: float = 1.0


class _Key(msgspec.Struct, rename="camel"):
    """The cell of a trace-store record or an analysis bundle."""

    scenario_id: str
    mode: str
    iteration: int
    model: str = ""


def open_binary(path: Path) -> IO[bytes]:
    """A results or trace file for reading bytes (gzip when it ends in ``.gz``)."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]  # a GzipFile reads bytes like any binary file
    return open(path, "rb", buffering=_BUFFER)


def scan_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(byte offset, line) of every non-blank line; the offset is into the uncompressed stream."""
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


@attrs.frozen(kw_only=True)
class RowFilter:
    """What the rows table shows: filters, a search, a sort column and a page."""

    mode: str = ""
    scenario: str = ""
    model: str = ""
    #: "pass", "fail" (no error), "error" or "" (all)
    outcome: str = ""
    reason: str = ""
    #: case-insensitive text searched in scenario, mode, model and error
    q: str = ""
    sort: str = "row"
    desc: bool = False


#: Sortable columns: name -> attribute of RowIndex holding the values.
SORT_COLUMNS = {
    "row": "order",
    "mode": "mode",
    "scenario": "scenario",
    "model": "model",
    "iteration": "iteration",
    "outcome": "outcome",
    "checks": "checks_passed",
    "reason": "reason",
    "tokens": "tokens",
    "wall": "wall_ms",
    "cost": "cost",
    "tools": "tool_calls",
    "turns": "turns",
}

#: outcome codes of the ``outcome`` column
PASS, FAIL, ERROR = 0, 1, 2
OUTCOME_NAMES = ("pass", "fail", "error")


class _Codes:
    """Strings as small integer codes, in first-seen order."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.values: list[str] = []

    def code(self, value: str) -> int:
        found = self.codes.get(value)
        if found is None:
            found = self.codes[value] = len(self.values)
            self.values.append(value)
        return found


class RowIndex:
    """The rows of one run as numpy columns plus each row's place in the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []
        self._build()

    def _build(self) -> None:
        decoder = msgspec.json.Decoder(_Brief)
        strings = {name: _Codes() for name in ("mode", "scenario", "model", "reason")}
        codes: dict[str, list[int]] = {name: [] for name in strings}
        numbers: dict[str, list[float]] = {
            name: [] for name in ("iteration", "tokens", "wall_ms", "cost", "tool_calls", "tool_failed", "turns",
                                  "checks_passed", "checks_total", "attempts")
        }  # fmt: skip
        outcome: list[int] = []
        places: list[tuple[int, int]] = []
        errors: dict[int, tuple[str, str | None]] = {}
        cells: dict[Cell, int] = {}
        for number, (offset, line) in enumerate(scan_lines(self.path), start=1):
            try:
                row = decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                torn = not line.endswith(b"\n")
                self.problems.append(f"{self.path}:{number}: {'truncated last line' if torn else exc}; skipped")
                continue
            i = len(places)
            cells[(row.model, row.mode, row.scenario_id, row.iteration)] = i  # a later row of a cell wins
            places.append((offset, len(line)))
            for name, value in (("mode", row.mode), ("scenario", row.scenario_id), ("model", row.model), ("reason", row.completion_reason)):
                codes[name].append(strings[name].code(value))
            _append_numbers(numbers, row)
            if row.error:
                errors[i] = (row.error, row.error_code)
            outcome.append(ERROR if row.error else PASS if row.success else FAIL)
        keep = np.fromiter(sorted(cells.values()), dtype=np.int64, count=len(cells))
        self.duplicates = len(places) - keep.size
        self.values = {name: c.values for name, c in strings.items()}
        for name, column in codes.items():
            setattr(self, name, np.asarray(column, dtype=np.int32)[keep])
        for name, column in numbers.items():
            setattr(self, name, np.asarray(column, dtype=np.float64)[keep])
        self.outcome = np.asarray(outcome, dtype=np.int8)[keep]
        place = np.asarray(places, dtype=np.int64).reshape(-1, 2)[keep]
        self.offsets, self.lengths = place[:, 0], place[:, 1]
        position = {int(old): new for new, old in enumerate(keep.tolist())}
        self.errors = {position[i]: e for i, e in errors.items() if i in position}
        self.cells = {cell: position[i] for cell, i in cells.items()}
        self.order = np.arange(keep.size, dtype=np.int64)
        self.n = int(keep.size)

    # ------------------------------------------------------------ reading one row

    def cell(self, i: int) -> Cell:
        """(model, mode, scenario id, iteration) of row ``i``."""
        return (
            self.values["model"][self.model[i]],
            self.values["mode"][self.mode[i]],
            self.values["scenario"][self.scenario[i]],
            int(self.iteration[i]),
        )

    def find(self, cell: Cell) -> int | None:
        """The row index of a cell, or None."""
        return self.cells.get(cell)

    def row(self, i: int) -> ProfileRow:
        """The whole row ``i``, decoded from its line."""
        line = read_at(self.path, int(self.offsets[i]), int(self.lengths[i]))
        return from_json(line, ProfileRow, source=f"{self.path} (row {i + 1})")

    def counts(self) -> dict[str, int]:
        """How many rows passed, failed and errored."""
        found = np.bincount(self.outcome, minlength=3)
        return {name: int(found[code]) for code, name in enumerate(OUTCOME_NAMES)}

    # ------------------------------------------------------------ the table

    def select(self, flt: RowFilter) -> np.ndarray:
        """Indices of the rows ``flt`` keeps, in its sort order."""
        mask = np.ones(self.n, dtype=bool)
        for name, wanted in (("mode", flt.mode), ("scenario", flt.scenario), ("model", flt.model), ("reason", flt.reason)):
            if wanted:
                code = self._code_of(name, wanted)
                mask &= getattr(self, name) == code
        if flt.outcome in OUTCOME_NAMES:
            mask &= self.outcome == OUTCOME_NAMES.index(flt.outcome)
        if flt.q.strip():
            mask &= self._search(flt.q.strip().casefold())
        chosen = np.flatnonzero(mask)
        return chosen[self._order(chosen, flt.sort, flt.desc)]

    def _code_of(self, name: str, value: str) -> int:
        return self.values[name].index(value) if value in self.values[name] else -1

    def _search(self, needle: str) -> np.ndarray:
        """Rows whose scenario, mode, model or error contains ``needle``."""
        found = np.zeros(self.n, dtype=bool)
        for name in ("scenario", "mode", "model"):
            hits = [code for code, value in enumerate(self.values[name]) if needle in value.casefold()]
            if hits:
                found |= np.isin(getattr(self, name), hits)
        for i, (message, code) in self.errors.items():
            if needle in message.casefold() or (code and needle in code.casefold()):
                found[i] = True
        return found

    def _order(self, chosen: np.ndarray, sort: str, desc: bool) -> np.ndarray:
        """A stable order of ``chosen`` by one column (missing values last), then by file order."""
        column = getattr(self, SORT_COLUMNS.get(sort, "order"))[chosen]
        if sort in ("mode", "scenario", "model", "reason"):
            ranks = np.argsort(np.argsort(self.values[sort], kind="stable"), kind="stable")
            column = ranks[column].astype(np.float64) if len(ranks) else column
        column = np.asarray(column, dtype=np.float64)
        missing = np.isnan(column)
        keyed = np.where(missing, 0.0, -column if desc else column)
        return np.lexsort((chosen, keyed, missing))


def _append_numbers(numbers: dict[str, list[float]], row: _Brief) -> None:
    numbers["iteration"].append(row.iteration)
    numbers["tokens"].append(row.tokens.total)
    numbers["wall_ms"].append(row.timing.wall_ms)
    numbers["cost"].append(row.cost.total_usd)
    numbers["tool_calls"].append(row.tool_calls.total)
    numbers["tool_failed"].append(row.tool_calls.failed)
    numbers["turns"].append(np.nan if row.agent_turns is None else row.agent_turns)
    numbers["checks_passed"].append(row.checkpoints_passed)
    numbers["checks_total"].append(row.checkpoints_total)
    numbers["attempts"].append(row.attempts)


class KeyedLines:
    """cell -> (offset, length) of the last line of each cell in a JSONL file, indexed on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._places: dict[Cell, tuple[int, int]] | None = None
        self._lock = threading.Lock()
        self.problems: list[str] = []

    def places(self) -> dict[Cell, tuple[int, int]]:
        """The index (built once, by the first caller; the others wait for it)."""
        with self._lock:
            if self._places is None:
                self._places = self._build()
            return self._places

    def _build(self) -> dict[Cell, tuple[int, int]]:
        decoder = msgspec.json.Decoder(_Key)
        places: dict[Cell, tuple[int, int]] = {}
        for number, (offset, line) in enumerate(scan_lines(self.path), start=1):
            try:
                key = decoder.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                self.problems.append(f"{self.path}:{number}: {exc}; skipped")
                continue
            places[(key.model, key.mode, key.scenario_id, key.iteration)] = (offset, len(line))
        return places

    def line(self, cell: Cell) -> bytes | None:
        """The last line of ``cell``, or None."""
        place = self.places().get(cell)
        return None if place is None else read_at(self.path, *place)


class Traces:
    """A run's session traces: its trace store (indexed on first use) or its per-session files."""

    def __init__(self, where: Path | None, several_models: bool) -> None:
        self.where = where
        self.several_models = several_models
        self.store = KeyedLines(where) if where is not None and where.is_file() else None

    def get(self, cell: Cell) -> SessionTrace | None:
        """The trace of ``cell``, or None when the run kept none."""
        if self.where is None:
            return None
        if self.store is not None:
            line = self.store.line(cell)
            if line is None:
                return None
            return from_json(line, TraceRecord, source=f"{self.where} ({cell[1]}/{cell[2]}#{cell[3]})").trace
        return self._from_file(cell)

    def _from_file(self, cell: Cell) -> SessionTrace | None:
        model, mode, scenario, iteration = cell
        assert self.where is not None
        for with_model in ((True, False) if model else (False,)):
            path = trace_file_path(self.where, scenario, mode, iteration, model if with_model else None)
            if path.is_file():
                return from_json(path.read_bytes(), SessionTrace, source=str(path))
        return None


class Analysis:
    """A run's analysis bundles (``results/<runId>.analysis.jsonl``), indexed on first use."""

    def __init__(self, path: Path | None) -> None:
        self.lines = KeyedLines(path) if path is not None else None

    def get(self, cell: Cell) -> SessionAnalysisBundle | None:
        """The analyzers' results of ``cell``, or None."""
        if self.lines is None:
            return None
        line = self.lines.line(cell)
        if line is None:
            return None
        return from_json(line, SessionAnalysisBundle, source=f"{self.lines.path} ({cell[1]}/{cell[2]}#{cell[3]})")


__all__ = ["Analysis", "KeyedLines", "RowFilter", "RowIndex", "Traces", "read_at", "scan_lines"]
