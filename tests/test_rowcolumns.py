"""The row's flat columns are declared once (``storage/rowcolumns.py``) and every table
of rows reads them.

The declaration covers every scalar field of the model, its types are the
model's, and the dataset export's ``rows`` table, the viewer's index and the
report's numeric columns hold, for each row, the values the declared paths
read from the one row decoder. The viewer decodes only its projection of a
line, with the decoder's constraints: a line whose shown fields the decoder
refuses is skipped by the viewer as by the report.
"""

from __future__ import annotations

import json
import math
import tempfile
import typing
from pathlib import Path

import attrs
import msgspec
import pytest
from tests.fuzzing import dumps
from tests.test_report import all_rows

from profiler_core import to_json
from profiler_core.dataset.tables import SCHEMA, read_tables
from profiler_core.errors import ValidationError
from profiler_core.model import ProfileRow
from profiler_core.model.metrics import token_totals
from profiler_core.report.load import load_rows
from profiler_core.report.rowtable import CATEGORICAL_COLUMNS, CORE_COLUMNS
from profiler_core.storage import rowcodec
from profiler_core.storage.rowcolumns import (
    COLUMNS,
    ROW_COLUMNS,
    column,
    columns,
    projection,
)
from profiler_core.storage.runfiles import RunFiles
from profiler_core.viewer.index import _NUMBERS, _STRINGS, RowIndex

ROWS = [json.loads(to_json(r)) for r in all_rows()]
#: fields of a row no flat table holds: lists of records, and the per-category counts
NOT_FLAT = {
    "checkpoint_details",
    "tool_calls.by_category",
    "tool_calls.records",
    "timing.segments",
}


def scalar_paths(cls: type, prefix: str = "") -> set[str]:
    """The dotted paths of every field of ``cls`` that is not a nested record."""
    found: set[str] = set()
    for name, hint in typing.get_type_hints(cls).items():
        if name not in {a.name for a in attrs.fields(cls)}:
            continue
        if attrs.has(hint):
            found |= scalar_paths(hint, f"{prefix}{name}.")
        else:
            found.add(prefix + name)
    return found


def results_file(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def same(got, want) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return got == want


def test_every_scalar_field_of_a_row_is_one_declared_column():
    declared = [c.path for c in ROW_COLUMNS]
    assert len(declared) == len(set(declared))
    assert set(declared) == scalar_paths(ProfileRow) - NOT_FLAT


def test_a_column_is_typed_as_the_model_types_its_field():
    kinds = {c.name: c.kind for c in ROW_COLUMNS}
    assert kinds["reward"] == "float"  # float | None
    assert kinds["agent_turns"] == "int"  # int | None
    assert kinds["latency_wall_ms"] == "float"  # int | float
    assert kinds["completion_reason"] == "str"  # a Literal
    assert kinds["extensions"] == "json"
    assert kinds["success"] == "bool"


def test_a_path_or_name_that_is_not_the_rows_is_refused_when_declared():
    with pytest.raises(TypeError, match="'colour'"):
        column("colour", "colour")
    with pytest.raises(TypeError, match="is not a field of a record"):
        column("x", "reward.value")
    with pytest.raises(TypeError, match="not a column of a row: colour"):
        columns(["reward", "colour"])
    with pytest.raises(TypeError, match="has no field 'colour'"):
        projection("Bad", ["tokens.colour"])


def test_the_dataset_rows_table_holds_the_declared_values_of_each_row(tmp_path):
    path = results_file(tmp_path, ROWS)
    problems: list[str] = []
    table = read_tables(RunFiles(run_id="run", results=path), problems)["rows"]
    assert not problems
    names = [name for name, _ in SCHEMA["rows"]]
    assert names == [*[c.name for c in ROW_COLUMNS[:12]], "sub_rewards"] + [
        c.name for c in ROW_COLUMNS[12:]
    ]
    structs = [rowcodec.decode(dumps(r)) for r in ROWS]
    assert len(table["run_id"]) == len(structs) > 0
    for c in ROW_COLUMNS:
        want = [c.get(s) for s in structs]
        if c.kind == "json":
            assert [json.loads(v) for v in table[c.name]] == want, c.name
        else:
            assert table[c.name] == want, c.name


def test_the_reports_columns_hold_the_declared_values_of_each_row(tmp_path):
    table = load_rows(results_file(tmp_path, ROWS))
    structs = [rowcodec.decode(dumps(r)) for r in ROWS]
    models = [
        rowcodec.to_model(s) for s in structs
    ]  # tokens.total derived as the model does
    assert table.n == len(models)
    for name in CORE_COLUMNS:
        for i, row in enumerate(models):
            value = COLUMNS[name].get(row)
            want = math.nan if value is None else float(value)
            assert same(float(table.numeric[name][i]), want), (name, i)
    for name in CATEGORICAL_COLUMNS:
        assert table.categorical[name].labels() == [
            COLUMNS[name].get(s) for s in structs
        ]


def test_the_viewers_index_holds_the_declared_values_of_each_row(tmp_path):
    index = RowIndex(results_file(tmp_path, ROWS))
    assert not index.problems
    models = {r.cell: r for r in map(rowcodec.decode_row, map(dumps, ROWS))}
    assert index.n == len(models)
    for i in range(index.n):
        cell = tuple(
            index.values[name][int(getattr(index, name)[i])]
            for name in ("model", "mode", "scenario")
        ) + (int(index.iteration[i]),)
        row = models[cell]
        for name, source in _NUMBERS.items():
            if name == "cost":
                continue  # NaN when the cost is unknown: test_viewer_index
            value = COLUMNS[source].get(row)
            want = math.nan if value is None else float(value)
            assert same(float(getattr(index, name)[i]), want), (name, cell)
        assert index.values["reason"][int(index.reason[i])] == row.completion_reason
    assert set(_STRINGS.values()) <= set(COLUMNS)


def test_a_row_written_without_its_token_total_shows_the_models_total(tmp_path):
    row = {**ROWS[0], "tokens": {"input": 10, "output": 5, "cacheRead": 7}}
    index = RowIndex(results_file(tmp_path, [row, ROWS[1]]))
    assert index.tokens.tolist()[0] == token_totals(10, 5, 0, 7, 0)[0] == 22
    assert index.tokens.tolist()[1] == ROWS[1]["tokens"]["total"]


SHOWN = ["mode", "scenarioId", "model", "iteration", "success", "tokens", "timing"]


@pytest.mark.parametrize("field", SHOWN)
@pytest.mark.parametrize("bad", [None, "many", [], {}, True, -1.5, ""])
def test_a_line_whose_shown_fields_the_decoder_refuses_the_viewer_skips(field, bad):
    value = {**ROWS[1], field: bad}
    try:
        rowcodec.decode(dumps(value))
    except ValidationError:
        pass  # refused: the viewer must skip it too
    else:
        return  # a value the decoder takes (a float iteration is not one): nothing to compare
    with tempfile.TemporaryDirectory() as tmp:
        shown = RowIndex(results_file(Path(tmp), [ROWS[0], value]))
    assert shown.n == 1 and len(shown.problems) == 1, (field, bad)


def test_a_projection_decodes_only_its_paths_with_the_decoders_types():
    Brief = projection("Brief", ["tokens.total", "extensions.cost_source", "reward"])
    line = dumps({**ROWS[0], "extensions": {"cost_source": "table", "x": [1]}})
    brief = msgspec.json.decode(line, type=Brief)
    assert [f.name for f in msgspec.structs.fields(brief)] == [
        "extensions",
        "reward",
        "tokens",
    ]
    assert brief.extensions.cost_source == "table"
    with pytest.raises(msgspec.ValidationError, match=r"\$\.tokens\.total"):
        msgspec.json.decode(line.replace('"total": ', '"total": -'), type=Brief)
