"""The checkpoint scorer: capability calls through an executor, then conditions on their data.

The executor is the scorer's injected dependency (GitHub is PART of another
test suite): a small recording fake stands in for it here.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
import trio

from profiler_core import (
    ConfigError,
    ProfilerError,
    Scenario,
    ScorerContext,
    ScorerResult,
    hookimpl,
)
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.storage.serde import structure
from profiler_eval_ghx.capabilities import CapabilityResult
from profiler_eval_ghx.scenario import EvalScenario, to_core_scenario
from profiler_eval_ghx.scorer import CheckpointScorer

ISSUE = {
    "id": "I_1",
    "number": 12,
    "title": "Flaky login",
    "state": "CLOSED",
    "url": "https://x/12",
    "body": "",
    "labels": ["bug", "ghx-eval"],
}
COMMENTS = {
    "items": [{"id": "C1", "body": "Fixed in #13", "authorLogin": "bot"}],
    "pageInfo": {"hasNextPage": False, "endCursor": None},
}
THREADS = {
    "items": [
        {
            "id": "T1",
            "isResolved": True,
            "comments": [{"body": "nit"}, {"body": "done"}],
        },
        {"id": "T2", "isResolved": True, "comments": [{"body": "why?"}]},
    ]
}
REVIEWS = {
    "items": [
        {
            "id": 1,
            "state": "CHANGES_REQUESTED",
            "body": "rename it",
            "authorLogin": "me",
        }
    ]
}
EMPTY = {"items": []}


class FakeExecutor:
    """Answers capability calls from a table and records them."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, dict]] = []

    async def run(self, task: str, input: dict[str, Any]) -> CapabilityResult:
        self.calls.append((task, input))
        await trio.sleep(0)
        answer = self.answers[task]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, CapabilityResult):
            return answer
        return CapabilityResult(ok=True, data=answer)


def make_scenario(*checkpoints: dict, core: bool = True) -> Scenario | EvalScenario:
    scenario = structure(
        {
            "id": "issue-close-001",
            "name": "close",
            "description": "",
            "prompt": "close it",
            "timeoutMs": 1000,
            "category": "issue",
            "difficulty": "basic",
            "assertions": {"checkpoints": list(checkpoints)},
        },
        EvalScenario,
    )
    return to_core_scenario(scenario) if core else scenario


def cp(id: str, task: str, condition: dict, input: dict | None = None) -> dict:
    return {
        "id": id,
        "description": f"check {id}",
        "task": task,
        "input": input or {"owner": "acme", "name": "s", "issueNumber": 12},
        "condition": condition,
    }


CONTEXT = ScorerContext(
    agent_output="done",
    trace=None,
    mode="ghx",
    model="m",
    iteration=0,
    metadata={"attempt": 1},
)


def score(scorer: CheckpointScorer, scenario) -> ScorerResult:
    return trio.run(scorer.evaluate, scenario, CONTEXT)


ANSWERS = {
    "issue.view": ISSUE,
    "issue.comments.list": COMMENTS,
    "pr.threads.list": THREADS,
    "pr.reviews.list": REVIEWS,
    "issue.relations.prs.list": EMPTY,
}


@pytest.mark.parametrize(
    ("task", "condition", "passed", "actual"),
    [
        ("issue.view", {"type": "non_empty"}, True, ISSUE),
        ("issue.view", {"type": "non_empty", "path": "body"}, False, ""),
        ("issue.relations.prs.list", {"type": "empty", "path": "items"}, True, []),
        (
            "issue.comments.list",
            {"type": "empty", "path": "items"},
            False,
            COMMENTS["items"],
        ),
        (
            "pr.threads.list",
            {"type": "count_gte", "path": "items", "value": 2},
            True,
            2,
        ),
        (
            "pr.threads.list",
            {"type": "count_gte", "path": "items", "value": 3},
            False,
            2,
        ),
        ("pr.reviews.list", {"type": "count_eq", "path": "items", "value": 1}, True, 1),
        (
            "pr.reviews.list",
            {"type": "count_eq", "path": "items", "value": 0},
            False,
            1,
        ),
        (
            "issue.view",
            {"type": "field_equals", "path": "state", "value": "CLOSED"},
            True,
            "CLOSED",
        ),
        (
            "issue.view",
            {"type": "field_equals", "path": "state", "value": "OPEN"},
            False,
            "CLOSED",
        ),
        (
            "issue.view",
            {"type": "field_contains", "path": "labels", "value": "bug"},
            True,
            ["bug", "ghx-eval"],
        ),
        (
            "issue.view",
            {"type": "field_contains", "path": "title", "value": "logout"},
            False,
            "Flaky login",
        ),
        ("issue.view", {"type": "field_gte", "path": "number", "value": 12}, True, 12),
        ("issue.view", {"type": "field_gte", "path": "number", "value": 13}, False, 12),
        # JavaScript-like paths, as the shipped scenarios write them
        (
            "pr.threads.list",
            {"type": "field_equals", "path": "items.length", "value": 2},
            True,
            2,
        ),
        (
            "pr.threads.list",
            {"type": "field_gte", "path": "items.0.comments.length", "value": 2},
            True,
            2,
        ),
        (
            "pr.threads.list",
            {"type": "field_gte", "path": "items.1.comments.length", "value": 2},
            False,
            1,
        ),
        (
            "pr.threads.list",
            {"type": "field_equals", "path": "items.1.isResolved", "value": True},
            True,
            True,
        ),
        (
            "pr.reviews.list",
            {
                "type": "field_equals",
                "path": "items.0.state",
                "value": "CHANGES_REQUESTED",
            },
            True,
            "CHANGES_REQUESTED",
        ),
        (
            "issue.comments.list",
            {"type": "field_contains", "path": "items.0.body", "value": "Fixed"},
            True,
            "Fixed in #13",
        ),
    ],
)
def test_every_condition_on_capability_data(task, condition, passed, actual):
    executor = FakeExecutor(ANSWERS)
    result = score(
        CheckpointScorer(executor=executor), make_scenario(cp("c", task, condition))
    )
    (detail,) = result.details
    assert (result.success, result.passed, result.total) == (passed, int(passed), 1)
    assert (detail.passed, detail.actual, detail.error) == (passed, actual, None)
    assert detail.expected  # e.g. "count of items >= 2"
    assert executor.calls == [(task, {"owner": "acme", "name": "s", "issueNumber": 12})]


def test_all_must_pass_and_details_carry_actual_and_expected():
    executor = FakeExecutor(ANSWERS)
    scenario = make_scenario(
        cp(
            "closed",
            "issue.view",
            {"type": "field_equals", "path": "state", "value": "CLOSED"},
        ),
        cp(
            "commented",
            "issue.comments.list",
            {"type": "count_gte", "path": "items", "value": 2},
        ),
    )
    result = score(CheckpointScorer(executor=executor), scenario)
    assert (result.success, result.passed, result.total, result.error) == (
        False,
        1,
        2,
        None,
    )
    closed, commented = result.details
    assert (
        closed.id,
        closed.description,
        closed.passed,
        closed.actual,
        closed.expected,
    ) == ("closed", "check closed", True, "CLOSED", 'state == "CLOSED"')
    assert (commented.passed, commented.actual, commented.expected) == (
        False,
        1,
        "count of items >= 2",
    )
    assert [task for task, _ in executor.calls] == ["issue.view", "issue.comments.list"]


def test_a_failed_call_fails_its_checkpoint_with_the_calls_message():
    executor = FakeExecutor(
        {
            **ANSWERS,
            "issue.view": CapabilityResult(
                ok=False,
                error="Could not resolve to an Issue with the number of 12 (HTTP 200, NOT_FOUND)",
            ),
        }
    )
    scenario = make_scenario(
        cp(
            "closed",
            "issue.view",
            {"type": "field_equals", "path": "state", "value": "CLOSED"},
        ),
        cp(
            "commented",
            "issue.comments.list",
            {"type": "count_gte", "path": "items", "value": 1},
        ),
    )
    result = score(CheckpointScorer(executor=executor), scenario)
    assert (result.success, result.passed, result.total, result.error) == (
        False,
        1,
        2,
        None,
    )
    assert result.details[0].passed is False
    assert (
        result.details[0].error
        == "issue.view: Could not resolve to an Issue with the number of 12 (HTTP 200, NOT_FOUND)"
    )
    assert result.details[1].passed is True


def test_an_executor_exception_fails_the_checkpoint_and_marks_the_score_an_error():
    executor = FakeExecutor(
        {**ANSWERS, "issue.view": ConnectionError("connection refused")}
    )
    result = score(
        CheckpointScorer(executor=executor),
        make_scenario(cp("closed", "issue.view", {"type": "non_empty"})),
    )
    assert result.success is False and result.details[0].passed is False
    assert (
        result.details[0].error
        == "issue.view raised ConnectionError: connection refused"
    )
    # unknown, not failed: the runner records an error (and may retry) instead of a false verdict
    assert (
        result.error
        == "checkpoint 'closed': issue.view raised ConnectionError: connection refused"
    )


def test_no_checkpoints_is_not_a_success_and_is_refused_up_front():
    scorer = CheckpointScorer(executor=FakeExecutor(ANSWERS))
    result = score(scorer, make_scenario())
    assert (result.success, result.passed, result.total) == (False, 0, 0)
    with pytest.raises(ConfigError, match="assertions.checkpoints is empty"):
        scorer.check_scenario(make_scenario())
    scorer.check_scenario(make_scenario(cp("c", "issue.view", {"type": "non_empty"})))


def test_a_bad_path_and_unbound_variables_fail_with_a_reason():
    executor = FakeExecutor(ANSWERS)
    scenario = make_scenario(
        cp(
            "path",
            "pr.threads.list",
            {"type": "field_equals", "path": "items.5.isResolved", "value": True},
        ),
        cp(
            "unbound",
            "issue.view",
            {"type": "non_empty"},
            input={"owner": "{{owner}}", "issueNumber": "{{issue_number}}"},
        ),
    )
    result = score(CheckpointScorer(executor=executor), scenario)
    assert result.success is False and result.error is None
    assert (
        "segment '5' is out of range: the list at items has 2 item(s)"
        in result.details[0].error
    )
    assert (
        result.details[1].error
        == "input still holds {{issue_number}}, {{owner}}: the scenario was not "
        "bound to the fixture manifest"
    )
    assert [task for task, _ in executor.calls] == [
        "pr.threads.list"
    ]  # nothing is sent with a placeholder in it


def test_a_large_actual_is_shortened_for_the_row():
    many = {"items": [{"body": "x" * 100}] * 50}
    result = score(
        CheckpointScorer(
            executor=FakeExecutor({"issue.comments.list": many}), max_actual_chars=100
        ),
        make_scenario(
            cp(
                "c",
                "issue.comments.list",
                {"type": "field_equals", "path": "items", "value": []},
            )
        ),
    )
    actual = result.details[0].actual
    assert (
        isinstance(actual, str)
        and actual.endswith(f"… ({len(json.dumps(many['items']))} chars)")
        and len(actual) < 140
    )


def test_a_plain_core_scenario_is_an_error_not_a_verdict():
    result = score(
        CheckpointScorer(executor=FakeExecutor(ANSWERS)),
        Scenario(id="x", name="x", prompt="p"),
    )
    assert result.success is False and "not an eval scenario" in result.error


# -- custom conditions: a registered scorer decides -------------------------------------------


class LabelsScorer:
    """A plugin's scorer: passes when the checkpoint's data (a list of labels) holds ``need``."""

    id = "labels-hold"
    seen: ClassVar[list[dict]] = []

    def __init__(self, *, need: str) -> None:
        self.need = need

    async def evaluate(
        self, scenario: Scenario, context: ScorerContext
    ) -> ScorerResult:
        LabelsScorer.seen.append(
            {"scenario": scenario.id, "mode": context.mode, **context.metadata}
        )
        ok = self.need in context.metadata["checkpoint"]["data"]
        return ScorerResult(success=ok, passed=int(ok), total=1)


class LabelsPlugin:
    @hookimpl
    def profiler_register_scorers(self):
        return [LabelsScorer]


@pytest.fixture
def registry():
    return get_plugin_manager(
        entrypoints=False, plugins=[("labels", LabelsPlugin())]
    ).registry


def test_custom_calls_the_registered_scorer_with_the_checkpoint_data(registry):
    LabelsScorer.seen.clear()
    scorer = CheckpointScorer(executor=FakeExecutor(ANSWERS), registry=registry)
    scenario = make_scenario(
        cp(
            "has-bug",
            "issue.view",
            {
                "type": "custom",
                "scorer": "labels-hold",
                "path": "labels",
                "options": {"need": "bug"},
            },
        ),
        cp(
            "has-p1",
            "issue.view",
            {
                "type": "custom",
                "scorer": "labels-hold",
                "path": "labels",
                "options": {"need": "p1"},
            },
        ),
    )
    scorer.check_scenario(scenario)
    result = score(scorer, scenario)
    assert [d.passed for d in result.details] == [True, False]
    assert result.details[0].actual == {
        "passed": 1,
        "total": 1,
        "data": ["bug", "ghx-eval"],
    }
    assert result.details[1].expected == "scorer 'labels-hold' passes on labels"
    first = LabelsScorer.seen[0]
    assert (
        first["scenario"] == "issue-close-001"
        and first["mode"] == "ghx"
        and first["attempt"] == 1
    )
    assert first["checkpoint"] == {
        "id": "has-bug",
        "task": "issue.view",
        "input": {"owner": "acme", "name": "s", "issueNumber": 12},
        "data": ["bug", "ghx-eval"],
    }
    assert (first["checkpoint_id"], first["checkpoint_data"]) == (
        "has-bug",
        ["bug", "ghx-eval"],
    )


def test_custom_with_an_unknown_scorer_or_no_registry(registry):
    scenario = make_scenario(
        cp("c", "issue.view", {"type": "custom", "scorer": "labels-hlod"})
    )
    with pytest.raises(
        ConfigError,
        match=r"checkpoints\[0\].condition.scorer: unknown scorer 'labels-hlod'; did "
        r"you mean 'labels-hold'\?",
    ):
        CheckpointScorer(
            executor=FakeExecutor(ANSWERS), registry=registry
        ).check_scenario(scenario)
    result = score(
        CheckpointScorer(executor=FakeExecutor(ANSWERS), registry=registry), scenario
    )
    assert (
        result.details[0].passed is False
        and "unknown scorer 'labels-hlod'" in result.details[0].error
    )
    alone = score(CheckpointScorer(executor=FakeExecutor(ANSWERS)), scenario)
    assert (
        alone.details[0].passed is False
        and "no scorer registry" in alone.details[0].error
    )


def test_the_plugin_registers_the_scorer_and_the_runner_hands_it_the_registry():
    manager = get_plugin_manager()
    info = manager.registry.get("scorers", "checkpoint")
    assert info.factory is CheckpointScorer
    built = manager.registry.create(
        "scorers", "checkpoint", {"registry": manager.registry}
    )
    assert isinstance(built, CheckpointScorer)


def test_a_core_scenario_needs_only_its_assertions():
    bare = Scenario(
        id="s-001",
        name="s",
        prompt="p",
        extensions={
            "assertions": {
                "checkpoints": [
                    cp(
                        "closed",
                        "issue.view",
                        {"type": "field_equals", "path": "state", "value": "CLOSED"},
                    )
                ]
            }
        },
    )
    result = score(CheckpointScorer(executor=FakeExecutor(ANSWERS)), bare)
    assert (result.success, result.passed, result.total) == (True, 1, 1)
    broken = Scenario(
        id="s-002",
        name="s",
        prompt="p",
        extensions={"assertions": {"checkpoints": [{"id": "c", "task": "issue.view"}]}},
    )
    with pytest.raises(
        ProfilerError,
        match=r"scenario 's-002': extensions.assertions: "
        r"\$\.checkpoints\[0\]\.condition: required field missing",
    ):
        CheckpointScorer(executor=FakeExecutor(ANSWERS)).check_scenario(broken)
