"""Sequential stopping (``execution.stop: decided``): after each round, is every comparison decided?

A run under a stop rule proceeds in rounds (one repetition of every cell). After
each round this module computes, for every (model, mode vs baseline, metric), an
anytime-valid confidence sequence (``stats.sequential``: a betting sequence of the
paired difference for success; for cost, time, tokens... of each pair's symmetric
relative difference ``(a - b) / (a + b)``, a bounded effect, see ``sequence``) and
says whether it is *decided*: the interval excludes zero (a difference, with its
direction) or lies inside the equivalence margin (no meaningful difference). The
run stops when every comparison is decided (after ``min_repetitions``), at
``max_repetitions``, or when the budget runs out. See docs/statistics.md,
"Sequential stopping".

How the runner calls it (the round loop is the runner's)::

    from profiler_core.runner.stopping import StopRule

    rule = StopRule.for_config(config)        # None: no execution.stop, a fixed design
    ...
    # once round r (0-based) is complete - every cell with iteration <= r has its final row:
    decision = rule.check(rows, rounds=r + 1, budget_exhausted=budget.exhausted)
    if decision.stop:
        # start no further round; cells of round r + 1 already started may finish and are kept
        manifest = attrs.evolve(manifest, stop=decision.record())

``rows`` are the run's ``ProfileRow`` objects so far, in any order (a resumed run's
earlier rows included). Warm-up rows (iteration -1) and rows of iterations ``>=
rounds`` are ignored, so cells of the next round that finished early change
nothing until that round is checked. A row pairs with the baseline's row of the
same (model, scenario, iteration). ``check`` is pure and takes a few
milliseconds; call it outside the trio loop's hot path if rows are many
(``trio.to_thread.run_sync``). ``rule.max_repetitions`` is how many rounds the
runner may start at most (``config.execution.repetitions`` equals it).

**Errored rows** (``row.error`` set after its retries) measure the set-up's failure,
not the agent, so a pair with an errored row is left out of every metric's
sequence, as the report leaves errored rows out of its comparisons. When half or
more of a mode's (or the baseline's) rows so far errored, its comparisons are
"undecided: too many errors", as the report then gives no verdict; the run then
goes on to ``max_repetitions`` (or its budget), where the report says why.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ..config.schema import StopSettings
from ..model import ProfileRow, StopRecord
from ..model.record import Record
from ..model.run import StopReason
from ..stats.sequential import betting_cs
from ..util.arrays import np

if TYPE_CHECKING:  # pragma: no cover
    from ..config.loader import ProfilerConfig

__all__ = [
    "REPORT_METRICS",
    "Comparison",
    "MetricSequence",
    "Observations",
    "StopDecision",
    "StopRule",
    "family_level",
    "ratio_of",
    "relative_pairs",
    "row_value",
    "sequence",
    "settings_from_record",
    "settings_record",
]

#: stop metric -> the report's name of the same column (report/summary.py)
REPORT_METRICS = {
    "success": "success",
    "cost": "cost_total_usd",
    "wall_ms": "latency_wall_ms",
    "tokens": "tokens_total",
    "tool_calls": "tool_calls_total",
    "turns": "agent_turns",
}
#: metrics whose per-row value lies in [0, 1], so the paired difference lies in [-1, 1]
BOUNDED = frozenset({"success"})
#: How the rule's betting sequences stake (``stats.sequential.BETS``): half the capital
#: as the paper's
#: aGRAPA, half with a bold gambler (decides large effects in fewer rounds; exact all the same).
#: bench/bench_sequential.py measures it.
STAKING: dict[str, Any] = {"bets": "mixture"}

Outcome = Literal["higher", "lower", "equivalent", "undecided"]


def row_value(row: ProfileRow, metric: str) -> float:
    """The value of a stop metric in one row (nan when unknown), as the report reads it."""
    if metric == "success":
        return 1.0 if row.success else 0.0
    if metric == "cost":
        ext = row.extensions
        # The cost collector's figure wins over the provider's; "unknown" pricing is
        # missing, never $0.
        priced = ext.get("cost_total_usd")
        if isinstance(priced, int | float) and not isinstance(priced, bool):
            return float(priced)
        return (
            math.nan
            if ext.get("cost_source") == "unknown"
            else float(row.cost.total_usd)
        )
    if metric == "wall_ms":
        return float(row.timing.wall_ms)
    if metric == "tokens":
        return float(row.tokens.total)
    if metric == "tool_calls":
        return float(row.tool_calls.total)
    if metric == "turns":
        return math.nan if row.agent_turns is None else float(row.agent_turns)
    raise KeyError(metric)


@attrs.frozen(kw_only=True, eq=False)
class Observations:
    """The columns a stop decision reads, one entry per row (the report builds them from
    its table)."""

    model: np.ndarray
    mode: np.ndarray
    scenario: np.ndarray
    iteration: np.ndarray
    errored: np.ndarray
    #: stop metric -> value per row (nan: unknown)
    values: dict[str, np.ndarray]

    @classmethod
    def from_rows(
        cls, rows: Iterable[ProfileRow], metrics: Sequence[str]
    ) -> Observations:
        """Columns of ``rows`` (warm-up rows left out)."""
        kept = [r for r in rows if r.iteration >= 0]
        return cls(
            model=np.array([r.model for r in kept], dtype=object),
            mode=np.array([r.mode for r in kept], dtype=object),
            scenario=np.array([r.scenario_id for r in kept], dtype=object),
            iteration=np.array([r.iteration for r in kept], dtype=np.int64),
            errored=np.array([r.error is not None for r in kept], dtype=bool),
            values={
                m: np.array([row_value(r, m) for r in kept], dtype=np.float64)
                for m in metrics
            },
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Comparison(Record):
    """One (model, mode vs baseline, metric) after the latest round: its interval and
    whether it is decided."""

    model: str
    mode: str
    baseline: str
    metric: str
    #: confidence sequence of mean(mode - baseline) per pair, in the metric's unit
    #: (success: a rate difference)
    lower: float
    upper: float
    estimate: float
    #: mean of the baseline over the pairs used (relative margins and percentages are of this)
    baseline_mean: float
    #: the equivalence margin in the metric's unit (0: equivalence is never declared)
    margin: float
    pairs: int
    #: the level of this one interval (the stop confidence shared by every comparison
    #: and metric of the run)
    confidence: float
    method: str
    outcome: Outcome
    #: why it is (un)decided, in a few words
    why: str

    @property
    def decided(self) -> bool:
        """True when the interval excludes zero or lies inside the margin."""
        return self.outcome != "undecided"

    def relative(self, value: float) -> float:
        """``value`` as a percentage of the baseline's mean (nan when that is 0 or unknown)."""
        base = abs(self.baseline_mean)
        return value / base * 100.0 if base > 0 and math.isfinite(base) else math.nan


@attrs.frozen(kw_only=True, repr=False, eq=False)
class StopDecision(Record):
    """What ``StopRule.check`` says after a round."""

    stop: bool
    reason: StopReason | None
    rounds: int
    comparisons: tuple[Comparison, ...]
    settings: StopSettings

    @property
    def undecided(self) -> tuple[Comparison, ...]:
        """The comparisons still open."""
        return tuple(c for c in self.comparisons if not c.decided)

    def record(self) -> StopRecord:
        """The manifest's ``stop`` entry (only for a decision that stops)."""
        if self.reason is None:
            raise ValueError("record(): the run does not stop yet")
        return StopRecord(
            reason=self.reason,
            repetitions=self.rounds,
            settings=settings_record(self.settings),
        )


def settings_record(settings: StopSettings) -> dict[str, Any]:
    """The settings as plain JSON with the profile's keys (kept in the manifest)."""
    data = attrs.asdict(settings)
    data["metrics"] = list(settings.metrics)
    return data


def settings_from_record(data: dict[str, Any]) -> StopSettings:
    """The settings a manifest recorded (``settings_record``); defaults where it recorded none."""
    from ..storage.serde import structure

    return structure(data or {}, StopSettings)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class StopRule(Record):
    """The stop rule of one run: its settings, the baseline and the modes compared with it."""

    settings: StopSettings
    baseline: str
    modes: tuple[str, ...]

    @classmethod
    def for_config(cls, config: ProfilerConfig) -> StopRule | None:
        """The rule of a loaded profile, or None when it has no ``execution.stop``."""
        settings = config.execution.stop
        if settings is None:
            return None
        return cls(
            settings=settings,
            baseline=settings.baseline or config.modes[0],
            modes=tuple(config.modes),
        )

    @property
    def max_repetitions(self) -> int:
        """The most rounds the run may start."""
        return self.settings.max_repetitions

    def check(
        self, rows: Iterable[ProfileRow], *, rounds: int, budget_exhausted: bool = False
    ) -> StopDecision:
        """After ``rounds`` complete rounds: every comparison's interval, and whether
        (and why) to stop."""
        obs = Observations.from_rows(rows, self.settings.metrics)
        return self.check_observations(
            obs, rounds=rounds, budget_exhausted=budget_exhausted
        )

    def check_observations(
        self, obs: Observations, *, rounds: int, budget_exhausted: bool = False
    ) -> StopDecision:
        """``check`` on columns (the report's path)."""
        comparisons = tuple(self.comparisons(obs, rounds))
        s = self.settings
        reason: StopReason | None = None
        if (
            rounds >= s.min_repetitions
            and comparisons
            and all(c.decided for c in comparisons)
        ):
            reason = "decided"
        elif rounds >= s.max_repetitions:
            reason = "max_repetitions"
        elif budget_exhausted:
            reason = "budget"
        return StopDecision(
            stop=reason is not None,
            reason=reason,
            rounds=rounds,
            comparisons=comparisons,
            settings=s,
        )

    def comparisons(self, obs: Observations, rounds: int) -> Iterable[Comparison]:
        """Every (model, mode vs baseline, metric) comparison over the first ``rounds`` rounds."""
        models = list(dict.fromkeys(obs.model.tolist()))
        others = [mode for mode in self.modes if mode != self.baseline]
        each = self.level(len(models) * len(others))
        for model in models:
            for mode in others:
                yield from self._compare_modes(obs, model, mode, rounds, each)

    def level(self, comparisons: int) -> float:
        """The level of each interval: the run's error shared by every (model, mode,
        metric) it decides on.

        Bonferroni across the run's comparisons and metrics, so the chance of any false decision in
        the run is at most ``1 - confidence`` (family-wise, not per comparison), at every look.
        """
        return family_level(
            self.settings.confidence, max(1, comparisons) * len(self.settings.metrics)
        )

    def _compare_modes(
        self, obs: Observations, model: str, mode: str, rounds: int, each: float
    ) -> Iterable[Comparison]:
        s = self.settings
        in_time = (obs.iteration >= 0) & (obs.iteration < rounds) & (obs.model == model)
        sel_a, sel_b = (
            in_time & (obs.mode == mode),
            in_time & (obs.mode == self.baseline),
        )
        scenarios, column = np.unique(
            obs.scenario[sel_a | sel_b].astype(str), return_inverse=True
        )
        width = max(1, scenarios.size)
        cell = np.full(obs.mode.shape, -1, dtype=np.int64)
        cell[sel_a | sel_b] = obs.iteration[sel_a | sel_b] * width + column
        errors = _too_many_errors(obs, sel_a, mode) or _too_many_errors(
            obs, sel_b, self.baseline
        )
        for metric in s.metrics:
            a = _grid(obs, sel_a, cell, metric, rounds * width)
            b = _grid(obs, sel_b, cell, metric, rounds * width)
            yield self._compare(model, mode, metric, a, b, width, each, errors)

    def _compare(
        self,
        model: str,
        mode: str,
        metric: str,
        a: np.ndarray,
        b: np.ndarray,
        width: int,
        level: float,
        errors: str | None,
    ) -> Comparison:
        diff = a - b
        pairs = int((~np.isnan(diff)).sum())
        seq = sequence(
            metric,
            diff[None, :],
            b[None, :],
            self.settings,
            width=width,
            confidence=level,
        )
        lower, upper = float(seq.lower[0, -1]), float(seq.upper[0, -1])
        margin = float(seq.margin[0, -1])
        outcome, why = _outcome(lower, upper, margin, errors, pairs)
        return Comparison(
            model=model, mode=mode, baseline=self.baseline, metric=metric, lower=lower, upper=upper,
            estimate=float(seq.estimate[0, -1]), baseline_mean=float(seq.baseline_mean[0, -1]),
            margin=margin if math.isfinite(margin) else 0.0, pairs=pairs, confidence=level, method=seq.method,
            outcome=outcome, why=why,
        )  # fmt: skip


@attrs.frozen(kw_only=True, eq=False)
class MetricSequence:
    """A metric's confidence sequence with its margin and decision after each round:
    arrays (experiments, rounds)."""

    lower: np.ndarray
    upper: np.ndarray
    estimate: np.ndarray
    baseline_mean: np.ndarray
    #: the equivalence margin in the metric's unit (a relative one follows the
    #: baseline's running mean)
    margin: np.ndarray
    #: +1 higher, -1 lower (the interval excludes 0), 2 equivalent (inside the margin), 0 undecided
    outcome: np.ndarray
    method: str


HIGHER, LOWER, EQUIVALENT, UNDECIDED = 1, -1, 2, 0


def family_level(confidence: float, tests: int) -> float:
    """Each of ``tests`` intervals' level so that all hold at once with ``confidence``
    (Bonferroni)."""
    return 1.0 - (1.0 - confidence) / max(1, tests)


def relative_pairs(diff: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Each pair's symmetric relative difference ``(a - b) / (a + b)`` in [-1, 1] (0
    when both are 0; nan: no pair).

    ``a = diff + baseline`` is the candidate's value. The metrics it is used for (cost,
    time, tokens,
    counts) are never negative; a negative value from a damaged row is clipped to 0.
    """
    b = np.maximum(baseline, 0.0)
    a = np.maximum(diff + baseline, 0.0)
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(total > 0, (a - b) / total, 0.0)
    return np.where(np.isnan(diff), math.nan, np.clip(r, -1.0, 1.0))


def ratio_of(r: np.ndarray | float) -> np.ndarray:
    """The per-pair ratio ``a / b`` a symmetric relative difference ``r`` stands for:
    ``(1 + r) / (1 - r)``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(r >= 1.0, np.inf, (1.0 + np.asarray(r)) / (1.0 - np.asarray(r)))


def sequence(
    metric: str,
    diff: np.ndarray,
    baseline: np.ndarray,
    settings: StopSettings,
    *,
    width: int,
    confidence: float,
) -> MetricSequence:
    """The sequence and decisions of paired differences ``diff`` (experiments x
    rounds*width, nan: no pair).

    The one computation behind ``StopRule.check``, the report, ``profiler plan`` and the benchmark.
    ``baseline`` holds the baseline's values of the same pairs (for relative margins).

    Success: a betting sequence for the mean paired difference (exact: it lies in [-1, 1]). Every
    other metric is unbounded, and no test of a mean is valid for every shape without a bound
    (Bahadur & Savage, 1956): it is decided on a bounded effect instead, the mean of each pair's
    symmetric relative difference ``r = (a - b) / (a + b)`` in [-1, 1], with the same
    betting sequence
    (exact at every look, whatever the shapes). Its interval is reported as the per-pair ratio
    ``(1 + r) / (1 - r)`` times the baseline's mean, and a relative margin ``m`` is ``m
    / (2 + m)`` on r
    (a ratio within ``[1 / (1 + m), 1 + m]``).
    """
    rounds = diff.shape[1] // width
    value, kind = settings.margin(metric)
    used = ~np.isnan(diff)
    base = np.where(used, baseline, 0.0)
    ends = np.arange(width - 1, diff.shape[1], width)
    with np.errstate(invalid="ignore", divide="ignore"):
        base_mean = np.cumsum(base, axis=1)[:, ends] / np.cumsum(used, axis=1)[:, ends]
    margin = (
        np.abs(base_mean) * value
        if kind == "relative"
        else np.full(base_mean.shape, value)
    )
    if metric in BOUNDED:
        cs = betting_cs(
            diff,
            bounds=(-1.0, 1.0),
            confidence=confidence,
            block=width,
            include=(0.0, -value, value),
            **STAKING,
        )
        lower, upper, estimate = (
            cs.lower.reshape(-1, rounds),
            cs.upper.reshape(-1, rounds),
            cs.estimate.reshape(-1, rounds),
        )
        decide_lower, decide_upper, decide_margin = lower, upper, margin
    else:
        # The margin as a share of the baseline, then on r's scale.
        with np.errstate(invalid="ignore", divide="ignore"):
            share = (
                np.full(base_mean.shape, value)
                if kind == "relative"
                else value / np.abs(base_mean)
            )
        decide_margin = np.where(np.isfinite(share), share / (2.0 + share), 0.0)
        fixed = value / (2.0 + value) if kind == "relative" else None
        include = (0.0, -fixed, fixed) if fixed is not None else (0.0,)
        r = relative_pairs(diff, baseline)
        cs = betting_cs(
            r,
            bounds=(-1.0, 1.0),
            confidence=confidence,
            block=width,
            include=include,
            **STAKING,
        )
        decide_lower, decide_upper = (
            cs.lower.reshape(-1, rounds),
            cs.upper.reshape(-1, rounds),
        )
        scale = np.abs(base_mean)
        lower, upper = (
            (ratio_of(decide_lower) - 1.0) * scale,
            (ratio_of(decide_upper) - 1.0) * scale,
        )
        estimate = (ratio_of(cs.estimate.reshape(-1, rounds)) - 1.0) * scale
    outcome = np.full(decide_lower.shape, UNDECIDED, dtype=np.int8)
    inside = (
        (decide_margin > 0)
        & (-decide_margin < decide_lower)
        & (decide_upper < decide_margin)
    )
    outcome[inside] = EQUIVALENT
    outcome[decide_upper < 0] = LOWER
    outcome[decide_lower > 0] = HIGHER
    method = cs.method if metric in BOUNDED else f"{cs.method} on (a - b) / (a + b)"
    return MetricSequence(
        lower=lower, upper=upper, estimate=estimate, baseline_mean=base_mean, margin=margin, outcome=outcome, method=method,
    )  # fmt: skip


def _grid(
    obs: Observations, selected: np.ndarray, cell: np.ndarray, metric: str, size: int
) -> np.ndarray:
    """A metric's values laid out by (round, scenario); nan where the cell is missing or errored."""
    out = np.full(size, math.nan)
    ok = selected & ~obs.errored
    out[cell[ok]] = obs.values[metric][ok]
    return out


def _too_many_errors(obs: Observations, selected: np.ndarray, mode: str) -> str | None:
    """Why a mode's comparisons cannot be decided because of errors (half or more of its
    rows), or None."""
    rows = int(selected.sum())
    errored = int((selected & obs.errored).sum())
    if rows and errored * 2 >= rows:
        return f"too many errors ({errored} of {rows} {mode} rows)"
    return None


def _outcome(
    lower: float, upper: float, margin: float, errors: str | None, pairs: int
) -> tuple[Outcome, str]:
    """Decided as higher / lower (excludes 0), equivalent (inside the margin), or not yet."""
    if errors:
        return "undecided", errors
    if pairs == 0:
        return "undecided", "no pairs yet"
    if lower > 0:
        return "higher", "the interval excludes 0"
    if upper < 0:
        return "lower", "the interval excludes 0"
    if margin > 0 and -margin < lower and upper < margin:
        return "equivalent", "the interval lies inside the margin"
    if not (math.isfinite(lower) and math.isfinite(upper)):
        return "undecided", "too few pairs for an interval"
    return "undecided", "the interval holds 0 and reaches past the margin"
