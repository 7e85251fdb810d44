"""``checkpoint`` scorer: did the agent really change GitHub? Each checkpoint calls a capability and tests its data.

A scenario's checkpoints are ``assertions.checkpoints`` of the original's
scenario format, carried in ``Scenario.extensions`` (``extensions.assertions``
or ``extensions.checkpoints``)::

    {"id": "issue-closed", "description": "the issue is closed",
     "task": "issue.view", "input": {"owner": "o", "name": "r", "issueNumber": 7},
     "condition": {"type": "field_equals", "path": "state", "value": "CLOSED"}}

Conditions are profiler_core's (``profiler_core.conditions``); ``custom`` names
a registered scorer that decides on the capability's data.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from profiler_core import ProfilerError, ScorerCheckResult, ScorerContext, ScorerResult
from profiler_core.conditions import Custom, describe_condition, evaluate_condition, parse_condition, resolve_path

from .capabilities import CapabilityExecutor, CapabilityResult


def scenario_checkpoints(scenario: Any) -> list[Mapping[str, Any]]:
    """The checkpoints of a scenario (``extensions.assertions.checkpoints`` or ``extensions.checkpoints``)."""
    ext = getattr(scenario, "extensions", None) or {}
    assertions = ext.get("assertions")
    raw = assertions.get("checkpoints") if isinstance(assertions, Mapping) else ext.get("checkpoints")
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(c, Mapping) for c in raw):
        raise ProfilerError(f"scenario {scenario.id}: assertions.checkpoints: expected a list of checkpoint objects")
    return list(raw)


class CheckpointScorer:
    """Runs each checkpoint's capability against GitHub and tests its condition; success = all pass (at least one)."""

    id = "checkpoint"

    def __init__(self, *, executor: CapabilityExecutor | None = None, registry: Any = None, **options: Any) -> None:
        self._executor = executor
        self._registry = registry
        self.options = options

    @property
    def executor(self) -> CapabilityExecutor:
        """The capability executor (built from the options on first use: a token is needed only then)."""
        if self._executor is None:
            from .capabilities import default_executor

            self._executor = default_executor(self.options)
        return self._executor

    def check_scenario(self, scenario: Any) -> list[str]:
        """Problems of a scenario's checkpoints, found before any session runs."""
        problems: list[str] = []
        try:
            checkpoints = scenario_checkpoints(scenario)
        except ProfilerError as exc:
            return [str(exc)]
        for i, cp in enumerate(checkpoints):
            where = f"scenario {scenario.id}: assertions.checkpoints[{i}]"
            for key in ("id", "task"):
                if not isinstance(cp.get(key), str) or not cp.get(key):
                    problems.append(f"{where}.{key}: expected a non-empty string")
            if not isinstance(cp.get("input", {}), Mapping):
                problems.append(f"{where}.input: expected an object")
            try:
                parse_condition(cp.get("condition"), source=f"{where}.condition")
            except ProfilerError as exc:
                problems.append(str(exc))
        return problems

    async def evaluate(self, scenario: Any, context: ScorerContext) -> ScorerResult:
        """Score one session: every checkpoint against live GitHub state."""
        problems = self.check_scenario(scenario)
        if problems:
            return ScorerResult(success=False, passed=0, total=0, error="; ".join(problems))
        details = [await self._checkpoint(cp, scenario, context) for cp in scenario_checkpoints(scenario)]
        passed = sum(d.passed for d in details)
        return ScorerResult(success=bool(details) and passed == len(details), passed=passed, total=len(details), details=details)

    async def _checkpoint(self, cp: Mapping[str, Any], scenario: Any, context: ScorerContext) -> ScorerCheckResult:
        cid, description = str(cp["id"]), str(cp.get("description", ""))
        condition = parse_condition(cp["condition"])
        try:
            result: CapabilityResult = await self.executor.run(str(cp["task"]), dict(cp.get("input") or {}))
        except Exception as exc:  # noqa: BLE001 - a broken executor fails the checkpoint, not the run
            result = CapabilityResult(ok=False, error=f"{type(exc).__name__}: {exc}")
        expected = describe_condition(condition, "data")
        if not result.ok:
            return ScorerCheckResult(
                id=cid, description=description, passed=False, expected=expected,
                error=f"{cp['task']} failed: {result.error or 'no reason given'}",
            )
        if isinstance(condition, Custom):
            return await self._custom(cid, description, condition, result.data, scenario, context, expected)
        outcome = evaluate_condition(condition, result.data, subject="data")
        return ScorerCheckResult(
            id=cid, description=description, passed=outcome.passed, actual=outcome.actual, expected=outcome.expected,
            error=outcome.error,
        )

    async def _custom(self, cid, description, condition: Custom, data, scenario, context, expected) -> ScorerCheckResult:
        """A ``custom`` condition: the named scorer evaluates the session with the checkpoint's data in its metadata."""
        try:
            value = resolve_path(data, condition.path)
            if self._registry is None:
                raise ProfilerError("no scorer registry (the checkpoint scorer was built outside a profile)")
            scorer = self._registry.create("scorers", condition.scorer, dict(condition.options))
            sub_context = ScorerContext(
                agent_output=context.agent_output, trace=context.trace, mode=context.mode, model=context.model,
                iteration=context.iteration, metadata={**context.metadata, "checkpoint_id": cid, "checkpoint_data": value},
            )
            verdict = scorer.evaluate(scenario, sub_context)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except ProfilerError as exc:
            return ScorerCheckResult(id=cid, description=description, passed=False, expected=expected, error=str(exc))
        return ScorerCheckResult(
            id=cid, description=description, passed=bool(verdict.success and not verdict.error), actual=value,
            expected=expected, error=verdict.error,
        )
