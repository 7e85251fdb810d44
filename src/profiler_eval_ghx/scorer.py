"""The ``checkpoint`` scorer: did the agent really change GitHub?

After the session, each checkpoint of the scenario's ``assertions`` runs its
capability (``issue.view``, ``pr.threads.list``, ...) with its ``input`` and
tests its condition on the result's ``data``. The iteration succeeds when every
checkpoint passes and there is at least one. Conditions are profiler_core's
(``profiler_core.conditions``); a ``custom`` condition calls the registered
scorer it names with the checkpoint's data in ``context.metadata["checkpoint"]``.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from profiler_core import (
    ConfigError,
    ProfilerError,
    Scenario,
    ScorerCheckResult,
    ScorerContext,
    ScorerResult,
    structure,
)
from profiler_core.conditions import (
    ConditionOutcome,
    Custom,
    describe_condition,
    evaluate_condition_async,
)

from .bindings import template_variables
from .capabilities import CapabilityExecutor, CapabilityResult
from .scenario import Assertions, Checkpoint, EvalScenario

__all__ = ["CheckpointScorer", "scenario_assertions"]


def scenario_assertions(scenario: Scenario | EvalScenario) -> Assertions:
    """The checkpoints of an eval scenario, or of a core one's ``extensions.assertions``
    (``ProfilerError`` if none)."""
    if isinstance(scenario, EvalScenario):
        return scenario.assertions
    raw = (scenario.extensions or {}).get("assertions")
    if raw is None:
        raise ConfigError(
            f"scenario {scenario.id!r}: no assertions (checkpoints) in its "
            "extensions: not an eval scenario"
        )
    return structure(
        raw, Assertions, source=f"scenario {scenario.id!r}: extensions.assertions"
    )


def _preview(value: Any, limit: int) -> Any:
    """Keep ``actual`` small enough for a results row (a list of 500 issues is not)."""
    text = value if isinstance(value, str) else None
    if isinstance(value, (list, dict)):
        text = json.dumps(value, ensure_ascii=False, default=str)
    if text is not None and len(text) > limit:
        return f"{text[:limit]}… ({len(text)} chars)"
    return value


class CheckpointScorer:
    """Scores an iteration by running each checkpoint's capability against GitHub and
    testing its condition."""

    id = "checkpoint"
    #: the scenario ``extensions`` keys this scorer scores by
    scenario_keys = ("assertions",)

    def __init__(
        self,
        *,
        executor: CapabilityExecutor | None = None,
        registry: Any = None,
        max_actual_chars: int = 2000,
        **executor_options: Any,
    ) -> None:
        """``executor`` runs capabilities (default: the GitHub one, built from
        ``executor_options`` on first use).

        ``registry`` (given by the runner) builds the scorers that ``custom`` conditions name.
        """
        if (
            isinstance(max_actual_chars, bool)
            or not isinstance(max_actual_chars, int)
            or max_actual_chars < 20
        ):
            raise ConfigError(
                "scorer 'checkpoint': option max_actual_chars: expected an "
                f"integer >= 20, got {max_actual_chars!r}"
            )
        self._executor = executor
        self._executor_options = executor_options
        self._registry = registry
        self._custom_scorers: dict[str, Any] = {}
        self.max_actual_chars = max_actual_chars

    # -- before the run ---------------------------------------------------------------

    def check_scenario(self, scenario: Scenario) -> None:
        """Raise ``ConfigError`` for a scenario this scorer cannot score (called before
        any session starts)."""
        checkpoints = scenario_assertions(scenario).checkpoints
        if not checkpoints:
            raise ConfigError(
                f"scenario {scenario.id!r}: assertions.checkpoints is empty: "
                "nothing would show the task was done"
            )
        if self._registry is None:
            return
        for index, checkpoint in enumerate(checkpoints):
            cond = checkpoint.condition
            if isinstance(cond, Custom):
                try:
                    self._registry.get("scorers", cond.scorer)
                except ProfilerError as exc:
                    raise ConfigError(
                        f"scenario {scenario.id!r}: "
                        f"assertions.checkpoints[{index}].condition.scorer: "
                        f"{exc}"
                    ) from None

    def _executor_or_default(self) -> CapabilityExecutor:
        if self._executor is None:
            # Built lazily: a profile that only validates needs no token, and tests
            # inject their own.
            from .capabilities import default_executor  # type: ignore[attr-defined,unused-ignore]

            self._executor = default_executor(self._executor_options)
        return self._executor

    # -- scoring ----------------------------------------------------------------------

    async def evaluate(
        self, scenario: Scenario, context: ScorerContext
    ) -> ScorerResult:
        """Run every checkpoint in order; success when all pass and there is at least one."""
        try:
            checkpoints = scenario_assertions(scenario).checkpoints
        except ProfilerError as exc:
            return ScorerResult(success=False, passed=0, total=0, error=str(exc))
        if not checkpoints:
            return ScorerResult(success=False, passed=0, total=0)
        try:
            executor = self._executor_or_default()
        except (ImportError, ValueError, ProfilerError) as exc:
            return ScorerResult(
                success=False,
                passed=0,
                total=len(checkpoints),
                error=f"no capability executor: {exc}",
            )
        details: list[ScorerCheckResult] = []
        broken: list[str] = []
        for checkpoint in checkpoints:
            detail, error = await self._run(checkpoint, executor, scenario, context)
            details.append(detail)
            if error:
                broken.append(f"checkpoint {checkpoint.id!r}: {error}")
        passed = sum(d.passed for d in details)
        return ScorerResult(
            success=passed == len(details),
            passed=passed,
            total=len(details),
            details=tuple(details),
            # An exception (not a failed call) means the verdict is unknown: an error,
            # so the runner may retry.
            error="; ".join(broken) or None,
        )

    async def _run(
        self,
        checkpoint: Checkpoint,
        executor: CapabilityExecutor,
        scenario: Scenario,
        context: ScorerContext,
    ) -> tuple[ScorerCheckResult, str | None]:
        expected = describe_condition(checkpoint.condition, "data")

        def failed(error: str) -> ScorerCheckResult:
            return ScorerCheckResult(
                id=checkpoint.id,
                description=checkpoint.description,
                passed=False,
                expected=expected,
                error=error,
            )

        unfilled = sorted(template_variables(checkpoint.input))
        if unfilled:
            names = ", ".join(f"{{{{{n}}}}}" for n in unfilled)
            return failed(
                f"input still holds {names}: the scenario was not bound to the fixture manifest"
            ), None
        try:
            result = await executor.run(checkpoint.task, dict(checkpoint.input))
        # the executor is a plug-in point; its failure is this checkpoint's
        except Exception as exc:  # noqa: BLE001
            message = f"{checkpoint.task} raised {type(exc).__name__}: {exc}"
            return failed(message), message
        if not isinstance(result, CapabilityResult):
            message = (
                f"{checkpoint.task}: the executor returned {type(result).__name__}, "
                "expected CapabilityResult"
            )
            return failed(message), message
        if not result.ok:
            return failed(
                f"{checkpoint.task}: {result.error or 'the call failed without a message'}"
            ), None

        async def custom(cond: Custom, value: Any) -> ConditionOutcome:
            return await self._custom(cond, value, checkpoint, scenario, context)

        outcome = await evaluate_condition_async(
            checkpoint.condition, result.data, subject="data", custom=custom
        )
        return (
            ScorerCheckResult(
                id=checkpoint.id,
                description=checkpoint.description,
                passed=outcome.passed,
                actual=_preview(outcome.actual, self.max_actual_chars),
                expected=outcome.expected,
                error=outcome.error,
            ),
            None,
        )

    async def _custom(
        self,
        cond: Custom,
        value: Any,
        checkpoint: Checkpoint,
        scenario: Scenario,
        context: ScorerContext,
    ) -> ConditionOutcome:
        expected = describe_condition(cond, "data")
        if self._registry is None:
            return ConditionOutcome(
                passed=False,
                actual=value,
                expected=expected,
                error="custom condition: no scorer registry to build scorer "
                f"{cond.scorer!r} (run through the profiler, or pass registry=)",
            )
        key = f"{cond.scorer}\0{json.dumps(cond.options, sort_keys=True, default=str)}"
        try:
            scorer = self._custom_scorers.get(key) or self._registry.create(
                "scorers", cond.scorer, dict(cond.options)
            )
        except ProfilerError as exc:
            return ConditionOutcome(
                passed=False,
                actual=value,
                expected=expected,
                error=f"custom condition: {exc}",
            )
        self._custom_scorers[key] = scorer
        sub_context = ScorerContext(
            agent_output=context.agent_output,
            trace=context.trace,
            mode=context.mode,
            model=context.model,
            iteration=context.iteration,
            metadata={
                **context.metadata,
                "checkpoint": {
                    "id": checkpoint.id,
                    "task": checkpoint.task,
                    "input": checkpoint.input,
                    "data": value,
                },
                # the flat keys of the first landing, kept so scorers written against it still work
                "checkpoint_id": checkpoint.id,
                "checkpoint_data": value,
            },
        )
        verdict = scorer.evaluate(scenario, sub_context)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if not isinstance(verdict, ScorerResult):
            return ConditionOutcome(
                passed=False,
                actual=value,
                expected=expected,
                error=f"custom condition: scorer {cond.scorer!r} returned "
                f"{type(verdict).__name__}, expected ScorerResult",
            )
        return ConditionOutcome(
            passed=verdict.success and not verdict.error,
            actual={
                "passed": verdict.passed,
                "total": verdict.total,
                "data": _preview(value, self.max_actual_chars),
            },
            expected=expected,
            error=verdict.error,
        )
