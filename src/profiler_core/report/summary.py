"""The numbers of a report: grouped descriptive stats, success rates, comparisons
against a baseline.

Everything is computed from the columns of ``load.RowTable`` with numpy
grouping (``stats.grouped``: rows put in group order once), never row by row.
Comparisons are computed
once per metric over whole modes; per scenario only descriptive statistics
(and the point reduction of medians) are reported. See docs/reports.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Literal

import attrs

from .. import stats
from ..errors import ProfilerError
from ..model import StopRecord
from ..model.record import Record
from ..stats.grouped import GroupIndex, grouped_descriptive
from ..util.arrays import np
from . import format as fmt
from .load import RowTable
from .sequential import StopView, stop_view

#: Headline metrics: the forest plot, the distribution charts and the verdict use these.
MAIN_METRICS = (
    "cost_total_usd",
    "latency_wall_ms",
    "tokens_total",
    "tokens_active",
    "tool_calls_total",
    "agent_turns",
)

#: Metrics read from the row itself (the order of the comparison table after MAIN_METRICS).
ROW_METRICS = (
    "cost_total_usd",
    "latency_wall_ms",
    "tokens_total",
    "tokens_active",
    "tool_calls_total",
    "agent_turns",
    "tokens_input",
    "tokens_output",
    "tokens_reasoning",
    "tokens_cache_read",
    "tokens_cache_write",
    "cost_input_usd",
    "cost_output_usd",
    "cost_reasoning_usd",
    "tool_calls_failed",
    "tool_calls_retried",
    "tool_calls_error_rate",
    "attempts",
    "reward",
)

#: Resource metrics: a lower value is better.
_LOWER_IS_BETTER = re.compile(
    r"^(tokens_|latency_|cost_|tool_calls_(total|failed|retried|error_rate)$|agent_turns$|attempts$)"
)

#: The verifiers' reward and its named sub-rewards: a higher value is better.
_REWARD = re.compile(r"^reward(_.+)?$")

#: Up to this many values per mode a comparison is exactly ``stats.compare_groups``
#: (paired bootstrap, Monte Carlo permutation test); above it the large-sample
#: path is used. Both cost about the same at this size (~30 ms per metric).
EXACT_LIMIT = 200

_SAFE = re.compile(r"[^A-Za-z0-9_]+")


@attrs.frozen(kw_only=True, repr=False, eq=False)
class MetricInfo(Record):
    """A numeric metric of the report."""

    name: str
    label: str
    unit: str
    #: True for resources (cost, time, tokens...), None when the direction is unknown.
    lower_is_better: bool | None
    source: str  # "row", "byCategory" or "extension"


@attrs.frozen(kw_only=True, repr=False, eq=False)
class MetricComparison(Record):
    """One metric of one mode against the baseline."""

    metric: str
    result: stats.ComparisonResult
    median_a: float
    median_b: float
    significant: bool
    #: "exact" (stats.compare_groups) or "large-sample"
    method: str
    #: +1 when the mode is significantly better, -1 worse, 0 otherwise or unknown direction
    verdict: int


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SuccessComparison(Record):
    """Success rate of one mode against the baseline."""

    rate_a: float
    rate_b: float
    difference_pp: float
    ci95_pp: tuple[float, float]
    p_value: float
    significant: bool


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModeComparison(Record):
    """Every metric of one mode compared with the baseline."""

    mode: str
    baseline: str
    paired: bool
    pairing: str
    success: SuccessComparison
    metrics: tuple[MetricComparison, ...]

    def get(self, metric: str) -> MetricComparison | None:
        """The comparison of ``metric``, if it was compared."""
        for m in self.metrics:
            if m.metric == metric:
                return m
        return None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RateSummary(Record):
    """Success of one group: rate, Wilson interval, pass@k and pass^k."""

    successes: int
    trials: int
    rate: float
    lower: float
    upper: float
    pass_at_1: float
    pass_at_k: float
    pass_hat_k: float
    k: int


@attrs.frozen(kw_only=True, repr=False, eq=False)
class FailedRowData(Record):
    """A row that failed its checks without an error: which checks, its reward, its
    verifiers' output tail."""

    mode: str
    scenario: str
    iteration: int
    #: ";"-joined ids of the failed checks ("" when none was recorded)
    checks: str
    reward: float | None = None
    verifier_tail: str = ""


#: Up to this many rows the report lists every iteration's outcome per scenario and mode.
OUTCOME_ROWS = 5_000


def _outcomes(table, modes, mode_idx, scen_idx):
    """Per scenario and mode the iterations' pass/FAIL/error (small runs), and the first
    clean failures."""
    iterations = table.numeric["iteration"]
    failed_idx = np.flatnonzero(~table.success.astype(bool))
    reward = table.numeric["reward"]
    failed_rows = [
        FailedRowData(
            mode=modes[mode_idx[i]],
            scenario=table.scenarios[scen_idx[i]],
            iteration=int(iterations[i]),
            checks=table.failed_checks.get(int(i), ""),
            reward=None if math.isnan(reward[i]) else float(reward[i]),
            verifier_tail=table.verifier_tails.get(int(i), ""),
        )
        for i in failed_idx.tolist()
        if i not in table.errors
    ][:50]
    if table.n > OUTCOME_ROWS:
        return None, failed_rows
    outcomes: dict[str, dict[str, list[tuple[int, str]]]] = {}
    for i in range(table.n):
        word = (
            "error" if i in table.errors else ("pass" if table.success[i] else "FAIL")
        )
        per_mode = outcomes.setdefault(table.scenarios[scen_idx[i]], {})
        per_mode.setdefault(modes[mode_idx[i]], []).append((int(iterations[i]), word))
    for per_mode in outcomes.values():
        for cells in per_mode.values():
            cells.sort()
    return outcomes, failed_rows


@attrs.define
class Summary:
    """All numbers of one report."""

    run_id: str
    modes: list[str]
    baseline: str
    scenarios: list[str]
    models: list[str]
    metrics: list[MetricInfo]
    omitted_metrics: list[str]
    #: metric -> {field -> array over modes}
    by_mode: dict[str, dict[str, np.ndarray]]
    #: metric -> {field -> array [mode, scenario]}
    by_scenario: dict[str, dict[str, np.ndarray]]
    rows_by_mode: np.ndarray
    rows_by_scenario: np.ndarray
    success_by_mode: list[RateSummary]
    success_by_scenario: list[list[RateSummary | None]]
    #: [mode, scenario] sums of checkpointsPassed / checkpointsTotal
    checks_passed: np.ndarray
    checks_total: np.ndarray
    #: scenario -> [(checkpoint id, description, [(passed, total) per mode])]
    checkpoint_detail: dict[str, list[tuple[str, str, list[tuple[int, int]]]]]
    comparisons: list[ModeComparison]
    errors_by_mode: np.ndarray
    #: mode -> {completion reason -> count}
    reasons_by_mode: dict[str, dict[str, int]]
    #: (mode, scenario, iteration, code, message) of rows with an error (first ones)
    error_rows: list[tuple[str, str, int, str, str]]
    error_codes: dict[str, int]
    k: int
    confidence: float
    #: scenario -> mode -> [(iteration, "pass" | "FAIL" | "error")], for runs of at most
    #: OUTCOME_ROWS rows
    outcomes: dict[str, dict[str, list[tuple[int, str]]]] | None = None
    #: rows that failed without an error (first ones)
    failed_rows: list[FailedRowData] = attrs.Factory(list)
    #: mean reward per mode over the rows whose verifiers wrote one (nan: none did), and
    #: how many did
    reward_by_mode: np.ndarray | None = None
    reward_rows_by_mode: np.ndarray | None = None
    #: the stop rule's view when the run stopped by ``execution.stop`` (report/sequential.py)
    stop: StopView | None = None

    def metric(self, name: str) -> MetricInfo | None:
        """The info of a metric, if it is reported."""
        for m in self.metrics:
            if m.name == name:
                return m
        return None

    def metric_info(self, name: str) -> MetricInfo:
        """The info of a metric that is reported (``KeyError`` if it is not)."""
        info = self.metric(name)
        if info is None:
            raise KeyError(name)
        return info


# ---------------------------------------------------------------- metrics

#: Metric names rows once carried -> the name they have now (OpenCode wrote
#: ``latency_tool_ms`` before issue 31).
OLD_METRIC_NAMES = {"latency_tool_ms": "latency_tools_ms"}


def _renamed_metrics(ext: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Extension columns under their current names; a row with both keeps the current
    name's value."""
    out = dict(ext)
    for old, new in OLD_METRIC_NAMES.items():
        if old in out:
            col = out.pop(old)
            out[new] = (
                col if new not in out else np.where(np.isnan(out[new]), col, out[new])
            )
    return out


def unknown_cost(table: RowTable) -> np.ndarray | None:
    """Rows whose cost is unknown: priced "unknown", or errored with no cost and no
    source (nothing was measured).

    An errored attempt's zeros are not a price: counted as $0 they would pull a mode's median
    cost to 0 whenever a row errored, while the rows that ran say "unknown".
    """
    source_col = table.extensions.get("cost_source")
    sources = source_col if isinstance(source_col, list) else [None] * table.n
    unknown = np.fromiter((s == "unknown" for s in sources), dtype=bool, count=table.n)
    if table.errors:
        cost = table.numeric["cost_total_usd"]
        for i in table.errors:
            if sources[i] is None and cost[i] == 0:
                unknown[i] = True
    return unknown if unknown.any() else None


def metric_columns(
    table: RowTable, units: dict[str, str] | None = None
) -> tuple[list[MetricInfo], dict[str, np.ndarray], list[str]]:
    """The numeric metrics of a table, their values per row (nan = missing), and the
    constant ones left out."""
    units = units or {}
    columns: dict[str, np.ndarray] = {}
    sources: dict[str, str] = {}
    ext = _renamed_metrics(table.numeric_extensions())
    for name in ROW_METRICS:
        columns[name] = table.numeric[name]
        sources[name] = "row"
    _apply_collector_costs(columns, ext, table)
    for category, col in sorted(table.by_category.items()):
        name = f"tool_calls_category_{_SAFE.sub('_', category or 'other')}"
        columns[name] = col + columns.get(name, 0)
        sources[name] = "byCategory"
    for name in sorted(ext):
        if name in columns or name.startswith("tool_calls_category_"):
            continue
        columns[name] = ext[name]
        sources[name] = "extension"
    infos: list[MetricInfo] = []
    omitted: list[str] = []
    kept: dict[str, np.ndarray] = {}
    for name, col in columns.items():
        usable = _usable(name, col)
        if usable is None:
            omitted.append(name)
            continue
        kept[name] = usable
        infos.append(
            MetricInfo(
                name=name,
                label=fmt.label(name),
                unit=units.get(name) or fmt.builtin_unit(name),
                lower_is_better=_lower_is_better(name),
                source=sources[name],
            )
        )
    return infos, kept, omitted


_COST_COLUMNS = (
    "cost_total_usd",
    "cost_input_usd",
    "cost_output_usd",
    "cost_reasoning_usd",
)


def _apply_collector_costs(
    columns: dict[str, np.ndarray], ext: dict[str, np.ndarray], table: RowTable
) -> None:
    """The cost collector's figures over the row's, and unknown pricing as missing."""
    # The cost collector prices tokens when the provider reported no cost; its
    # figure wins over the row's, and "unknown" pricing is missing, never $0.
    unknown = unknown_cost(table)
    for name in _COST_COLUMNS:
        col = columns[name]
        if name in ext:
            col = np.where(np.isnan(ext[name]), col, ext[name])
        if unknown is not None and unknown.any():
            priced = ext.get(name, np.full(table.n, math.nan))
            col = np.where(unknown & np.isnan(priced), math.nan, col)
        columns[name] = col


def _usable(name: str, col: np.ndarray) -> np.ndarray | None:
    """The column with infinities as missing; None when it has no value or (outside the
    main metrics) only one."""
    finite = col[~np.isnan(col)]
    if finite.size == 0:
        return None
    if np.all(finite == finite[0]) and name not in MAIN_METRICS:
        return None
    if np.isinf(finite).any():
        return np.where(np.isinf(col), math.nan, col)
    return col


def _lower_is_better(name: str) -> bool | None:
    """Whether less of the metric is better (None: the name does not say)."""
    if _LOWER_IS_BETTER.match(name):
        return True
    if _REWARD.match(name):
        return False
    return None


# ---------------------------------------------------------------- comparisons


def compare_metric(
    a: np.ndarray,
    b: np.ndarray,
    *,
    paired: bool,
    mode_a: str,
    mode_b: str,
    metric: str,
    resamples: int = stats.DEFAULT_RESAMPLES,
    permutations: int = stats.DEFAULT_PERMUTATIONS,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    seed: int = stats.DEFAULT_SEED,
) -> tuple[stats.ComparisonResult, str]:
    """Compare A with baseline B; returns the result and the method used ("exact" or
    "large-sample")."""
    # Above EXACT_LIMIT values per mode the exact paired bootstrap and 10,000 permutations
    # cost ~0.7 s per metric at 5,000 rows; stats' large-sample method is O(resamples + n).
    method: Literal["exact", "large-sample"] = (
        "exact" if max(a.size, b.size) <= EXACT_LIMIT else "large-sample"
    )
    result = stats.compare_groups(
        a, b, mode_a=mode_a, mode_b=mode_b, metric=metric, paired=paired,
        resamples=resamples, permutations=permutations, confidence=confidence, seed=seed, method=method,
    )  # fmt: skip
    return result, method


def _pair_order(
    table: RowTable, rows_a: np.ndarray, rows_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | str:
    """Row indices of A and B aligned by (model, scenario, iteration), or why they
    cannot be paired."""
    if rows_a.size != rows_b.size:
        return f"not paired: {rows_a.size} and {rows_b.size} rows"
    model = table.categorical["model"].codes.astype(np.int64)
    scen = table.categorical["scenario_id"].codes.astype(np.int64)
    it = table.numeric["iteration"].astype(np.int64)
    it = it - it.min()
    span_it = int(it.max()) + 1
    span_s = len(table.scenarios)
    key = (model * span_s + scen) * span_it + it
    ka, kb = key[rows_a], key[rows_b]
    oa, ob = np.argsort(ka), np.argsort(kb)
    ka, kb = ka[oa], kb[ob]
    if np.any(ka[1:] == ka[:-1]) or np.any(kb[1:] == kb[:-1]):
        return "not paired: a (model, scenario, iteration) cell appears more than once"
    if not np.array_equal(ka, kb):
        return (
            "not paired: the two modes ran different (model, scenario, iteration) cells"
        )
    return rows_a[oa], rows_b[ob]


def _success_comparison(
    a: np.ndarray, b: np.ndarray, paired: bool, confidence: float, seed: int
) -> SuccessComparison:
    """Difference of success rates (percentage points), Newcombe's interval, permutation p."""
    ra = stats.wilson_interval(int(a.sum()), int(a.size), confidence)
    rb = stats.wilson_interval(int(b.sum()), int(b.size), confidence)
    diff, lower, upper = (
        100 * x
        for x in stats.rate_difference_interval(
            int(a.sum()), int(a.size), int(b.sum()), int(b.size), confidence
        )
    )
    af, bf = a.astype(np.float64), b.astype(np.float64)
    if max(a.size, b.size) <= EXACT_LIMIT:
        p = stats.permutation_test(af, bf, paired=paired, seed=seed).p_value
    else:
        p = stats.permutation_test_normal(af, bf, paired=paired).p_value
    return SuccessComparison(
        rate_a=ra.rate,
        rate_b=rb.rate,
        difference_pp=diff,
        ci95_pp=(lower, upper),
        p_value=p,
        significant=bool(p < 1 - confidence),
    )


def compare_modes(
    table: RowTable,
    columns: dict[str, np.ndarray],
    infos: Sequence[MetricInfo],
    mode_rows: dict[str, np.ndarray],
    mode: str,
    baseline: str,
    *,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    seed: int = stats.DEFAULT_SEED,
) -> ModeComparison:
    """Compare every metric of ``mode`` with ``baseline`` (Holm-adjusted across the metrics)."""
    rows_a, rows_b = mode_rows[mode], mode_rows[baseline]
    pairing = _pair_order(table, rows_a, rows_b)
    paired = not isinstance(pairing, str)
    if isinstance(pairing, str):
        note = pairing
    else:
        rows_a, rows_b = pairing
        note = f"paired by (model, scenario, iteration): {rows_a.size} cells"
    results: list[stats.ComparisonResult] = []
    extra: list[tuple[str, float, float]] = []
    for info in infos:
        va, vb = columns[info.name][rows_a], columns[info.name][rows_b]
        if paired:
            keep = ~(np.isnan(va) | np.isnan(vb))
            va, vb = va[keep], vb[keep]
        else:
            va, vb = va[~np.isnan(va)], vb[~np.isnan(vb)]
        result, method = compare_metric(
            va,
            vb,
            paired=paired,
            mode_a=mode,
            mode_b=baseline,
            metric=info.name,
            confidence=confidence,
            seed=seed,
        )
        results.append(result)
        med_a = float(np.median(va)) if va.size else math.nan
        med_b = float(np.median(vb)) if vb.size else math.nan
        extra.append((method, med_a, med_b))
    adjusted = stats.holm_adjust_comparisons(results) if results else ()
    alpha = 1 - confidence
    metrics = []
    for info, result, (method, med_a, med_b) in zip(
        infos, adjusted, extra, strict=True
    ):
        significant = bool(result.p_value_adjusted < alpha)
        verdict = 0
        # The test is on means, so its direction is the sign of the mean difference (Cohen's d);
        # the median reduction can be 0 for counts whose means differ.
        direction = (
            result.effect_size
            if not math.isnan(result.effect_size)
            else -result.reduction_pct
        )
        if (
            significant
            and info.lower_is_better is not None
            and direction != 0
            and not math.isnan(direction)
        ):
            lower = direction < 0
            verdict = 1 if lower == info.lower_is_better else -1
        metrics.append(
            MetricComparison(
                metric=info.name,
                result=result,
                median_a=med_a,
                median_b=med_b,
                significant=significant,
                method=method,
                verdict=verdict,
            )
        )
    success = _success_comparison(
        table.success[rows_a], table.success[rows_b], paired, confidence, seed
    )
    return ModeComparison(
        mode=mode,
        baseline=baseline,
        paired=paired,
        pairing=note,
        success=success,
        metrics=tuple(metrics),
    )


# ---------------------------------------------------------------- summary


def _rates(
    successes: int,
    trials: int,
    cells_c: list[int],
    cells_n: list[int],
    k: int,
    confidence: float,
) -> RateSummary:
    """Wilson interval of the pooled rate; pass@k / pass^k averaged over (model, scenario) cells."""
    s, n = int(successes), int(trials)
    w = stats.wilson_interval(s, n, confidence)
    usable = [(c, m) for c, m in zip(cells_c, cells_n, strict=True) if m >= k and m > 0]
    if usable:
        p1 = sum(stats.pass_at_k(m, c, 1) for c, m in usable) / len(usable)
        pk = sum(stats.pass_at_k(m, c, k) for c, m in usable) / len(usable)
        hk = sum(stats.pass_hat_k(m, c, k) for c, m in usable) / len(usable)
    else:
        p1 = pk = hk = math.nan
    return RateSummary(
        successes=s,
        trials=n,
        rate=w.rate,
        lower=w.lower,
        upper=w.upper,
        pass_at_1=p1,
        pass_at_k=pk,
        pass_hat_k=hk,
        k=k,
    )


def order_modes(table: RowTable, preferred: Sequence[str] = ()) -> list[str]:
    """Modes in the manifest's order when it names them, then in order of appearance."""
    present = table.modes
    ordered = [m for m in preferred if m in present]
    return ordered + [m for m in present if m not in ordered]


def build_summary(
    table: RowTable,
    *,
    run_id: str,
    baseline: str | None = None,
    mode_order: Sequence[str] = (),
    units: dict[str, str] | None = None,
    repetitions: int | None = None,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    seed: int = stats.DEFAULT_SEED,
    stop: StopRecord | None = None,
) -> Summary:
    """Compute every number a report shows; ``stop`` (the manifest's) adds the stop
    rule's sequences."""
    modes = order_modes(table, mode_order)
    if baseline is None:
        baseline = modes[0]
    elif baseline not in modes:
        raise ProfilerError(
            f"--baseline {baseline!r}: no such mode in the results (modes: {', '.join(modes)})"
        )
    mode_cat = table.categorical["mode"]
    position = np.empty(len(mode_cat.values), dtype=np.int64)
    for code, name in enumerate(mode_cat.values):
        position[code] = modes.index(name)
    mode_idx = position[mode_cat.codes]
    scen_idx = table.categorical["scenario_id"].codes.astype(np.int64)
    n_modes, n_scen = len(modes), len(table.scenarios)
    cell_idx = mode_idx * n_scen + scen_idx

    infos, columns, omitted = metric_columns(table, units)
    by_mode, by_scenario = _descriptives(
        infos, columns, mode_idx, cell_idx, (n_modes, n_scen)
    )
    rows_by_cell = np.bincount(cell_idx, minlength=n_modes * n_scen).reshape(
        n_modes, n_scen
    )
    k, success_by_mode, success_by_scenario = _success(
        table, mode_idx, rows_by_cell, cell_idx, repetitions, confidence
    )
    checks_passed, checks_total, detail = _checks(
        table, cell_idx, position, rows_by_cell.shape
    )

    comparisons = _comparisons(
        table, columns, infos, modes, mode_idx, baseline, confidence, seed
    )
    errors_by_mode, error_codes, error_rows = _errors(table, modes, mode_idx, scen_idx)
    outcomes, failed_rows = _outcomes(table, modes, mode_idx, scen_idx)
    reward_mean, reward_rows = _mean_reward(table.numeric["reward"], mode_idx, n_modes)
    return Summary(
        run_id=run_id,
        modes=modes,
        baseline=baseline,
        scenarios=list(table.scenarios),
        models=list(table.categorical["model"].values),
        metrics=infos,
        omitted_metrics=omitted,
        by_mode=by_mode,
        by_scenario=by_scenario,
        rows_by_mode=np.bincount(mode_idx, minlength=n_modes),
        rows_by_scenario=rows_by_cell,
        success_by_mode=success_by_mode,
        success_by_scenario=success_by_scenario,
        checks_passed=checks_passed,
        checks_total=checks_total,
        checkpoint_detail=detail,
        comparisons=comparisons,
        errors_by_mode=errors_by_mode,
        reasons_by_mode=_reasons(table, modes, mode_idx),
        error_rows=error_rows,
        error_codes=error_codes,
        outcomes=outcomes,
        failed_rows=failed_rows,
        reward_by_mode=reward_mean,
        reward_rows_by_mode=reward_rows,
        k=k,
        confidence=confidence,
        stop=stop_view(table, columns, modes, stop),
    )


def _mean_reward(
    reward: np.ndarray, mode_idx: np.ndarray, n_modes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Mean reward per mode over the rows that have one (as Harbor reports it beside the
    success rate), and their count."""
    has = ~np.isnan(reward)
    rows = np.bincount(mode_idx[has], minlength=n_modes)
    sums = np.bincount(mode_idx[has], weights=reward[has], minlength=n_modes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rows > 0, sums / np.maximum(rows, 1), math.nan), rows


def _descriptives(
    infos: list[MetricInfo],
    columns: dict[str, np.ndarray],
    mode_idx: np.ndarray,
    cell_idx: np.ndarray,
    shape: tuple[int, int],
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, np.ndarray]]]:
    """Each metric's descriptive statistics per mode (arrays over modes) and per [mode,
    scenario] cell."""
    n_modes, n_scen = shape
    by_mode: dict[str, dict[str, np.ndarray]] = {}
    by_scenario: dict[str, dict[str, np.ndarray]] = {}
    by_mode_index = GroupIndex.of(mode_idx, n_modes)
    by_cell_index = GroupIndex.of(cell_idx, n_modes * n_scen)
    for info in infos:
        col = columns[info.name]
        by_mode[info.name] = grouped_descriptive(col, mode_idx, n_modes, by_mode_index)
        cells = grouped_descriptive(col, cell_idx, n_modes * n_scen, by_cell_index)
        by_scenario[info.name] = {
            k: v.reshape(n_modes, n_scen) for k, v in cells.items()
        }
    return by_mode, by_scenario


def _comparisons(
    table: RowTable,
    columns: dict[str, np.ndarray],
    infos: list[MetricInfo],
    modes: list[str],
    mode_idx: np.ndarray,
    baseline: str,
    confidence: float,
    seed: int,
) -> list[ModeComparison]:
    """Every other mode compared with the baseline."""
    # An errored row's tokens/latency/cost measure nothing, so comparisons use only rows that ran.
    ran = np.ones(mode_idx.shape[0], dtype=bool)
    ran[np.fromiter(table.errors, dtype=np.int64, count=len(table.errors))] = False
    mode_rows = {
        name: np.flatnonzero((mode_idx == i) & ran) for i, name in enumerate(modes)
    }
    return [
        compare_modes(
            table,
            columns,
            infos,
            mode_rows,
            m,
            baseline,
            confidence=confidence,
            seed=seed,
        )
        for m in modes
        if m != baseline
    ]


def _success(
    table: RowTable,
    mode_idx: np.ndarray,
    rows_by_cell: np.ndarray,
    cell_idx: np.ndarray,
    repetitions: int | None,
    confidence: float,
) -> tuple[int, list[RateSummary], list[list[RateSummary | None]]]:
    """k (repetitions per (model, scenario) cell), and the success rates per mode and
    per [mode][scenario]."""
    n_modes, n_scen = rows_by_cell.shape
    succ_by_cell = np.bincount(
        cell_idx, weights=table.success, minlength=n_modes * n_scen
    ).reshape(n_modes, n_scen)
    # pass@k over repetitions: the (model, scenario) cells of each mode.
    scen_idx = table.categorical["scenario_id"].codes.astype(np.int64)
    model_idx = table.categorical["model"].codes.astype(np.int64)
    n_models = len(table.categorical["model"].values)
    full = (mode_idx * n_models + model_idx) * n_scen + scen_idx
    size = n_modes * n_models * n_scen
    cell_n = np.bincount(full, minlength=size).reshape(n_modes, n_models * n_scen)
    cell_c = np.bincount(full, weights=table.success, minlength=size).reshape(
        n_modes, n_models * n_scen
    )
    present = cell_n[cell_n > 0]
    k = int(present.min()) if present.size else 1
    if repetitions and 1 <= repetitions <= k:
        k = repetitions
    by_mode = []
    for m in range(n_modes):
        ns = [int(x) for x in cell_n[m] if x > 0]
        cs = [int(c) for c, x in zip(cell_c[m], cell_n[m], strict=True) if x > 0]
        by_mode.append(_rates(sum(cs), sum(ns), cs, ns, k, confidence))
    by_scenario: list[list[RateSummary | None]] = []
    for m in range(n_modes):
        row: list[RateSummary | None] = []
        for s in range(n_scen):
            n = int(rows_by_cell[m, s])
            c = int(succ_by_cell[m, s])
            row.append(
                _rates(c, n, [c], [n], min(k, n) or 1, confidence) if n else None
            )
        by_scenario.append(row)
    return k, by_mode, by_scenario


def _checks(
    table: RowTable, cell_idx: np.ndarray, position: np.ndarray, shape: tuple[int, int]
) -> tuple[
    np.ndarray, np.ndarray, dict[str, list[tuple[str, str, list[tuple[int, int]]]]]
]:
    """[mode, scenario] sums of checks passed and run, and per scenario each check's
    (passed, total) per mode."""
    n_modes, n_scen = shape
    size = n_modes * n_scen
    passed = np.bincount(
        cell_idx, weights=table.numeric["checkpoints_passed"], minlength=size
    ).reshape(shape)
    total = np.bincount(
        cell_idx, weights=table.numeric["checkpoints_total"], minlength=size
    ).reshape(shape)
    detail: dict[str, list[tuple[str, str, list[tuple[int, int]]]]] = {}
    per_cp: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for (m_code, s_code, cid), (n_passed, n_total) in table.checkpoints.items():
        cp_counts = per_cp.setdefault((s_code, cid), [(0, 0)] * n_modes)
        cp_counts[int(position[m_code])] = (n_passed, n_total)
    for (s_code, cid), cp_counts in per_cp.items():
        detail.setdefault(table.scenarios[s_code], []).append(
            (cid, table.checkpoint_descriptions.get(cid, ""), cp_counts)
        )
    return passed, total, detail


def _errors(
    table: RowTable, modes: list[str], mode_idx: np.ndarray, scen_idx: np.ndarray
) -> tuple[np.ndarray, dict[str, int], list[tuple[str, str, int, str, str]]]:
    """Errored rows per mode, rows per error code, and the first 50 errors (mode,
    scenario, iteration, code, message)."""
    errors_by_mode = np.zeros(len(modes), dtype=np.int64)
    error_codes: dict[str, int] = {}
    error_rows: list[tuple[str, str, int, str, str]] = []
    for row_i, (err_message, err_code) in sorted(table.errors.items()):
        errors_by_mode[mode_idx[row_i]] += 1
        key = str(err_code) if err_code else "error"
        error_codes[key] = error_codes.get(key, 0) + 1
        if len(error_rows) < 50:
            mode, scenario = modes[mode_idx[row_i]], table.scenarios[scen_idx[row_i]]
            error_rows.append(
                (
                    mode,
                    scenario,
                    int(table.numeric["iteration"][row_i]),
                    key,
                    str(err_message),
                )
            )
    return errors_by_mode, error_codes, error_rows


def _reasons(
    table: RowTable, modes: list[str], mode_idx: np.ndarray
) -> dict[str, dict[str, int]]:
    """Per mode, how many rows ended with each completion reason (reasons it never had left out)."""
    reason = table.categorical["completion_reason"]
    n_reasons = len(reason.values)
    counts = np.bincount(
        mode_idx * n_reasons + reason.codes, minlength=len(modes) * n_reasons
    )
    reasons_by_mode: dict[str, dict[str, int]] = {m: {} for m in modes}
    for m, mode in enumerate(modes):
        for r, name in enumerate(reason.values):
            if c := int(counts[m * n_reasons + r]):
                reasons_by_mode[mode][name] = c
    return reasons_by_mode


# ---------------------------------------------------------------- JSON
