"""What the reports show, computed once: report.md and report.html only format a ``ReportView``.

``report_view(summary, meta, problems)`` turns the numbers of a ``Summary`` into
what a reader sees: the headline facts, the verdict, one record per mode, per
comparison and per scenario, a grid of medians per metric, the checkpoint and
error tables, and the charts the page places. Every figure in it is already text
(``format``), so both reports show the same figures; each renderer chooses which
parts to show, in what layout, and escapes them for its format.
``analysis_view(digest, problems, source)`` does the same for analysis.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ..model.record import Record
from . import format as fmt
from . import sequential as seq
from .charts import DISTRIBUTION_METRICS, chart_note, worth_drawing
from .sections import SectionView
from .summary import MAIN_METRICS, MetricComparison, ModeComparison, Summary
from .verdict import Finding, Winner, error_line, findings, verdict_text, winners

if TYPE_CHECKING:
    from .analysis import AnalysisDigest


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Table(Record):
    """A plain table: a header and rows of text (each renderer escapes and aligns it)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Headline(Record):
    """The facts at the top of a report."""

    run_id: str
    #: rows read (as the loader counted them)
    rows: str
    modes: int
    scenarios: int
    models: tuple[str, ...]
    #: the providers, comma-separated ("–" when unknown)
    providers: str
    baseline: str
    confidence: float
    #: "start → end" of the run, or as much of it as is known ("" when nothing is)
    when: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class VerdictView(Record):
    """The one-minute answer: errors first, the stop rule's decision, the best mode per
    criterion, the findings."""

    errors: str | None
    stop_headline: str | None
    stop_table: Table | None
    #: False with one mode: there is nothing to compare (and no winners or findings)
    compared: bool
    winners: tuple[Winner, ...]
    findings: tuple[Finding, ...]

    def lines(self) -> list[str]:
        """The verdict as plain text lines, for a terminal."""
        return verdict_text(
            self.errors, self.stop_headline, self.compared, self.winners, self.findings
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModeView(Record):
    """One mode: its rows, errors and success (rate, Wilson interval, pass@k)."""

    name: str
    #: position in mode order (its colour in the charts)
    index: int
    baseline: bool
    rows: int
    errors: int
    successes: int
    trials: int
    rate: str
    lower: str
    upper: str
    pass_at_1: str
    pass_at_k: str
    pass_hat_k: str
    #: mean reward of the rows whose verifiers wrote one ("–" when none did)
    reward: str = "–"
    #: rows with a reward
    reward_rows: int = 0


@attrs.frozen(kw_only=True, repr=False, eq=False)
class MetricRow(Record):
    """One metric of a comparison with the baseline."""

    metric: str
    label: str
    anchor: str
    baseline_median: str
    mode_median: str
    reduction: str
    ci: str
    effect: str
    p: str
    p_holm: str
    #: +1 significantly better than the baseline, -1 worse, 0 neither (or no known direction)
    verdict: int
    significant: bool
    #: the change of the median against the baseline (-reduction, whole percent), None
    #: when undefined
    delta: str | None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SuccessLine(Record):
    """Success of a mode against the baseline: the rates, their difference and its interval, p."""

    rate: str
    baseline_rate: str
    difference: str
    ci_low: str
    ci_high: str
    p: str
    significant: bool


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ComparisonView(Record):
    """One mode against the baseline on every compared metric."""

    mode: str
    baseline: str
    pairing: str
    paired: bool
    #: some metric was compared by the large-sample method (independent resampling,
    #: normal approximation)
    large_sample: bool
    success: SuccessLine
    rows: tuple[MetricRow, ...]

    def row(self, metric: str) -> MetricRow | None:
        """The row of ``metric``, if it was compared."""
        return next((r for r in self.rows if r.metric == metric), None)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class MetricView(Record):
    """One metric's medians per scenario and over all scenarios, and their change
    against the baseline."""

    name: str
    label: str
    unit: str
    anchor: str
    #: a headline metric (MAIN_METRICS): shown first where metrics are listed one by one
    main: bool
    #: [scenario][mode] median
    medians: tuple[tuple[str, ...], ...]
    #: [scenario][other mode] point reduction of the median against the baseline's
    changes: tuple[tuple[str, ...], ...]
    #: [mode] median over all scenarios
    overall_medians: tuple[str, ...]
    #: [other mode] point reduction over all scenarios
    overall_changes: tuple[str, ...]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ScenarioRate(Record):
    """Success of one mode in one scenario."""

    rate: str
    successes: int
    trials: int


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ScenarioView(Record):
    """One scenario: success and checks per mode, the iterations' outcomes, its checkpoints."""

    name: str
    anchor: str
    #: [mode] success, None where the mode has no row in this scenario
    success: tuple[ScenarioRate | None, ...]
    #: some row of the scenario counted checks
    has_checks: bool
    #: [mode] share of checks passed ("–" where the mode ran none)
    checks: tuple[str, ...]
    #: pass / FAIL / error per iteration and mode (small runs only)
    outcomes: Table | None
    #: each checkpoint's description and share passed per mode
    checkpoints: Table | None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ErrorRow(Record):
    """A row that carries an error."""

    mode: str
    scenario: str
    iteration: int
    code: str
    #: the whole message (each renderer shortens it to fit)
    message: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class FailedRow(Record):
    """A row that failed its checks without an error."""

    mode: str
    scenario: str
    iteration: int
    #: the ids of the failed checks ("–" when none was recorded)
    checks: str
    #: the row's reward ("–" when no verifier wrote one)
    reward: str = "–"
    #: the last lines of the failed verifiers' output ("" when none ran)
    verifier_tail: str = ""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ErrorsView(Record):
    """Errors and anomalies: completion reasons per mode, error codes, the first errored
    and failed rows."""

    reasons: Table
    #: error code -> rows, most frequent first (None when no row errored)
    codes: Table | None
    rows: tuple[ErrorRow, ...]
    #: more rows errored than ``rows`` lists
    more: bool
    failed: tuple[FailedRow, ...]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ChartSlot(Record):
    """A chart the page places, by the name ``charts.render_all`` gives it, with its caption."""

    name: str
    caption: str
    wide: bool = False


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ChartsView(Record):
    """Whether charts are drawn at all, what they leave out, and where each goes."""

    drawn: bool
    note: str | None
    forest: ChartSlot
    figures: tuple[ChartSlot, ...]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReportView(Record):
    """Everything report.md and report.html show."""

    headline: Headline
    #: the run's properties (report.md's "Run" table)
    run: Table
    verdict: VerdictView
    modes: tuple[ModeView, ...]
    #: repetitions per scenario behind pass@k and pass^k
    k: int
    comparisons: tuple[ComparisonView, ...]
    metrics: tuple[MetricView, ...]
    scenarios: tuple[ScenarioView, ...]
    #: metrics with one value in every row (not compared)
    omitted: tuple[str, ...]
    errors: ErrorsView
    charts: ChartsView
    #: lines of the results file that could not be read
    problems: tuple[str, ...]
    source: str
    #: sections plugins added (``profiler_report_sections``), or the lines saying why one is missing
    sections: tuple[SectionView, ...] = ()
    #: each row's kept artifacts: (its cell, paths relative to the run's report folder)
    artifacts: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def has_reward(self) -> bool:
        """Some row's verifiers wrote a reward (the reports then show the mean reward
        beside the success rate)."""
        return any(m.reward_rows for m in self.modes)

    @property
    def baseline(self) -> str:
        """The mode every other mode is compared with."""
        return self.headline.baseline

    @property
    def mode_names(self) -> list[str]:
        """The modes in report order."""
        return [m.name for m in self.modes]

    @property
    def change_header(self) -> list[str]:
        """The headers of the change columns: each other mode against the baseline."""
        return [f"{m.name} vs {self.baseline}" for m in self.modes if not m.baseline]

    def metric(self, name: str) -> MetricView | None:
        """A reported metric by name."""
        return next((m for m in self.metrics if m.name == name), None)

    def comparison(self, mode: str) -> ComparisonView | None:
        """The comparison of ``mode`` with the baseline (None for the baseline)."""
        return next((c for c in self.comparisons if c.mode == mode), None)


# ---------------------------------------------------------------- building it


def report_view(
    summary: Summary,
    meta: dict[str, Any],
    problems: Sequence[str],
    sections: Sequence[SectionView] = (),
) -> ReportView:
    """Compute what both reports show from the summary and the run's facts (``meta``, as
    ``write_report`` gathers them)."""
    s = summary
    metric_ids = anchors([m.name for m in s.metrics], "metric")
    scenario_ids = anchors(s.scenarios, "scenario")
    return ReportView(
        headline=_headline(s, meta),
        run=_run_table(s, meta),
        verdict=_verdict(s),
        modes=tuple(_mode(s, i) for i in range(len(s.modes))),
        k=s.k,
        comparisons=tuple(_comparison(s, c, metric_ids) for c in s.comparisons),
        metrics=tuple(
            _metric(s, info.name, metric_ids[info.name]) for info in s.metrics
        ),
        scenarios=tuple(
            _scenario(s, j, scenario_ids[scen]) for j, scen in enumerate(s.scenarios)
        ),
        omitted=tuple(s.omitted_metrics),
        errors=_errors(s),
        charts=_charts(s),
        problems=tuple(problems),
        source=str(meta.get("source")),
        sections=tuple(sections),
        artifacts=tuple(
            (str(label), tuple(files)) for label, files in meta.get("artifacts") or ()
        ),
    )


def anchors(names: Sequence[str], prefix: str) -> dict[str, str]:
    """Unique, URL-safe anchor ids for names (``a.b`` and ``a-b`` get different ids)."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        base = f"{prefix}-{fmt.slug(name)}"
        candidate, n = base, 2
        while candidate in used:
            candidate, n = f"{base}-{n}", n + 1
        used.add(candidate)
        out[name] = candidate
    return out


def reduction(a: float, b: float) -> float:
    """Point reduction of medians (1 - a/b) * 100; nan when undefined."""
    if math.isnan(a) or math.isnan(b) or b == 0:
        return math.nan
    return (1 - a / b) * 100


def _headline(s: Summary, meta: dict[str, Any]) -> Headline:
    return Headline(
        run_id=str(meta.get("runId")),
        rows=f"{meta.get('rows')}",
        modes=len(s.modes),
        scenarios=len(s.scenarios),
        models=tuple(s.models),
        providers=", ".join(meta.get("providers") or []) or "–",
        baseline=s.baseline,
        confidence=s.confidence,
        when=" → ".join(
            x for x in (meta.get("startedAt"), meta.get("completedAt")) if x
        ),
    )


def _run_table(s: Summary, meta: dict[str, Any]) -> Table:
    scenarios = (
        f"{len(s.scenarios)}: "
        + ", ".join(s.scenarios[:20])
        + (" …" if len(s.scenarios) > 20 else "")
    )
    skipped = (
        f" ({meta.get('skippedLines')} malformed lines skipped)"
        if meta.get("skippedLines")
        else ""
    )
    rows = [
        ("Run ID", meta.get("runId")),
        ("Started", meta.get("startedAt") or "–"),
        ("Completed", meta.get("completedAt") or "–"),
        ("Status", meta.get("status") or "–"),
        ("Provider", ", ".join(meta.get("providers") or []) or "–"),
        ("Models", ", ".join(s.models)),
        ("Modes", ", ".join(s.modes)),
        ("Scenarios", scenarios),
        ("Repetitions", str(meta.get("repetitions") or s.k)),
        ("Rows", f"{meta.get('rows')}{skipped}"),
        ("Plugins", ", ".join(meta.get("plugins") or []) or "–"),
        ("Source", meta.get("source")),
    ]
    return Table(
        header=("Property", "Value"),
        rows=tuple((name, str(value)) for name, value in rows),
    )


def _verdict(s: Summary) -> VerdictView:
    stop = s.stop
    return VerdictView(
        errors=error_line(s),
        stop_headline=seq.headline(stop) if stop is not None else None,
        stop_table=Table(header=seq.TABLE_HEADER, rows=tuple(seq.table_rows(stop)))
        if stop is not None
        else None,
        compared=bool(s.comparisons),
        winners=tuple(winners(s)) if s.comparisons else (),
        findings=tuple(findings(s)) if s.comparisons else (),
    )


def _mode(s: Summary, i: int) -> ModeView:
    r = s.success_by_mode[i]
    return ModeView(
        name=s.modes[i],
        index=i,
        baseline=s.modes[i] == s.baseline,
        rows=int(s.rows_by_mode[i]),
        errors=int(s.errors_by_mode[i]),
        successes=r.successes,
        trials=r.trials,
        rate=fmt.rate(r.rate),
        lower=fmt.rate(r.lower),
        upper=fmt.rate(r.upper),
        pass_at_1=fmt.rate(r.pass_at_1),
        pass_at_k=fmt.rate(r.pass_at_k),
        pass_hat_k=fmt.rate(r.pass_hat_k),
        reward=_reward_text(s, i),
        reward_rows=int(s.reward_rows_by_mode[i])
        if s.reward_rows_by_mode is not None
        else 0,
    )


def _reward_text(s: Summary, i: int) -> str:
    """The mode's mean reward, two decimals ("–" when no row has one)."""
    if s.reward_by_mode is None or math.isnan(s.reward_by_mode[i]):
        return "–"
    return f"{s.reward_by_mode[i]:.2f}"


def _comparison(
    s: Summary, comp: ModeComparison, metric_ids: dict[str, str]
) -> ComparisonView:
    sc = comp.success
    success = SuccessLine(
        rate=fmt.rate(sc.rate_a),
        baseline_rate=fmt.rate(sc.rate_b),
        difference=fmt.pp(sc.difference_pp),
        ci_low=fmt.pp(sc.ci95_pp[0]),
        ci_high=fmt.pp(sc.ci95_pp[1]),
        p=fmt.p_value(sc.p_value),
        significant=sc.significant,
    )
    rows = tuple(
        _metric_row(s, mc, metric_ids[mc.metric])
        for mc in comp.metrics
        if s.metric(mc.metric) is not None
    )
    return ComparisonView(
        mode=comp.mode,
        baseline=comp.baseline,
        pairing=comp.pairing,
        paired=comp.paired,
        large_sample=any(mc.method == "large-sample" for mc in comp.metrics),
        success=success,
        rows=rows,
    )


def _metric_row(s: Summary, mc: MetricComparison, anchor: str) -> MetricRow:
    info = s.metric_info(mc.metric)
    res = mc.result
    return MetricRow(
        metric=mc.metric,
        label=info.label,
        anchor=anchor,
        baseline_median=fmt.value(mc.median_b, info.unit),
        mode_median=fmt.value(mc.median_a, info.unit),
        reduction=fmt.pct(res.reduction_pct),
        ci=fmt.ci(*res.ci95),
        effect=fmt.effect(res.effect_size, res.effect_magnitude),
        p=fmt.p_value(res.p_value),
        p_holm=fmt.p_value(res.p_value_adjusted),
        verdict=mc.verdict,
        significant=mc.significant,
        delta=fmt.pct(-res.reduction_pct, 0)
        if math.isfinite(res.reduction_pct)
        else None,
    )


def _metric(s: Summary, name: str, anchor: str) -> MetricView:
    info = s.metric_info(name)
    b = s.modes.index(s.baseline)
    others = [i for i, m in enumerate(s.modes) if m != s.baseline]
    per_scenario = s.by_scenario[name]["median"]
    overall = s.by_mode[name]["median"]

    def medians(med) -> tuple[str, ...]:
        return tuple(fmt.value(med[i], info.unit) for i in range(len(s.modes)))

    def changes(med) -> tuple[str, ...]:
        return tuple(fmt.pct(reduction(med[i], med[b])) for i in others)

    columns = [per_scenario[:, j] for j in range(len(s.scenarios))]
    return MetricView(
        name=name,
        label=info.label,
        unit=info.unit,
        anchor=anchor,
        main=name in MAIN_METRICS,
        medians=tuple(medians(med) for med in columns),
        changes=tuple(changes(med) for med in columns),
        overall_medians=medians(overall),
        overall_changes=changes(overall),
    )


def _scenario(s: Summary, j: int, anchor: str) -> ScenarioView:
    scen = s.scenarios[j]
    success = tuple(
        None
        if r is None
        else ScenarioRate(rate=fmt.rate(r.rate), successes=r.successes, trials=r.trials)
        for r in (s.success_by_scenario[i][j] for i in range(len(s.modes)))
    )
    total = s.checks_total[:, j]
    checks = tuple(
        fmt.rate(s.checks_passed[i, j] / total[i]) if total[i] else "–"
        for i in range(len(s.modes))
    )
    detail = s.checkpoint_detail.get(scen)
    checkpoints = None
    if detail:
        rows = tuple(
            (
                cid,
                desc,
                *(f"{fmt.rate(p / t)} ({p}/{t})" if t else "–" for p, t in counts),
            )
            for cid, desc, counts in detail
        )
        checkpoints = Table(header=("Checkpoint", "Description", *s.modes), rows=rows)
    return ScenarioView(
        name=scen,
        anchor=anchor,
        success=success,
        has_checks=bool(total.sum() != 0),
        checks=checks,
        outcomes=_outcomes(s, scen),
        checkpoints=checkpoints,
    )


def _outcomes(s: Summary, scen: str) -> Table | None:
    """Iteration by iteration, pass / FAIL / error per mode (small runs only)."""
    per_mode = (s.outcomes or {}).get(scen)
    if not per_mode:
        return None
    iterations = sorted({it for cells in per_mode.values() for it, _ in cells})
    by_mode = {m: dict(cells) for m, cells in per_mode.items()}
    rows = tuple(
        (m, *(by_mode[m].get(it, "–") for it in iterations))
        for m in s.modes
        if m in by_mode
    )
    return Table(header=("Mode", *(f"#{it}" for it in iterations)), rows=rows)


def _errors(s: Summary) -> ErrorsView:
    reasons = sorted({r for m in s.modes for r in s.reasons_by_mode[m]})
    reason_rows = tuple(
        (
            m,
            *(str(s.reasons_by_mode[m].get(r, 0)) for r in reasons),
            str(int(s.errors_by_mode[i])),
        )
        for i, m in enumerate(s.modes)
    )
    codes = None
    if s.error_codes:
        ranked = sorted(s.error_codes.items(), key=lambda kv: -kv[1])
        codes = Table(
            header=("Error code", "Rows"),
            rows=tuple((code, str(n)) for code, n in ranked),
        )
    return ErrorsView(
        reasons=Table(
            header=(
                "Mode",
                *(f"completion: {r}" for r in reasons),
                "rows with an error",
            ),
            rows=reason_rows,
        ),
        codes=codes,
        rows=tuple(
            ErrorRow(mode=m, scenario=sc, iteration=it, code=code, message=msg)
            for m, sc, it, code, msg in s.error_rows
        ),
        more=sum(s.error_codes.values()) > len(s.error_rows),
        failed=tuple(
            FailedRow(
                mode=r.mode,
                scenario=r.scenario,
                iteration=r.iteration,
                checks=r.checks or "–",
                reward="–" if r.reward is None else f"{r.reward:.2f}",
                verifier_tail=r.verifier_tail,
            )
            for r in s.failed_rows
        ),
    )


def _charts(s: Summary) -> ChartsView:
    box = "Box: 25th–75th percentile, line: median, diamond: mean, whiskers: 5th–95th percentile."
    figures = (
        ChartSlot(
            name="success",
            caption="Dot: share of runs that succeeded; bar: Wilson 95% interval; "
            f"tick: pass^{s.k}.",
        ),
        *(
            ChartSlot(name=f"dist:{metric}", caption=box)
            for metric in DISTRIBUTION_METRICS
        ),
        ChartSlot(
            name="scenarios:cost_total_usd",
            caption="Median cost per scenario; one dot per mode.",
            wide=True,
        ),
    )
    forest = ChartSlot(
        name="forest",
        caption="Each line: the 95% bootstrap CI of the reduction of the median; "
        "right of the dashed line the mode is lower (cheaper, faster, fewer tokens).",
        wide=True,
    )
    return ChartsView(
        drawn=worth_drawing(s), note=chart_note(s), forest=forest, figures=figures
    )


# ---------------------------------------------------------------- analysis.md

#: Analyzer display order (the original's), others follow by name.
ANALYZER_ORDER = ("efficiency", "tool-pattern", "strategy", "reasoning", "error")

#: List items and table rows shown per mode in a finding's details.
DETAIL_LIMIT = 50


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListFinding(Record):
    """A list finding whose items differ between modes: per mode its first items, and
    whether there are more."""

    key: str
    per_mode: tuple[tuple[str, tuple[str, ...], bool], ...]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TableFinding(Record):
    """A table finding whose rows differ between modes: per mode (that has rows) its first rows."""

    key: str
    per_mode: tuple[tuple[str, Table], ...]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AnalyzerView(Record):
    """One analyzer's findings that differ between modes in one scenario."""

    name: str
    #: numbers, ratios and strings: the median (or most frequent value) per mode
    scalars: Table | None
    details: tuple[ListFinding | TableFinding, ...]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ScenarioAnalysis(Record):
    """A scenario's analyzers with differences between modes (none: the modes agree)."""

    name: str
    analyzers: tuple[AnalyzerView, ...]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AnalysisView(Record):
    """Everything analysis.md shows."""

    sessions: int
    modes: tuple[str, ...]
    scenarios: tuple[ScenarioAnalysis, ...]
    problems: tuple[str, ...]
    #: the analysis file that was read
    source: str


def analysis_view(
    digest: AnalysisDigest, problems: Sequence[str], source: str
) -> AnalysisView:
    """Analyzer findings compared across modes: only findings where the modes differ."""
    modes = tuple(digest.modes)
    grouped: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for (scenario, analyzer, key), entry in digest.findings.items():
        grouped.setdefault((scenario, analyzer), []).append((key, entry))
    scenarios = []
    for scen in digest.scenarios:
        names = sorted({a for (s_, a) in grouped if s_ == scen}, key=_analyzer_rank)
        shown = (_analyzer(name, grouped[(scen, name)], modes) for name in names)
        scenarios.append(
            ScenarioAnalysis(
                name=scen, analyzers=tuple(a for a in shown if a is not None)
            )
        )
    return AnalysisView(
        sessions=digest.sessions,
        modes=modes,
        scenarios=tuple(scenarios),
        problems=tuple(problems),
        source=source,
    )


def _analyzer_rank(name: str) -> tuple[int, str]:
    return (
        ANALYZER_ORDER.index(name) if name in ANALYZER_ORDER else len(ANALYZER_ORDER),
        name,
    )


def _analyzer(
    name: str, entries: list[tuple[str, Any]], modes: tuple[str, ...]
) -> AnalyzerView | None:
    """The analyzer's findings that differ between modes, None when none does."""
    scalar_rows: list[tuple[str, ...]] = []
    details: list[ListFinding | TableFinding] = []
    for key, e in entries:
        if e.kind in ("number", "ratio", "string"):
            cells = [_scalar(e.kind, e.modes.get(m, ()), e.unit) for m in modes]
            if len(set(cells)) > 1:
                scalar_rows.append((key, *cells))
            continue
        if e.kind not in ("list", "table"):
            continue
        per_mode = {m: list(e.modes.get(m, ())) for m in modes}
        if len({tuple(sorted(v)) for v in per_mode.values()}) <= 1:
            continue
        if e.kind == "list":
            items = tuple(
                (m, tuple(v[:DETAIL_LIMIT]), len(v) > DETAIL_LIMIT)
                for m, v in per_mode.items()
            )
            details.append(ListFinding(key=key, per_mode=items))
        else:
            details.append(
                TableFinding(key=key, per_mode=_table_finding(e.headers, per_mode))
            )
    if not scalar_rows and not details:
        return None
    scalars = (
        Table(
            header=("Finding", *(f"{m} (median)" for m in modes)),
            rows=tuple(scalar_rows),
        )
        if scalar_rows
        else None
    )
    return AnalyzerView(name=name, scalars=scalars, details=tuple(details))


def _table_finding(
    headers: list[str] | None, per_mode: dict[str, list]
) -> tuple[tuple[str, Table], ...]:
    """Per mode with rows: its first rows under the finding's headers (``colN`` when it
    gave none)."""
    out = []
    for mode, rows in per_mode.items():
        if rows:
            header = tuple(headers or (f"col{i + 1}" for i in range(len(rows[0]))))
            out.append(
                (
                    mode,
                    Table(
                        header=header, rows=tuple(tuple(r) for r in rows[:DETAIL_LIMIT])
                    ),
                )
            )
    return tuple(out)


def _scalar(kind: str, values: Any, unit: str) -> str:
    """The median of numbers (``array``) or the most frequent string (a ``Counter``,
    first seen wins a tie)."""
    if not values:
        return "–"
    if kind == "string":
        return max(values.items(), key=lambda kv: kv[1])[0]
    ordered = sorted(values)
    n = len(ordered)
    med = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    if kind == "ratio":
        return f"{med * 100:.1f}%"
    return f"{fmt.num(med)} {unit}".strip()
