"""The row table of a results file: its columns, and the parsing of its lines (one
process or part of a split)."""

from __future__ import annotations

import math
import os
import sys
import threading
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs
import orjson

from ..errors import StoreError
from ..model.metrics import token_totals
from ..storage import rowcodec
from ..storage.lines import open_binary
from ..storage.rowcolumns import columns
from ..util.arrays import np
from ..util.textclean import REPLACED, clean_json_bytes, replaced_note

#: What a line of the analysis file (or a peeked line) raises when it is not what is expected.
_LINE_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
)

#: Numeric columns read from every row, in CSV order: declared row columns
#: (storage/rowcolumns.py), whose values ``_parse`` reads in this order.
CORE_COLUMNS: tuple[str, ...] = tuple(
    c.name
    for c in columns(
        (
            "iteration",
            "tokens_input",
            "tokens_output",
            "tokens_reasoning",
            "tokens_cache_read",
            "tokens_cache_write",
            "tokens_total",
            "tokens_active",
            "latency_wall_ms",
            "tool_calls_total",
            "tool_calls_failed",
            "tool_calls_retried",
            "tool_calls_error_rate",
            "cost_total_usd",
            "cost_input_usd",
            "cost_output_usd",
            "cost_reasoning_usd",
            "checkpoints_passed",
            "checkpoints_total",
            "agent_turns",
            "attempts",
            # the verifiers' reward (0-1); NaN when none was written (not every scenario
            # has verifiers)
            "reward",
        )
    )
)
_WIDTH = len(CORE_COLUMNS)

#: Categorical string columns, stored as integer codes into a list of values.
CATEGORICAL_COLUMNS: tuple[str, ...] = tuple(
    c.name
    for c in columns(
        ("run_id", "mode", "scenario_id", "model", "provider", "completion_reason")
    )
)

#: The largest integer a float column can take at all (approximately): beyond it a value
#: is kept as an object.
_MAX_FLOAT = 2**1023

#: Characters of a failed verifier's output kept for the report (its last lines: where a
#: test runner sums up).
VERIFIER_TAIL = 400

#: Most problems spelled out one by one; the rest are counted.
MAX_LISTED_PROBLEMS = 20

#: Read buffer: the default 8 KB costs a system call per 3 lines (slow in VMs).
BUFFER = 1 << 20

#: Uncompressed files from this size on are read by two processes.
PARALLEL_MIN_BYTES = 64 * 2**20


@attrs.define
class Categorical:
    """A string column stored as codes into ``values`` (first-seen order)."""

    codes: np.ndarray
    values: list[str]

    def labels(self) -> list[str]:
        """The column as strings, row by row."""
        values = self.values
        return [values[c] for c in self.codes.tolist()]


@attrs.define
class RowTable:
    """All rows of a results file, column by column."""

    path: Path
    n: int
    numeric: dict[str, np.ndarray]
    categorical: dict[str, Categorical]
    success: np.ndarray
    output_valid: np.ndarray
    started_at: list[str]
    completed_at: list[str]
    session_id: list[str]
    #: row index -> (error, errorCode) for the rows that carry an error
    errors: dict[int, tuple[str | None, str | None]]
    #: row index -> ";"-joined ids of the checks that failed
    failed_checks: dict[int, str]
    #: (mode code, scenario code, checkpoint id) -> [passed, total]
    checkpoints: dict[tuple[int, int, str], list[int]]
    checkpoint_descriptions: dict[str, str]
    #: toolCalls.byCategory counts (0 where a row has none of a category)
    by_category: dict[str, np.ndarray]
    #: extensions: float columns (nan = absent) or object lists (None = absent)
    extensions: dict[str, np.ndarray | list]
    problems: list[str]
    skipped: int
    #: rows left out because a later row holds the same cell (run, model, mode, scenario, iteration)
    duplicates: int = 0
    #: row index -> the output tail of its failed verifier checks (``verify:*``), for
    #: the failed rows' table
    verifier_tails: dict[int, str] = attrs.Factory(dict)

    @property
    def modes(self) -> list[str]:
        """Modes in order of first appearance."""
        return self.categorical["mode"].values

    @property
    def scenarios(self) -> list[str]:
        """Scenario ids in order of first appearance."""
        return self.categorical["scenario_id"].values

    def numeric_extensions(self) -> dict[str, np.ndarray]:
        """The extensions whose every present value is a number."""
        return {k: v for k, v in self.extensions.items() if isinstance(v, np.ndarray)}


class _Interner:
    """Maps strings to small integer codes, in first-seen order."""

    __slots__ = ("codes", "values")

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.values: list[str] = []

    def code(self, value: str) -> int:
        """The code of ``value`` (a new one when first seen)."""
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.values)
            self.values.append(value)
        return code


class _Blocks:
    """Dict-valued columns (extensions, byCategory) grouped by their key tuple.

    Rows written by one set of collectors share the same keys in the same
    order, so the numbers of such a row go into one flat float buffer with a
    single C call; values that are not numbers (a string, null, a list) are
    kept aside, by key and row.
    """

    __slots__ = ("blocks", "objects")

    def __init__(self) -> None:
        self.blocks: dict[tuple[str, ...], tuple[array, array]] = {}
        self.objects: dict[str, dict[int, Any]] = {}

    def add(self, row: int, data: dict) -> None:
        """Record the values of ``data`` for row ``row``."""
        keys = tuple(data)
        values = data.values()
        block = self.blocks.get(keys)
        if block is None:
            block = self.blocks[keys] = (array("q"), array("d"))
        try:
            block[1].extend(array("d", values))
            objects = None
        except (TypeError, OverflowError):
            numbers, objects = self._mixed(keys, values)
            block[1].extend(numbers)
        block[0].append(row)
        if objects:
            for key, value in objects.items():
                self.objects.setdefault(key, {})[row] = value

    @staticmethod
    def _mixed(
        keys: tuple[str, ...], values: Iterable[Any]
    ) -> tuple[array, dict[str, Any]]:
        """The numbers of a row that also holds other values (NaN in their place), and
        those values by key."""
        numbers = array("d")
        objects: dict[str, Any] = {}
        for key, value in zip(keys, values, strict=True):
            if type(value) is float or (
                type(value) is int and abs(value) <= _MAX_FLOAT
            ):
                numbers.append(value)
            else:  # a string, null, a list, or an integer no float can hold: kept as it is
                numbers.append(math.nan)
                objects[key] = value
        return numbers, objects

    def columns(
        self, n: int, *, fill: float = math.nan
    ) -> dict[str, np.ndarray | list]:
        """Dense columns of length ``n``: floats (``fill`` where absent) or, if any
        value is not a number, objects."""
        out: dict[str, np.ndarray | list] = {}
        for keys, (rows, flat) in self.blocks.items():
            idx = np.frombuffer(rows, dtype=np.int64)
            matrix = np.frombuffer(flat, dtype=np.float64).reshape(idx.size, len(keys))
            for j, key in enumerate(keys):
                dense = out.get(key)
                if dense is None:
                    dense = out[key] = np.full(n, fill)
                dense[idx] = matrix[:, j]
        for key, objects in self.objects.items():
            dense = out[key]
            # A column holding strings or nested values is kept as Python objects (CSV only).
            values = np.asarray(dense).tolist()
            column: list = [
                None if math.isnan(v) else (int(v) if v.is_integer() else v)
                for v in values
            ]
            for i, value in objects.items():
                column[i] = value
            out[key] = column
        return out


def check_results_file(path: Path) -> None:
    """Raise StoreError (one line) when ``path`` is missing, a folder, or empty."""
    if not path.exists():
        raise StoreError(f"{path}: results file not found")
    if path.is_dir():
        raise StoreError(f"{path}: expected a results .jsonl file, got a folder")
    if path.stat().st_size == 0:
        raise StoreError(f"{path}: results file is empty (no rows)")


def _shorter(message: str) -> str:
    """A problem line fit for the report: no lone surrogates (they would make its files
    unwritable), ~400 characters."""
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return message if len(message) <= 400 else message[:397] + "..."


def _read(
    path: Path, sink: Callable[[bytes], None] | None, drop: frozenset[int] = frozenset()
) -> RowTable:
    """Parse the whole file in this process."""
    try:
        f = open_binary(path)
    except OSError as exc:
        raise StoreError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with f:
        return _parse(path, f, 1, sink, drop)


def _cell_keys(table: RowTable) -> np.ndarray:
    """One row per table row: the codes of run, model, mode and scenario, and the iteration."""
    cat = table.categorical
    return np.stack(
        [
            cat["run_id"].codes.astype(np.int64),
            cat["model"].codes.astype(np.int64),
            cat["mode"].codes.astype(np.int64),
            cat["scenario_id"].codes.astype(np.int64),
            table.numeric["iteration"].astype(np.int64),
        ],
        axis=1,
    )


def superseded_rows(table: RowTable) -> np.ndarray:
    """Indices of the rows whose cell appears again in a later row (ascending)."""
    if table.n < 2:
        return np.empty(0, dtype=np.int64)
    keys = _cell_keys(table)
    # Stable sort by key: within one cell the rows stay in file order, so all but the
    # last are superseded.
    order = np.lexsort(keys.T[::-1])
    ordered = keys[order]
    same_as_next = np.all(ordered[:-1] == ordered[1:], axis=1)
    return np.sort(order[:-1][same_as_next])


def _finish(table: RowTable) -> RowTable:
    """Cap the listed problems, count the rest, and refuse a file without one valid row."""
    path = table.path
    notes = [
        p
        for p in table.problems
        if "truncated last line" in p or "cannot read further" in p or REPLACED in p
    ]
    lines = [p for p in table.problems if p not in notes][:MAX_LISTED_PROBLEMS]
    unlisted = table.skipped - len(lines) - len(notes)
    problems = lines + notes
    if unlisted > 0:
        problems.append(f"{path}: {unlisted} more malformed line(s) skipped")
    table.problems = problems
    if table.n == 0:
        detail = (
            f" ({table.skipped} malformed line(s); first: {problems[0]})"
            if problems
            else ""
        )
        raise StoreError(f"{path}: no valid rows{detail}")
    return table


class _Notes:
    """What went wrong while reading: skipped lines, cleaned escapes, and the problem
    lines that explain them.

    Only the rare paths of ``_parse`` touch it, so the loop over good rows stays lean.
    """

    __slots__ = ("cleaned", "last_rejected", "path", "problems", "skipped")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []
        self.skipped = 0
        self.cleaned = 0
        self.last_rejected = 0

    def clean(self, number: int, line: bytes) -> bytes:
        """The line with a NUL or half an emoji made U+FFFD, said once per line (the first ones)."""
        line, replaced = clean_json_bytes(line)
        if replaced:
            self.cleaned += 1
            if self.cleaned <= MAX_LISTED_PROBLEMS:
                self.problems.append(replaced_note(f"{self.path}:{number}", replaced))
        return line

    def reject(self, number: int, line: bytes, exc: BaseException) -> None:
        """A line the decoder refused: counted, and explained while few (a million bad
        lines stay cheap)."""
        self.skipped += 1
        self.last_rejected = number
        if len(self.problems) < MAX_LISTED_PROBLEMS + 1:
            self.problems.append(
                _shorter(rowcodec.explain(line, exc, f"{self.path}:{number}"))
            )

    def unreadable(self, number: int, exc: BaseException) -> None:
        """A truncated gzip stream or a read error: the rows before it are kept."""
        self.skipped += 1
        self.problems.append(
            f"{self.path}:{number}: cannot read further ({exc}); the rows before it are used"
        )

    def check_tail(self, last_number: int, last_line: bytes) -> None:
        """A refused last line without its newline is a run cut short: say so instead of
        "malformed"."""
        if not (
            self.last_rejected
            and self.last_rejected == last_number
            and not last_line.endswith(b"\n")
        ):
            return
        note = (
            f"{self.path}:{last_number}: truncated last line (the run was probably "
            "interrupted); skipped"
        )
        problems = self.problems
        if problems and problems[-1].startswith(f"{self.path}:{last_number}:"):
            problems[-1] = note
        else:
            problems.append(note)


class _Columns:
    """The columns of a parse as they grow (flat buffers, lists, dicts), and the table
    they become."""

    __slots__ = (
        "categories", "checkpoints", "codes", "completed_at", "descriptions", "errors", "extensions",
        "failed_checks", "flags", "interners", "numbers", "session_id", "started_at", "verifier_tails",
    )  # fmt: skip

    def __init__(self) -> None:
        self.numbers = array("d")
        self.codes = array("q")
        self.flags = array("b")
        self.started_at: list[str] = []
        self.completed_at: list[str] = []
        self.session_id: list[str] = []
        self.errors: dict[int, tuple[str | None, str | None]] = {}
        self.failed_checks: dict[int, str] = {}
        self.verifier_tails: dict[int, str] = {}
        self.checkpoints: dict[tuple[int, int, str], list[int]] = {}
        self.descriptions: dict[str, str] = {}
        self.interners = {name: _Interner() for name in CATEGORICAL_COLUMNS}
        self.extensions = _Blocks()
        self.categories = _Blocks()

    def extras(self, n: int, r: Any, m: int, s: int) -> None:
        """What only some rows have (row ``n``, mode code ``m``, scenario code ``s``):
        an error, checks, extensions, tool categories."""
        if r.error is not None:
            self.errors[n] = (r.error, r.error_code)
        if r.checkpoint_details:
            failed = []
            checkpoints = self.checkpoints
            for check in r.checkpoint_details:
                cid = check.id
                counts = checkpoints.get((m, s, cid))
                if counts is None:
                    counts = checkpoints[(m, s, cid)] = [0, 0]
                    self.descriptions.setdefault(cid, check.description)
                counts[1] += 1
                if check.passed:
                    counts[0] += 1
                else:
                    failed.append(cid)
                    if cid.startswith("verify:") and check.actual is not None:
                        tail = str(check.actual).strip()[-VERIFIER_TAIL:]
                        self.verifier_tails[n] = (
                            f"{self.verifier_tails[n]}\n{tail}"
                            if n in self.verifier_tails
                            else tail
                        )
            if failed:
                self.failed_checks[n] = ";".join(failed)
        if r.extensions:
            self.extensions.add(n, r.extensions)
        if r.tool_calls.by_category:
            self.categories.add(n, r.tool_calls.by_category)

    def table(self, path: Path, n: int, notes: _Notes) -> RowTable:
        """The ``n`` rows as numpy columns."""
        matrix = np.frombuffer(self.numbers, dtype=np.float64).reshape(n, _WIDTH)
        code_matrix = np.frombuffer(self.codes, dtype=np.int64).reshape(
            n, len(CATEGORICAL_COLUMNS)
        )
        flag_matrix = (
            np.frombuffer(self.flags, dtype=np.int8).reshape(n, 2).astype(bool)
        )
        by_category = {
            key: np.asarray(col, dtype=np.float64)
            if isinstance(col, np.ndarray)
            else col
            for key, col in self.categories.columns(n, fill=0.0).items()
        }
        categorical = {
            name: Categorical(
                codes=np.ascontiguousarray(code_matrix[:, j]).astype(np.int32),
                values=self.interners[name].values,
            )
            for j, name in enumerate(CATEGORICAL_COLUMNS)
        }
        return RowTable(
            path=path,
            n=n,
            numeric={
                name: np.ascontiguousarray(matrix[:, j])
                for j, name in enumerate(CORE_COLUMNS)
            },
            categorical=categorical,
            success=np.ascontiguousarray(flag_matrix[:, 0]),
            output_valid=np.ascontiguousarray(flag_matrix[:, 1]),
            started_at=self.started_at,
            completed_at=self.completed_at,
            session_id=self.session_id,
            errors=self.errors,
            failed_checks=self.failed_checks,
            verifier_tails=self.verifier_tails,
            checkpoints=self.checkpoints,
            checkpoint_descriptions=self.descriptions,
            by_category={
                k: v for k, v in by_category.items() if isinstance(v, np.ndarray)
            },
            extensions=self.extensions.columns(n),
            problems=notes.problems,
            skipped=notes.skipped,
        )


def _parse(
    path: Path,
    lines: Iterable[bytes],
    first_number: int,
    sink: Callable[[bytes], None] | None,
    drop: frozenset[int] = frozenset(),
) -> RowTable:
    """Parse lines (numbered from ``first_number``) into a table; problems are listed, not raised.

    ``drop``: indices (among the accepted rows) of rows to leave out, e.g. superseded duplicates.
    """
    decode_struct = rowcodec.decode_struct
    cols, notes = _Columns(), _Notes(path)
    # The hot loop of a big report: what it touches on every row is a local name.
    numbers, codes, flags, extras = cols.numbers, cols.codes, cols.flags, cols.extras
    started_at, completed_at, session_id = (
        cols.started_at,
        cols.completed_at,
        cols.session_id,
    )
    run_c, mode_c, scen_c, model_c, prov_c, reason_c = (
        cols.interners[name].code for name in CATEGORICAL_COLUMNS
    )
    n, accepted, last_number, last_line = 0, -1, 0, b""
    try:
        for number, line in enumerate(lines, start=first_number):
            last_number, last_line = number, line
            if not line.strip():
                continue
            if b"\\u" in line:  # only an escape can make a NUL or half an emoji
                line = notes.clean(number, line)
            try:
                r = decode_struct(line)
            except rowcodec.DECODE_ERRORS as exc:
                notes.reject(number, line, exc)
                continue
            accepted += 1
            if drop and accepted in drop:
                continue
            # The decoder checked every type, sign and bound (2^53: what a float column holds
            # exactly), so nothing below can fail half-way through a row.
            tok, tc, cost = r.tokens, r.tool_calls, r.cost
            t_in, t_out, t_rea = tok.input, tok.output, tok.reasoning
            t_cr, t_cw = tok.cache_read, tok.cache_write
            t_tot, t_act = tok.total, tok.active
            if (
                t_tot is None or t_act is None
            ):  # derived as the model derives them (rows written by hand)
                t_tot, t_act = token_totals(
                    t_in, t_out, t_rea, t_cr, t_cw, t_tot, t_act
                )
            turns = r.agent_turns
            # In CORE_COLUMNS order; agent_turns null: no trace was kept, so the turns
            # are unknown (NaN), not 0.
            numbers.extend((
                r.iteration, t_in, t_out, t_rea, t_cr, t_cw, t_tot, t_act, r.timing.wall_ms,
                tc.total, tc.failed, tc.retried, tc.error_rate,
                cost.total_usd, cost.input_usd, cost.output_usd, cost.reasoning_usd,
                r.checkpoints_passed, r.checkpoints_total, math.nan if turns is None else turns, r.attempts,
                math.nan if r.reward is None else r.reward,
            ))  # fmt: skip
            m, s = mode_c(r.mode), scen_c(r.scenario_id)
            codes.extend(
                (
                    run_c(r.run_id),
                    m,
                    s,
                    model_c(r.model),
                    prov_c(r.provider),
                    reason_c(r.completion_reason),
                )
            )
            flags.append(r.success)
            flags.append(r.output_valid)
            started_at.append(r.started_at)
            completed_at.append(r.completed_at)
            session_id.append(r.session_id)
            extras(n, r, m, s)
            if sink is not None:
                sink(line.strip())
            n += 1
    except (OSError, EOFError) as exc:
        notes.unreadable(last_number + 1, exc)
    notes.check_tail(last_number, last_line)
    return cols.table(path, n, notes)


def can_fork() -> bool:
    """True where forking is safe enough here: Linux, and no other Python thread running."""
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and threading.active_count() == 1
    )


def _split_point(path: Path) -> int | None:
    """The offset just after the newline nearest past the middle of an uncompressed
    file, or None."""
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            return None
        size = f.seek(0, os.SEEK_END)
        f.seek(size // 2)
        block = f.read(1 << 20)
        cut = block.find(b"\n")
        if cut < 0 or size // 2 + cut + 1 >= size:
            return None
        return size // 2 + cut + 1


def run_stem(path: Path) -> str:
    """``results/run_1.jsonl(.gz)`` -> ``run_1``."""
    name = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name


def sibling(path: Path, suffix: str) -> Path:
    """The run's other file beside ``path``, e.g. ``.manifest.json`` or ``.analysis.jsonl``."""
    return path.with_name(run_stem(path) + suffix)


def peek_run_id(path: Path) -> str:
    """The run id of a results file without loading it: the first row's ``runId``, else
    the file name."""
    check_results_file(path)
    try:
        with open_binary(path) as f:
            for number, line in enumerate(f, start=1):
                if number > 100:
                    break
                if line.strip():
                    try:
                        run_id = orjson.loads(line).get("runId")
                    except _LINE_ERRORS:
                        continue
                    if isinstance(run_id, str) and run_id:
                        return run_id
    except (OSError, EOFError):
        pass
    return run_stem(path)
