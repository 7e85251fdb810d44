"""A run as five normalised tables: rows, tool_calls, checkpoints, turns, findings.

Every table carries the run id and the cell (model, mode, scenario_id,
iteration), so several runs can live in one database and be joined. The
tables are produced in chunks while the run's files are streamed — the trace
store, then the rows, then the analysis file — so exporting a long run holds one
chunk in memory, not the run. A cell recorded twice (a resumed run) counts once,
from its last line, as in the report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from ..model import (
    ListFinding,
    NumberFinding,
    ProfileRow,
    RatioFinding,
    ReasoningEvent,
    SessionAnalysisBundle,
    StringFinding,
    TableFinding,
    TextOutputEvent,
    ToolCallEvent,
)
from ..storage.lines import scan_lines
from ..storage.rowcolumns import ROW_COLUMNS, Column, columns
from ..storage.runfiles import RunFiles
from ..storage.serde import from_json

#: Column types: "str", "int", "float", "bool" (every column may hold nulls).
#: The cell every table carries: the row's own columns (storage/rowcolumns.py).
CELL: tuple[tuple[str, str], ...] = tuple(
    (c.name, c.kind)
    for c in columns(("run_id", "model", "mode", "scenario_id", "iteration"))
)


def _sub_rewards(row: ProfileRow) -> str | None:
    """The verifiers' named sub-rewards (``reward_<name>`` metrics) as a JSON object;
    null when none."""
    named = {
        k.removeprefix("reward_"): _nulled(v)
        for k, v in row.extensions.items()
        if k.startswith("reward_") and isinstance(v, (int, float))
    }
    return json.dumps(named, ensure_ascii=False) if named else None


def _cell_value(column: Column) -> Callable[[ProfileRow], Any]:
    """How the rows table writes a declared column: floats as floats, mappings as JSON text."""
    get = column.get
    if column.kind == "float":
        return lambda row: None if (v := get(row)) is None else float(v)
    if column.kind == "json":
        return lambda row: json.dumps(
            _nulled(get(row)), ensure_ascii=False, default=str
        )
    return get


#: The rows table: the row's declared columns (storage/rowcolumns.py), the named
#: sub-rewards (drawn from the extensions) after the reward.
_ROW_TABLE: tuple[tuple[str, str, Callable[[ProfileRow], Any]], ...] = tuple(
    entry
    for c in ROW_COLUMNS
    for entry in (
        (c.name, "str" if c.kind == "json" else c.kind, _cell_value(c)),
        *((("sub_rewards", "str", _sub_rewards),) if c.name == "reward" else ()),
    )
)

SCHEMA: dict[str, tuple[tuple[str, str], ...]] = {
    "rows": tuple((name, kind) for name, kind, _ in _ROW_TABLE),
    "tool_calls": CELL + (
        ("call_index", "int"), ("name", "str"), ("category", "str"), ("success", "bool"), ("duration_ms", "float"),
        ("turn", "int"), ("error", "str"),
    ),
    "checkpoints": CELL + (
        ("checkpoint_id", "str"), ("description", "str"), ("passed", "bool"), ("actual", "str"), ("expected", "str"), ("error", "str"),
    ),
    "turns": CELL + (
        ("turn", "int"), ("start_timestamp", "str"), ("end_timestamp", "str"), ("duration_ms", "float"), ("events", "int"),
        ("tool_calls", "int"), ("failed_tool_calls", "int"), ("reasoning_tokens", "int"), ("output_tokens", "int"),
        ("tokens_estimated", "bool"), ("tokens_total", "int"),
    ),
    "findings": CELL + (
        ("analyzer", "str"), ("finding", "str"), ("type", "str"), ("number", "float"), ("text", "str"), ("unit", "str"),
        ("label", "str"), ("summary", "str"),
    ),
}  # fmt: skip

TABLES = tuple(SCHEMA)

#: Rows of a table per chunk.
CHUNK = 20_000

Cell = tuple[str, str, str, int]
Chunk = dict[str, list[Any]]


class _Key(msgspec.Struct, rename="camel"):
    scenario_id: str
    mode: str
    iteration: int
    model: str = ""


def _json(value: Any) -> str | None:
    """A JSON value as text (None stays null)."""
    if value is None:
        return None
    return (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, default=str)
    )


class _Builder:
    """Collects one table's records and hands them out as column chunks."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.columns = [c for c, _ in SCHEMA[name]]
        self.records: list[tuple[Any, ...]] = []

    def add(self, *values: Any) -> None:
        self.records.append(values)

    def full(self) -> bool:
        return len(self.records) >= CHUNK

    def take(self) -> Chunk:
        chunk = {c: [r[i] for r in self.records] for i, c in enumerate(self.columns)}
        self.records = []
        return chunk


def _last_lines(path: Path) -> set[int]:
    """Line numbers (1-based) of the last line of each cell; lines that name no cell are
    kept too."""
    decoder = msgspec.json.Decoder(_Key)
    last: dict[Cell, int] = {}
    keep: set[int] = set()
    for number, (_offset, line) in enumerate(scan_lines(path), start=1):
        try:
            key = decoder.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            keep.add(number)  # the decoder of the pass that reads it reports it
            continue
        last[(key.model, key.mode, key.scenario_id, key.iteration)] = number
    return keep | set(last.values())


def _latest(path: Path, cls: type, problems: list[str]) -> Iterator[Any]:
    """The last record of each cell of a JSONL file, in file order, one at a time."""
    wanted = _last_lines(path)
    for number, (_offset, line) in enumerate(scan_lines(path), start=1):
        if number not in wanted:
            continue
        try:
            yield from_json(line, cls, source=f"{path}:{number}")
        except Exception as exc:  # noqa: BLE001 - a bad line costs that line, reported
            problems.append(str(exc))


def iter_chunks(
    files: RunFiles, problems: list[str] | None = None
) -> Iterator[tuple[str, Chunk]]:
    """(table name, columns) chunks of a run's five tables; unreadable lines go to ``problems``."""
    problems = problems if problems is not None else []
    builders = {name: _Builder(name) for name in TABLES}
    call_turns: dict[Cell, list[int]] = {}
    if files.traces is not None and files.traces.is_file():
        yield from _trace_tables(files, builders, call_turns, problems)
    for row in _latest(files.results, ProfileRow, problems):
        _add_row(builders, row, call_turns.get(row.cell))
        for name in ("rows", "tool_calls", "checkpoints"):
            if builders[name].full():
                yield name, builders[name].take()
    if files.analysis is not None:
        for bundle in _latest(files.analysis, SessionAnalysisBundle, problems):
            _add_findings(builders["findings"], files.run_id, bundle)
            if builders["findings"].full():
                yield "findings", builders["findings"].take()
    for name, builder in builders.items():
        if builder.records:
            yield name, builder.take()


def _trace_tables(
    files: RunFiles,
    builders: dict[str, _Builder],
    call_turns: dict[Cell, list[int]],
    problems: list[str],
) -> Iterator[tuple[str, Chunk]]:
    """The turns table from the trace store, and the turn of each tool call (for the
    tool_calls table)."""
    from ..storage.tracestore import iter_latest
    from ..viewer.timeline import turns_of

    assert files.traces is not None
    turns = builders["turns"]
    for record, _ in iter_latest(files.traces, problems):
        cell = (
            files.run_id,
            record.model,
            record.mode,
            record.scenario_id,
            record.iteration,
        )
        numbers: list[int] = []
        for turn in turns_of(record.trace):
            calls = [ev for ev in turn.events if isinstance(ev, ToolCallEvent)]
            numbers += [turn.number] * len(calls)
            turns.add(*cell, turn.number, turn.start, turn.end, turn.duration_ms, len(turn.events), len(calls),
                      sum(1 for ev in calls if not ev.success),
                      sum(ev.token_count for ev in turn.events if isinstance(ev, ReasoningEvent)),
                      sum(ev.token_count for ev in turn.events if isinstance(ev, TextOutputEvent)),
                      # the events' counts are estimates; a trace with per-call figures
                      # gives the turn's exact total
                      turn.exact_tokens is None, turn.exact_tokens)  # fmt: skip
        call_turns[record.key] = numbers
        if turns.full():
            yield "turns", turns.take()


def _add_row(
    builders: dict[str, _Builder], row: ProfileRow, call_turns: list[int] | None
) -> None:
    cell = (row.run_id, row.model, row.mode, row.scenario_id, row.iteration)
    calls = row.tool_calls
    builders["rows"].add(*(value(row) for _, _, value in _ROW_TABLE))
    # A trace's tool calls are the row's records in order: they give each call its turn.
    turns = (
        call_turns
        if call_turns is not None and len(call_turns) == len(calls.records)
        else None
    )
    for i, r in enumerate(calls.records):
        builders["tool_calls"].add(*cell, i, r.name, r.category, r.success, None if r.duration_ms is None else float(r.duration_ms),
                                   turns[i] if turns else None, r.error)  # fmt: skip
    for check in row.checkpoint_details:
        builders["checkpoints"].add(
            *cell,
            check.id,
            check.description,
            check.passed,
            _json(check.actual),
            _json(check.expected),
            check.error,
        )


def _nulled(value: Any) -> Any:
    """Non-finite numbers as null (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _nulled(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_nulled(v) for v in value]
    return value


#: How each finding type fills (type, number, text, unit, label).
_FINDING: dict[
    type, Callable[[Any], tuple[str, float | None, str | None, str | None, str | None]]
] = {
    NumberFinding: lambda f: ("number", float(f.value), None, f.unit, None),
    RatioFinding: lambda f: ("ratio", float(f.value), None, None, f.label),
    StringFinding: lambda f: ("string", None, f.value, None, None),
    ListFinding: lambda f: (
        "list",
        None,
        json.dumps(list(f.values), ensure_ascii=False),
        None,
        None,
    ),
    TableFinding: lambda f: (
        "table",
        None,
        json.dumps(
            {"headers": list(f.headers), "rows": [list(r) for r in f.rows]},
            ensure_ascii=False,
        ),
        None,
        None,
    ),
}


def _add_findings(
    builder: _Builder, run_id: str, bundle: SessionAnalysisBundle
) -> None:
    cell = (run_id, bundle.model, bundle.mode, bundle.scenario_id, bundle.iteration)
    for analyzer, result in bundle.results.items():
        for name, finding in result.findings.items():
            builder.add(
                *cell,
                analyzer,
                name,
                *_FINDING[type(finding)](finding),
                result.summary or None,
            )


class _RunId(msgspec.Struct, rename="camel"):
    run_id: str = ""


def run_ids(files: RunFiles) -> set[str]:
    """The run ids the export of ``files`` writes: its rows' (one, unless results were
    merged) and the run's own."""
    decoder = msgspec.json.Decoder(_RunId)
    found = {files.run_id}
    for _offset, line in scan_lines(files.results):
        try:
            found.add(decoder.decode(line).run_id or files.run_id)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
    return found


def read_tables(files: RunFiles, problems: list[str] | None = None) -> dict[str, Chunk]:
    """All five tables of a run as whole column lists (what ``load_run`` turns into data frames)."""
    tables: dict[str, Chunk] = {
        name: {c: [] for c, _ in SCHEMA[name]} for name in TABLES
    }
    for name, chunk in iter_chunks(files, problems):
        for column, values in chunk.items():
            tables[name][column].extend(values)
    return tables


__all__ = ["CHUNK", "SCHEMA", "TABLES", "iter_chunks", "read_tables", "run_ids"]
