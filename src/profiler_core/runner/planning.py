"""How many sessions a question needs, and what a run will cost: ``profiler plan`` and
``profiler run --dry-run``.

- :func:`earlier_runs` finds the runs of a profile in its results folder (same
  profile hash, else the same profile file), :func:`session_costs` summarises
  their sessions per mode, and :func:`estimate` turns that into a cost and a
  time for a number of sessions, with a 90% range.
- :func:`plan_metric` says, for one metric of a pilot run, how many repetitions
  a fixed design needs to detect an effect with a given power, and how many a
  ``stop: decided`` run is expected to need (simulated from the pilot's pairs).

See docs/planning.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from statistics import NormalDist

import attrs

from ..config.schema import StopSettings
from ..errors import ConfigError, ProfilerError
from ..model import ProfileRow, RunManifest
from ..model.record import Record
from ..stats.sequential import fixed_sample_size
from ..util.arrays import np
from .stopping import UNDECIDED, row_value, sequence

#: the effect ``profiler plan`` looks for when ``--detect`` names none for a metric
DEFAULT_DETECT = {"success": "10pp"}
DEFAULT_DETECT_OTHER = "10%"
#: simulated runs behind an expected number of repetitions
SIMULATIONS = 400
_Z90 = NormalDist().inv_cdf(0.95)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class EarlierRuns(Record):
    """Runs of a profile found in its results folder, and how they match it."""

    manifests: tuple[RunManifest, ...]
    rows: tuple[ProfileRow, ...]
    #: "same profile" (same hash) or "same profile file" (an earlier version, or a pilot)
    match: str


def earlier_runs(
    results_dir: Path, profile_hash: str, profile_path: str | None
) -> EarlierRuns | None:
    """The runs in ``results_dir`` with this profile hash, else those of the same
    profile file; None if none."""
    from ..storage.store import read_jsonl, read_manifest

    if not results_dir.is_dir():
        return None
    manifests = []
    for path in sorted(results_dir.glob("*.manifest.json")):
        try:
            manifests.append((path, read_manifest(path)))
        except ProfilerError:
            continue  # a foreign or damaged manifest is no estimate
    same = [(p, m) for p, m in manifests if m.profile_hash == profile_hash]
    match = "same profile"
    if not same and profile_path:
        wanted = Path(profile_path).resolve()
        same = [
            (p, m)
            for p, m in manifests
            if m.profile_path and Path(m.profile_path).resolve() == wanted
        ]
        match = "same profile file"
    rows: list[ProfileRow] = []
    for path, _manifest in same:
        jsonl = path.with_name(path.name[: -len(".manifest.json")] + ".jsonl")
        if jsonl.exists():
            rows += [r for r in read_jsonl(jsonl).rows if r.iteration >= 0]
    if not rows:
        return None
    return EarlierRuns(
        manifests=tuple(m for _, m in same), rows=tuple(rows), match=match
    )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SessionCost(Record):
    """What one session of a mode costs and takes, from earlier sessions."""

    sessions: int
    cost_mean: float
    cost_sd: float
    wall_ms_mean: float
    wall_ms_sd: float


def session_costs(rows: Iterable[ProfileRow]) -> dict[str, SessionCost]:
    """Per mode: the mean and SD of a session's cost and wall time (unknown costs left out)."""
    by_mode: dict[str, tuple[list[float], list[float]]] = {}
    for row in rows:
        costs, walls = by_mode.setdefault(row.mode, ([], []))
        cost = row_value(row, "cost")
        if not math.isnan(cost):
            costs.append(cost)
        walls.append(row_value(row, "wall_ms"))
    out = {}
    for mode, (costs, walls) in by_mode.items():
        c, w = np.array(costs), np.array(walls)
        out[mode] = SessionCost(
            sessions=len(walls),
            cost_mean=float(c.mean()) if c.size else math.nan,
            cost_sd=float(c.std(ddof=1)) if c.size > 1 else 0.0,
            wall_ms_mean=float(w.mean()),
            wall_ms_sd=float(w.std(ddof=1)) if w.size > 1 else 0.0,
        )
    return out


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Estimate(Record):
    """A total with its 90% range: (point, low, high)."""

    cost_usd: tuple[float, float, float]
    #: elapsed seconds at the given concurrency
    seconds: tuple[float, float, float]


def _total(n: int, mean: float, sd: float, known: int) -> tuple[float, float]:
    """Total of ``n`` sessions and its variance: the sessions' own spread plus the
    mean's uncertainty."""
    if n == 0 or math.isnan(mean):
        return 0.0, 0.0
    return n * mean, n * sd * sd + (n * n * sd * sd / known if known else 0.0)


def estimate(
    sessions: dict[str, int], costs: dict[str, SessionCost], concurrency: int
) -> Estimate | None:
    """Cost and elapsed time of ``sessions`` (mode -> count) from earlier sessions; None
    for a mode never seen."""
    if any(mode not in costs for mode, n in sessions.items() if n):
        return None
    cost = cost_var = wall = wall_var = 0.0
    for mode, n in sessions.items():
        if not n:
            continue
        c = costs[mode]
        t, v = _total(n, c.cost_mean, c.cost_sd, c.sessions)
        cost, cost_var = cost + t, cost_var + v
        t, v = _total(n, c.wall_ms_mean / 1000, c.wall_ms_sd / 1000, c.sessions)
        wall, wall_var = wall + t, wall_var + v
    spread_c, spread_w = _Z90 * math.sqrt(cost_var), _Z90 * math.sqrt(wall_var)
    per = max(1, concurrency)
    return Estimate(
        cost_usd=(cost, max(0.0, cost - spread_c), cost + spread_c),
        # Sessions at once divide the elapsed time (an ideal packing: a lower bound in practice).
        seconds=(wall / per, max(0.0, wall - spread_w) / per, (wall + spread_w) / per),
    )


def sessions_per_mode(
    models: Sequence[str], modes: Sequence[str], scenarios: int, repetitions: int
) -> dict[str, int]:
    """Sessions each mode runs for ``repetitions`` rounds (warm-ups not counted)."""
    return {mode: len(models) * scenarios * repetitions for mode in modes}


# ---------------------------------------------------------------- plan


def parse_detect(
    items: Iterable[str], metrics: Sequence[str]
) -> dict[str, tuple[float, str]]:
    """``["cost:10%", "success:10pp"]`` -> metric -> (value, kind); every metric gets
    one (a default when not named)."""
    from ..config.schema import STOP_METRICS, parse_margin

    out = {
        m: parse_margin(DEFAULT_DETECT.get(m, DEFAULT_DETECT_OTHER)) for m in metrics
    }
    for item in items:
        metric, sep, value = item.partition(":")
        metric = metric.strip()
        parsed = parse_margin(value.strip()) if sep else None
        if metric not in STOP_METRICS:
            raise ConfigError(
                f"--detect {item!r}: unknown metric {metric!r} (metrics: {', '.join(STOP_METRICS)})"
            )
        if parsed is None or parsed[0] <= 0:
            raise ConfigError(
                f"--detect {item!r}: expected METRIC:EFFECT such as cost:10% or success:10pp"
            )
        if (metric == "success") != (parsed[1] != "relative"):
            hint = (
                "in percentage points (success:10pp)"
                if metric == "success"
                else "a percentage (cost:10%) or a number"
            )
            raise ConfigError(f"--detect {item!r}: give {metric}'s effect as {hint}")
        out[metric] = parsed
    return {m: v for m, v in out.items() if v is not None}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class MetricPlan(Record):
    """The plan for one (mode vs baseline, metric) from a pilot."""

    mode: str
    metric: str
    pairs: int
    baseline_mean: float
    #: SD of the pilot's paired differences (success: pooled over scenarios,
    #: bias-corrected, at the effect)
    sd: float
    #: the effect to detect, in the metric's unit
    effect: float
    #: rounds (repetitions) a fixed design needs for the power, averaged over what the
    #: pilot's SD may
    #: truly be (``planned_rounds``); None: the pilot shows no spread to plan with
    fixed_rounds: int | None
    #: per simulated stop-rule run: the round it was decided (``max_repetitions`` when never)
    stop_rounds: np.ndarray = attrs.field(eq=False)
    #: share of simulated runs decided in the effect's direction by ``max_repetitions``
    decided: float
    #: the rounds if the SD were its 10th and 90th percentile given the pilot (None: no spread)
    rounds_range: tuple[int, int] | None = None
    #: the rounds the pilot's SD taken as exact would give (what plans used to print; under-powered)
    naive_rounds: int | None = None


def pilot_pairs(
    rows: Iterable[ProfileRow], mode: str, baseline: str, metric: str
) -> dict[str, np.ndarray]:
    """The pilot's (candidate, baseline) values per scenario, paired by (model,
    scenario, iteration); errored rows out."""
    cells: dict[tuple[str, str, int], dict[str, float]] = {}
    for row in rows:
        if (
            row.iteration < 0
            or row.error is not None
            or row.mode not in (mode, baseline)
        ):
            continue
        cells.setdefault((row.model, row.scenario_id, row.iteration), {})[row.mode] = (
            row_value(row, metric)
        )
    by_scenario: dict[str, list[tuple[float, float]]] = {}
    for (_, scenario, _), pair in cells.items():
        if (
            mode in pair
            and baseline in pair
            and not (math.isnan(pair[mode]) or math.isnan(pair[baseline]))
        ):
            by_scenario.setdefault(scenario, []).append((pair[mode], pair[baseline]))
    return {s: np.array(v) for s, v in sorted(by_scenario.items())}


def plan_metric(
    pairs: dict[str, np.ndarray], *, mode: str, metric: str, effect: tuple[float, str], settings: StopSettings,
    power: float, metrics: int, seed: int = 42,
) -> MetricPlan:  # fmt: skip
    """Fixed-design repetitions for ``power`` and simulated ``stop: decided``
    repetitions, for one metric.

    Both at the stop rule's level (its confidence shared by ``metrics`` tests: every metric of every
    comparison). The fixed design allows for the pilot SD's uncertainty: it is the fewest rounds
    whose power, averaged over the SDs the pilot is compatible with (chi-square with the pilot's
    degrees of freedom), reaches ``power``. Success uses the pooled rate's variance, bias-corrected.
    The simulation draws each round's pair of a scenario from that scenario's pilot pairs with the
    candidate scaled so the mean difference is the effect (an improvement: resources down), or, for
    success, Bernoulli pairs at the scenario's rate (shrunk toward the pooled rate) and that rate
    moved on the logit scale so the average rises by the effect (no scenario clamped at 100%).
    """
    scenarios = len(pairs)
    everything = np.concatenate(list(pairs.values())) if pairs else np.zeros((0, 2))
    base_mean = float(everything[:, 1].mean()) if everything.size else math.nan
    value, kind = effect
    size = value * abs(base_mean) if kind == "relative" else value
    level = 1.0 - (1.0 - settings.confidence) / metrics
    rng = np.random.default_rng(seed)
    diff, base = _simulate(pairs, metric, size, settings.max_repetitions, rng)
    n = everything.shape[0]
    if metric == "success":
        sd = _success_sd(everything[:, 1], size)
        # the rate's variance follows from the rate: no chi-square spread to allow for
        df = math.inf
    else:
        d = everything[:, 0] - everything[:, 1]
        sd = float(d.std(ddof=1)) if d.size > 1 else math.nan
        df = variance_df(d)
    fixed = naive = spread = None
    if size > 0 and sd > 0 and scenarios:
        fixed = planned_rounds(
            sd, size, df, scenarios=scenarios, confidence=level, power=power
        )
        naive = max(
            1,
            math.ceil(
                fixed_sample_size(sd, size, confidence=level, power=power) / scenarios
            ),
        )
        spread = tuple(max(1, math.ceil(fixed_sample_size(sd * sd_factor(df, q), size, confidence=level, power=power) / scenarios))
                       for q in (0.1, 0.9))  # fmt: skip
    stop_rounds, decided = _stop_rounds(
        metric, diff, base, settings, scenarios, level, size, base_mean
    )
    return MetricPlan(
        mode=mode, metric=metric, pairs=int(n), baseline_mean=base_mean, sd=sd, effect=size,
        fixed_rounds=fixed, stop_rounds=stop_rounds, decided=decided, rounds_range=spread, naive_rounds=naive,  # type: ignore[arg-type]
    )  # fmt: skip


def variance_df(values: np.ndarray) -> float:
    """Degrees of freedom of a sample variance, allowing for heavy tails: ``2 / (2 / (n
    - 1) + kurtosis / n)``.

    ``var(s²) = σ⁴ (2 / (n - 1) + κ / n)`` with ``κ`` the excess kurtosis (0 for normal
    data, ~3 for the
    difference of two log-normal costs of sigma 0.5, more across scenarios of different
    price): a chi-square
    with these degrees has the same spread. ``κ`` is the sample's, between 0 and 20 (a
    few pairs cannot say more).
    """
    n = values.size
    if n < 3:
        return max(n - 1.0, 1.0)
    centred = values - values.mean()
    m2 = float((centred**2).mean())
    kurtosis = float((centred**4).mean()) / (m2 * m2) - 3.0 if m2 > 0 else 0.0
    return 2.0 / (2.0 / (n - 1) + min(max(kurtosis, 0.0), 20.0) / n)


def chi2_quantile(p: float, df: float) -> float:
    """The chi-square quantile by Wilson & Hilferty's cube-root approximation (error <
    1% for df >= 3)."""
    z = NormalDist().inv_cdf(p)
    h = 2.0 / (9.0 * df)
    return df * max(1.0 - h + z * math.sqrt(h), 1e-6) ** 3


def sd_factor(df: float, q: float) -> float:
    """The true SD over the pilot's at the ``q`` quantile of what the pilot allows:
    ``sqrt(df / chi2(1 - q, df))``."""
    if not math.isfinite(df):
        return 1.0
    return math.sqrt(df / chi2_quantile(1.0 - q, max(df, 1.0)))


#: quantiles of the SD's distribution the expected power is averaged over
_SD_QUANTILES = (np.arange(200) + 0.5) / 200


def planned_rounds(
    sd: float,
    effect: float,
    df: float,
    *,
    scenarios: int,
    confidence: float,
    power: float,
) -> int:
    """The fewest rounds whose power, averaged over the true SDs a pilot SD ``sd`` with
    ``df`` degrees allows, is ``power``.

    Taking the pilot's SD as exact gives about half the plans too few rounds (achieved power
    59-73% for 80% asked); averaging the power over the SD's uncertainty brings the average back.
    """
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    factors = (
        np.array([sd_factor(df, float(q)) for q in _SD_QUANTILES])
        if math.isfinite(df)
        else np.ones(1)
    )
    cdf = np.vectorize(NormalDist().cdf)
    rounds = max(
        1,
        math.ceil(
            fixed_sample_size(sd, effect, confidence=confidence, power=power)
            / scenarios
        ),
    )
    for _ in range(10_000):
        achieved = float(
            cdf(effect * math.sqrt(rounds * scenarios) / (sd * factors) - z).mean()
        )
        if achieved >= power:
            return rounds
        rounds += max(1, rounds // 50)
    return rounds


def pilot_size(*, within: float = 0.25, confidence: float = 0.9) -> int:
    """Pilot pairs after which the SD's upper ``confidence`` limit plans at most
    ``within`` more rounds than the SD itself."""
    pairs = 3
    while sd_factor(pairs - 1, confidence) ** 2 > 1.0 + within:
        pairs += 1
    return pairs


def _success_sd(base: np.ndarray, effect: float) -> float:
    """SD of a success pair at the pooled rate ``p`` and ``p + effect``: ``p(1 - p) n /
    (n - 1)`` is unbiased for the baseline."""
    n = base.size
    if n < 2:
        return math.nan
    p = float(base.mean())
    q = min(max(p + effect, 0.0), 1.0)
    return math.sqrt(p * (1 - p) * n / (n - 1) + q * (1 - q))


def _logit_shift(rates: np.ndarray, effect: float) -> np.ndarray:
    """Rates moved by one common step on the logit scale so their mean rises by
    ``effect`` (as near as 100% allows)."""
    target = min(float(rates.mean()) + effect, 1.0 - 1e-9)
    logit = np.log(rates / (1.0 - rates))
    lo, hi = -50.0, 50.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        if (1.0 / (1.0 + np.exp(-(logit + mid)))).mean() < target:
            lo = mid
        else:
            hi = mid
    return 1.0 / (1.0 + np.exp(-(logit + hi)))


def _simulate(
    pairs: dict[str, np.ndarray],
    metric: str,
    effect: float,
    rounds: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulated runs' paired differences and baseline values, (SIMULATIONS, rounds * scenarios)."""
    scenarios = list(pairs.values())
    shape = (SIMULATIONS, rounds, len(scenarios))
    if not scenarios:
        return np.zeros((SIMULATIONS, 0)), np.zeros((SIMULATIONS, 0))
    diff = np.empty(shape)
    base = np.empty(shape)
    if metric == "success":
        everything = np.concatenate([p[:, 1] for p in scenarios])
        pooled = float(everything.mean())
        # Each scenario's rate from a few pilot pairs, shrunk toward the pooled rate (2
        # pseudo-pairs), never 0 or 1.
        rates = np.clip(
            np.array(
                [(p[:, 1].sum() + 2 * pooled) / (p.shape[0] + 2) for p in scenarios]
            ),
            1e-3,
            1 - 1e-3,
        )
        moved = _logit_shift(rates, effect)
        for j in range(len(scenarios)):
            b = rng.random(shape[:2]) < rates[j]
            a = rng.random(shape[:2]) < moved[j]
            diff[:, :, j], base[:, :, j] = a.astype(float) - b, b
    else:
        cand = float(np.concatenate([p[:, 0] for p in scenarios]).mean())
        held = float(np.concatenate([p[:, 1] for p in scenarios]).mean())
        # Resources: the candidate scaled so its mean is the baseline's minus the effect
        # (values stay >= 0).
        factor = max(held - effect, 0.0) / cand if cand > 0 else 1.0
        for j, p in enumerate(scenarios):
            pick = rng.integers(0, p.shape[0], shape[:2])
            diff[:, :, j] = p[pick, 0] * factor - p[pick, 1]
            base[:, :, j] = p[pick, 1]
    return diff.reshape(SIMULATIONS, -1), base.reshape(SIMULATIONS, -1)


def _stop_rounds(
    metric: str, diff: np.ndarray, base: np.ndarray, settings: StopSettings, scenarios: int, level: float,
    effect: float, base_mean: float,
) -> tuple[np.ndarray, float]:  # fmt: skip
    """Per simulated run the round the stop rule decided the metric, and the share
    decided the right way."""
    if not scenarios or diff.shape[1] == 0:
        return np.full(SIMULATIONS, settings.max_repetitions), 0.0
    seq = sequence(metric, diff, base, settings, width=scenarios, confidence=level)
    out = seq.outcome
    out[:, : settings.min_repetitions - 1] = UNDECIDED
    any_ = (out != UNDECIDED).any(axis=1)
    first = np.where(
        any_, (out != UNDECIDED).argmax(axis=1) + 1, settings.max_repetitions
    )
    right = 1 if metric == "success" else -1
    at_first = out[np.arange(out.shape[0]), first - 1]
    return first, float((at_first == right).mean()) if effect > 0 else float(
        any_.mean()
    )
