"""Columnar loading of results JSONL: each line decoded by the model's own decoder, numbers into arrays.

Each line is parsed by orjson and structured into a ``ProfileRow`` by the one
converter (``serde``), so the report accepts exactly the rows the model
accepts and says why it rejects one in the model's words (``file:line:
$.tokens.input: expected int``). The row's numbers are then appended to flat
``array`` buffers that become numpy columns at the end. A rejected line is
skipped and reported. The tool-call records and timing segments of a row are
not read by any report, and are most of the cost of structuring a row: they
are dropped before it (``bench/run_all.py``: report_10k, report_1m).
"""

from __future__ import annotations

import gzip
import math
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

import attrs
import numpy as np
import orjson

from ..errors import ProfilerError, StoreError
from ..model import ProfileRow
from ..serde import converter, structure

#: The JSON parser of rows (``bench/bench_report.py --parser json`` swaps in the stdlib's).
_loads: Callable[[bytes], Any] = orjson.loads
_DECODE_ERRORS: tuple[type[BaseException], ...] = (ValueError, orjson.JSONDecodeError)

#: Numeric columns read from every row, in CSV order. Names follow the metric
#: names of DESIGN §8 where one exists.
CORE_COLUMNS: tuple[str, ...] = (
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
)
_WIDTH = len(CORE_COLUMNS)

#: Categorical string columns, stored as integer codes into a list of values.
CATEGORICAL_COLUMNS: tuple[str, ...] = ("run_id", "mode", "scenario_id", "model", "provider", "completion_reason")

#: Most problems spelled out one by one; the rest are counted.
MAX_LISTED_PROBLEMS = 20

#: Read buffer: the default 8 KB costs a system call per 3 lines (slow in VMs).
BUFFER = 1 << 20


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
        block = self.blocks.get(keys)
        if block is None:
            block = self.blocks[keys] = (array("q"), array("d"))
        values = data.values()
        try:
            staged = array("d", values)
        except TypeError:
            staged = array("d")
            for key, value in zip(keys, values, strict=True):
                if type(value) is int or type(value) is float:
                    staged.append(value)
                else:
                    staged.append(math.nan)
                    self.objects.setdefault(key, {})[row] = value
        block[0].append(row)
        block[1].extend(staged)

    def columns(self, n: int, *, fill: float = math.nan) -> dict[str, np.ndarray | list]:
        """Dense columns of length ``n``: floats (``fill`` where absent) or, if any value is not a number, objects."""
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
            column: list = [None if math.isnan(v) else (int(v) if v.is_integer() else v) for v in dense.tolist()]
            for i, value in objects.items():
                column[i] = value
            out[key] = column
        return out


def _open_binary(path: Path) -> IO[bytes]:
    """Open a results file, gunzipping when it starts with the gzip magic bytes."""
    f = open(path, "rb", buffering=BUFFER)  # noqa: SIM115 - returned to the caller, who closes it
    magic = f.read(2)
    f.seek(0)
    if magic == b"\x1f\x8b":
        return gzip.open(f, "rb")  # type: ignore[return-value]
    return f


def check_results_file(path: Path) -> None:
    """Raise StoreError (one line) when ``path`` is missing, a folder, or empty."""
    if not path.exists():
        raise StoreError(f"{path}: results file not found")
    if path.is_dir():
        raise StoreError(f"{path}: expected a results .jsonl file, got a folder")
    if path.stat().st_size == 0:
        raise StoreError(f"{path}: results file is empty (no rows)")


def _why(line: bytes, source: str, parsed: Any) -> str:
    """Why a line was rejected, in the model's words (``serde``'s detailed re-run)."""
    from ..serde import from_json

    try:
        if parsed is None:
            from_json(line, ProfileRow, source=source)
        else:
            structure(parsed, ProfileRow, source=source)
    except ProfilerError as exc:
        message = str(exc)
    else:  # accepted on the second reading (e.g. a NaN only the stdlib parser reads)
        message = f"{source}: not a results row"
    return message if len(message) <= 400 else message[:397] + "..."


def load_rows(path: Path, *, sink: Callable[[bytes], None] | None = None) -> RowTable:
    """Read a (possibly gzipped) results JSONL into columns; bad lines are skipped and reported.

    :param sink: called with each accepted line (stripped), in file order, e.g.
        to copy rows into ``results.json`` without parsing them twice.
    """
    check_results_file(path)
    try:
        f = _open_binary(path)
    except OSError as exc:
        raise StoreError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with f:
        table = _parse(path, f, 1, sink)
    return _finish(table)


def _finish(table: RowTable) -> RowTable:
    """Cap the listed problems, count the rest, and refuse a file without one valid row."""
    path = table.path
    notes = [p for p in table.problems if "truncated last line" in p or "cannot read further" in p]
    lines = [p for p in table.problems if p not in notes][:MAX_LISTED_PROBLEMS]
    unlisted = table.skipped - len(lines) - len(notes)
    problems = lines + notes
    if unlisted > 0:
        problems.append(f"{path}: {unlisted} more malformed line(s) skipped")
    table.problems = problems
    if table.n == 0:
        detail = f" ({table.skipped} malformed line(s); first: {problems[0]})" if problems else ""
        raise StoreError(f"{path}: no valid rows{detail}")
    return table


def _parse(path: Path, lines: Iterable[bytes], first_number: int, sink: Callable[[bytes], None] | None) -> RowTable:
    """Parse lines (numbered from ``first_number``) into a table; problems are listed, not raised."""
    loads = _loads
    numbers = array("d")
    codes = array("q")
    flags = array("b")
    started_at: list[str] = []
    completed_at: list[str] = []
    session_id: list[str] = []
    errors: dict[int, tuple[str | None, str | None]] = {}
    failed_checks: dict[int, str] = {}
    checkpoints: dict[tuple[int, int, str], list[int]] = {}
    descriptions: dict[str, str] = {}
    interners = {name: _Interner() for name in CATEGORICAL_COLUMNS}
    run_c, mode_c, scen_c, model_c, prov_c, reason_c = (interners[name].code for name in CATEGORICAL_COLUMNS)
    extensions = _Blocks()
    categories = _Blocks()
    problems: list[str] = []
    skipped = 0
    n = 0
    last_number = 0
    last_rejected = 0
    last_line = b""
    structure_row = converter.get_structure_hook(ProfileRow)
    try:
        for number, line in enumerate(lines, start=first_number):
            last_number, last_line = number, line
            if not line.strip():
                continue
            d = None
            try:
                d = loads(line)
                tool_calls, timing = d.get("toolCalls"), d.get("timing")
                if type(tool_calls) is dict and type(timing) is dict:
                    tool_calls.pop("records", None)
                    timing.pop("segments", None)
                row = structure_row(d, ProfileRow)
            except Exception:  # noqa: BLE001 - decode and structuring errors of every kind
                skipped += 1
                last_rejected = number
                if len(problems) < MAX_LISTED_PROBLEMS + 1:
                    problems.append(_why(line, f"{path}:{number}", d))
                continue
            tok, cost, tc = row.tokens, row.cost, row.tool_calls
            numbers.extend(
                array(
                    "d",
                    (
                        row.iteration,
                        tok.input,
                        tok.output,
                        tok.reasoning,
                        tok.cache_read,
                        tok.cache_write,
                        tok.total,
                        tok.active,
                        row.timing.wall_ms,
                        tc.total,
                        tc.failed,
                        tc.retried,
                        tc.error_rate,
                        cost.total_usd,
                        cost.input_usd,
                        cost.output_usd,
                        cost.reasoning_usd,
                        row.checkpoints_passed,
                        row.checkpoints_total,
                        row.agent_turns,
                        row.attempts,
                    ),
                )
            )
            m = mode_c(row.mode)
            s = scen_c(row.scenario_id)
            codes.extend(
                array(
                    "q",
                    (run_c(row.run_id), m, s, model_c(row.model), prov_c(row.provider), reason_c(row.completion_reason)),
                )
            )
            flags.append(row.success)
            flags.append(row.output_valid)
            started_at.append(row.started_at)
            completed_at.append(row.completed_at)
            session_id.append(row.session_id)
            if row.error is not None:
                errors[n] = (row.error, row.error_code)
            if row.checkpoint_details:
                failed = []
                for check in row.checkpoint_details:
                    key = (m, s, check.id)
                    counts = checkpoints.get(key)
                    if counts is None:
                        counts = checkpoints[key] = [0, 0]
                        descriptions.setdefault(check.id, check.description)
                    counts[1] += 1
                    if check.passed:
                        counts[0] += 1
                    else:
                        failed.append(check.id)
                if failed:
                    failed_checks[n] = ";".join(failed)
            if row.extensions:
                extensions.add(n, row.extensions)
            if tc.by_category:
                categories.add(n, tc.by_category)
            if sink is not None:
                sink(line.strip())
            n += 1
    except (OSError, EOFError) as exc:
        # A truncated gzip stream or a read error: keep what was read, say where it stopped.
        skipped += 1
        problems.append(f"{path}:{last_number + 1}: cannot read further ({exc}); the rows before it are used")
    if last_rejected and last_rejected == last_number and not last_line.endswith(b"\n"):
        note = f"{path}:{last_number}: truncated last line (the run was probably interrupted); skipped"
        if problems and problems[-1].startswith(f"{path}:{last_number}:"):
            problems[-1] = note
        else:
            problems.append(note)
    matrix = np.frombuffer(numbers, dtype=np.float64).reshape(n, _WIDTH)
    numeric = {name: np.ascontiguousarray(matrix[:, j]) for j, name in enumerate(CORE_COLUMNS)}
    code_matrix = np.frombuffer(codes, dtype=np.int64).reshape(n, len(CATEGORICAL_COLUMNS))
    categorical = {
        name: Categorical(
            codes=np.ascontiguousarray(code_matrix[:, j]).astype(np.int32),
            values=interners[name].values,
        )
        for j, name in enumerate(CATEGORICAL_COLUMNS)
    }
    flag_matrix = np.frombuffer(flags, dtype=np.int8).reshape(n, 2).astype(bool)
    by_category = {
        key: np.asarray(col, dtype=np.float64) if isinstance(col, np.ndarray) else col
        for key, col in categories.columns(n, fill=0.0).items()
    }
    return RowTable(
        path=path,
        n=n,
        numeric=numeric,
        categorical=categorical,
        success=np.ascontiguousarray(flag_matrix[:, 0]),
        output_valid=np.ascontiguousarray(flag_matrix[:, 1]),
        started_at=started_at,
        completed_at=completed_at,
        session_id=session_id,
        errors=errors,
        failed_checks=failed_checks,
        checkpoints=checkpoints,
        checkpoint_descriptions=descriptions,
        by_category={k: v for k, v in by_category.items() if isinstance(v, np.ndarray)},
        extensions=extensions.columns(n),
        problems=problems,
        skipped=skipped,
    )


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
    """The run id of a results file without loading it: the first row's ``runId``, else the file name."""
    check_results_file(path)
    try:
        with _open_binary(path) as f:
            for number, line in enumerate(f, start=1):
                if number > 100:
                    break
                if line.strip():
                    try:
                        run_id = _loads(line).get("runId")
                    except (*_DECODE_ERRORS, AttributeError):
                        continue
                    if isinstance(run_id, str) and run_id:
                        return run_id
    except (OSError, EOFError):
        pass
    return run_stem(path)


def load_analysis(path: Path) -> tuple[list[dict], list[str]]:
    """Read ``<run>.analysis.jsonl`` bundles as plain dicts; malformed lines are reported and skipped."""
    bundles: list[dict] = []
    problems: list[str] = []
    if not path.exists():
        return bundles, problems
    try:
        f = _open_binary(path)
    except OSError as exc:
        return bundles, [f"{path}: cannot read ({exc})"]
    with f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                b = _loads(line)
                if not (
                    isinstance(b.get("mode"), str)
                    and isinstance(b.get("scenarioId"), str)
                    and isinstance(b.get("results"), dict)
                ):
                    raise TypeError("expected an analysis bundle with mode, scenarioId and results")
            except (*_DECODE_ERRORS, TypeError, AttributeError) as exc:
                problems.append(f"{path}:{number}: skipped ({exc})")
                continue
            bundles.append(b)
    return bundles, problems
