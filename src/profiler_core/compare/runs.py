"""Is NEW worse than BASE? Two runs compared mode by mode, with the report's statistics.

Cells are matched by (model, mode, scenario); a mode or scenario only one run
has is listed, not compared. Per mode and metric the change of NEW against
BASE comes with its confidence interval and a permutation p-value, Holm-adjusted
across the metrics of that mode — ``report.summary.compare_metric`` for medians
(percentile bootstrap of the ratio of medians), Newcombe's interval for the
success rate. When both runs ran exactly the same (model, scenario, iteration)
cells of a mode, the comparison is paired by them (scenario is then a block);
otherwise the two samples are compared as they are. Errored rows measure the
failure, not the agent, and are left out (and counted), as in the report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import attrs

from .. import stats
from ..errors import ConfigError
from ..model.record import Record
from ..report.junit import Case, run_cases
from ..stats.stratified import StratifiedChange, stratified_change
from ..util.arrays import np
from .gates import Gate, Outcome

#: Metrics every comparison reports (gated metrics are added).
DEFAULT_METRICS = (
    "success_rate",
    "cost_total_usd",
    "latency_wall_ms",
    "tokens_total",
    "tool_calls_total",
    "agent_turns",
)

#: Exit status of ``profiler compare``: no regression, a regression, samples too small to tell.
EXIT_PASS, EXIT_REGRESSION, EXIT_INCONCLUSIVE = 0, 1, 3


@attrs.frozen(kw_only=True, repr=False, eq=False)
class MetricChange(Record):
    """One metric of one mode: NEW against BASE."""

    metric: str
    #: "%" (change of the median) or "pp" (change of the success rate)
    unit: str
    base_n: int
    new_n: int
    #: the medians (or the success rates, 0..1)
    base_value: float
    new_value: float
    change: float
    lower: float
    upper: float
    p_value: float
    p_adjusted: float
    reason: str | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModeResult(Record):
    """Every compared metric of one mode."""

    mode: str
    paired: bool
    pairing: str
    base_rows: int
    new_rows: int
    base_errors: int
    new_errors: int
    changes: tuple[MetricChange, ...]

    def get(self, metric: str) -> MetricChange | None:
        """The change of ``metric``, if it was compared."""
        return next((c for c in self.changes if c.metric == metric), None)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class GateResult(Record):
    """One ``--fail-on`` gate applied to one mode."""

    gate: Gate
    mode: str
    outcome: Outcome
    why: str
    change: MetricChange | None
    #: rows per mode that would catch, with 80% power, a change ``margin`` past the
    #: tolerance (nan: unknown)
    rows_needed: float = math.nan
    #: how far past the tolerance (in the gate's unit) ``rows_needed`` is for
    margin: float = math.nan


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CellStatus(Record):
    """How many iterations of one (model, mode, scenario) passed in each run."""

    model: str
    mode: str
    scenario: str
    base_passed: int
    base_total: int
    new_passed: int
    new_total: int


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Comparison(Record):
    """Everything ``profiler compare`` reports."""

    base_id: str
    new_id: str
    modes: tuple[ModeResult, ...]
    gates: tuple[GateResult, ...]
    #: passed every iteration in BASE, failed one in NEW (and the reverse)
    newly_failing: tuple[CellStatus, ...]
    newly_passing: tuple[CellStatus, ...]
    #: "mode" or "mode/scenario" compared in one run only
    only_base: tuple[str, ...]
    only_new: tuple[str, ...]
    cases: tuple[Case, ...]
    problems: tuple[str, ...] = ()
    confidence: float = stats.DEFAULT_CONFIDENCE

    @property
    def outcome(self) -> Outcome:
        """ "regression" when any gate regressed, else "inconclusive" when any could not
        tell, else "pass"."""
        found = {g.outcome for g in self.gates}
        return (
            "regression"
            if "regression" in found
            else "inconclusive"
            if "inconclusive" in found
            else "pass"
        )

    @property
    def exit_code(self) -> int:
        """0 (pass), 1 (regression) or 3 (inconclusive)."""
        return {
            "pass": EXIT_PASS,
            "regression": EXIT_REGRESSION,
            "inconclusive": EXIT_INCONCLUSIVE,
        }[self.outcome]


class _Run:
    """One run's rows as columns, and where each mode's rows are."""

    def __init__(self, path: Path) -> None:
        from ..report.load import load_rows
        from ..report.summary import metric_columns

        self.table = table = load_rows(path, parallel=False)
        run_ids = table.categorical["run_id"].values
        self.run_id = run_ids[0] if len(run_ids) == 1 else path.name
        _infos, self.columns, _omitted = metric_columns(table)
        cat = table.categorical
        self.mode = np.asarray(cat["mode"].labels(), dtype=object)
        self.cell = np.asarray(
            [
                f"{m}\x00{s}"
                for m, s in zip(cat["model"].labels(), cat["scenario_id"].labels())
            ],
            dtype=object,
        )
        self.iteration = table.numeric["iteration"].astype(np.int64)
        self.errored = np.zeros(table.n, dtype=bool)
        self.errored[list(table.errors)] = True
        self.success = table.success.astype(bool)

    def column(self, metric: str) -> np.ndarray | None:
        """A metric per row (nan where missing), also when it is constant (the report
        leaves those out)."""
        if metric in self.columns:
            return self.columns[metric]
        table = self.table
        if metric in table.numeric:
            return table.numeric[metric].astype(np.float64)
        found = table.extensions.get(metric)
        if isinstance(found, np.ndarray):
            return found
        category = metric.removeprefix("tool_calls_category_")
        if category != metric and category in table.by_category:
            return table.by_category[category].astype(np.float64)
        return None


def compare_runs(base: Path, new: Path, gates: Sequence[Gate] = (), *, confidence: float = stats.DEFAULT_CONFIDENCE,
                 seed: int = stats.DEFAULT_SEED, margin: float | None = None) -> Comparison:  # fmt: skip
    """Compare NEW with BASE: per mode and metric, the gates, and the scenarios that
    newly fail or pass."""
    b, n = _Run(Path(base)), _Run(Path(new))
    metrics = list(dict.fromkeys([*DEFAULT_METRICS, *(g.metric for g in gates)]))
    for gate in gates:
        _check_gate_metric(gate, b, n)
    base_modes = list(dict.fromkeys(b.mode.tolist()))
    new_modes = list(dict.fromkeys(n.mode.tolist()))
    common = [m for m in base_modes if m in new_modes]
    modes = tuple(
        _compare_mode(b, n, mode, metrics, confidence, seed) for mode in common
    )
    results = judge_gates(gates, [m.mode for m in modes], b, n, 1 - confidence, margin)
    statuses = _cell_statuses(b, n)
    failing = tuple(s for s in statuses if _newly_failing(s))
    passing = tuple(s for s in statuses if _newly_passing(s))
    only_base, only_new = _unshared(base_modes, new_modes, statuses)
    return Comparison(
        base_id=b.run_id, new_id=n.run_id, modes=modes, gates=results, newly_failing=failing, newly_passing=passing,
        only_base=only_base, only_new=only_new, cases=tuple(_cases(n, failing, results)),
        problems=tuple([*b.table.problems, *n.table.problems]), confidence=confidence,
    )  # fmt: skip


def _check_gate_metric(gate: Gate, b: _Run, n: _Run) -> None:
    """A gate on a metric neither run has is a mistake in the command line."""
    if gate.metric == "success_rate":
        return
    if b.column(gate.metric) is not None or n.column(gate.metric) is not None:
        return
    known = sorted(set(b.columns) | set(n.columns) | {"success_rate"})
    raise ConfigError(
        f"--fail-on {gate.text!r}: neither run has a metric {gate.metric!r} "
        f"(they have: {', '.join(known)})"
    )


def _ran_in_both(s: CellStatus) -> bool:
    return bool(s.base_total and s.new_total)


def _newly_failing(s: CellStatus) -> bool:
    """Every BASE iteration passed, some NEW one did not."""
    return (
        _ran_in_both(s) and s.base_passed == s.base_total and s.new_passed < s.new_total
    )


def _newly_passing(s: CellStatus) -> bool:
    """Some BASE iteration failed, every NEW one passed."""
    return (
        _ran_in_both(s) and s.base_passed < s.base_total and s.new_passed == s.new_total
    )


def _unshared(
    base_modes: list[str], new_modes: list[str], statuses: list[CellStatus]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What only BASE ran and what only NEW ran: modes, then scenarios of shared modes."""
    shared = [s for s in statuses if s.mode in base_modes and s.mode in new_modes]
    only_base = _only_in(base_modes, new_modes, [s for s in shared if not s.new_total])
    only_new = _only_in(new_modes, base_modes, [s for s in shared if not s.base_total])
    return only_base, only_new


def _only_in(
    modes: list[str], other_modes: list[str], missing: list[CellStatus]
) -> tuple[str, ...]:
    """The modes the other run lacks, then the scenarios of shared modes it lacks."""
    lacked = [m for m in modes if m not in other_modes]
    return (*lacked, *(f"{s.mode}/{s.scenario}" for s in missing))


def _rows(run: _Run, mode: str, cells: set[str]) -> np.ndarray:
    mask = (run.mode == mode) & ~run.errored
    return np.flatnonzero(mask & np.isin(run.cell, list(cells)))


def _compare_mode(
    b: _Run, n: _Run, mode: str, metrics: Sequence[str], confidence: float, seed: int
) -> ModeResult:
    cells = set(b.cell[b.mode == mode].tolist()) & set(n.cell[n.mode == mode].tolist())
    rb, rn = _rows(b, mode, cells), _rows(n, mode, cells)
    pairing = _pair(b, n, rb, rn)
    paired = not isinstance(pairing, str)
    note = f"paired by (model, scenario, iteration): {rb.size} cells"
    if isinstance(pairing, str):
        note = pairing
    else:
        rb, rn = pairing
    changes = [_success(b.success[rb], n.success[rn], paired, confidence, seed)]
    for metric in metrics:
        if metric == "success_rate":
            continue
        change = _metric(
            b.column(metric), n.column(metric), rb, rn, metric, paired, confidence, seed
        )
        if change is not None:
            changes.append(change)
    adjusted = stats.holm_adjust(c.p_value for c in changes)
    return ModeResult(
        mode=mode, paired=paired, pairing=note,
        base_rows=int(rb.size), new_rows=int(rn.size),
        base_errors=int(((b.mode == mode) & b.errored).sum()), new_errors=int(((n.mode == mode) & n.errored).sum()),
        changes=tuple(attrs.evolve(c, p_adjusted=q) for c, q in zip(changes, adjusted)),
    )  # fmt: skip


def _pair(
    b: _Run, n: _Run, rb: np.ndarray, rn: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | str:
    """BASE and NEW rows aligned by (model, scenario, iteration), or why they cannot be."""
    if rb.size != rn.size:
        return f"not paired: {rb.size} BASE and {rn.size} NEW rows"
    kb = [f"{c}\x00{i}" for c, i in zip(b.cell[rb].tolist(), b.iteration[rb].tolist())]
    kn = [f"{c}\x00{i}" for c, i in zip(n.cell[rn].tolist(), n.iteration[rn].tolist())]
    if len(set(kb)) != len(kb) or sorted(kb) != sorted(kn):
        return "not paired: the runs ran different (model, scenario, iteration) cells"
    return rb[np.argsort(kb, kind="stable")], rn[np.argsort(kn, kind="stable")]


def _p_value(a: np.ndarray, b: np.ndarray, paired: bool, seed: int) -> float:
    from ..report.summary import EXACT_LIMIT

    if a.size == 0 or b.size == 0:
        return math.nan
    if max(a.size, b.size) <= EXACT_LIMIT:
        return stats.permutation_test(a, b, paired=paired, seed=seed).p_value
    return stats.permutation_test_normal(a, b, paired=paired).p_value


def _success(
    base: np.ndarray, new: np.ndarray, paired: bool, confidence: float, seed: int
) -> MetricChange:
    diff, lower, upper = stats.rate_difference_interval(
        int(new.sum()), int(new.size), int(base.sum()), int(base.size), confidence
    )
    p = _p_value(new.astype(np.float64), base.astype(np.float64), paired, seed)
    return MetricChange(
        metric="success_rate", unit="pp", base_n=int(base.size), new_n=int(new.size),
        base_value=float(base.mean()) if base.size else math.nan, new_value=float(new.mean()) if new.size else math.nan,
        change=diff * 100, lower=lower * 100, upper=upper * 100, p_value=p, p_adjusted=p,
        reason=None if base.size and new.size else "no rows that ran in one of the runs",
    )  # fmt: skip


def _metric(
    col_b, col_n, rb, rn, metric, paired, confidence, seed
) -> MetricChange | None:
    from ..report.summary import compare_metric

    if col_b is None or col_n is None:
        return None
    vb, vn = col_b[rb], col_n[rn]
    if paired:
        keep = ~(np.isnan(vb) | np.isnan(vn))
        vb, vn = vb[keep], vn[keep]
    else:
        vb, vn = vb[~np.isnan(vb)], vn[~np.isnan(vn)]
    result, _method = compare_metric(
        vn,
        vb,
        paired=paired,
        mode_a="NEW",
        mode_b="BASE",
        metric=metric,
        confidence=confidence,
        seed=seed,
    )
    # The report's reduction is (1 - median(NEW) / median(BASE)) x 100; a change is its negative.
    low, high = result.ci95
    return MetricChange(
        metric=metric, unit="%", base_n=int(vb.size), new_n=int(vn.size),
        base_value=float(np.median(vb)) if vb.size else math.nan, new_value=float(np.median(vn)) if vn.size else math.nan,
        # "+ 0.0" turns -0.0 into 0.0, so no change never prints as "−0.0%".
        change=-result.reduction_pct + 0.0, lower=-high + 0.0, upper=-low + 0.0, p_value=result.p_value, p_adjusted=result.p_value,
        reason=result.reason,
    )  # fmt: skip


def judge_gates(gates: Sequence[Gate], modes: Sequence[str], b: _Run, n: _Run, alpha: float,
                margin: float | None = None) -> tuple[GateResult, ...]:  # fmt: skip
    """Every (gate, mode): the stratified change, Holm across these tests only, the
    outcome and the rows a margin needs."""
    found = [
        (gate, mode, _gate_change(gate, mode, b, n)) for gate in gates for mode in modes
    ]
    adjusted = stats.holm_adjust(gate.p_value(sc) for gate, _, sc in found)
    return tuple(
        _judge(gate, mode, sc, q, alpha, margin)
        for (gate, mode, sc), q in zip(found, adjusted)
    )


def _gate_change(gate: Gate, mode: str, b: _Run, n: _Run) -> StratifiedChange:
    cells = set(b.cell[b.mode == mode].tolist()) & set(n.cell[n.mode == mode].tolist())
    rb, rn = _rows(b, mode, cells), _rows(n, mode, cells)
    if gate.metric == "success_rate":
        vb, vn, kind = (
            b.success[rb].astype(np.float64),
            n.success[rn].astype(np.float64),
            "difference",
        )
    else:
        col_b, col_n = b.column(gate.metric), n.column(gate.metric)
        vb = col_b[rb] if col_b is not None else np.full(rb.size, math.nan)
        vn = col_n[rn] if col_n is not None else np.full(rn.size, math.nan)
        kind = "ratio"
    return stratified_change(vb, vn, kind=kind, base_strata=b.cell[rb], new_strata=n.cell[rn],  # type: ignore[arg-type]
                             base_keys=b.iteration[rb], new_keys=n.iteration[rn])  # fmt: skip


def _judge(
    gate: Gate,
    mode: str,
    sc: StratifiedChange,
    q: float,
    alpha: float,
    margin: float | None,
) -> GateResult:
    found = gate.assess(sc, q, alpha)
    paired = f", {sc.paired_strata} paired" if sc.paired_strata else ""
    change = MetricChange(
        metric=gate.metric, unit=gate.unit, base_n=sc.base_n, new_n=sc.new_n, base_value=math.nan, new_value=math.nan,
        change=found.change, lower=found.lower, upper=found.upper, p_value=gate.p_value(sc), p_adjusted=q,
        reason=f"per scenario: {sc.strata} scenarios{paired}" + (f", {sc.dropped} left out" if sc.dropped else ""),
    )  # fmt: skip
    points = gate.threshold if margin is None else margin
    needed = gate.rows_needed(sc, points, alpha=alpha)
    return GateResult(
        gate=gate,
        mode=mode,
        outcome=found.outcome,
        why=found.why,
        change=change,
        rows_needed=needed,
        margin=points,
    )


def _cell_statuses(b: _Run, n: _Run) -> list[CellStatus]:
    counts: dict[tuple[str, str], list[int]] = {}
    for slot, run in ((0, b), (2, n)):
        for mode, cell, ok in zip(
            run.mode.tolist(), run.cell.tolist(), run.success.tolist()
        ):
            entry = counts.setdefault((mode, cell), [0, 0, 0, 0])
            entry[slot] += bool(ok)
            entry[slot + 1] += 1
    out = []
    for (mode, cell), (bp, bt, np_, nt) in counts.items():
        model, scenario = cell.split("\x00", 1)
        out.append(
            CellStatus(
                model=model,
                mode=mode,
                scenario=scenario,
                base_passed=bp,
                base_total=bt,
                new_passed=np_,
                new_total=nt,
            )
        )
    return out


def _cases(
    n: _Run, failing: Sequence[CellStatus], gates: Sequence[GateResult]
) -> list[Case]:
    """NEW's (mode, scenario) cases, the regressed ones saying so, then one case per
    gate and mode."""
    regressed: dict[tuple[str, ...], CellStatus] = {
        (s.model, s.mode, s.scenario): s for s in failing
    }
    cases = []
    for case in run_cases(n.table):
        status = regressed.get(case.key)
        if status is not None:
            note = (
                f"regressed: passed {status.base_total} of {status.base_total} "
                f"iterations in BASE, {status.new_passed} of {status.new_total} now"
            )
            case = attrs.evolve(
                case,
                problem=case.problem or "failure",
                message=f"{note}; {case.message}",
                details=f"{note}\n{case.details}",
            )
        cases.append(case)
    for g in gates:
        name = f"{g.mode}: {g.gate.text}"
        if g.outcome == "regression":
            cases.append(
                Case(
                    suite="agent-profiler.gates",
                    name=name,
                    seconds=0.0,
                    problem="failure",
                    message=g.why,
                    details=g.why,
                )
            )
        else:
            cases.append(
                Case(
                    suite="agent-profiler.gates",
                    name=name,
                    seconds=0.0,
                    skipped=g.outcome == "inconclusive",
                    message=g.why,
                )
            )
    return cases


__all__ = ["DEFAULT_METRICS", "EXIT_INCONCLUSIVE", "EXIT_PASS", "EXIT_REGRESSION", "CellStatus", "Comparison", "GateResult",
           "MetricChange", "ModeResult", "compare_runs"]  # fmt: skip
