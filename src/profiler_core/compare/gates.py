"""``--fail-on`` gates: ``success_rate:-5pp``, ``cost:+10%``, ``wall_ms:+20%``.

A gate names a metric and how far it may move in its bad direction: ``+10%``
means a median 10% higher is the most a pull request may add; ``-5pp`` means
the success rate may fall 5 percentage points. Its outcome, from the change's
confidence interval (NEW against BASE):

- ``regression``: the change is beyond the threshold *and* statistically real:
  its interval excludes no change and its permutation p-value, Holm-adjusted
  across the metrics of the mode, is below 1 − confidence (a percentile
  bootstrap alone is too optimistic on a handful of rows; the permutation test
  is not);
- ``pass``: the interval rules out a move beyond the threshold (its bad end is
  within it);
- ``inconclusive``: anything else, and any gate with fewer than ``MIN_ROWS``
  rows that ran in either run — the samples are too small to tell.
"""

from __future__ import annotations

import math
import re
from typing import Literal

import attrs

from ..errors import ConfigError
from ..model.record import Record

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

_GATE = re.compile(r"(?P<metric>[A-Za-z0-9_.\-]+)\s*:\s*(?P<sign>[+-])\s*(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>%|pp)")

Outcome = Literal["pass", "regression", "inconclusive"]

#: Fewer rows than this (per mode, in either run) and a gate is inconclusive whatever the numbers say.
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
        """A gate from ``METRIC:+N%``, ``METRIC:-N%`` or ``success_rate:-Npp``; a ConfigError says what was expected."""
        match = _GATE.fullmatch(text.strip())
        expected = "expected METRIC:+N% or METRIC:-N% (a median's change) or success_rate:-Npp"
        if not match:
            raise ConfigError(f"--fail-on {text!r}: {expected}, e.g. cost:+10% or success_rate:-5pp")
        metric = canonical(match["metric"])
        unit = match["unit"]
        if (unit == "pp") != (metric == "success_rate"):
            raise ConfigError(f"--fail-on {text!r}: percentage points (pp) are for success_rate only, % for other metrics")
        return cls(text=text.strip(), metric=metric, bad_direction=1 if match["sign"] == "+" else -1,
                   threshold=float(match["amount"]), unit=unit)  # type: ignore[arg-type]  # fmt: skip

    def judge(self, change: float, lower: float, upper: float, p_adjusted: float, alpha: float = 0.05) -> tuple[Outcome, str]:
        """The outcome of this gate for a change, its interval (in the gate's unit) and its adjusted p, and why in words."""
        if any(math.isnan(x) for x in (change, lower, upper)):
            return "inconclusive", "no interval could be computed (too few rows, or a baseline of zero)"
        # Turn everything so that "bad" is positive.
        bad, bad_low, bad_high = (change, lower, upper) if self.bad_direction > 0 else (-change, -upper, -lower)
        unit = self.unit
        limit = self.text.split(":", 1)[1]
        if bad > self.threshold and bad_low > 0 and p_adjusted < alpha:
            return "regression", f"{_signed(change, unit)} is beyond {limit}; the interval excludes no change (p {_p(p_adjusted)})"
        if bad_high <= self.threshold:
            return "pass", f"the interval rules out a change beyond {limit}"
        if bad_low > 0 and p_adjusted >= alpha:
            return "inconclusive", f"the interval excludes no change but the permutation test does not (p {_p(p_adjusted)}): more repetitions would tell"
        if bad_low > 0:
            return "inconclusive", "a real change, but the interval cannot tell whether it is beyond the threshold"
        return "inconclusive", "the interval includes both no change and a change beyond the threshold: more repetitions would tell"


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def _signed(x: float, unit: str) -> str:
    return f"{x:+.1f}{' pp' if unit == 'pp' else '%'}".replace("-", "−")


__all__ = ["ALIASES", "MIN_ROWS", "Gate", "Outcome", "canonical"]
