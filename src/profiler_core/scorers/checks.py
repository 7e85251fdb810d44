"""The ``checks`` scorer: conditions on the agent's output and session trace.

A scenario lists its checks under ``extensions.checks``::

    "extensions": {"checks": [
      {"id": "finished", "description": "the agent says it is done",
       "target": "output", "condition": {"type": "matches", "pattern": "^Done:"}},
      {"id": "ran-tests", "target": "trace",
       "condition": {"type": "matches", "path": "events", "pattern": "pytest|npm test"}}
    ]}

Targets: ``output`` (the agent's final text), ``output_json`` (that text parsed
as JSON, also from inside a fenced ```json block) and ``trace`` (the session
trace as its camelCase JSON). The scenario succeeds when every check passes; a
scenario without checks succeeds with 0/0.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from ..errors import ConfigError, ValidationError
from ..model import Scenario, ScorerCheckResult, ScorerContext, ScorerResult
from ..model.record import Record
from ..storage.serde import json_error, structure, unstructure
from .conditions import Condition, describe_condition, evaluate_condition

__all__ = ["TARGETS", "Check", "ChecksScorer", "parse_checks", "parse_output_json"]

#: Where a check looks.
TARGETS = ("output", "output_json", "trace")


def _non_empty(instance, attribute: attrs.Attribute, value) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(
            f"{attribute.name}: expected a non-empty string, got {value!r}"
        )


def _target(instance, attribute: attrs.Attribute, value) -> None:
    if value not in TARGETS:
        raise ValueError(
            f"{attribute.name}: expected one of {', '.join(TARGETS)}, got {value!r}"
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Check(Record):
    """One check of a scenario: a condition on one target."""

    id: str = attrs.field(validator=_non_empty)
    description: str = ""
    target: str = attrs.field(default="output", validator=_target)
    condition: Condition


def parse_checks(scenario: Scenario) -> tuple[Check, ...]:
    """Read ``scenario.extensions["checks"]``; a malformed check raises ``ConfigError``
    naming its index and field."""
    where = f"scenario {scenario.id!r}: extensions.checks"
    raw = scenario.extensions.get("checks")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(
            f"{where}: expected a list of checks, got {type(raw).__name__}"
        )
    checks: list[Check] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(raw):
        try:
            check = structure(item, Check, source=f"{where}[{index}]")
        except ValidationError as exc:
            raise ConfigError(str(exc)) from None
        if check.id in seen:
            raise ConfigError(
                f"{where}[{index}].id: duplicate check id {check.id!r} (also at "
                f"index {seen[check.id]})"
            )
        seen[check.id] = index
        checks.append(check)
    return tuple(checks)


_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n(.*?)```", re.DOTALL)


def parse_output_json(text: str) -> tuple[Any, str | None]:
    """The agent's text as JSON: the whole text, else its first fenced ```json (or bare ```) block.

    Returns ``(value, None)`` or ``(None, reason)``.
    """
    stripped = text.strip()
    try:
        return json.loads(stripped), None
    except json.JSONDecodeError as exc:
        whole_error = exc
    fences = _FENCE.findall(text)
    # A ```json block is the agent's declared answer; fall back to unlabelled blocks.
    candidates = [body for lang, body in fences if lang.lower() == "json"] + [
        body for lang, body in fences if not lang
    ]
    for body in candidates:
        try:
            return json.loads(body), None
        except json.JSONDecodeError as exc:
            return None, f"the ```json block is not valid JSON ({json_error(exc)})"
    if not stripped:
        return None, "the output is empty"
    return None, (
        f"the output is not JSON and has no ```json block ({json_error(whole_error)})"
    )


def _preview(value: Any, limit: int) -> Any:
    """Keep ``actual`` values small enough for a results row."""
    if isinstance(value, str):
        return (
            value if len(value) <= limit else f"{value[:limit]}… ({len(value)} chars)"
        )
    if isinstance(value, (list, tuple, dict)):
        text = json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > limit:
            return f"{text[:limit]}… ({len(text)} chars of JSON)"
    return value


class ChecksScorer:
    """Scores a session by the scenario's ``extensions.checks`` (conditions on output,
    JSON output or trace).

    The scenario's verifiers (``verify:<name>`` checkpoints) count beside the checks: the
    session succeeds only when every check and every verifier passed.
    """

    #: the scenario ``extensions`` keys this scorer scores by (docs/plugins.md)
    scenario_keys = ("checks",)

    id = "checks"

    def __init__(
        self, *, require_checks: bool = False, max_actual_chars: int = 2000
    ) -> None:
        """``require_checks``: a scenario without checks is an error instead of 0/0 success."""
        if not isinstance(require_checks, bool):
            raise ConfigError(
                "scorer 'checks': option require_checks: expected true or "
                f"false, got {require_checks!r}"
            )
        if (
            isinstance(max_actual_chars, bool)
            or not isinstance(max_actual_chars, int)
            or max_actual_chars < 20
        ):
            raise ConfigError(
                "scorer 'checks': option max_actual_chars: expected an integer "
                f">= 20, got {max_actual_chars!r}"
            )
        self.require_checks = require_checks
        self.max_actual_chars = max_actual_chars

    def check_scenario(self, scenario: Scenario) -> None:
        """Raise ``ConfigError`` for malformed checks (called before any session starts)."""
        checks = parse_checks(scenario)
        if not checks and self.require_checks:
            raise ConfigError(f"scenario {scenario.id!r} has no extensions.checks")

    def evaluate(self, scenario: Scenario, context: ScorerContext) -> ScorerResult:
        """Run every check of the scenario against the context."""
        try:
            checks = parse_checks(scenario)
        except ConfigError as exc:
            return ScorerResult(success=False, passed=0, total=0, error=str(exc))
        verified = tuple(
            context.verifications
        )  # the scenario's verifiers count beside its checks
        if not checks and verified:
            passed = sum(d.passed for d in verified)
            return ScorerResult(
                success=passed == len(verified),
                passed=passed,
                total=len(verified),
                details=verified,
            )
        if not checks:
            if self.require_checks:
                return ScorerResult(
                    success=False,
                    passed=0,
                    total=0,
                    error=f"scenario {scenario.id!r} has no extensions.checks",
                )
            return ScorerResult(success=True, passed=0, total=0)

        targets: dict[str, tuple[Any, str | None]] = {}
        output_valid = True
        if any(c.target == "output_json" for c in checks):
            targets["output_json"] = parse_output_json(context.agent_output)
            output_valid = targets["output_json"][1] is None
        if any(c.target == "trace" for c in checks):
            if context.trace is None:
                targets["trace"] = (
                    None,
                    "no session trace (turn on output.session_export or an analyzer)",
                )
            else:
                targets["trace"] = (unstructure(context.trace), None)
        targets["output"] = (context.agent_output, None)

        details = [self._run(check, targets) for check in checks] + list(verified)
        passed = sum(d.passed for d in details)
        return ScorerResult(
            success=passed == len(details),
            passed=passed,
            total=len(details),
            details=tuple(details),
            output_valid=output_valid,
        )

    def _run(
        self, check: Check, targets: dict[str, tuple[Any, str | None]]
    ) -> ScorerCheckResult:
        value, problem = targets[check.target]
        if problem is not None:
            return ScorerCheckResult(
                id=check.id,
                description=check.description,
                passed=False,
                expected=describe_condition(check.condition, check.target),
                error=f"{check.target}: {problem}",
            )
        outcome = evaluate_condition(check.condition, value, subject=check.target)
        return ScorerCheckResult(
            id=check.id,
            description=check.description,
            passed=outcome.passed,
            actual=_preview(outcome.actual, self.max_actual_chars),
            expected=outcome.expected,
            error=f"{check.target}: {outcome.error}" if outcome.error else None,
        )
