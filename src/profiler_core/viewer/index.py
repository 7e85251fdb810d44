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

import math
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs
import msgspec

from ..errors import ProfilerError
from ..model import ProfileRow, SessionAnalysisBundle, SessionTrace
from ..model.record import Record
from ..storage.lines import read_at, scan_lines
from ..storage.rowcolumns import COLUMNS, projection
from ..storage.serde import from_json
from ..storage.tracestore import TraceRecord, trace_file_path
from ..util.arrays import np

Cell = tuple[str, str, str, int]


class _Key(msgspec.Struct, rename="camel"):
    """The cell of a trace-store record or an analysis bundle."""

    scenario_id: str
    mode: str
    iteration: int
    model: str = ""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RowFilter(Record):
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
    "reward": "reward",
}

#: outcome codes of the ``outcome`` column
PASS, FAIL, ERROR = 0, 1, 2
OUTCOME_NAMES = ("pass", "fail", "error")


#: Lines decoded per msgspec call: one call per batch costs far less than one per line
#: (a batch with a bad line is decoded again line by line, so that line alone is skipped).
BATCH = 2048

#: Number columns of the index: the row column each shows (storage/rowcolumns.py).
_NUMBERS = {
    "iteration": "iteration",
    "tokens": "tokens_total",
    "wall_ms": "latency_wall_ms",
    "cost": "cost_total_usd",
    "tool_calls": "tool_calls_total",
    "tool_failed": "tool_calls_failed",
    "turns": "agent_turns",
    "checks_passed": "checkpoints_passed",
    "checks_total": "checkpoints_total",
    "attempts": "attempts",
    "reward": "reward",
}
#: Number columns a row may leave null (NaN in the index).
_NULLABLE = frozenset({"turns", "reward"})
#: String columns (stored as codes) and the row column each shows.
_STRINGS = {
    "mode": "mode",
    "scenario": "scenario_id",
    "model": "model",
    "reason": "completion_reason",
}
#: The part of a row the table reads: the row decoder's fields for these paths only (msgspec
#: skips the rest of each line without building it).
_Brief = projection(
    "ViewerRow",
    [
        *(COLUMNS[name].path for name in (*_NUMBERS.values(), *_STRINGS.values())),
        "success",
        "error",
        "error_code",
        # where the cost came from ("unknown": no price)
        "extensions.cost_source",
    ],
)


def _tokens_total(row: Any) -> float:
    """The row's total tokens; NaN when its line leaves the total out (``RowIndex`` derives it)."""
    total = row.tokens.total
    return math.nan if total is None else float(total)


def _known_cost(row: Any) -> float:
    """The row's cost; NaN when unknown (no price, or an errored attempt that measured nothing)."""
    source = row.extensions.cost_source
    if source == "unknown" or (row.error and source is None and not row.cost.total_usd):
        return math.nan
    return float(row.cost.total_usd)


#: How each index column is read from a decoded row (``operator.attrgetter``: in C).
_READ: dict[str, Callable[[Any], Any]] = {
    **{
        index: COLUMNS[name].get
        for index, name in (*_NUMBERS.items(), *_STRINGS.items())
    },
    "tokens": _tokens_total,
    "cost": _known_cost,
}


def decode_batches(
    path: Path, cls: type, problems: list[str]
) -> Iterator[tuple[list[Any], list[int], list[int]]]:
    """(decoded lines, their offsets, their lengths), a batch at a time; lines that do
    not decode go to ``problems``."""
    many: msgspec.json.Decoder[Any] = msgspec.json.Decoder(list[cls])  # type: ignore[valid-type]
    one: msgspec.json.Decoder[Any] = msgspec.json.Decoder(cls)
    lines: list[bytes] = []
    offsets: list[int] = []
    numbers: list[int] = []
    for number, (offset, line) in enumerate(scan_lines(path), start=1):
        lines.append(line)
        offsets.append(offset)
        numbers.append(number)
        if len(lines) == BATCH:
            yield _decode(many, one, path, lines, offsets, numbers, problems)
            lines, offsets, numbers = [], [], []
    if lines:
        yield _decode(many, one, path, lines, offsets, numbers, problems)


def _decode(
    many, one, path, lines, offsets, numbers, problems
) -> tuple[list[Any], list[int], list[int]]:
    try:
        items = many.decode(b"[" + b",".join(lines) + b"]")
        if len(items) == len(lines):  # a line holding "{...},{...}" would add an item
            return items, offsets, [len(line) for line in lines]
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    kept: tuple[list[Any], list[int], list[int]] = ([], [], [])
    for line, offset, number in zip(lines, offsets, numbers):
        try:
            item = one.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            why = exc if line.endswith(b"\n") else "truncated last line"
            problems.append(f"{path}:{number}: {why}; skipped")
            continue
        kept[0].append(item)
        kept[1].append(offset)
        kept[2].append(len(line))
    return kept


def _last_of_each(keys: np.ndarray) -> np.ndarray:
    """Positions of the last occurrence of each key, in file order (a later line of a cell wins)."""
    if keys.size == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    last = np.ones(ordered.size, dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    return np.sort(order[last])


class _Columns:
    """The index's columns as the decoded batches of rows fill them."""

    def __init__(self) -> None:
        self.maps: dict[str, dict[str, int]] = {name: {} for name in _STRINGS}
        self.codes = {name: array("i") for name in _STRINGS}
        self.numbers = {name: array("d") for name in _NUMBERS}
        self.outcome, self.offsets, self.lengths = array("b"), array("q"), array("q")
        self.errors: dict[int, tuple[str, str | None]] = {}

    def add(self, rows: list, where: Iterable[int], sizes: Iterable[int]) -> None:
        """One batch: each string as its code, each number (NaN for none), each outcome."""
        first = len(self.offsets)
        for name in _STRINGS:
            seen = self.maps[name]
            self.codes[name].extend(
                [seen.setdefault(text, len(seen)) for text in map(_READ[name], rows)]
            )
        for name in _NUMBERS:
            values: Iterable[float] = map(_READ[name], rows)
            if name in _NULLABLE:
                values = (math.nan if v is None else v for v in values)
            self.numbers[name].extend(values)
        self.outcome.extend(
            [ERROR if r.error else PASS if r.success else FAIL for r in rows]
        )
        for k, r in enumerate(rows):
            if r.error:
                self.errors[first + k] = (r.error, r.error_code)
        self.offsets.extend(where)
        self.lengths.extend(sizes)


class RowIndex:
    """The rows of one run as numpy columns plus each row's place in the file."""

    # string columns as codes into ``values[name]``
    mode: np.ndarray
    scenario: np.ndarray
    model: np.ndarray
    reason: np.ndarray
    # number columns (nan where a row has no value)
    iteration: np.ndarray
    tokens: np.ndarray
    wall_ms: np.ndarray
    cost: np.ndarray
    tool_calls: np.ndarray
    tool_failed: np.ndarray
    turns: np.ndarray
    checks_passed: np.ndarray
    checks_total: np.ndarray
    attempts: np.ndarray
    reward: np.ndarray
    #: PASS, FAIL or ERROR per row
    outcome: np.ndarray
    #: where each row's line is in the results file
    offsets: np.ndarray
    lengths: np.ndarray

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []
        self._build()

    def _build(self) -> None:
        columns = _Columns()
        for rows, where, sizes in decode_batches(self.path, _Brief, self.problems):
            columns.add(rows, where, sizes)
        self._maps = columns.maps
        self.values = {name: list(seen) for name, seen in columns.maps.items()}
        for name, ints in columns.codes.items():
            setattr(self, name, np.frombuffer(ints, dtype=np.int32).copy())
        for name, floats in columns.numbers.items():
            setattr(self, name, np.frombuffer(floats, dtype=np.float64).copy())
        self.outcome = np.frombuffer(columns.outcome, dtype=np.int8).copy()
        self.offsets = np.frombuffer(columns.offsets, dtype=np.int64).copy()
        self.lengths = np.frombuffer(columns.lengths, dtype=np.int64).copy()
        self._iterations = np.unique(self.iteration)
        self._keep_the_last_line_of_each_cell(columns.errors, len(columns.outcome))
        self._derive_totals()
        self.order = np.arange(self.n, dtype=np.int64)
        keys = self._keys(self.model, self.mode, self.scenario, self.iteration)
        self._key_order = np.argsort(keys)
        self._sorted_keys = keys[self._key_order]

    def _keep_the_last_line_of_each_cell(
        self, errors: dict[int, tuple[str, str | None]], lines: int
    ) -> None:
        """Drop the lines a later line of the same cell replaces (a resumed run's)."""
        keep = _last_of_each(
            self._keys(self.model, self.mode, self.scenario, self.iteration)
        )
        self.duplicates = int(self.offsets.size - keep.size)
        for name in (*_STRINGS, *_NUMBERS, "outcome", "offsets", "lengths"):
            setattr(self, name, getattr(self, name)[keep])
        position = np.full(max(lines, 1), -1, dtype=np.int64)
        position[keep] = np.arange(keep.size)
        self.errors = {
            int(position[i]): e for i, e in errors.items() if position[i] >= 0
        }
        self.n = int(keep.size)

    def _derive_totals(self) -> None:
        """The token totals a line left out (a row written by hand), derived as the
        model derives them.

        Rare: such a line alone is decoded whole. One the model refuses keeps NaN (its session
        page says why).
        """
        for i in np.flatnonzero(np.isnan(self.tokens)).tolist():
            try:
                self.tokens[i] = self.row(i).tokens.total
            except ProfilerError:
                continue

    def _keys(
        self,
        model: np.ndarray,
        mode: np.ndarray,
        scenario: np.ndarray,
        iteration: np.ndarray,
    ) -> np.ndarray:
        """One int64 per cell (-1 where a part is unknown to this run): the codes
        packed, the iteration ranked."""
        its = self._iterations
        if its.size == 0:
            return np.full(np.shape(model), -1, dtype=np.int64)
        rank = np.minimum(np.searchsorted(its, iteration), its.size - 1)
        known = (model >= 0) & (mode >= 0) & (scenario >= 0) & (its[rank] == iteration)
        key = (
            (model.astype(np.int64) * len(self._maps["mode"]) + mode)
            * len(self._maps["scenario"])
            + scenario
        ) * its.size + rank
        return np.where(known, key, -1)

    def keys_of(
        self,
        models: list[str],
        modes: list[str],
        scenarios: list[str],
        iterations: list[int],
    ) -> np.ndarray:
        """The cell keys of lines of another file (a trace store, the analysis file); -1
        for cells the run lacks."""

        def codes(name: str, values: list[str]) -> np.ndarray:
            seen = self._maps[name]
            return np.asarray([seen.get(v, -1) for v in values], dtype=np.int64)

        return self._keys(codes("model", models), codes("mode", modes), codes("scenario", scenarios),
                          np.asarray(iterations, dtype=np.float64))  # fmt: skip

    def row_of_key(self, key: int) -> int | None:
        """The row of a cell key, or None."""
        at = int(np.searchsorted(self._sorted_keys, key))
        if key < 0 or at >= self._sorted_keys.size or self._sorted_keys[at] != key:
            return None
        return int(self._key_order[at])

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
        model, mode, scenario, iteration = cell
        return self.row_of_key(
            int(self.keys_of([model], [mode], [scenario], [iteration])[0])
        )

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
        for name, wanted in (
            ("mode", flt.mode),
            ("scenario", flt.scenario),
            ("model", flt.model),
            ("reason", flt.reason),
        ):
            if wanted:
                code = self._code_of(name, wanted)
                mask &= getattr(self, name) == code
        if flt.outcome in OUTCOME_NAMES:
            mask &= self.outcome == OUTCOME_NAMES.index(flt.outcome)
        if flt.q.strip():
            mask &= self._search(flt.q.strip().casefold())
        chosen = np.flatnonzero(mask)
        return chosen[self._order(chosen, flt.sort, flt.desc)]

    def contrast(self, cell: Cell) -> Cell | None:
        """A session of the same model and scenario with the other outcome (a pass for a
        failure, a failure for a pass),
        of the same mode when there is one; None when every session of the scenario ended alike."""
        i = self.find(cell)
        if i is None:
            return None
        passed = self.outcome == PASS
        other = (
            (self.model == self.model[i])
            & (self.scenario == self.scenario[i])
            & (passed != passed[i])
        )
        same_mode = np.flatnonzero(other & (self.mode == self.mode[i]))
        found = same_mode if same_mode.size else np.flatnonzero(other)
        return self.cell(int(found[0])) if found.size else None

    def _code_of(self, name: str, value: str) -> int:
        return self._maps[name].get(value, -1)

    def _search(self, needle: str) -> np.ndarray:
        """Rows whose scenario, mode, model or error contains ``needle``."""
        found = np.zeros(self.n, dtype=bool)
        for name in ("scenario", "mode", "model"):
            hits = [
                code
                for code, value in enumerate(self.values[name])
                if needle in value.casefold()
            ]
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
            ranks = np.argsort(
                np.argsort(self.values[sort], kind="stable"), kind="stable"
            )
            column = ranks[column].astype(np.float64) if len(ranks) else column
        column = np.asarray(column, dtype=np.float64)
        missing = np.isnan(column)
        keyed = np.where(missing, 0.0, -column if desc else column)
        return np.lexsort((chosen, keyed, missing))


class KeyedLines:
    """Where the last line of each of a run's cells is in another JSONL file (a trace
    store, the analysis file).

    Indexed on first use: one pass decoding only each line's cell (msgspec skips
    the trace itself), kept as three numpy arrays sorted by cell key.
    """

    def __init__(self, path: Path, rows: RowIndex) -> None:
        self.path = path
        self.rows = rows
        self.problems: list[str] = []
        self._lock = threading.Lock()
        self._index: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def build(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sorted keys, offsets, lengths), built once by the first caller; the others
        wait for it."""
        with self._lock:
            if self._index is None:
                self._index = self._build()
            return self._index

    def _build(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        keys, offsets, lengths = array("q"), array("q"), array("q")
        for items, where, sizes in decode_batches(self.path, _Key, self.problems):
            found = self.rows.keys_of(
                [k.model for k in items],
                [k.mode for k in items],
                [k.scenario_id for k in items],
                [k.iteration for k in items],
            )
            keys.extend(found.tolist())
            offsets.extend(where)
            lengths.extend(sizes)
        k = np.frombuffer(keys, dtype=np.int64)
        keep = _last_of_each(k)
        keep = keep[k[keep] >= 0]
        order = keep[np.argsort(k[keep], kind="stable")]
        return (
            k[order],
            np.frombuffer(offsets, dtype=np.int64)[order],
            np.frombuffer(lengths, dtype=np.int64)[order],
        )

    def line(self, cell: Cell) -> bytes | None:
        """The last line of ``cell``, or None."""
        keys, offsets, lengths = self.build()
        model, mode, scenario, iteration = cell
        key = int(self.rows.keys_of([model], [mode], [scenario], [iteration])[0])
        at = int(np.searchsorted(keys, key))
        if key < 0 or at >= keys.size or keys[at] != key:
            return None
        return read_at(self.path, int(offsets[at]), int(lengths[at]))


class Traces:
    """A run's session traces: its trace store (indexed on first use) or its per-session files."""

    def __init__(self, where: Path | None, rows: RowIndex) -> None:
        self.where = where
        self.store = (
            KeyedLines(where, rows) if where is not None and where.is_file() else None
        )

    def get(self, cell: Cell) -> SessionTrace | None:
        """The trace of ``cell``, or None when the run kept none."""
        if self.where is None:
            return None
        if self.store is not None:
            line = self.store.line(cell)
            if line is None:
                return None
            return from_json(
                line,
                TraceRecord,
                source=f"{self.where} ({cell[1]}/{cell[2]}#{cell[3]})",
            ).trace
        return self._from_file(cell)

    def _from_file(self, cell: Cell) -> SessionTrace | None:
        model, mode, scenario, iteration = cell
        assert self.where is not None
        for with_model in (True, False) if model else (False,):
            path = trace_file_path(
                self.where, scenario, mode, iteration, model if with_model else None
            )
            if path.is_file():
                return from_json(path.read_bytes(), SessionTrace, source=str(path))
        return None


class Analysis:
    """A run's analysis bundles (``results/<runId>.analysis.jsonl``), indexed on first use."""

    def __init__(self, path: Path | None, rows: RowIndex) -> None:
        self.lines = KeyedLines(path, rows) if path is not None else None

    def get(self, cell: Cell) -> SessionAnalysisBundle | None:
        """The analyzers' results of ``cell``, or None."""
        if self.lines is None:
            return None
        line = self.lines.line(cell)
        if line is None:
            return None
        return from_json(
            line,
            SessionAnalysisBundle,
            source=f"{self.lines.path} ({cell[1]}/{cell[2]}#{cell[3]})",
        )


__all__ = [
    "Analysis",
    "KeyedLines",
    "RowFilter",
    "RowIndex",
    "Traces",
    "decode_batches",
]
