"""The report's columnar reader agrees with the model's decoder (``serde.from_json(line, ProfileRow)``).

The report reads a million rows without building a ``ProfileRow`` per line
(bench/run_all.py: report_1m); these properties keep that fast reader honest:
every row the model accepts, the report accepts, with the same numbers and
labels; and a row whose fields the report reads are wrong for the model is
skipped by the report too.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from tests.fuzzing import FUZZ, dumps, mutated
from tests.test_report import all_rows

from profiler_core import to_json
from profiler_core.errors import ProfilerError
from profiler_core.model import ProfileRow
from profiler_core.report.load import load_rows
from profiler_core.serde import from_json

ROWS = [json.loads(to_json(r)) for r in all_rows()]
#: A good row of a cell no drawn row has, written first: a file of only rejected rows is an error of its own.
FIRST = dumps({**ROWS[0], "iteration": 10**6})

#: (report column, the model's value of the row)
COLUMNS = {
    "iteration": lambda r: r.iteration,
    "tokens_input": lambda r: r.tokens.input,
    "tokens_output": lambda r: r.tokens.output,
    "tokens_total": lambda r: r.tokens.total,
    "latency_wall_ms": lambda r: r.timing.wall_ms,
    "tool_calls_total": lambda r: r.tool_calls.total,
    "tool_calls_failed": lambda r: r.tool_calls.failed,
    "cost_total_usd": lambda r: r.cost.total_usd,
    "checkpoints_passed": lambda r: r.checkpoints_passed,
    "checkpoints_total": lambda r: r.checkpoints_total,
    "agent_turns": lambda r: math.nan if r.agent_turns is None else r.agent_turns,
    "attempts": lambda r: r.attempts,
}


def read_one(line: str):
    """The report's table of the row (after a good one) and why it skipped it, if it did."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.jsonl"
        path.write_text(FIRST + "\n" + line + "\n", encoding="utf-8", errors="surrogatepass")
        table = load_rows(path)
    return (table, "") if table.n == 2 else (None, "; ".join(table.problems))


def reportable(line: str) -> bool:
    """What the report refuses on purpose where the model's decoder takes it (docs/reliability.md):
    text with lone surrogates (the report's files could not be written) and numbers beyond 2^53
    (a float column cannot hold them exactly)."""
    try:
        value = json.loads(line)
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeError, ValueError, RecursionError):
        return False
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, bool):
            continue
        elif (isinstance(node, int) and abs(node) > 2**53) or (isinstance(node, float) and math.isfinite(node) and abs(node) > 2**53):
            return False
    return True


def model_row(line: str) -> ProfileRow | None:
    try:
        return from_json(line.encode("utf-8", errors="surrogatepass"), ProfileRow)
    except (ProfilerError, UnicodeError):
        return None


@FUZZ
@given(index=st.integers(0, len(ROWS) - 1), data=st.data())
def test_every_row_the_model_accepts_the_report_reads_with_the_same_values(index, data):
    value = data.draw(mutated(ROWS[index]))
    line = dumps(value)
    row = model_row(line)
    table, why = read_one(line)
    if row is None or not reportable(line):
        return  # the other direction is the next test's
    assert table is not None, f"the model accepts a row the report skips ({why})"
    for column, of_model in COLUMNS.items():
        got, want = table.numeric[column][1], float(of_model(row))
        assert (math.isnan(got) and math.isnan(want)) or got == want, column
    for column, want in (("mode", row.mode), ("scenario_id", row.scenario_id), ("model", row.model), ("run_id", row.run_id)):
        categorical = table.categorical[column]
        assert categorical.values[categorical.codes[1]] == want, column


READ_FIELDS = ["runId", "mode", "scenarioId", "model", "iteration", "success", "tokens", "cost", "checkpointsPassed"]


@FUZZ
@given(index=st.integers(0, len(ROWS) - 1), field=st.sampled_from(READ_FIELDS),
       bad=st.sampled_from([None, "many", [], {}, True, -1.5]))
def test_a_row_whose_read_fields_the_model_refuses_is_skipped_by_the_report(index, field, bad):
    value = dict(ROWS[index])
    value[field] = bad
    line = dumps(value)
    if model_row(line) is not None:
        return  # e.g. a float the model takes: nothing to compare
    assert read_one(line)[0] is None, f"the report read a row the model refuses ({field} = {bad!r})"
