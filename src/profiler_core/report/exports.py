"""Data exports: ``results.csv`` (flat, one line per row), ``results.json`` (all rows),
``summary.json``."""

from __future__ import annotations

import csv
import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from ..errors import StoreError
from ..util.arrays import np
from .load import CORE_COLUMNS, RowTable

#: Buffer of the big files: 8 KB reads and writes cost a system call each (slow in VMs).
BUFFER = 1 << 20

#: Rows converted to Python values at a time: bounds memory on a million rows.
CHUNK = 50_000


def _numeric_cells(col: np.ndarray, sl: slice, integral: bool) -> list:
    """One chunk of a float column as CSV cells: ints where the column is integral, ''
    for missing."""
    part = col[sl]
    missing = np.isnan(part)
    if integral:
        values = np.where(missing, 0, part).astype(np.int64).tolist()
    else:
        values = part.tolist()
    if missing.any():
        for i in np.flatnonzero(missing).tolist():
            values[i] = ""
    return values


def _is_integral(col: np.ndarray) -> bool:
    finite = col[np.isfinite(col)]
    return bool(
        np.all(finite == np.round(finite))
        and (finite.size == 0 or np.abs(finite).max() < 2**53)
    )


#: A text cell starting with one of these is a formula to a spreadsheet (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_text(value: Any) -> Any:
    """A text cell a spreadsheet will not run: a leading ``'`` before ``= + - @``
    (numbers stay numbers)."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _safe_texts(values: list) -> list:
    # Most cells are harmless: only rebuild the list when one is not.
    if any(isinstance(v, str) and v.startswith(FORMULA_START) for v in values):
        return [safe_text(v) for v in values]
    return values


def _object_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return safe_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    return safe_text(value)


def csv_header(table: RowTable) -> list[str]:
    """The CSV columns: identity, outcome, core numbers, categories, then ``extensions.<key>``."""
    head = [
        "run_id",
        "scenario_id",
        "mode",
        "model",
        "iteration",
        "started_at",
        "completed_at",
        "provider",
        "session_id",
    ]
    head += [
        "success",
        "output_valid",
        "completion_reason",
        "error_code",
        "error",
        "checkpoints_failed",
    ]
    head += [c for c in CORE_COLUMNS if c != "iteration"]
    head += [f"tool_calls_by_category.{k}" for k in table.by_category]
    head += [f"extensions.{k}" for k in table.extensions]
    return [safe_text(h) for h in head]


#: From this many rows on, a forked process writes the second half of the CSV.
PARALLEL_ROWS = 200_000


def write_csv(table: RowTable, path: Path, *, parallel: bool | None = None) -> None:
    """Write one CSV line per row (RFC 4180 quoting, UTF-8, ``\\n`` line ends)."""
    from .load import can_fork

    if parallel is not False and table.n >= PARALLEL_ROWS and can_fork():
        from .parallel import write_halves

        half = table.n // 2
        write_halves(
            path,
            lambda f: _write_rows(table, f, 0, half, header=True),
            lambda f: _write_rows(table, f, half, table.n, header=False),
        )
        return
    with open(path, "w", encoding="utf-8", newline="", buffering=BUFFER) as f:
        _write_rows(table, f, 0, table.n, header=True)


def _write_rows(
    table: RowTable, f: IO[str], first: int, stop: int, *, header: bool
) -> None:
    """Write rows ``first`` to ``stop`` (and the header line) as CSV."""
    cells = _Cells(table)
    writer = csv.writer(f, lineterminator="\n")
    if header:
        writer.writerow(csv_header(table))
    for start in range(first, stop, CHUNK):
        sl = slice(start, min(start + CHUNK, stop))
        writer.writerows(zip(*cells.columns(sl), strict=True))


_BOOLS = np.array(["false", "true"], dtype=object)


class _Cells:
    """The CSV cells of a table, column by column for a slice of rows."""

    def __init__(self, table: RowTable) -> None:
        self.table = table
        # Categories (modes, scenarios, models...) are neutralised once, not per row.
        self.cats = {
            name: np.array([safe_text(v) for v in cat.values], dtype=object)
            for name, cat in table.categorical.items()
        }
        self.integral = {name: _is_integral(c) for name, c in table.numeric.items()}
        self.ext_integral = {
            k: _is_integral(v)
            for k, v in table.extensions.items()
            if isinstance(v, np.ndarray)
        }

    def columns(self, sl: slice) -> list[list]:
        """Every column's cells for the rows of ``sl``, in the header's order."""
        return [*self._row_columns(sl), *self._metric_columns(sl)]

    def _category(self, name: str, sl: slice) -> list:
        return self.cats[name][self.table.categorical[name].codes[sl]].tolist()

    def _row_columns(self, sl: slice) -> list[list]:
        """What identifies each row and how it ended."""
        table = self.table
        rows = range(sl.start, sl.stop)
        return [
            self._category("run_id", sl),
            self._category("scenario_id", sl),
            self._category("mode", sl),
            self._category("model", sl),
            _numeric_cells(table.numeric["iteration"], sl, True),
            _safe_texts(table.started_at[sl]),
            _safe_texts(table.completed_at[sl]),
            self._category("provider", sl),
            _safe_texts(table.session_id[sl]),
            _BOOLS[table.success[sl].astype(np.int8)].tolist(),
            _BOOLS[table.output_valid[sl].astype(np.int8)].tolist(),
            self._category("completion_reason", sl),
            _text_cells(table.errors, rows, lambda e: e[1]),
            _text_cells(table.errors, rows, lambda e: e[0]),
            _text_cells(table.failed_checks, rows, lambda text: text),
        ]

    def _metric_columns(self, sl: slice) -> list[list]:
        """The core metrics, the tool categories, then the extensions' columns."""
        table = self.table
        cols = [
            _numeric_cells(table.numeric[c], sl, self.integral[c])
            for c in CORE_COLUMNS
            if c != "iteration"
        ]
        cols += [_numeric_cells(col, sl, True) for col in table.by_category.values()]
        for key, col in table.extensions.items():
            if isinstance(col, np.ndarray):
                cols.append(_numeric_cells(col, sl, self.ext_integral[key]))
            else:
                cols.append([_object_cell(v) for v in col[sl]])
        return cols


def _text_cells(
    by_row: Mapping[int, Any], rows: range, text: Callable[[Any], str | None]
) -> list[str]:
    """One text cell per row: ``text`` of the row's entry, empty for a row without one."""
    if not by_row:
        return [""] * len(rows)
    return [safe_text(text(by_row[i]) or "") if i in by_row else "" for i in rows]


class JsonArrayWriter:
    """Streams accepted JSONL lines into a JSON array file (``results.json``) without
    re-encoding them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tmp = path.with_name(f".{path.name}.tmp")
        # closed in finish()/abort()
        self._f: IO[bytes] = open(self._tmp, "wb", buffering=BUFFER)  # noqa: SIM115
        self._f.write(b"[")
        self._sep = b"\n"

    def __call__(self, line: bytes) -> None:
        """Append one row (a complete JSON object)."""
        try:
            self._f.write(self._sep)
            self._f.write(line)
        except OSError as exc:  # a full disk: name the file (a failed write names none)
            raise StoreError(
                f"{self.path}: cannot write ({exc.strerror or exc})"
            ) from None
        self._sep = b",\n"

    def restart(self) -> None:
        """Forget the rows written so far (the loader reads the file again)."""
        self._f.seek(0)
        self._f.truncate()
        self._f.write(b"[")
        self._sep = b"\n"

    @property
    def tmp_path(self) -> Path:
        """The file being written (renamed into place by ``finish``)."""
        return self._tmp

    def splice(self, offset: int, end: int) -> None:
        """Continue after rows that a forked reader wrote straight into ``[offset,
        end)`` of this file.

        Its block starts with ``,\\n``; the gap before it becomes spaces (valid JSON
        whitespace), and
        when this writer wrote no row itself the comma becomes a space too.
        """
        self._f.flush()
        gap = offset - self._f.tell()
        if gap < 0:
            raise ValueError(
                f"{self.path}: the rows written here overran the reserved space"
            )
        while gap:
            step = min(gap, 1 << 20)
            self._f.write(b" " * step)
            gap -= step
        if end > offset:
            if self._sep == b"\n":
                self._f.write(b" ")
            self._f.seek(end)
            self._sep = b",\n"

    def extend_from(self, path: Path) -> None:
        """Append the rows of a file that holds them already joined by ``,\\n`` (a
        forked reader's part)."""
        if path.stat().st_size == 0:
            return
        self._f.write(self._sep)
        with open(path, "rb", buffering=0) as src:
            shutil.copyfileobj(src, self._f, 1 << 22)
        self._sep = b",\n"

    def finish(self) -> None:
        """Close the array and move the file into place."""
        try:
            self._f.write(b"\n]\n")
            self._f.close()
        except OSError as exc:
            self.abort()
            raise StoreError(
                f"{self.path}: cannot write ({exc.strerror or exc})"
            ) from None
        os.replace(self._tmp, self.path)

    def abort(self) -> None:
        """Drop the partial file."""
        try:
            self._f.close()
        except OSError:
            pass  # its buffer could not be flushed (a full disk): the file goes anyway
        self._tmp.unlink(missing_ok=True)


def write_json(doc: Any, path: Path) -> None:
    """Write a JSON document (UTF-8, indented, no NaN)."""
    path.write_text(
        json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
        encoding="utf-8",
    )
