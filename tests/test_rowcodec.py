"""The one row decoder (``rowcodec``) accepts what the model accepts, and the report
reads what it decodes.

``rowcodec`` generates msgspec structs from the attrs classes of a row; these
properties keep the two schemas one: on mutated rows the decoder and the
model's cattrs converter accept and refuse the same lines and build equal
rows; every row the decoder accepts, the report's columns hold with the same
numbers and labels; and a row whose fields are wrong for the model is skipped
by the report too. Its messages name the file, the key path and the value.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import attrs
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.fuzzing import FUZZ, dumps, mutated
from tests.test_report import all_rows

from profiler_core import to_json
from profiler_core.errors import ProfilerError, ValidationError
from profiler_core.model import ProfileRow
from profiler_core.report.load import load_rows
from profiler_core.storage import rowcodec
from profiler_core.storage.serde import from_json, structure
from profiler_core.storage.store import read_jsonl

ROWS = [json.loads(to_json(r)) for r in all_rows()]
#: A good row of a cell no drawn row has, written first: a file of only rejected rows is
#: an error of its own.
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
        path.write_text(
            FIRST + "\n" + line + "\n", encoding="utf-8", errors="surrogatepass"
        )
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
        elif (isinstance(node, int) and abs(node) > 2**53) or (
            isinstance(node, float) and math.isfinite(node) and abs(node) > 2**53
        ):
            return False
    return True


def model_row(line: str) -> ProfileRow | None:
    """The row as the one decoder reads it (what every reader of results uses), or None."""
    try:
        return from_json(line.encode("utf-8", errors="surrogatepass"), ProfileRow)
    except (ProfilerError, UnicodeError):
        return None


def cattrs_row(line: str) -> ProfileRow | str | None:
    """The row as the model's cattrs converter builds it from the stdlib's parse; "skip"
    when JSON text
    cannot hold it (NaN, lone surrogates, nesting deeper than a parser's recursion limit)."""
    try:
        value = json.loads(
            line, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name))
        )
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeError, RecursionError):
        return "skip"
    if "[" * 500 in line:
        return "skip"
    try:
        return structure(value, ProfileRow)
    except ProfilerError:
        return None


@FUZZ
@given(index=st.integers(0, len(ROWS) - 1), data=st.data())
def test_the_decoder_and_the_model_accept_the_same_rows_and_build_equal_ones(
    index, data
):
    line = dumps(data.draw(mutated(ROWS[index])))
    want = cattrs_row(line)
    if want == "skip":
        return
    try:
        got = rowcodec.decode_row(line)
    except ValidationError as exc:
        assert want is None, f"the decoder refuses a row the model accepts: {exc}"
        assert str(exc).startswith(("$", "not valid JSON")), str(exc)
        return
    assert want is not None, "the decoder accepts a row the model refuses"
    assert got == want


@pytest.mark.parametrize("index", range(0, len(ROWS), 7))
def test_every_sample_row_decodes_to_the_row_that_was_written(index):
    row = all_rows()[index]
    assert rowcodec.decode_row(to_json(row)) == row


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
    for column, want in (
        ("mode", row.mode),
        ("scenario_id", row.scenario_id),
        ("model", row.model),
        ("run_id", row.run_id),
    ):
        categorical = table.categorical[column]
        assert categorical.values[categorical.codes[1]] == want, column


READ_FIELDS = [
    "runId",
    "mode",
    "scenarioId",
    "model",
    "iteration",
    "success",
    "tokens",
    "cost",
    "checkpointsPassed",
]


@FUZZ
@given(
    index=st.integers(0, len(ROWS) - 1),
    field=st.sampled_from(READ_FIELDS),
    bad=st.sampled_from([None, "many", [], {}, True, -1.5]),
)
def test_a_row_whose_read_fields_the_model_refuses_is_skipped_by_the_report(
    index, field, bad
):
    value = dict(ROWS[index])
    value[field] = bad
    line = dumps(value)
    if model_row(line) is not None:
        return  # e.g. a float the model takes: nothing to compare
    assert read_one(line)[0] is None, (
        f"the report read a row the model refuses ({field} = {bad!r})"
    )


GOOD = dumps(ROWS[0])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            GOOD.replace('"iteration": 0', '"iteration": true'),
            "f.jsonl:3: $.iteration: expected int, got bool True",
        ),
        (
            GOOD.replace('"input": 1000', '"input": -5'),
            "f.jsonl:3: $.tokens.input: expected a value >= 0, got -5",
        ),
        (
            GOOD.replace('"mode": "base"', '"mode": ""'),
            "f.jsonl:3: $.mode: expected a non-empty string, got ''",
        ),
        (GOOD[:-1] + ', "colour": 1}', "f.jsonl:3: $: unknown field(s): colour"),
        (
            dumps({k: v for k, v in ROWS[0].items() if k != "sessionId"}),
            "f.jsonl:3: $.sessionId: required field missing",
        ),
        (
            GOOD.replace('"completionReason": "stop"', '"completionReason": "done"'),
            "f.jsonl:3: $.completionReason: expected one of 'stop', 'timeout', "
            "'error', 'tool_limit'",
        ),
        (
            GOOD.replace('"wallMs": 1000', '"wallMs": 9007199254740993'),
            "f.jsonl:3: $.timing.wallMs: expected a value <= 2^53",
        ),
        (
            GOOD.replace('"file": 2', '"file": 10e400'),
            "f.jsonl:3: $.toolCalls.byCategory['file']: expected int, got float inf",
        ),
        (GOOD[:40], "f.jsonl:3: not valid JSON (Unterminated string at line 1 column"),
        (
            GOOD.replace('"model": "', '"model": "\\ud800'),
            "f.jsonl:3: a string holds a lone surrogate (\\ud800-\\udfff), not text",
        ),
        (
            GOOD.replace('"cost": {', '"cost": {"x": NaN, '),
            "f.jsonl:3: not valid JSON (NaN is not a JSON number)",
        ),
        (
            GOOD.replace(
                '"extensions": {',
                '"extensions": {"deep": ' + "[" * 3000 + "]" * 3000 + ", ",
            ),
            "f.jsonl:3: not valid JSON",
        ),
        ("[1, 2]", "f.jsonl:3: $: expected an object, got list [1, 2]"),
        # found in review: a number no float formats, keys that are not plain text, a BOM,
        # a key written twice whose first copy is wrong, a number beyond a float in a mapping
        (
            GOOD.replace('"wallMs": 1000', '"wallMs": ' + "9" * 400),
            "f.jsonl:3: $.timing.wallMs: expected a value <= 2^53, got a number of 400 digits",
        ),
        (
            GOOD[:-1] + ', "col\\nour": 1}',
            "f.jsonl:3: $: unknown field(s): 'col\\nour'",
        ),
        (GOOD[:-1] + ', "\\ud800": 1}', "f.jsonl:3: $: unknown field(s): '\\ud800'"),
        (
            GOOD[:-1] + ', "' + "k" * 5000 + '": 1}',
            "f.jsonl:3: $: unknown field(s): '" + "k" * 80 + "'…(5000 chars)",
        ),
        ("\ufeff" + GOOD, "f.jsonl:3: not valid JSON (starts with a byte order mark)"),
        (
            GOOD.replace('"input": 1000', '"input": -1, "input": 1000'),
            "f.jsonl:3: an object has the key 'input' twice",
        ),
        (
            GOOD.replace('"extensions": {', '"extensions": {"a b": 1e400, '),
            "f.jsonl:3: $.extensions['a b']: number out of range (beyond what a float holds)",
        ),
        (
            GOOD.replace('"extensions": {', '"extensions": {"x": [1, 1e400], '),
            "f.jsonl:3: $.extensions.x[1]: number out of range (beyond what a float holds)",
        ),
    ],
)
def test_a_refused_line_gets_one_line_naming_file_key_and_value(line, message):
    with pytest.raises(ValidationError) as info:
        rowcodec.decode_row(line, source="f.jsonl:3")
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_a_refused_line_of_bytes_says_what_is_wrong_with_its_encoding():
    with pytest.raises(
        ValidationError,
        match=r"^f:1: not valid JSON \(starts with a byte order mark\)$",
    ):
        rowcodec.decode_row(b"\xef\xbb\xbf" + GOOD.encode(), source="f:1")
    with pytest.raises(
        ValidationError,
        match=r"^f:1: not valid JSON \('utf-8' codec can't decode byte 0xff in "
        r"position 67: invalid start byte\)$",
    ):
        rowcodec.decode_row(
            GOOD.replace('"m1"', '"m1\xff"').encode("latin-1"), source="f:1"
        )
    # A str line holding a raw lone surrogate (no file gives one; a caller might):
    # refused, not a crash.
    with pytest.raises(ValidationError, match=r"^f:1: a string holds a lone surrogate"):
        rowcodec.decode_row(GOOD.replace('"m1"', '"m1\ud800"'), source="f:1")


def test_a_key_written_twice_with_two_good_values_keeps_the_last_like_every_json_reader():
    line = GOOD.replace('"input": 1000', '"input": 7, "input": 1000')
    assert (
        rowcodec.decode_row(line).tokens.input
        == 1000
        == from_json(line, ProfileRow).tokens.input
    )


def test_every_reader_of_results_uses_the_one_decoder(tmp_path):
    bad = GOOD.replace('"input": 1000', '"input": -5')
    path = tmp_path / "run.jsonl"
    path.write_text(GOOD + "\n" + bad + "\n", encoding="utf-8")
    read = read_jsonl(path)
    table = load_rows(path)
    expected = f"{path}:2: $.tokens.input: expected a value >= 0, got -5"
    assert [len(read.rows), read.problems] == [1, [expected]]
    assert [table.n, table.problems] == [1, [expected]]


def test_an_integer_no_float_holds_in_extensions_is_kept_not_fatal(tmp_path):
    value = {**ROWS[0], "extensions": {"huge": 10**400, "small": 3}}
    path = tmp_path / "run.jsonl"
    path.write_text(dumps(value) + "\n", encoding="utf-8")
    table = load_rows(path)
    assert table.n == 1 and table.extensions["huge"] == [10**400]
    assert table.extensions["small"].tolist() == [3.0]


def test_a_row_class_with_a_validator_the_decoder_cannot_check_is_refused_when_generated():
    def odd(instance, attribute, value):
        """A rule msgspec has no constraint for."""

    @attrs.frozen
    class Odd:
        n: int = attrs.field(validator=odd)

    with pytest.raises(
        TypeError, match=r"Odd\.n: validator .* has no msgspec constraint"
    ):
        rowcodec.struct_for(Odd)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (attrs.field(converter=abs), r"Odd\.n: converter .* is not supported"),
        (
            attrs.field(default=attrs.Factory(lambda self: 1, takes_self=True)),
            r"Odd\.n: a default factory that takes self",
        ),
    ],
)
def test_a_row_class_the_decoder_would_read_differently_from_the_model_is_refused(
    field, message
):
    Odd = attrs.make_class("Odd", {"n": field}, frozen=True)
    Odd.__annotations__ = {"n": int}
    with pytest.raises(TypeError, match=message):
        rowcodec.struct_for(Odd)


def test_a_constraint_on_a_type_msgspec_cannot_constrain_is_refused_not_dropped():
    from profiler_core.model._validators import non_empty

    @attrs.frozen
    class Listed:
        items: tuple[str, ...] = attrs.field(validator=non_empty)

    with pytest.raises(TypeError, match="a constraint on .* is not supported"):
        rowcodec.struct_for(Listed)


def test_a_private_attribute_is_built_through_its_init_name():
    @attrs.frozen
    class Private:
        _secret: int = 0

    written = to_json(Private(secret=4))  # the model's own key for it
    struct = msgspec.json.decode(written, type=rowcodec.struct_for(Private))
    assert rowcodec._builder(Private)(struct) == Private(secret=4)
