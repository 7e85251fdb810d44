"""Statistical validation of ``profiler compare --fail-on``: false regressions and
detection at 50, 150 and 500 rows per mode.

Data like an independent check's: five scenarios of different price (a factor of 20 between the
cheapest and the dearest), log-normal cost (sigma 0.5) per session, BASE and NEW each running
the same (scenario, iteration) cells, NEW's cost multiplied by the true change. Each simulated
pair of runs goes through what ``compare_runs`` does for a gate: ``stats.stratified_change``,
``Gate.p_value``, Holm across the gates (``stats.holm_adjust``) and ``Gate.assess``. Every rate
carries a 95% Wilson interval (tests/validation_rates.py). docs/ci.md quotes these figures.
Fixed seed; a few seconds on one core.
"""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core import stats
from profiler_core.compare.gates import Gate, is_possible
from profiler_core.stats.stratified import stratified_change
from validation_rates import rate

PAIRS = 600
PRICES = np.array([0.05, 0.1, 0.2, 0.5, 1.0])
SIGMA = 0.5


def _runs(
    rng, rows: int, change: float, pairs: int = PAIRS
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """BASE and NEW costs of ``pairs`` simulated pairs of runs, (pairs, rows), with
    their scenario and iteration."""
    per = rows // PRICES.size
    scenario = np.repeat(np.arange(PRICES.size), per)
    iteration = np.tile(np.arange(per), PRICES.size)
    mu = np.log(PRICES[scenario]) - SIGMA**2 / 2  # each scenario's mean is its price
    base = np.exp(mu + SIGMA * rng.standard_normal((pairs, scenario.size)))
    new = (1.0 + change) * np.exp(
        mu + SIGMA * rng.standard_normal((pairs, scenario.size))
    )
    return base, new, scenario, iteration


def _outcomes(
    gates: list[Gate], data: dict[str, tuple]
) -> dict[str, list[tuple[str, str]]]:
    """Per gate text: (outcome, why) of every simulated pair, as compare_runs judges them."""
    out: dict[str, list[tuple[str, str]]] = {g.text: [] for g in gates}
    for i in range(next(iter(data.values()))[0].shape[0]):
        changes = []
        for gate in gates:
            base, new, scenario, iteration = data[gate.metric]
            changes.append(stratified_change(base[i], new[i], kind="ratio", base_strata=scenario, new_strata=scenario,
                                             base_keys=iteration, new_keys=iteration))  # fmt: skip
        adjusted = stats.holm_adjust(g.p_value(sc) for g, sc in zip(gates, changes))
        for gate, sc, q in zip(gates, changes, adjusted):
            found = gate.assess(sc, q)
            out[gate.text].append((found.outcome, found.why))
    return out


def _cost_gate(
    rows: int, change: float, seed: int, pairs: int = PAIRS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Regression, possible-or-regression and pass events of ``cost:+10%`` at a true ``change``."""
    gate = Gate.parse("cost:+10%")
    found = _outcomes(
        [gate], {gate.metric: _runs(np.random.default_rng(seed), rows, change, pairs)}
    )[gate.text]
    regression = np.array([o == "regression" for o, _ in found])
    flagged = regression | np.array([is_possible(w) for _, w in found])
    passed = np.array([o == "pass" for o, _ in found])
    return regression, flagged, passed


@pytest.mark.parametrize("rows", [50, 150, 500])
def test_a_true_change_at_the_tolerance_fails_the_job_at_most_5_percent_of_the_time(
    rows,
):
    """The one-sided test of "worse than the tolerance": at exactly +10%, exit 1 is a
    false regression."""
    regression, flagged, _ = _cost_gate(rows, 0.10, 4110 + rows, pairs=1500)
    found = rate(regression)
    print(
        f"{rows} rows per mode, true +10% against cost:+10%: regression "
        f"{found}; possible or regression {rate(flagged)}"
    )
    # Consistent with 5% (the simulation's own noise is the interval) at 150 and 500
    # rows; at 50 rows (10 per
    # scenario) the delta method on skewed costs runs about a point over (measured 5.9%
    # of 4000): docs/ci.md says so.
    assert found.lower <= (0.05 if rows > 50 else 0.065) and found.upper <= 0.08


@pytest.mark.parametrize("rows", [50, 150, 500])
def test_detection_of_a_real_regression_grows_with_rows(rows):
    """A true +30% and +15% against cost:+10%: exit 1, or at least labelled a possible
    regression."""
    big, big_flagged, _ = _cost_gate(rows, 0.30, 4120 + rows)
    mid, mid_flagged, _ = _cost_gate(rows, 0.15, 4130 + rows)
    print(f"{rows} rows per mode: true +30% -> regression {rate(big)}; true +15% -> "
        f"regression {rate(mid)}, "
          f"possible or regression {rate(mid_flagged)}")  # fmt: skip
    if rows == 150:
        # The targets of issue 41 at 150 rows per mode.
        assert rate(big).lower >= 0.80
        assert rate(mid_flagged).lower >= 0.60
    if rows == 500:
        assert rate(big).lower >= 0.99 and rate(mid_flagged).lower >= 0.85
    assert rate(big_flagged).rate >= rate(big).rate


def test_no_change_passes_and_rows_needed_are_about_right():
    """At no true change and 150 rows: never a regression, half pass; the rows it says a
    margin needs reach ~80% power."""
    regression, flagged, passed = _cost_gate(150, 0.0, 4140)
    print(
        f"150 rows per mode, no change: pass {rate(passed)}, possible "
        f"regression {rate(flagged)}, regression {rate(regression)}"
    )
    # 150 rows cannot show "at most +10%" every time: half pass, the rest is
    # inconclusive (exit 3); the point
    # estimate alone passes +10% in about 6% (a labelled possible regression), a
    # regression almost never.
    assert (
        rate(regression).upper <= 0.01
        and rate(flagged).upper <= 0.10
        and rate(passed).lower >= 0.40
    )
    # rows_needed for a change 20 points past +10% (a true +30%), from each of 200 pairs
    # of 150-row runs: its
    # median is near the rows that really give 80% (found by simulation), one pair's
    # figure is rough (its SE is).
    gate = Gate.parse("cost:+10%")
    base, new, scenario, iteration = _runs(
        np.random.default_rng(4141), 150, 0.0, pairs=200
    )
    needed = np.array([gate.rows_needed(stratified_change(base[i], new[i], kind="ratio", base_strata=scenario, new_strata=scenario,
                                                          base_keys=iteration, new_keys=iteration), 20.0) for i in range(200)])  # fmt: skip
    rows = int(np.ceil(np.median(needed) / PRICES.size)) * PRICES.size
    regression, _, _ = _cost_gate(rows, 0.30, 4142)
    low, high = np.percentile(needed, [10, 90])
    print(
        "rows_needed for +30% against cost:+10%: median "
        f"{np.median(needed):.0f} (10-90%: {low:.0f}-{high:.0f}); "
        f"at {rows} rows: regression {rate(regression)}"
    )
    assert rate(regression).lower <= 0.80 <= rate(regression).upper + 0.05


def test_holm_over_two_gates_keeps_the_job_error_at_5_percent():
    """cost:+10% and wall_ms:+20%, both true changes exactly at their tolerance: any
    regression is false."""
    rng = np.random.default_rng(4150)
    gates = [Gate.parse("cost:+10%"), Gate.parse("wall_ms:+20%")]
    data = {
        gates[0].metric: _runs(rng, 150, 0.10),
        gates[1].metric: _runs(rng, 150, 0.20),
    }
    found = _outcomes(gates, data)
    any_false = np.array(
        [
            a[0] == "regression" or b[0] == "regression"
            for a, b in zip(found[gates[0].text], found[gates[1].text])
        ]
    )
    print(f"two gates at their tolerance, any regression: {rate(any_false)}")
    assert rate(any_false).lower <= 0.05 and rate(any_false).upper <= 0.08


@pytest.mark.parametrize("rows", [50, 150, 500])
def test_a_success_gate_at_its_tolerance_stays_at_5_percent_and_catches_a_big_drop(
    rows,
):
    """success_rate:-5pp, scenarios at 50-90%: a true drop of 5pp fails the job at most
    ~5%; a drop of 15pp is caught."""
    rng = np.random.default_rng(4190 + rows)
    gate = Gate.parse("success_rate:-5pp")
    rates = np.array([0.5, 0.6, 0.7, 0.8, 0.9])
    per = rows // rates.size
    scenario, iteration = (
        np.repeat(np.arange(rates.size), per),
        np.tile(np.arange(per), rates.size),
    )
    found = {}
    for drop in (0.05, 0.15):
        base = rng.random((PAIRS, scenario.size)) < rates[scenario]
        new = rng.random((PAIRS, scenario.size)) < rates[scenario] - drop
        events = []
        for i in range(PAIRS):
            sc = stratified_change(base[i].astype(float), new[i].astype(float), kind="difference", base_strata=scenario,
                                   new_strata=scenario, base_keys=iteration, new_keys=iteration)  # fmt: skip
            events.append(gate.assess(sc, gate.p_value(sc)).outcome == "regression")
        found[drop] = rate(np.array(events))
    print(
        f"{rows} rows per mode, success_rate:-5pp: true -5pp -> regression "
        f"{found[0.05]}; true -15pp -> {found[0.15]}"
    )
    assert found[0.05].lower <= 0.05 and found[0.05].upper <= 0.08
    assert found[0.15].lower >= {50: 0.15, 150: 0.45, 500: 0.9}[rows]
