"""Statistical validation of ``profiler plan``: the power a planned fixed design really
has, averaged over pilots.

Many simulated pilots (5 scenarios of different price, 3 repetitions: the size ``plan`` runs by
default) go through ``runner.planning.plan_metric``; the repetitions each plan asks for are then
judged against the truth the pilots were drawn from: the power of the two-sided test at that many
rounds with the true SD and the true effect. docs/planning.md quotes these figures. Fixed seed;
the stop-rule simulation inside ``plan_metric`` is cut to a few runs (it is not what is checked).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from profiler_core.config.schema import StopSettings
from profiler_core.runner import planning
from profiler_core.runner.planning import plan_metric
from validation_rates import rate

PILOTS = 300
SCENARIOS = 5
PRICES = np.array([0.005, 0.01, 0.015, 0.02, 0.03])
SIGMA = 0.5
LEVEL = 1 - 0.05 / 3  # the stop rule's level with its 3 default metrics, one comparison


@pytest.fixture(autouse=True)
def _few_stop_simulations(monkeypatch):
    monkeypatch.setattr(planning, "SIMULATIONS", 4)


def _power(n_pairs: float, effect: float, sd: float) -> float:
    z = NormalDist()
    return z.cdf(effect * math.sqrt(n_pairs) / sd - z.inv_cdf(0.5 + LEVEL / 2))


def _cost_pilot(rng, reps: int) -> dict[str, np.ndarray]:
    mu = np.log(PRICES) - SIGMA**2 / 2
    return {f"s{j}": np.stack([np.exp(mu[j] + SIGMA * rng.standard_normal(reps)), np.exp(mu[j] + SIGMA * rng.standard_normal(reps))], axis=1)
            for j in range(SCENARIOS)}  # fmt: skip


@pytest.mark.parametrize("reps", [3, 6])
def test_a_cost_plan_reaches_its_power_on_average(reps):
    """cost:10% at 80% power: the planned rounds' true power, averaged over pilots,
    within 5 points of 80%."""
    rng = np.random.default_rng(4160 + reps)
    true_sd = math.sqrt(
        2 * float(np.mean(PRICES**2)) * (math.exp(SIGMA**2) - 1)
    )  # independent modes: var(a - b)
    true_effect = 0.10 * float(PRICES.mean())
    achieved, naive = [], []
    for _ in range(PILOTS):
        plan = plan_metric(_cost_pilot(rng, reps), mode="cand", metric="cost", effect=(0.10, "relative"),
                           settings=StopSettings(), power=0.8, metrics=3)  # fmt: skip
        assert (
            plan.fixed_rounds is not None
            and plan.naive_rounds is not None
            and plan.rounds_range is not None
        )
        assert (
            plan.rounds_range[0]
            <= plan.naive_rounds
            <= plan.fixed_rounds
            <= plan.rounds_range[1] + 1
        )
        achieved.append(_power(plan.fixed_rounds * SCENARIOS, true_effect, true_sd))
        naive.append(_power(plan.naive_rounds * SCENARIOS, true_effect, true_sd))
    mean, old = float(np.mean(achieved)), float(np.mean(naive))
    under = rate(np.array(achieved) < 0.5)
    print(
        f"pilot of {reps} repetitions: achieved power {mean:.1%} (SD taken as "
        f"exact: {old:.1%}); plans under 50% power: {under}"
    )
    assert abs(mean - 0.8) <= 0.05
    assert old < mean


def test_a_success_plan_reaches_its_power_near_the_ceiling():
    """success:10pp from rates of 70-95%: pooled, bias-corrected variance; the average
    achieved power within 5 points."""
    rng = np.random.default_rng(4170)
    rates = np.array([0.7, 0.8, 0.85, 0.9, 0.95])
    base_rate = float(rates.mean())
    moved = planning._logit_shift(rates, 0.10)
    true_sd = math.sqrt(float(np.mean(rates * (1 - rates) + moved * (1 - moved))))
    achieved, decided = [], []
    for _ in range(PILOTS):
        pilot = {f"s{j}": np.stack([(rng.random(3) < moved[j]).astype(float), (rng.random(3) < rates[j]).astype(float)], axis=1)
                 for j in range(SCENARIOS)}  # fmt: skip
        plan = plan_metric(
            pilot,
            mode="cand",
            metric="success",
            effect=(0.10, "points"),
            settings=StopSettings(),
            power=0.8,
            metrics=3,
        )
        if plan.fixed_rounds is None:
            continue
        achieved.append(_power(plan.fixed_rounds * SCENARIOS, 0.10, true_sd))
        decided.append(plan.fixed_rounds)
    mean = float(np.mean(achieved))
    print(f"success 10pp near the ceiling (mean rate {base_rate:.0%}): achieved power "
        f"{mean:.1%} over {len(achieved)} pilots, "
          f"median plan {np.median(decided):.0f} rounds")  # fmt: skip
    assert len(achieved) >= 0.9 * PILOTS
    assert abs(mean - 0.8) <= 0.05


def test_the_stop_simulation_is_not_clamped_at_the_ceiling(monkeypatch):
    """A scenario at 100% in the pilot still lets the average rate rise by the effect
    (on the logit scale), not cap it."""
    rates = np.array([0.6, 0.9, 0.999])
    moved = planning._logit_shift(rates, 0.10)
    assert moved.mean() == pytest.approx(rates.mean() + 0.10, abs=1e-6)
    assert np.all(moved < 1.0) and np.all(moved > rates)


def test_the_recommended_pilot_keeps_the_plan_within_a_quarter():
    """The pilot size plan recommends: the SD's 90% upper limit asks at most 25% more
    rounds than the SD itself."""
    pairs = planning.pilot_size()
    assert (
        planning.sd_factor(pairs - 1, 0.9) ** 2
        <= 1.25
        < planning.sd_factor(pairs - 2, 0.9) ** 2
    )
    from scipy.stats import chi2

    assert planning.chi2_quantile(0.1, pairs - 1) == pytest.approx(
        chi2.ppf(0.1, pairs - 1), rel=0.01
    )
