"""Statistical validation of the stop rule (``execution.stop: decided``): error per run,
and rounds against a fixed design.

Vectorised simulations with a fixed seed through ``runner.stopping.sequence`` (the computation
behind ``StopRule.check``, the report and ``profiler plan``), at the level ``StopRule.level`` gives
each interval. Every rate carries a 95% Wilson interval (tests/validation_rates.py). The figures
these tests hold are quoted in docs/statistics.md, "Sequential stopping: what is guaranteed".
Time: a few seconds on one core.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from profiler_core.config.schema import StopSettings
from profiler_core.runner.stopping import (
    EQUIVALENT,
    HIGHER,
    LOWER,
    UNDECIDED,
    StopRule,
    sequence,
)
from validation_rates import rate

EXPERIMENTS = 1000
SCENARIOS = 5
#: one price level per scenario (a factor of ~6 between the cheapest and the dearest)
PRICES = np.array([0.005, 0.01, 0.015, 0.02, 0.03])
METRICS = ("success", "cost", "wall_ms")


def _settings(rounds: int) -> StopSettings:
    return StopSettings(max_repetitions=rounds, metrics=METRICS)


def _resource(rng, rounds: int, *, factor: float = 1.0, sigma_base: float = 0.5, sigma_cand: float = 0.5,
              same: str = "median") -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Paired differences and baseline values of a log-normal metric (experiments,
    rounds * scenarios).

    ``same="median"``: both modes have the same median (times ``factor``); ``"mean"``:
    the same mean.
    """
    shape = (EXPERIMENTS, rounds, SCENARIOS)
    base = PRICES * np.exp(rng.normal(0.0, sigma_base, shape))
    shift = (sigma_base**2 - sigma_cand**2) / 2 if same == "mean" else 0.0
    cand = factor * PRICES * np.exp(rng.normal(shift, sigma_cand, shape))
    return (cand - base).reshape(EXPERIMENTS, -1), base.reshape(EXPERIMENTS, -1)


def _success(rng, rounds: int, rates=(0.7, 0.7)) -> tuple[np.ndarray, np.ndarray]:
    shape = (EXPERIMENTS, rounds * SCENARIOS)
    base = (rng.random(shape) < rates[0]).astype(float)
    cand = (rng.random(shape) < rates[1]).astype(float)
    return cand - base, base


def _outcomes(metric: str, data, settings: StopSettings, level: float) -> np.ndarray:
    out = sequence(
        metric, data[0], data[1], settings, width=SCENARIOS, confidence=level
    ).outcome.copy()
    out[:, : settings.min_repetitions - 1] = UNDECIDED
    return out


def _first(out: np.ndarray, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Per run: the round of the first decision (``rounds`` when none) and that decision."""
    decided = out != UNDECIDED
    first = np.where(decided.any(axis=1), decided.argmax(axis=1) + 1, rounds)
    return first, out[np.arange(out.shape[0]), first - 1]


def test_a_a_runs_make_a_false_decision_in_at_most_5_percent_of_runs_family_wise():
    """Two candidate modes identical to the baseline, three metrics: any
    "higher"/"lower" at any look is false."""
    rounds = 30
    settings = _settings(rounds)
    rule = StopRule(settings=settings, baseline="base", modes=("base", "a", "b"))
    level = rule.level(2)
    assert level == pytest.approx(1 - 0.05 / 6)
    rng = np.random.default_rng(4101)
    false = np.zeros(EXPERIMENTS, dtype=bool)
    for _mode in ("a", "b"):
        for metric in METRICS:
            data = (
                _success(rng, rounds) if metric == "success" else _resource(rng, rounds)
            )
            out = _outcomes(metric, data, settings, level)
            false |= ((out == HIGHER) | (out == LOWER)).any(axis=1)
    found = rate(false)
    print(f"A/A, 2 modes x 3 metrics, any false decision at any look: {found}")
    assert found.upper <= 0.05


def test_differently_shaped_modes_with_no_effect_stay_under_5_percent():
    """Same median, very different spread (log-normal sigma 0.3 against 0.8): the
    bounded effect is 0, so any decision is false."""
    rounds = 30
    settings = _settings(rounds)
    level = StopRule(settings=settings, baseline="base", modes=("base", "cand")).level(
        1
    )
    rng = np.random.default_rng(4102)
    false = np.zeros(EXPERIMENTS, dtype=bool)
    for metric in ("cost", "wall_ms"):
        out = _outcomes(
            metric,
            _resource(rng, rounds, sigma_base=0.3, sigma_cand=0.8),
            settings,
            level,
        )
        false |= ((out == HIGHER) | (out == LOWER)).any(axis=1)
    found = rate(false)
    print(
        f"differently shaped A/A (same median), cost and time, any false decision: {found}"
    )
    assert found.upper <= 0.05


def test_the_decision_is_about_the_typical_pair_not_the_total():
    """The documented limit: a mode with the same *mean* cost but more skew is cheaper
    in most pairs, and is decided lower.

    No test of a mean is valid for every shape without a bound on the values; the rule decides on
    the bounded per-pair effect instead, and docs/statistics.md says so. This pins that behaviour.
    """
    rounds = 30
    settings = _settings(rounds)
    level = StopRule(settings=settings, baseline="base", modes=("base", "cand")).level(
        1
    )
    rng = np.random.default_rng(4103)
    out = _outcomes(
        "cost",
        _resource(rng, rounds, sigma_base=0.3, sigma_cand=0.8, same="mean"),
        settings,
        level,
    )
    _, at = _first(out, rounds)
    lower, higher = rate(at == LOWER), rate(at == HIGHER)
    print(f"same mean, candidate more skewed: decided lower {lower}, higher {higher}")
    assert lower.lower > 0.5 and higher.upper <= 0.05


@pytest.mark.parametrize(
    ("name", "factor", "ratio_at_most"),
    # Issue 41's targets: moderate at most 10% more rounds, large at least 40% fewer. Small has none
    # (the rule reaches a low power there, and a fixed design of that power is short): a
    # loose bound.
    [
        ("small (-10%)", 0.9, 2.0),
        ("moderate (-20%)", 0.8, 1.1),
        ("large (-50%)", 0.5, 0.6),
    ],
)
def test_power_and_rounds_against_a_fixed_design(name, factor, ratio_at_most):
    """Mean rounds to the (right) decision, against the rounds a fixed design needs for
    the same power.

    The fixed design is the ordinary two-sided test of the mean paired difference at the same level,
    with the true SD (its best case): ``((z_a + z_b) sd / effect)^2`` pairs. A run's decision
    counts from ``min_repetitions`` (3) on, as the runner's.
    """
    rounds = 50
    settings = StopSettings(max_repetitions=rounds, metrics=("cost",))
    level = StopRule(settings=settings, baseline="base", modes=("base", "cand")).level(
        1
    )
    rng = np.random.default_rng(4104)
    diff, base = _resource(rng, rounds, factor=factor)
    out = _outcomes("cost", (diff, base), settings, level)
    first, at = _first(out, rounds)
    power = rate(at == LOWER)
    assert (
        rate((at == HIGHER) | (at == EQUIVALENT)).upper <= 0.05
    )  # never the wrong way
    z = NormalDist()
    target = min(power.rate, 0.99)
    fixed = (
        (z.inv_cdf(0.5 + level / 2) + z.inv_cdf(target)) * diff.std() / abs(diff.mean())
    ) ** 2 / SCENARIOS
    ratio = first.mean() / fixed
    print(
        f"{name}: decided right {power}, mean rounds {first.mean():.1f}, fixed "
        f"design at that power {fixed:.1f} rounds, ratio {ratio:.2f}"
    )
    assert ratio <= ratio_at_most
