"""Checkpoint conditions: parsing from JSON, dot paths, and every condition type."""

from __future__ import annotations

import pytest

from profiler_core.errors import ProfilerError, ValidationError
from profiler_core.scorers.conditions import (
    CONDITION_TAGS,
    Condition,
    ConditionOutcome,
    CountEq,
    CountGte,
    Custom,
    Empty,
    FieldContains,
    FieldEquals,
    FieldGte,
    Matches,
    NonEmpty,
    PathError,
    describe_condition,
    evaluate_condition,
    evaluate_condition_async,
    parse_condition,
    resolve_path,
)
from profiler_core.storage.serde import converter, structure

DATA = {
    "items": [
        {"state": "open", "title": "Fix login", "labels": ["bug", "p1"], "comments": 3},
        {"state": "closed", "title": "Docs", "labels": [], "comments": 0},
    ],
    "total": 2,
    "draft": False,
    "note": None,
    "length": "a key called length",
}


# --- parsing -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"type": "non_empty"}, NonEmpty()),
        ({"type": "empty", "path": "items.1.labels"}, Empty(path="items.1.labels")),
        (
            {"type": "count_gte", "path": "items", "value": 2},
            CountGte(path="items", value=2),
        ),
        ({"type": "count_eq", "value": 0}, CountEq(value=0)),
        (
            {"type": "field_equals", "path": "items.0.state", "value": "open"},
            FieldEquals(path="items.0.state", value="open"),
        ),
        (
            {"type": "field_equals", "path": "note", "value": None},
            FieldEquals(path="note", value=None),
        ),
        (
            {"type": "field_contains", "path": "items.0.title", "value": "login"},
            FieldContains(path="items.0.title", value="login"),
        ),
        (
            {"type": "field_gte", "path": "total", "value": 1.5},
            FieldGte(path="total", value=1.5),
        ),
        (
            {"type": "matches", "path": "", "pattern": "^Done:"},
            Matches(pattern="^Done:"),
        ),
        (
            {"type": "matches", "pattern": "done", "ignoreCase": True},
            Matches(pattern="done", ignore_case=True),
        ),
        ({"type": "custom", "scorer": "labels-ok"}, Custom(scorer="labels-ok")),
        (
            {
                "type": "custom",
                "scorer": "labels-ok",
                "path": "items.0",
                "options": {"min": 2},
            },
            Custom(scorer="labels-ok", path="items.0", options={"min": 2}),
        ),
    ],
)
def test_every_type_parses_from_json_and_round_trips(data, expected):
    cond = structure(data, Condition)
    assert cond == expected
    assert parse_condition(data) == expected
    # Unstructured as the union, the tag comes back: JSON written by us reads back the same.
    again = converter.unstructure(cond, Condition)
    assert again["type"] == data["type"]
    assert structure(again, Condition) == expected


def test_tags_cover_the_documented_types():
    assert sorted(CONDITION_TAGS.values()) == sorted(
        [
            "non_empty",
            "empty",
            "count_gte",
            "count_eq",
            "field_equals",
            "field_contains",
            "field_gte",
            "matches",
            "custom",
        ]
    )


def test_unknown_type_names_the_valid_types():
    with pytest.raises(ValidationError) as info:
        parse_condition(
            {"type": "feild_equals", "path": "a", "value": 1}, source="scenarios/x.json"
        )
    message = str(info.value)
    assert message.startswith("scenarios/x.json: $.type:")
    assert "'feild_equals'" in message
    for tag in CONDITION_TAGS.values():
        assert tag in message


def test_unknown_type_error_comes_from_plain_structure_too():
    with pytest.raises(
        ValidationError, match=r"\$\.type: .*count_gte.*got unknown 'regex'"
    ):
        structure({"type": "regex", "pattern": "x"}, Condition)


def test_missing_type_and_non_object_are_explained():
    with pytest.raises(
        ValidationError, match=r"\$\.type: expected a condition type .* got nothing"
    ):
        parse_condition({"path": "a"})
    with pytest.raises(ValidationError, match="expected a condition object"):
        parse_condition(["non_empty"])


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"type": "count_gte", "path": "items", "value": "2"}, "$.value: expected int"),
        ({"type": "count_gte", "value": -1}, "$.value: expected an integer >= 0"),
        ({"type": "count_eq"}, "$.value: required field missing"),
        ({"type": "field_gte", "path": "a", "value": "3"}, "$.value:"),
        (
            {"type": "matches", "pattern": "(unclosed"},
            "$.pattern: expected a valid regular expression",
        ),
        ({"type": "non_empty", "paht": "items"}, "unknown field(s): paht"),
        ({"type": "field_equals", "path": 3, "value": 1}, "$.path: expected str"),
    ],
)
def test_bad_fields_name_the_field(data, fragment):
    with pytest.raises(ValidationError) as info:
        parse_condition(data)
    assert fragment in str(info.value)


# --- paths ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("", DATA),
        (None, DATA),
        ("items.0.state", "open"),
        ("items.-1.state", "closed"),
        ("items.length", 2),
        ("items.0.labels.1", "p1"),
        ("items.0.title.length", 9),
        ("length", "a key called length"),  # a real key wins over the pseudo-field
        ("note", None),
    ],
)
def test_resolve_path(path, expected):
    assert resolve_path(DATA, path) == expected


@pytest.mark.parametrize(
    ("path", "fragments"),
    [
        ("items.5.state", ["segment '5'", "out of range", "items has 2 item(s)"]),
        (
            "items.0.status",
            [
                "segment 'status'",
                "no key 'status'",
                "keys: comments, labels, state, title",
            ],
        ),
        ("items.first", ["segment 'first'", "not an index", "list"]),
        ("total.value", ["segment 'value'", "total is a number"]),
        ("note.x", ["segment 'x'", "note is a null"]),
        ("missing", ["segment 'missing'", "the top level"]),
    ],
)
def test_bad_paths_say_which_segment_failed(path, fragments):
    with pytest.raises(PathError) as info:
        resolve_path(DATA, path)
    message = str(info.value)
    assert message.startswith(f"path {path!r}:")
    for fragment in fragments:
        assert fragment in message
    assert isinstance(info.value, ProfilerError)


def test_bad_path_fails_the_condition_with_the_error():
    outcome = evaluate_condition(FieldEquals(path="items.9.state", value="open"), DATA)
    assert not outcome.passed
    assert outcome.actual is None
    assert "segment '9'" in outcome.error
    assert outcome.expected == 'items.9.state == "open"'


# --- each condition --------------------------------------------------------------


@pytest.mark.parametrize(
    ("cond", "passed", "actual"),
    [
        (NonEmpty(path="items"), True, DATA["items"]),
        (NonEmpty(path="items.1.labels"), False, []),
        (NonEmpty(path="note"), False, None),
        (NonEmpty(path="draft"), True, False),  # false is a value, not emptiness
        (NonEmpty(path="items.0.title"), True, "Fix login"),
        (Empty(path="items.1.labels"), True, []),
        (Empty(path="note"), True, None),
        (Empty(path="items"), False, DATA["items"]),
        (CountGte(path="items", value=2), True, 2),
        (CountGte(path="items", value=3), False, 2),
        (CountGte(path="items.0.labels", value=1), True, 2),
        (CountEq(path="items.1.labels", value=0), True, 0),
        (CountEq(path="items", value=1), False, 2),
        (CountEq(value=5), True, 5),  # an object counts its keys
        (CountEq(value=4), False, 5),
        (FieldEquals(path="items.0.state", value="open"), True, "open"),
        (FieldEquals(path="items.1.state", value="open"), False, "closed"),
        (FieldEquals(path="total", value=2.0), True, 2),
        (FieldEquals(path="draft", value=0), False, False),  # booleans are not numbers
        (FieldEquals(path="draft", value=False), True, False),
        (FieldEquals(path="items.0.labels", value=["bug", "p1"]), True, ["bug", "p1"]),
        (FieldContains(path="items.0.title", value="login"), True, "Fix login"),
        (FieldContains(path="items.0.title", value="Login"), False, "Fix login"),
        (FieldContains(path="items.0.labels", value="bug"), True, ["bug", "p1"]),
        (FieldContains(path="items.1.labels", value="bug"), False, []),
        (FieldGte(path="items.0.comments", value=3), True, 3),
        (FieldGte(path="items.1.comments", value=1), False, 0),
        (FieldGte(path="items.length", value=2), True, 2),
        (Matches(path="items.0.title", pattern=r"^Fix \w+$"), True, "Fix login"),
        (Matches(path="items.0.title", pattern="LOGIN"), False, "Fix login"),
        (
            Matches(path="items.0.title", pattern="LOGIN", ignore_case=True),
            True,
            "Fix login",
        ),
        (Matches(path="items.0.comments", pattern="^3$"), True, 3),
        (Matches(path="items.1", pattern='"state":"closed"'), True, DATA["items"][1]),
    ],
)
def test_condition_outcomes(cond, passed, actual):
    outcome = evaluate_condition(cond, DATA)
    assert outcome.passed is passed, outcome
    assert outcome.actual == actual
    assert outcome.error is None
    assert outcome.expected == describe_condition(cond)


@pytest.mark.parametrize(
    ("cond", "fragment"),
    [
        (CountGte(path="total", value=1), "expected a list at total, got number"),
        (
            CountEq(path="items.0.title", value=9),
            "expected a list at items.0.title, got string",
        ),
        (
            FieldGte(path="items.0.state", value=1),
            "expected a number at items.0.state, got string",
        ),
        (FieldGte(path="draft", value=0), "expected a number at draft, got boolean"),
        (
            FieldContains(path="total", value="2"),
            "expected a string or a list at total",
        ),
        (
            FieldContains(path="items.0.title", value=3),
            "a string can only contain a string",
        ),
        (Matches(path="note", pattern="x"), "expected a string at note, got null"),
    ],
)
def test_wrong_kind_of_value_fails_with_an_error(cond, fragment):
    outcome = evaluate_condition(cond, DATA)
    assert outcome.passed is False
    assert fragment in outcome.error


def test_whole_value_when_path_is_empty():
    assert evaluate_condition(
        Matches(pattern=r"^Done: .*\(12 passed\)"), "Done: fixed it (12 passed)"
    ).passed
    assert not evaluate_condition(NonEmpty(), "").passed
    assert evaluate_condition(CountEq(value=3), [1, 2, 3]).passed


@pytest.mark.parametrize(
    ("cond", "text"),
    [
        (NonEmpty(), "value is non-empty"),
        (Empty(path="a"), "a is empty"),
        (CountGte(path="items", value=2), "count of items >= 2"),
        (CountEq(value=1), "count of value == 1"),
        (FieldEquals(path="s", value="open"), 's == "open"'),
        (FieldContains(path="t", value="x"), 't contains "x"'),
        (FieldGte(path="n", value=3), "n >= 3"),
        (Matches(pattern="^a", ignore_case=True), "value matches /^a/i"),
        (Custom(scorer="s", path="items"), "scorer 's' passes on items"),
    ],
)
def test_descriptions(cond, text):
    assert describe_condition(cond) == text


# --- JavaScript-like paths, as the GitHub scenarios write them -------------------

THREADS = {
    "items": [
        {"isResolved": False, "comments": [{"body": "nit"}, {"body": "fixed"}]},
        {"isResolved": True, "comments": []},
    ],
    "pageInfo": {"hasNextPage": False},
}


@pytest.mark.parametrize(
    ("cond", "passed", "actual"),
    [
        (FieldEquals(path="items.length", value=2), True, 2),
        (FieldGte(path="items.0.comments.length", value=2), True, 2),
        (FieldEquals(path="items.1.isResolved", value=True), True, True),
        (FieldEquals(path="items.0.comments.1.body", value="fixed"), True, "fixed"),
        (CountEq(path="items.0.comments", value=2), True, 2),
        (Empty(path="items.1.comments"), True, []),
        (FieldEquals(path="pageInfo.hasNextPage", value=False), True, False),
        (FieldGte(path="items.length", value=3), False, 2),
    ],
)
def test_javascript_like_paths(cond, passed, actual):
    outcome = evaluate_condition(cond, THREADS)
    assert (outcome.passed, outcome.actual, outcome.error) == (passed, actual, None)


# --- custom ----------------------------------------------------------------------


def test_custom_without_a_callback_fails_with_a_reason():
    outcome = evaluate_condition(Custom(scorer="labels-ok"), DATA)
    assert outcome.passed is False
    assert "no scorer registry" in outcome.error and "'labels-ok'" in outcome.error


def test_custom_gets_the_value_at_its_path_and_its_verdict_counts():
    seen = []

    def check(cond, value):
        seen.append((cond.scorer, cond.options, value))
        return value == ["bug", "p1"]

    cond = Custom(scorer="labels-ok", path="items.0.labels", options={"min": 2})
    assert evaluate_condition(cond, DATA, custom=check).passed is True
    assert seen == [("labels-ok", {"min": 2}, ["bug", "p1"])]
    assert (
        evaluate_condition(
            Custom(scorer="labels-ok", path="items.1.labels"), DATA, custom=check
        ).passed
        is False
    )


def test_custom_outcome_from_the_callback_is_kept_and_errors_are_caught():
    mine = ConditionOutcome(passed=False, actual="x", expected="y", error="too few")
    assert (
        evaluate_condition(Custom(scorer="s"), DATA, custom=lambda c, v: mine) is mine
    )

    def broken(cond, value):
        raise RuntimeError("boom")

    outcome = evaluate_condition(Custom(scorer="s"), DATA, custom=broken)
    assert (
        outcome.passed is False
        and outcome.error == "scorer 's' raised RuntimeError: boom"
    )
    odd = evaluate_condition(Custom(scorer="s"), DATA, custom=lambda c, v: "yes")
    assert odd.passed is False and "returned str" in odd.error


def test_custom_bad_path_never_calls_the_scorer():
    called = []
    outcome = evaluate_condition(
        Custom(scorer="s", path="items.9"),
        DATA,
        custom=lambda c, v: called.append(v) or True,
    )
    assert outcome.passed is False and "out of range" in outcome.error and called == []


def test_custom_async_callback():
    import trio

    async def check(cond, value):
        await trio.sleep(0)
        return value == 2

    async def main():
        sync_attempt = evaluate_condition(
            Custom(scorer="s", path="total"), DATA, custom=check
        )
        ok = await evaluate_condition_async(
            Custom(scorer="s", path="total"), DATA, custom=check
        )
        not_ok = await evaluate_condition_async(
            Custom(scorer="s", path="items"), DATA, custom=check
        )
        plain = await evaluate_condition_async(CountGte(path="items", value=2), DATA)
        return sync_attempt, ok, not_ok, plain

    sync_attempt, ok, not_ok, plain = trio.run(main)
    assert (
        sync_attempt.passed is False
        and "evaluate_condition_async" in sync_attempt.error
    )
    assert ok.passed is True and not_ok.passed is False and plain.passed is True


def test_custom_needs_a_scorer_id():
    with pytest.raises(
        ValidationError, match=r"\$\.scorer: expected the id of a registered scorer"
    ):
        parse_condition({"type": "custom", "scorer": ""})
