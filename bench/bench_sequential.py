"""Sequential stopping (``execution.stop: decided``) against a fixed number of
repetitions, on simulated A/B runs.

Run: ``PYTHONPATH=src python bench/bench_sequential.py [--experiments N]``.

Each simulated run has 5 scenarios per round and two modes; success is Bernoulli
(60% baseline vs 75% candidate), cost log-normal (sigma 0.5, a median per
scenario) with the candidate 20% cheaper (then a big effect, and A/A runs); the stop
rule decides on success and
cost with the profile defaults (min 3, max 50 rounds, margins 5pp and 5%,
confidence 0.95 shared by the two metrics). Printed per metric: the mean rounds
to a decision, the share decided correctly (right direction) by the maximum,
the share decided wrongly; then the rounds a fixed design needs for the same
power (capped at 99%) and for 80% power (the ordinary test at the same level, at one
planned look) - and the same
for an A/A run (no difference), where the rule must find equivalence. The
decisions are ``profiler_core.runner.stopping.sequence``, the computation the runner's
stop rule, the report and ``profiler plan`` use, with the rule's bets (``stopping.STAKING``:
a mixture of the paper's aGRAPA and a bold gambler); ``--bets agrapa`` gives the
figures of the paper's bets alone, for comparison.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from profiler_core.config.schema import StopSettings
from profiler_core.runner import stopping
from profiler_core.runner.stopping import EQUIVALENT, HIGHER, LOWER, UNDECIDED, sequence
from profiler_core.stats.sequential import BETS, fixed_sample_interval

SCENARIOS = 5


def simulate(
    rng, experiments: int, rounds: int, success: tuple[float, float], cost_factor: float
):
    """Paired differences and baseline values per metric, shape (experiments, rounds *
    SCENARIOS)."""
    shape = (experiments, rounds * SCENARIOS)
    base_s = (rng.random(shape) < success[0]).astype(float)
    cand_s = (rng.random(shape) < success[1]).astype(float)
    medians = np.tile(
        np.exp(rng.normal(-4.5, 0.6, SCENARIOS)), rounds
    )  # each scenario its own cost level
    base_c = medians * rng.lognormal(0.0, 0.5, shape)
    cand_c = cost_factor * medians * rng.lognormal(0.0, 0.5, shape)
    return {"success": (cand_s - base_s, base_s), "cost": (cand_c - base_c, base_c)}


def run_rounds(outcomes: dict[str, np.ndarray], settings: StopSettings) -> np.ndarray:
    """Per experiment: the rounds after which every metric is decided (max_repetitions
    when never)."""
    decided = np.logical_and.reduce([o != UNDECIDED for o in outcomes.values()])
    decided[:, : settings.min_repetitions - 1] = False
    return np.where(
        decided.any(axis=1), decided.argmax(axis=1) + 1, settings.max_repetitions
    )


def fixed_rounds_for_power(
    diff: np.ndarray, truth: int, power: float, level: float
) -> int | None:
    """The fewest rounds at which the ordinary test, looked at once, finds the
    difference as often as ``power``."""
    naive = fixed_sample_interval(diff, confidence=level, block=SCENARIOS)
    right = (naive.lower > 0) if truth > 0 else (naive.upper < 0)
    rates = right.mean(axis=0)
    enough = np.flatnonzero(rates >= power)
    return int(enough[0]) + 1 if enough.size else None


def report(
    name: str, data, truth: dict[str, int], settings: StopSettings
) -> dict[str, np.ndarray]:
    """Print one scenario's figures; returns the outcomes per metric."""
    level = 1 - (1 - settings.confidence) / len(data)
    outcomes = {}
    print(f"\n{name}")
    print(
        f"  {'metric':8} {'mean rounds':>11} {'decided right':>13} {'wrong':>6} "
        f"{'undecided':>9}   fixed design: same power | 80% power"
    )
    for metric, (diff, base) in data.items():
        seq = sequence(metric, diff, base, settings, width=SCENARIOS, confidence=level)
        out = seq.outcome.copy()
        out[:, : settings.min_repetitions - 1] = UNDECIDED
        outcomes[metric] = out
        final = out[:, -1]
        first = np.where(
            (out != UNDECIDED).any(axis=1),
            (out != UNDECIDED).argmax(axis=1) + 1,
            settings.max_repetitions,
        )
        # The decision the run would act on: the first one (a later look never reverses it here).
        at_first = out[np.arange(out.shape[0]), first - 1]
        right = at_first == truth[metric]
        wrong = (at_first != truth[metric]) & (at_first != UNDECIDED)
        fixed = "-"
        if truth[metric] in (HIGHER, LOWER):
            # "Same power" is capped at 99%: a fixed design can always spend more to
            # creep from 99% to 100%.
            same = fixed_rounds_for_power(
                diff, truth[metric], min(float(right.mean()), 0.99), level
            )
            eighty = fixed_rounds_for_power(diff, truth[metric], 0.8, level)
            fixed = " | ".join(
                f"{n} rounds" if n is not None else f"> {settings.max_repetitions}"
                for n in (same, eighty)
            )
        print(
            f"  {metric:8} {first.mean():11.1f} {right.mean():13.1%} "
            f"{wrong.mean():6.1%} {(final == UNDECIDED).mean():9.1%}   {fixed}"
        )
    rounds = run_rounds(outcomes, settings)
    stopped = (rounds < settings.max_repetitions).mean()
    print(
        f"  the run: stops after {rounds.mean():.1f} rounds on average (median "
        f"{np.median(rounds):.0f}, "
        f"p90 {np.percentile(rounds, 90):.0f}); {stopped:.1%} stop before "
        f"max_repetitions ({settings.max_repetitions})"
    )
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--experiments", type=int, default=1000)
    parser.add_argument(
        "--bets",
        choices=BETS,
        default=stopping.STAKING["bets"],
        help="the betting sequence's bets",
    )
    args = parser.parse_args()
    stopping.STAKING["bets"] = args.bets
    settings = StopSettings(metrics=("success", "cost"))
    rng = np.random.default_rng(42)
    t0 = time.perf_counter()
    ab = simulate(rng, args.experiments, settings.max_repetitions, (0.60, 0.75), 0.8)
    aa = simulate(rng, args.experiments, settings.max_repetitions, (0.70, 0.70), 1.0)
    print(
        f"{args.experiments} simulated runs each, {SCENARIOS} scenarios per "
        f"round, bets {args.bets!r}, stop: {settings}"
    )
    big = simulate(rng, args.experiments, settings.max_repetitions, (0.50, 0.90), 0.5)
    report(
        "A/B: success 60% -> 75%, cost -20%",
        ab,
        {"success": HIGHER, "cost": LOWER},
        settings,
    )
    report(
        "A/B, a big effect: success 50% -> 90%, cost -50%",
        big,
        {"success": HIGHER, "cost": LOWER},
        settings,
    )
    report(
        "A/A: no difference (equivalence within 5pp / 5%)",
        aa,
        {"success": EQUIVALENT, "cost": EQUIVALENT},
        settings,
    )
    wide = StopSettings(
        metrics=("success", "cost"), margins={"success": "15pp", "cost": "15%"}
    )
    report(
        "A/A, margins 15pp / 15%", aa, {"success": EQUIVALENT, "cost": EQUIVALENT}, wide
    )
    print(f"\nsimulation and decisions: {time.perf_counter() - t0:.1f} s")

    rows = [
        stopping_row(mode, scen, it, rng)
        for mode in ("base", "cand")
        for scen in range(SCENARIOS)
        for it in range(settings.max_repetitions)
    ]
    rule = stopping.StopRule(
        settings=StopSettings(), baseline="base", modes=("base", "cand")
    )
    t = time.perf_counter()
    for _ in range(10):
        rule.check(rows, rounds=settings.max_repetitions)
    print(
        f"StopRule.check on {len(rows)} rows (50 rounds, 3 metrics): "
        f"{(time.perf_counter() - t) / 10 * 1000:.1f} ms"
    )


def stopping_row(mode: str, scenario: int, iteration: int, rng):
    """A plain row for timing ``StopRule.check``."""
    from profiler_core.model import (
        CostBreakdown,
        ProfileRow,
        TimingBreakdown,
        TokenBreakdown,
        ToolCallSummary,
    )

    return ProfileRow(
        run_id="bench", scenario_id=f"s{scenario}", mode=mode, model="m", iteration=iteration,
        started_at="2026-01-01T00:00:00Z", completed_at="2026-01-01T00:00:01Z",
        tokens=TokenBreakdown(input=100), timing=TimingBreakdown(wall_ms=float(rng.lognormal(9, 0.4))),
        tool_calls=ToolCallSummary(), cost=CostBreakdown(total_usd=float(rng.lognormal(-4.5, 0.5))),
        success=bool(rng.random() < 0.7), checkpoints_passed=0, checkpoints_total=0, provider="sim", session_id="s",
    )  # fmt: skip


if __name__ == "__main__":
    main()
