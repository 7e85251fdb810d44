"""``--fail-on`` gates: ``success_rate:-5pp``, ``cost:+10%``, ``wall_ms:+20%``.

A gate names a metric and how far it may move in its bad direction: ``+10%``
means a mean 10% higher (per scenario, see below) is the most a pull request may
add; ``-5pp`` means the success rate may fall 5 percentage points. The change is
estimated scenario by scenario (``stats.stratified``: the log-ratio of means,
paired by iteration where the runs' cells pair; the difference of success rates)
and averaged, so scenarios of different price do not count as noise. Its
outcome, from the one-sided test of "worse than the tolerance":

- ``regression``: the change is past the tolerance: the bound of its one-sided
  interval on the good side lies beyond it, i.e. the p-value of "worse than the
  tolerance", Holm-adjusted across every gate of the job (the gated metrics and
  modes only), is below 1 − confidence. A true change exactly at the tolerance
  fails the job at most 1 − confidence of the time;
- ``pass``: the bound on the bad side lies within the tolerance;
- ``inconclusive``: anything else, and any gate with fewer than ``MIN_ROWS``
  rows that ran in either run. When the point estimate alone is past the
  tolerance it is labelled a *possible regression* (still exit 3).

Validated by simulation in tests/test_stats_validation_compare.py.
"""

from __future__ import annotations

import math
import re
from typing import Literal

import attrs

from ..errors import ConfigError
from ..model.record import Record
from ..stats.stratified import StratifiedChange

#: Short names a gate may use for a metric.
ALIASES = {
    "success": "success_rate",
    "cost": "cost_total_usd",
    "wall": "latency_wall_ms",
    "wall_ms": "latency_wall_ms",
    "latency": "latency_wall_ms",
    "tokens": "tokens_total",
    "active_tokens": "tokens_active",
    "tool_calls": "tool_calls_total",
    "turns": "agent_turns",
}

_GATE = re.compile(
    r"(?P<metric>[A-Za-z0-9_.\-]+)\s*:\s*(?P<sign>[+-])\s*(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>%|pp)"
)

Outcome = Literal["pass", "regression", "inconclusive"]

#: Fewer rows than this (per mode, in either run) and a gate is inconclusive whatever
#: the numbers say.
MIN_ROWS = 5


def canonical(metric: str) -> str:
    """The metric a name or alias means."""
    return ALIASES.get(metric, metric)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Gate(Record):
    """How far one metric may move in its bad direction."""

    text: str
    metric: str
    #: +1 when a rise is bad (cost, time), -1 when a fall is (success rate)
    bad_direction: int
    threshold: float
    unit: Literal["%", "pp"]

    @classmethod
    def parse(cls, text: str) -> Gate:
        """A gate from ``METRIC:+N%``, ``METRIC:-N%`` or ``success_rate:-Npp``; a
        ConfigError says what was expected."""
        match = _GATE.fullmatch(text.strip())
        expected = (
            "expected METRIC:+N% or METRIC:-N% (a median's change) or success_rate:-Npp"
        )
        if not match:
            raise ConfigError(
                f"--fail-on {text!r}: {expected}, e.g. cost:+10% or success_rate:-5pp"
            )
        metric = canonical(match["metric"])
        unit = match["unit"]
        if (unit == "pp") != (metric == "success_rate"):
            raise ConfigError(
                f"--fail-on {text!r}: percentage points (pp) are for "
                "success_rate only, % for other metrics"
            )
        return cls(text=text.strip(), metric=metric, bad_direction=1 if match["sign"] == "+" else -1,
                   threshold=float(match["amount"]), unit=unit)  # type: ignore[arg-type]  # fmt: skip

    def limit(self, kind: str) -> float:
        """The tolerance on the working scale of ``stats.stratified``: a log ratio, or a
        rate difference (signed)."""
        if kind == "ratio":
            return math.log1p(self.bad_direction * self.threshold / 100.0)
        return self.bad_direction * self.threshold / 100.0

    def judge(
        self,
        change: float,
        lower: float,
        upper: float,
        p_adjusted: float,
        alpha: float = 0.05,
    ) -> tuple[Outcome, str]:
        """The outcome for a change, its one-sided bounds (in the gate's unit) and the
        adjusted p of "worse than the tolerance".

        ``lower`` and ``upper`` are each a one-sided ``1 - alpha`` bound (together a ``1
        - 2 alpha`` interval).
        """
        if any(math.isnan(x) for x in (change, lower, upper)):
            return (
                "inconclusive",
                "no interval could be computed (too few rows, or a mean of zero)",
            )
        # Turn everything so that "bad" is positive.
        bad, bad_low, bad_high = (
            (change, lower, upper)
            if self.bad_direction > 0
            else (-change, -upper, -lower)
        )
        limit = self.text.split(":", 1)[1]
        if bad_low > self.threshold and p_adjusted < alpha:
            return (
                "regression",
                f"worse than {limit}: the interval's good end is past it (p "
                f"{_p(p_adjusted)}, Holm over the gates)",
            )
        if bad_high <= self.threshold:
            return "pass", f"the interval's bad end is within {limit}"
        if bad > self.threshold:
            return (
                "inconclusive",
                f"{POSSIBLE}: {_signed(change, self.unit)} is past {limit}, but "
                f"the interval reaches inside it (p {_p(p_adjusted)})",
            )
        return (
            "inconclusive",
            f"the interval reaches past {limit}: more rows would tell",
        )

    def assess(
        self, sc: StratifiedChange, p_adjusted: float, alpha: float = 0.05
    ) -> Assessment:
        """A stratified change judged: its change and one-sided ``1 - alpha`` bounds in
        the gate's unit, outcome and why."""
        lo, hi = (
            sc.interval(1.0 - 2.0 * alpha)
            if math.isfinite(sc.estimate)
            else (math.nan, math.nan)
        )
        change, lower, upper = (
            sc.to_percent(sc.estimate) + 0.0,
            sc.to_percent(lo) + 0.0,
            sc.to_percent(hi) + 0.0,
        )
        if min(sc.base_n, sc.new_n) < MIN_ROWS:
            why = (
                f"fewer than {MIN_ROWS} rows that ran in one of the runs"
                if sc.base_n or sc.new_n
                else "the metric is missing in one of the runs"
            )
            return Assessment(
                change=change, lower=lower, upper=upper, outcome="inconclusive", why=why
            )
        outcome, why = self.judge(change, lower, upper, p_adjusted, alpha)
        return Assessment(
            change=change, lower=lower, upper=upper, outcome=outcome, why=why
        )

    def rows_needed(
        self,
        sc: StratifiedChange,
        margin: float | None = None,
        *,
        alpha: float = 0.05,
        power: float = 0.8,
    ) -> float:
        """Rows per run that make a true change ``margin`` points past the tolerance
        (default: the tolerance again) a regression.

        From the change's standard error at its rows, shrinking as ``1 / sqrt(rows)``;
        nan when unknown.
        """
        points = self.threshold if margin is None else margin
        past = self.bad_direction * (self.threshold + points) / 100.0
        work = (math.log1p(past) if sc.kind == "ratio" else past) - self.limit(sc.kind)
        return sc.rows_for(abs(work), alpha=alpha, power=power)

    def p_value(self, sc: StratifiedChange) -> float:
        """One-sided p-value of "no worse than the tolerance" for a stratified change
        (nan: none)."""
        return sc.p_beyond(self.limit(sc.kind), self.bad_direction)


def rows_from_pilot(gate: Gate, values, scenarios, margin: float | None = None, *, alpha: float = 0.05,
                    power: float = 0.8) -> tuple[float, float, float]:  # fmt: skip
    """Rows per mode two runs need for ``gate`` to catch a change ``margin`` points past
    its tolerance, from one pilot.

    The pilot's rows of a mode stand for both runs (BASE and NEW independent, so unpaired: the
    conservative case). Returns the rows and the range the pilot's variance allows (its
    10th and 90th
    percentiles, chi-square with the strata's degrees of freedom); nan when the pilot cannot tell.
    """
    from ..runner.planning import chi2_quantile
    from ..stats.stratified import stratified_change
    from ..util.arrays import np

    v = np.asarray(values, dtype=np.float64)
    kind = "difference" if gate.metric == "success_rate" else "ratio"
    sc = stratified_change(v, v, kind=kind, base_strata=scenarios, new_strata=scenarios,  # type: ignore[arg-type]
                           base_keys=np.arange(v.size), new_keys=-1 - np.arange(v.size))  # fmt: skip
    needed = gate.rows_needed(sc, margin, alpha=alpha, power=power)
    if not (math.isfinite(needed) and math.isfinite(sc.df)):
        return needed, needed, needed
    return (
        needed,
        needed * sc.df / chi2_quantile(0.9, sc.df),
        needed * sc.df / chi2_quantile(0.1, sc.df),
    )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Assessment(Record):
    """A gate's verdict on one change."""

    change: float
    lower: float
    upper: float
    outcome: Outcome
    why: str


#: the label of an inconclusive gate whose point estimate is past the tolerance
POSSIBLE = "possible regression"


def is_possible(why: str) -> bool:
    """True when a gate's reason labels it a possible regression."""
    return why.startswith(POSSIBLE)


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def _signed(x: float, unit: str) -> str:
    return f"{x:+.1f}{' pp' if unit == 'pp' else '%'}".replace("-", "−")


__all__ = [
    "ALIASES",
    "MIN_ROWS",
    "POSSIBLE",
    "Assessment",
    "Gate",
    "Outcome",
    "canonical",
    "is_possible",
    "rows_from_pilot",
]
