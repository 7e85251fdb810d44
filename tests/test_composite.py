"""The ``composite`` scorer: prefixed checks, summed counts, failures isolated, judge
passed through."""

from __future__ import annotations

import json

import pytest
import trio

from profiler_core import (
    ConfigError,
    JudgeResponse,
    ModeConfig,
    Scenario,
    ScorerCheckResult,
    ScorerContext,
    ScorerResult,
    TokenBreakdown,
    hookimpl,
)
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.scorers import llm_judge
from profiler_core.scorers.composite import CompositeScorer
from profiler_core.testing import FakeProvider

RUBRIC = {"criteria": [{"id": "correct", "description": "the answer is right"}]}


class Listed:
    """A scorer returning the verdicts it was built with."""

    id = "listed"

    def __init__(
        self,
        *,
        checks=(("a", True),),
        success=None,
        output_valid=True,
        error=None,
        unit_metric=None,
    ):
        self.checks = [tuple(c) for c in checks]
        self.success = all(p for _, p in self.checks) if success is None else success
        self.output_valid = output_valid
        self.error = error
        self.unit_metric = unit_metric

    def evaluate(self, scenario, context):
        details = [
            ScorerCheckResult(
                id=i, description=f"check {i}", passed=p, actual=f"saw {i}"
            )
            for i, p in self.checks
        ]
        return ScorerResult(
            success=self.success,
            passed=sum(p for _, p in self.checks),
            total=len(self.checks),
            details=details,
            output_valid=self.output_valid,
            error=self.error,
        )


class Broken:
    """A scorer that raises."""

    id = "broken"

    def __init__(self, **options):
        pass

    async def evaluate(self, scenario, context):
        raise RuntimeError("regex blew up")


class FakeJudge:
    """An in-memory judge answering every criterion as passed."""

    id = "fake-judge"
    model = "judge-m"

    def __init__(self):
        self.requests = []

    async def judge(self, request):
        self.requests.append(request)
        text = json.dumps(
            {"verdicts": [{"id": "correct", "passed": True, "reasoning": "right"}]}
        )
        return JudgeResponse(
            text=text,
            usage=TokenBreakdown(input=10, output=5),
            model="judge-m",
            token_count=15,
        )


class Plugin:
    @hookimpl
    def profiler_register_scorers(self):
        return [Listed, Broken]


@pytest.fixture
def registry(profiler_plugin_manager):
    manager = profiler_plugin_manager
    manager.register(Plugin(), "test.composite")
    if "llm-judge" not in manager.registry.scorers:
        manager.register(llm_judge, "test.scorers.llm_judge")
    return manager.registry


def scenario(**kw):
    return Scenario(
        id="s1", name="S1", prompt="do it", extensions={"rubric": RUBRIC}, **kw
    )


def context():
    return ScorerContext(
        agent_output="done", trace=None, mode="plain", model="m", iteration=0
    )


def evaluate(scorer):
    return trio.run(scorer.evaluate, scenario(), context())


def test_checks_are_prefixed_and_counts_summed(registry):
    composite = CompositeScorer(
        registry=registry,
        scorers=[
            {"id": "listed", "options": {"checks": [["a", True], ["b", True]]}},
            {
                "id": "listed",
                "name": "second",
                "options": {"checks": [["a", True], ["c", False]]},
            },
        ],
    )
    result = evaluate(composite)
    assert [(d.id, d.passed, d.actual) for d in result.details] == [
        ("listed:a", True, "saw a"),
        ("listed:b", True, "saw b"),
        ("second:a", True, "saw a"),
        ("second:c", False, "saw c"),
    ]
    assert (
        result.success,
        result.passed,
        result.total,
        result.output_valid,
        result.error,
    ) == (False, 3, 4, True, None)


def test_success_and_output_valid_need_every_scorer(registry):
    ok = evaluate(
        CompositeScorer(
            registry=registry, scorers=[{"id": "listed"}, {"id": "listed", "name": "x"}]
        )
    )
    assert (ok.success, ok.output_valid) == (True, True)
    invalid = evaluate(
        CompositeScorer(
            registry=registry,
            scorers=[
                {"id": "listed"},
                {"id": "listed", "name": "x", "options": {"output_valid": False}},
            ],
        )
    )
    assert (invalid.success, invalid.output_valid) == (True, False)


def test_a_raising_scorer_becomes_a_failed_error_check(registry):
    result = evaluate(
        CompositeScorer(registry=registry, scorers=[{"id": "broken"}, {"id": "listed"}])
    )
    assert [(d.id, d.passed) for d in result.details] == [
        ("broken:error", False),
        ("listed:a", True),
    ]
    assert result.details[0].error == "RuntimeError: regex blew up"
    assert (
        result.success,
        result.passed,
        result.total,
        result.output_valid,
        result.error,
    ) == (False, 1, 2, False, None)


def run_one(tmp_path, manager, scorer, retries=1):
    options = RunOptions(
        provider=FakeProvider(),
        scorer=scorer,
        scenarios=[scenario()],
        modes={"plain": ModeConfig()},
        repetitions=1,
        warmup=False,
        allowed_retries=retries,
        results_dir=str(tmp_path / "r"),
        reports_dir=str(tmp_path / "p"),
        plugin_manager=manager,
    )
    (row,) = trio.run(run_profile_suite, options).rows
    return row


def test_a_raising_scorer_does_not_fail_the_iteration(
    tmp_path, registry, profiler_plugin_manager
):
    row = run_one(
        tmp_path,
        profiler_plugin_manager,
        CompositeScorer(
            registry=registry, scorers=[{"id": "broken"}, {"id": "listed"}]
        ),
    )
    assert (row.error, row.attempts, row.success) == (None, 1, False)
    assert [d.id for d in row.checkpoint_details] == ["broken:error", "listed:a"]


def test_a_scorer_error_is_an_iteration_error_the_runner_retries(
    tmp_path, registry, profiler_plugin_manager
):
    composite = CompositeScorer(
        registry=registry,
        scorers=[{"id": "listed", "options": {"error": "judge unreachable"}}],
    )
    assert evaluate(composite).error == "listed: judge unreachable"
    row = run_one(tmp_path, profiler_plugin_manager, composite)
    assert (
        row.attempts == 2
        and row.error_code == "scorer_error"
        and "judge unreachable" in row.error
    )


def test_the_judge_reaches_llm_judge_sub_scorers_and_their_metrics_add_up(registry):
    judge = FakeJudge()
    composite = CompositeScorer(
        registry=registry,
        judge=judge,
        scorers=[
            {"id": "listed"},
            {
                "id": "llm-judge",
                "options": {
                    "prices": {"judge-m": {"input_per_mtok": 1, "output_per_mtok": 1}}
                },
            },
            {
                "id": "llm-judge",
                "name": "judge2",
                "options": {
                    "prices": {"judge-m": {"input_per_mtok": 1, "output_per_mtok": 1}}
                },
            },
        ],
    )
    result = evaluate(composite)
    assert [d.id for d in result.details] == [
        "listed:a",
        "llm-judge:correct",
        "judge2:correct",
    ]
    assert (result.success, result.passed, result.total) == (True, 3, 3)
    assert len(judge.requests) == 2
    m = {x.name: x.value for x in result.metrics}
    assert (
        m["judge_calls"],
        m["judge_tokens_input"],
        m["judge_tokens_output"],
        m["judge_tokens_total"],
    ) == (2, 20, 10, 30)
    assert m["judge_cost_usd"] == pytest.approx(30 / 1e6)
    assert m["judge_cost_source"] == "computed"


def test_an_unpriced_judge_drops_the_summed_cost(registry):
    composite = CompositeScorer(
        registry=registry,
        judge=FakeJudge(),
        scorers=[
            {
                "id": "llm-judge",
                "options": {
                    "prices": {"judge-m": {"input_per_mtok": 1, "output_per_mtok": 1}}
                },
            },
            {"id": "llm-judge", "name": "j2"},  # "judge-m" has no known price here
        ],
    )
    m = {x.name: x.value for x in evaluate(composite).metrics}
    assert m["judge_cost_source"] == "unknown" and "judge_cost_usd" not in m
    assert m["judge_tokens_total"] == 30


@pytest.mark.parametrize(
    ("scorers", "message"),
    [
        ([], "expected a non-empty list"),
        (
            [{"id": "listd"}],
            r"options.scorers\[0\] \(listd\): unknown scorer 'listd'; did you mean 'listed'",
        ),
        (
            [{"id": "listed"}, {"id": "listed"}],
            r"options.scorers\[1\]: scorer 'listed' appears twice",
        ),
        (
            [{"id": "listed", "option": {}}],
            r"options.scorers\[0\]: unknown key\(s\) option",
        ),
        (["listed"], r"options.scorers\[0\]: expected a mapping"),
        (
            [{"id": "llm-judge"}],
            r"options.scorers\[0\] \(llm-judge\): scorer 'llm-judge' needs a judge",
        ),
        (
            [{"id": "listed", "options": {"nope": 1}}],
            r"options.scorers\[0\] \(listed\): scorer 'listed': bad options",
        ),
    ],
)
def test_bad_sub_scorer_specs_are_config_errors(registry, scorers, message):
    with pytest.raises(ConfigError, match=message):
        CompositeScorer(registry=registry, scorers=scorers)


def test_scorer_objects_can_be_given_directly():
    result = evaluate(CompositeScorer(scorers=[Listed(checks=[["z", True]])]))
    assert [d.id for d in result.details] == ["listed:z"] and result.success
