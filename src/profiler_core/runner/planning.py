"""How many sessions a question needs, and what a run will cost: ``profiler plan`` and ``profiler run --dry-run``.

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
import numpy as np

from ..config.schema import StopSettings
from ..errors import ConfigError, ProfilerError
from ..model import ProfileRow, RunManifest
from ..model.record import Record
from ..stats.sequential import fixed_sample_size
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


def earlier_runs(results_dir: Path, profile_hash: str, profile_path: str | None) -> EarlierRuns | None:
    """The runs in ``results_dir`` with this profile hash, else those of the same profile file; None if none."""
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
        same = [(p, m) for p, m in manifests if m.profile_path and Path(m.profile_path).resolve() == wanted]
        match = "same profile file"
    rows: list[ProfileRow] = []
    for path, _manifest in same:
        jsonl = path.with_name(path.name[: -len(".manifest.json")] + ".jsonl")
        if jsonl.exists():
            rows += [r for r in read_jsonl(jsonl).rows if r.iteration >= 0]
    if not rows:
        return None
    return EarlierRuns(manifests=tuple(m for _, m in same), rows=tuple(rows), match=match)


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
    """Total of ``n`` sessions and its variance: the sessions' own spread plus the mean's uncertainty."""
    if n == 0 or math.isnan(mean):
        return 0.0, 0.0
    return n * mean, n * sd * sd + (n * n * sd * sd / known if known else 0.0)


def estimate(sessions: dict[str, int], costs: dict[str, SessionCost], concurrency: int) -> Estimate | None:
    """Cost and elapsed time of ``sessions`` (mode -> count) from earlier sessions; None for a mode never seen."""
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


def sessions_per_mode(models: Sequence[str], modes: Sequence[str], scenarios: int, repetitions: int) -> dict[str, int]:
    """Sessions each mode runs for ``repetitions`` rounds (warm-ups not counted)."""
    return {mode: len(models) * scenarios * repetitions for mode in modes}


# ---------------------------------------------------------------- plan


def parse_detect(items: Iterable[str], metrics: Sequence[str]) -> dict[str, tuple[float, str]]:
    """``["cost:10%", "success:10pp"]`` -> metric -> (value, kind); every metric gets one (a default when not named)."""
    from ..config.schema import STOP_METRICS, parse_margin

    out = {m: parse_margin(DEFAULT_DETECT.get(m, DEFAULT_DETECT_OTHER)) for m in metrics}
    for item in items:
        metric, sep, value = item.partition(":")
        metric = metric.strip()
        parsed = parse_margin(value.strip()) if sep else None
        if metric not in STOP_METRICS:
            raise ConfigError(f"--detect {item!r}: unknown metric {metric!r} (metrics: {', '.join(STOP_METRICS)})")
        if parsed is None or parsed[0] <= 0:
            raise ConfigError(f"--detect {item!r}: expected METRIC:EFFECT such as cost:10% or success:10pp")
        if (metric == "success") != (parsed[1] != "relative"):
            hint = "in percentage points (success:10pp)" if metric == "success" else "a percentage (cost:10%) or a number"
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
    #: SD of the pilot's paired differences (success: of the simulated pairs at the effect)
    sd: float
    #: the effect to detect, in the metric's unit
    effect: float
    #: rounds (repetitions) a fixed design needs for the power; None: the pilot shows no spread to plan with
    fixed_rounds: int | None
    #: per simulated stop-rule run: the round it was decided (``max_repetitions`` when never)
    stop_rounds: np.ndarray = attrs.field(eq=False)
    #: share of simulated runs decided in the effect's direction by ``max_repetitions``
    decided: float


def pilot_pairs(rows: Iterable[ProfileRow], mode: str, baseline: str, metric: str) -> dict[str, np.ndarray]:
    """The pilot's (candidate, baseline) values per scenario, paired by (model, scenario, iteration); errored rows out."""
    cells: dict[tuple[str, str, int], dict[str, float]] = {}
    for row in rows:
        if row.iteration < 0 or row.error is not None or row.mode not in (mode, baseline):
            continue
        cells.setdefault((row.model, row.scenario_id, row.iteration), {})[row.mode] = row_value(row, metric)
    by_scenario: dict[str, list[tuple[float, float]]] = {}
    for (_, scenario, _), pair in cells.items():
        if mode in pair and baseline in pair and not (math.isnan(pair[mode]) or math.isnan(pair[baseline])):
            by_scenario.setdefault(scenario, []).append((pair[mode], pair[baseline]))
    return {s: np.array(v) for s, v in sorted(by_scenario.items())}


def plan_metric(
    pairs: dict[str, np.ndarray], *, mode: str, metric: str, effect: tuple[float, str], settings: StopSettings,
    power: float, metrics: int, seed: int = 42,
) -> MetricPlan:  # fmt: skip
    """Fixed-design repetitions for ``power`` and simulated ``stop: decided`` repetitions, for one metric.

    Both at the stop rule's level (its confidence shared by ``metrics`` metrics). The simulation
    draws each round's pair of a scenario from that scenario's pilot pairs, moved so the mean
    difference is the effect (an improvement: success up, resources down); success pairs are
    drawn as Bernoulli with the pilot's baseline rate per scenario and that rate plus the effect.
    """
    scenarios = len(pairs)
    everything = np.concatenate(list(pairs.values())) if pairs else np.zeros((0, 2))
    base_mean = float(everything[:, 1].mean()) if everything.size else math.nan
    value, kind = effect
    size = value * abs(base_mean) if kind == "relative" else value
    level = 1.0 - (1.0 - settings.confidence) / metrics
    rng = np.random.default_rng(seed)
    diff, base = _simulate(pairs, metric, size, settings.max_repetitions, rng)
    if metric == "success":  # the spread of pairs at the effect (success cannot be "moved" like a cost)
        sd = float(diff.std(ddof=1)) if diff.size > 1 else math.nan
    else:
        d = everything[:, 0] - everything[:, 1]
        sd = float(d.std(ddof=1)) if d.size > 1 else math.nan
    fixed = None
    if size > 0 and sd > 0 and scenarios:
        fixed = max(1, math.ceil(fixed_sample_size(sd, size, confidence=level, power=power) / scenarios))
    stop_rounds, decided = _stop_rounds(metric, diff, base, settings, scenarios, level, size, base_mean)
    return MetricPlan(
        mode=mode, metric=metric, pairs=int(everything.shape[0]), baseline_mean=base_mean, sd=sd, effect=size,
        fixed_rounds=fixed, stop_rounds=stop_rounds, decided=decided,
    )  # fmt: skip


def _simulate(
    pairs: dict[str, np.ndarray], metric: str, effect: float, rounds: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Simulated runs' paired differences and baseline values, (SIMULATIONS, rounds * scenarios)."""
    scenarios = list(pairs.values())
    shape = (SIMULATIONS, rounds, len(scenarios))
    if not scenarios:
        return np.zeros((SIMULATIONS, 0)), np.zeros((SIMULATIONS, 0))
    diff = np.empty(shape)
    base = np.empty(shape)
    if metric == "success":
        for j, p in enumerate(scenarios):
            rate = float(p[:, 1].mean())
            b = rng.random(shape[:2]) < rate
            a = rng.random(shape[:2]) < min(1.0, rate + effect)
            diff[:, :, j], base[:, :, j] = a.astype(float) - b, b
    else:
        d_all = np.concatenate([p[:, 0] - p[:, 1] for p in scenarios])
        shift = -effect - float(d_all.mean())  # resources: the candidate is lower by the effect
        for j, p in enumerate(scenarios):
            pick = rng.integers(0, p.shape[0], shape[:2])
            diff[:, :, j] = p[pick, 0] - p[pick, 1] + shift
            base[:, :, j] = p[pick, 1]
    return diff.reshape(SIMULATIONS, -1), base.reshape(SIMULATIONS, -1)


def _stop_rounds(
    metric: str, diff: np.ndarray, base: np.ndarray, settings: StopSettings, scenarios: int, level: float,
    effect: float, base_mean: float,
) -> tuple[np.ndarray, float]:  # fmt: skip
    """Per simulated run the round the stop rule decided the metric, and the share decided the right way."""
    if not scenarios or diff.shape[1] == 0:
        return np.full(SIMULATIONS, settings.max_repetitions), 0.0
    seq = sequence(metric, diff, base, settings, width=scenarios, confidence=level)
    out = seq.outcome
    out[:, : settings.min_repetitions - 1] = UNDECIDED
    any_ = (out != UNDECIDED).any(axis=1)
    first = np.where(any_, (out != UNDECIDED).argmax(axis=1) + 1, settings.max_repetitions)
    right = 1 if metric == "success" else -1
    at_first = out[np.arange(out.shape[0]), first - 1]
    return first, float((at_first == right).mean()) if effect > 0 else float(any_.mean())
