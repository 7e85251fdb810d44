"""The ``checks`` scorer, on hand-written contexts and on real simulated sessions."""

from __future__ import annotations

import pytest

from profiler_core import (
    CreateSessionParams,
    Scenario,
    ScorerContext,
    ScorerResult,
    from_json,
    to_json,
)
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.providers.simulated import SimulatedProvider
from profiler_core.scorers.checks import ChecksScorer, parse_output_json

FIX_CHECKS = [
    {
        "id": "finished",
        "description": "the agent says it finished",
        "target": "output",
        "condition": {"type": "matches", "pattern": "^Done:"},
    },
    {
        "id": "ran-tests",
        "description": "the answer reports a passing test run",
        "target": "output",
        "condition": {"type": "matches", "pattern": r"ran `pytest[^`]*` \(\d+ passed"},
    },
    {
        "id": "used-tools",
        "description": "at least three tool calls",
        "target": "trace",
        "condition": {
            "type": "field_gte",
            "path": "summary.totalToolCalls",
            "value": 3,
        },
    },
    {
        "id": "edited",
        "description": "an edit happened",
        "target": "trace",
        "condition": {"type": "matches", "path": "events", "pattern": '"name":"edit"'},
    },
]


def scenario(
    checks=None, sid="fix-001", prompt="Fix the failing test in tests/test_math.py."
):
    extensions = {} if checks is None else {"checks": checks}
    return Scenario(id=sid, name="fix", prompt=prompt, extensions=extensions)


def context(output, trace=None):
    return ScorerContext(
        agent_output=output,
        trace=trace,
        mode="baseline",
        model="sim-medium",
        iteration=0,
    )


def simulated_sessions(
    n,
    *,
    success_rate=0.5,
    prompt="Fix the failing test in tests/test_math.py.",
    **options,
):
    provider = SimulatedProvider(seed=21, success_rate=success_rate, **options)
    out = []
    for i in range(n):
        handle = provider.create_session(
            CreateSessionParams(
                system_instructions="",
                scenario_id="fix-001",
                iteration=i,
                mode="baseline",
                model="sim-medium",
            )
        )
        result = provider.simulate(handle, prompt, 10_000_000)
        out.append((result, provider.export_session(handle)))
    return out


# --- on simulated sessions ------------------------------------------------------------


def test_scores_simulated_sessions_by_what_they_did():
    scorer = ChecksScorer()
    sc = scenario(FIX_CHECKS)
    verdicts = []
    for result, trace in simulated_sessions(40):
        verdict = scorer.evaluate(sc, context(result.text, trace))
        assert verdict.total == 4 and verdict.error is None
        assert [d.id for d in verdict.details] == [
            "finished",
            "ran-tests",
            "used-tools",
            "edited",
        ]
        finished = result.text.startswith("Done:")
        assert verdict.details[0].passed is finished
        assert verdict.details[1].passed is finished
        assert verdict.details[2].actual == len(result.metrics.tool_calls)
        assert verdict.details[0].expected == "output matches /^Done:/"
        assert verdict.details[2].expected == "summary.totalToolCalls >= 3"
        assert verdict.success is (verdict.passed == 4)
        verdicts.append(verdict)
    # Both outcomes occurred, and success follows the agent's own account of finishing.
    assert {v.success for v in verdicts} == {True, False}


def test_output_json_checks_on_a_json_answer():
    checks = [
        {
            "id": "status",
            "target": "output_json",
            "condition": {"type": "field_equals", "path": "status", "value": "done"},
        },
        {
            "id": "no-failures",
            "target": "output_json",
            "condition": {"type": "field_equals", "path": "tests.failed", "value": 0},
        },
        {
            "id": "changed",
            "target": "output_json",
            "condition": {"type": "count_gte", "path": "filesChanged", "value": 1},
        },
    ]
    sc = scenario(checks, prompt="Fix src/app/utils.py and reply with JSON.")
    for result, trace in simulated_sessions(20, prompt=sc.prompt):
        verdict = ChecksScorer().evaluate(sc, context(result.text, trace))
        assert verdict.output_valid
        assert verdict.success is result.text.startswith("Done:"), verdict


def test_output_json_not_parsable_marks_output_invalid():
    checks = [
        {
            "id": "status",
            "target": "output_json",
            "condition": {"type": "non_empty", "path": "status"},
        }
    ]
    verdict = ChecksScorer().evaluate(scenario(checks), context("Done: fixed it."))
    assert verdict.output_valid is False
    assert verdict.success is False and verdict.passed == 0 and verdict.total == 1
    assert verdict.details[0].error.startswith("output_json: the output is not JSON")


def test_output_checks_do_not_touch_output_valid():
    checks = [{"id": "done", "condition": {"type": "matches", "pattern": "^Done"}}]
    verdict = ChecksScorer().evaluate(scenario(checks), context("no json here"))
    assert verdict.output_valid is True and verdict.success is False


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("  [1, 2]\n", [1, 2]),
        ('Done.\n\n```json\n{"status": "done"}\n```\n', {"status": "done"}),
        ('Result:\n```\n{"x": true}\n```', {"x": True}),
        ('```python\nprint(1)\n```\n```json\n{"y": 2}\n```', {"y": 2}),
    ],
)
def test_parse_output_json(text, value):
    assert parse_output_json(text) == (value, None)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "the output is empty"),
        ("Done: no JSON", "not JSON and has no ```json block"),
        ('```json\n{"a": }\n```', "the ```json block is not valid JSON"),
    ],
)
def test_parse_output_json_errors(text, fragment):
    value, error = parse_output_json(text)
    assert value is None and fragment in error


def test_trace_checks_without_a_trace_fail_with_a_reason():
    checks = [
        {
            "id": "t",
            "target": "trace",
            "condition": {"type": "non_empty", "path": "events"},
        }
    ]
    verdict = ChecksScorer().evaluate(scenario(checks), context("Done:", trace=None))
    assert not verdict.success
    assert "no session trace" in verdict.details[0].error
    assert verdict.details[0].expected == "events is non-empty"


def test_bad_path_is_reported_on_the_check():
    result, trace = simulated_sessions(1)[0]
    checks = [
        {
            "id": "p",
            "target": "trace",
            "condition": {"type": "field_equals", "path": "summary.turns", "value": 1},
        }
    ]
    verdict = ChecksScorer().evaluate(scenario(checks), context(result.text, trace))
    detail = verdict.details[0]
    assert not detail.passed and detail.error.startswith(
        "trace: path 'summary.turns': segment 'turns'"
    )
    assert "totalTurns" in detail.error  # the keys that do exist


# --- no checks, malformed checks ---------------------------------------------------


def test_no_checks_is_success_with_zero_of_zero():
    verdict = ChecksScorer().evaluate(scenario(None), context("anything"))
    assert verdict == ScorerResult(success=True, passed=0, total=0)
    assert ChecksScorer().evaluate(scenario([]), context("x")).success


def test_require_checks_turns_missing_checks_into_an_error():
    verdict = ChecksScorer(require_checks=True).evaluate(scenario(None), context("x"))
    assert not verdict.success and "has no extensions.checks" in verdict.error


@pytest.mark.parametrize(
    ("checks", "fragments"),
    [
        ({"id": "a"}, ["scenario 'fix-001'", "extensions.checks: expected a list"]),
        (
            [
                FIX_CHECKS[0],
                {"id": "b", "target": "outptu", "condition": {"type": "non_empty"}},
            ],
            ["extensions.checks[1]", "target", "output_json"],
        ),
        (
            [{"id": "c", "condition": {"type": "nope"}}],
            ["extensions.checks[0]", "$.condition.type", "count_gte", "'nope'"],
        ),
        (
            [{"id": "d"}],
            ["extensions.checks[0]", "$.condition: required field missing"],
        ),
        (
            [{"id": "", "condition": {"type": "empty"}}],
            ["extensions.checks[0]", "$.id"],
        ),
        (
            [{"id": "e", "condition": {"type": "empty"}, "extra": 1}],
            ["extensions.checks[0]", "unknown field(s): extra"],
        ),
        (
            [
                {"id": "f", "condition": {"type": "empty"}},
                {"id": "f", "condition": {"type": "empty"}},
            ],
            ["extensions.checks[1].id", "duplicate check id 'f'", "index 0"],
        ),
        (["not an object"], ["extensions.checks[0]"]),
    ],
)
def test_malformed_checks_are_a_scorer_error_naming_scenario_and_index(
    checks, fragments
):
    verdict = ChecksScorer().evaluate(scenario(checks), context("Done:"))
    assert verdict.success is False and verdict.error
    for fragment in fragments:
        assert fragment in verdict.error, verdict.error


def test_long_actual_values_are_shortened():
    result, trace = simulated_sessions(1)[0]
    checks = [
        {
            "id": "ev",
            "target": "trace",
            "condition": {"type": "non_empty", "path": "events"},
        }
    ]
    verdict = ChecksScorer(max_actual_chars=100).evaluate(
        scenario(checks), context(result.text, trace)
    )
    actual = verdict.details[0].actual
    assert (
        isinstance(actual, str)
        and len(actual) < 140
        and actual.endswith("chars of JSON)")
    )


def test_result_serialises():
    result, trace = simulated_sessions(1, success_rate=1.0)[0]
    verdict = ChecksScorer().evaluate(scenario(FIX_CHECKS), context(result.text, trace))
    assert from_json(to_json(verdict), ScorerResult) == verdict


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"require_checks": "yes"}, "require_checks"),
        ({"max_actual_chars": 5}, "max_actual_chars"),
    ],
)
def test_bad_scorer_options(options, fragment):
    from profiler_core.errors import ConfigError

    with pytest.raises(ConfigError, match=fragment):
        ChecksScorer(**options)


def test_registered_as_a_built_in():
    info = get_plugin_manager(entrypoints=False).registry.get("scorers", "checks")
    assert info.plugin == "core.scorers.checks" and info.factory is ChecksScorer
    assert ChecksScorer.id == "checks"
