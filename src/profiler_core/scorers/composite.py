"""The ``composite`` scorer: several scorers at once, e.g. deterministic checks plus an LLM judge.

::

    scorer:
      id: composite
      options:
        scorers:
          - {id: checks}
          - {id: llm-judge, options: {samples: 3}}

Every check id is prefixed with its scorer's id (``checks:finished``,
``llm-judge:correct``); passed and total are summed; the iteration succeeds
only if every scorer succeeds. The scenario's verifier checkpoints
(``verify:<name>``) count once beside them, and must pass too. See
docs/llm-judge.md.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import attrs

from ..errors import ConfigError, ProfilerError
from ..model import (
    CustomMetric,
    Scenario,
    ScorerCheckResult,
    ScorerContext,
    ScorerResult,
)
from ..util.asyncs import await_me_maybe
from ..util.signature import accepts_keyword

__all__ = ["ADDITIVE_UNITS", "CompositeScorer"]

log = logging.getLogger("agent_profiler")

#: Metrics in these units are summed when two scorers emit the same name (two judges'
#: tokens and cost).
ADDITIVE_UNITS = frozenset({"tokens", "usd", "count"})

_SPEC_KEYS = ("id", "name", "options")


class CompositeScorer:
    """Runs several scorers and merges their checks under ``<scorer id>:`` prefixes."""

    id = "composite"

    def __init__(
        self,
        *,
        scorers: Sequence[Any] = (),
        registry: Any = None,
        judge: Any = None,
    ) -> None:
        where = "scorer 'composite': options.scorers"
        if (
            isinstance(scorers, str | bytes | Mapping)
            or not isinstance(scorers, Sequence)
            or not scorers
        ):
            raise ConfigError(
                f"{where}: expected a non-empty list of {{id, options}} entries, got {scorers!r}"
            )
        self._registry = registry
        self._judge = judge
        self.scorers: list[tuple[str, Any]] = []
        for index, spec in enumerate(scorers):
            prefix, scorer = self._build(spec, f"{where}[{index}]")
            if any(prefix == existing for existing, _ in self.scorers):
                raise ConfigError(
                    f"{where}[{index}]: scorer {prefix!r} appears twice; give "
                    "one a distinct `name` so its check ids stay unique"
                )
            self.scorers.append((prefix, scorer))

    @property
    def scenario_keys(self) -> tuple[str, ...] | None:
        """What its scorers score by, together (None when one of them does not say)."""
        from .coverage import scenario_keys_of

        keys: list[str] = []
        for _, scorer in self.scorers:
            own = scenario_keys_of(scorer)
            if own is None:
                return None
            keys += own
        return tuple(dict.fromkeys(keys))

    def _build(self, spec: Any, where: str) -> tuple[str, Any]:
        if callable(getattr(spec, "evaluate", None)):
            # A scorer object (Python API): use it as is.
            scorer_id = getattr(spec, "id", None)
            if not isinstance(scorer_id, str) or not scorer_id:
                raise ConfigError(f"{where}: scorer object {spec!r} has no string `id`")
            return scorer_id, spec
        scorer_id, name, options = _spec_fields(spec, where)
        registry = self._registry_or_default()
        try:
            info = registry.get("scorers", scorer_id)
            extra: dict[str, Any] = {}
            # Sub-scorers receive what the runner would give a top-level scorer (nested
            # composites too).
            if self._judge is not None and accepts_keyword(info.factory, "judge"):
                extra["judge"] = self._judge
            if accepts_keyword(info.factory, "registry"):
                extra["registry"] = registry
            scorer = registry.create("scorers", scorer_id, {**options, **extra})
        except ProfilerError as exc:
            raise ConfigError(f"{where} ({scorer_id}): {exc}") from None
        return name, scorer

    def _registry_or_default(self) -> Any:
        if self._registry is None:
            # Built in Python without a registry: use the installed plugins, as the CLI would.
            from ..plugins.manager import get_plugin_manager

            self._registry = get_plugin_manager().registry
        return self._registry

    async def evaluate(
        self, scenario: Scenario, context: ScorerContext
    ) -> ScorerResult:
        """Run every scorer in order and merge their results."""
        merged = _Merged()
        for prefix, scorer in self.scorers:
            try:
                result = await await_me_maybe(scorer.evaluate(scenario, context))
                if not isinstance(result, ScorerResult):
                    raise TypeError(
                        f"returned {type(result).__name__}, expected ScorerResult"
                    )
            # one broken scorer must not hide the others' verdicts
            except Exception as exc:  # noqa: BLE001
                log.warning(
                    "scorer %r raised inside composite: %s: %s",
                    prefix,
                    type(exc).__name__,
                    exc,
                )
                merged.add_failure(prefix, exc)
                continue
            merged.add(prefix, result)
        merged.add_verifications(context.verifications)
        return merged.result()


@attrs.define
class _Merged:
    """The sub-scorers' results as they are merged, in order."""

    details: list[ScorerCheckResult] = attrs.Factory(list)
    metrics: dict[str, CustomMetric] = attrs.Factory(dict)
    passed: int = 0
    total: int = 0
    success: bool = True
    output_valid: bool = True
    errors: list[str] = attrs.Factory(list)

    def add(self, prefix: str, result: ScorerResult) -> None:
        """One scorer's result, its check ids prefixed with its name."""
        self.details += [_prefixed(prefix, d) for d in result.details]
        self.passed += result.passed
        self.total += result.total
        self.success = self.success and result.success
        self.output_valid = self.output_valid and result.output_valid
        if result.error:
            # A scorer that could not score (e.g. its judge was unreachable) is an error, so
            # the runner may retry.
            self.errors.append(f"{prefix}: {result.error}")
        for metric in result.metrics:
            _merge_metric(self.metrics, metric)

    def add_failure(self, prefix: str, exc: Exception) -> None:
        """A scorer that raised: one failed check in its name."""
        self.details.append(
            ScorerCheckResult(
                id=f"{prefix}:error",
                description=f"scorer {prefix!r} raised an error",
                passed=False,
                error=f"{type(exc).__name__}: {exc}",
            )
        )
        self.total += 1
        self.success = self.output_valid = False

    def add_verifications(self, verifications: Sequence[ScorerCheckResult]) -> None:
        """The verifiers' checkpoints count once, beside the scorers' own (unless a scorer
        has them)."""
        # A sub-scorer that counts the verifiers itself (``checks``) has them as
        # ``<prefix>:verify:<name>`` (nested: ``<a>:<b>:verify:<name>``). Whole segments
        # only: a check of its own named ``pre-verify:x`` is not the verifier ``x``.
        verified = [d for d in verifications if not self._has(d.id)]
        if not verified:
            return
        self.details += verified
        self.passed += sum(d.passed for d in verified)
        self.total += len(verified)
        self.success = self.success and all(d.passed for d in verified)

    def _has(self, check_id: str) -> bool:
        return any(
            x.id == check_id or x.id.endswith(":" + check_id) for x in self.details
        )

    def result(self) -> ScorerResult:
        """The merged result; an error of any scorer fails it."""
        source = self.metrics.get("judge_cost_source")
        if source is not None and source.value == "unknown":
            # One judge's price is unknown: a partial sum would understate the judges' cost.
            self.metrics.pop("judge_cost_usd", None)
        return ScorerResult(
            success=self.success and not self.errors,
            passed=self.passed,
            total=self.total,
            details=self.details,
            output_valid=self.output_valid,
            error="; ".join(self.errors) or None,
            metrics=list(self.metrics.values()),
        )


def _spec_fields(spec: Any, where: str) -> tuple[str, str, Mapping[str, Any]]:
    """A sub-scorer's ``{id, name, options}``, each checked."""
    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"{where}: expected a mapping {{id, options}}, got {type(spec).__name__}"
        )
    unknown = sorted(set(spec) - set(_SPEC_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(map(str, unknown))} (expected "
            f"{', '.join(_SPEC_KEYS)})"
        )
    scorer_id = spec.get("id")
    if not isinstance(scorer_id, str) or not scorer_id:
        raise ConfigError(f"{where}.id: expected a scorer id, got {scorer_id!r}")
    name = spec.get("name", scorer_id)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}.name: expected a non-empty string, got {name!r}")
    options = spec.get("options") or {}
    if not isinstance(options, Mapping):
        raise ConfigError(
            f"{where}.options: expected a mapping, got {type(options).__name__}"
        )
    return scorer_id, name, options


def _prefixed(prefix: str, detail: ScorerCheckResult) -> ScorerCheckResult:
    return ScorerCheckResult(
        id=f"{prefix}:{detail.id}",
        description=detail.description,
        passed=detail.passed,
        actual=detail.actual,
        expected=detail.expected,
        error=detail.error,
    )


def _is_number(value: object) -> TypeGuard[int | float]:
    """A number that can be summed (booleans are not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _merge_metric(metrics: dict[str, CustomMetric], metric: CustomMetric) -> None:
    existing = metrics.get(metric.name)
    if existing is None:
        metrics[metric.name] = metric
        return
    old, new = existing.value, metric.value
    if (
        _is_number(old)
        and _is_number(new)
        and existing.unit == metric.unit
        and metric.unit in ADDITIVE_UNITS
    ):
        metrics[metric.name] = CustomMetric(
            name=metric.name, value=old + new, unit=metric.unit
        )
    elif metric.name.endswith("_source") and existing.value != metric.value:
        # e.g. one judge priced by its provider, one computed: "computed" is the honest
        # summary, "unknown" wins.
        order = ("unknown", "computed", "provider")
        best = min(
            (existing.value, metric.value),
            key=lambda v: order.index(v) if v in order else 0,
        )
        metrics[metric.name] = CustomMetric(
            name=metric.name, value=best, unit=metric.unit
        )
    # Otherwise the first scorer's value stands.
