"""``report.html``: one self-contained page (inline CSS and SVG charts, no scripts,
nothing fetched).

The page formats a ``view.ReportView``: what it shows is computed there, once, for this
page and report.md alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from . import format as fmt
from .charts import MIN_CHART_ROWS, mode_color
from .summary import EXACT_LIMIT
from .view import ChartSlot, ComparisonView, MetricRow, MetricView, ReportView, Table

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--bg:#f6f8fa;--card:#fff;--line:#d1d9e0;--better:#1a7f37;--worse:#cf222e;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--card:#151b23;--line:#3d444d;--better:#3fb950;--worse:#f85149;--accent:#4493f8}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
header.top{background:var(--card);border-bottom:1px solid var(--line);padding:18px 20px 10px}
header.top h1{margin:0 0 4px;font-size:1.45rem}
header.top code{font-size:1.2rem}
.meta{color:var(--muted);margin:0 0 8px;font-size:.92rem}
nav{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:.9rem}
a{color:var(--accent);text-decoration:none}
a:hover{text-decoration:underline}
main{max-width:1260px;margin:0 auto;padding:8px 20px 40px}
section{margin:26px 0}
h2{font-size:1.2rem;margin:0 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:1.02rem;margin:14px 0 6px}
table.stop{margin:8px 0 14px}table.stop th,table.stop td{text-align:left}
.verdicts{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:10px;margin-bottom:12px}
.v{background:var(--card);border:1px solid var(--line);border-left:6px solid var(--muted);border-radius:8px;padding:10px 12px}
.v.sig{border-left-color:var(--better)}
.v .crit{display:block;text-transform:uppercase;letter-spacing:.04em;font-size:.75rem;color:var(--muted)}
.v strong{font-size:1.15rem}
.v .why{display:block;font-size:.85rem;color:var(--muted)}
ul.findings{padding-left:0;list-style:none;margin:0}
ul.findings li{margin:4px 0;padding:6px 10px;background:var(--card);border:1px solid var(--line);border-radius:6px;font-size:.92rem}
.pill{display:inline-block;min-width:4.2em;text-align:center;border-radius:999px;padding:0 8px;font-size:.78rem;font-weight:600;margin-right:6px;border:1px solid var(--line);color:var(--muted)}
.pill.better{background:var(--better);border-color:var(--better);color:#fff}
.pill.worse{background:var(--worse);border-color:var(--worse);color:#fff}
.pill.diff{border-color:var(--accent);color:var(--accent)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-top:5px solid var(--c);border-radius:8px;padding:12px 14px}
.card h3{margin:0 0 4px;display:flex;justify-content:space-between;gap:8px;word-break:break-word}
.tag{font-size:.72rem;font-weight:600;color:var(--muted);border:1px solid var(--line);border-radius:999px;padding:0 7px;white-space:nowrap}
.big{font-size:2rem;font-weight:700;line-height:1.1}
.sub{color:var(--muted);font-size:.84rem;margin-bottom:8px}
dl{display:grid;grid-template-columns:auto auto;gap:2px 10px;margin:0;font-size:.9rem}
dt{color:var(--muted)}
dd{margin:0;text-align:right;font-variant-numeric:tabular-nums}
.delta{font-size:.78rem;margin-left:4px;color:var(--muted)}
.delta.better{color:var(--better);font-weight:600}
.delta.worse{color:var(--worse);font-weight:600}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;background:var(--card);border:1px solid var(--line);border-radius:8px;margin:8px 0}
table{border-collapse:collapse;width:100%;font-size:.88rem;font-variant-numeric:tabular-nums}
th,td{padding:5px 7px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{background:var(--bg);font-weight:600;position:sticky;top:0}
th:first-child,td:first-child{text-align:left;position:sticky;left:0;background:var(--card)}
th:first-child{background:var(--bg)}
td.l,th.l{text-align:left;white-space:normal}
tr:target td{background:#fff8c5;color:#1f2328}
tr.sig td{font-weight:600}
.figs{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,440px),1fr));gap:12px}
figure{margin:0;background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px}
figure.wide{grid-column:1/-1}
svg.chart{display:block;width:100%;height:auto}
figcaption{font-size:.8rem;color:#59636e;margin-top:4px}
.metric{scroll-margin-top:10px}
.metric:target h3{background:#fff8c5;color:#1f2328;padding:2px 6px;border-radius:4px}
.note{color:var(--muted);font-size:.86rem}
.plugin-error{color:#b42318;font-weight:600}
.heat{display:inline-block;min-width:3.6em}
footer{color:var(--muted);font-size:.86rem;border-top:1px solid var(--line);padding-top:10px}
@media (max-width:640px){body{font-size:14px}main{padding:4px 10px 30px}header.top{padding:12px 10px 8px}.big{font-size:1.7rem}th,td{padding:4px 6px}}
@media print{nav{display:none}.scroll{overflow:visible}}
"""


def _e(x: Any) -> str:
    return escape(str(x), quote=True)


def _table(header: Sequence[str], rows: Iterable[str], left: int = 1) -> str:
    heads = "".join(
        f'<th class="l">{h}</th>' if i < left else f"<th>{h}</th>"
        for i, h in enumerate(header)
    )
    return (
        "<div "
        f'class="scroll"><table><thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
    )


def _plain(t: Table, left: int = 1) -> str:
    """A view table as it is: every cell escaped text."""
    rows = (
        "<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in t.rows
    )
    return _table([_e(h) for h in t.header], rows, left)


_PILLS = {
    1: '<span class="pill better">better</span>',
    -1: '<span class="pill worse">worse</span>',
}


def _pill(verdict: int, significant: bool) -> str:
    """better / worse, or without a direction: different (significant) / n.s."""
    if verdict in _PILLS:
        return _PILLS[verdict]
    return (
        '<span class="pill diff">different</span>'
        if significant
        else '<span class="pill">n.s.</span>'
    )


def _figure(charts: dict[str, str], slot: ChartSlot) -> str:
    svg = charts.get(slot.name)
    if not svg:
        return ""
    cls = ' class="wide"' if slot.wide else ""
    return f"<figure{cls}>{svg}<figcaption>{_e(slot.caption)}</figcaption></figure>"


_NAV = [("verdict", "Verdict"), ("modes", "Modes"), ("comparison", "Comparison"), ("distributions", "Distributions"),
        ("scenarios", "Scenarios"), ("metrics", "Metrics by scenario"), ("checkpoints", "Checkpoints"),
        ("errors", "Errors"), ("method", "Method")]  # fmt: skip


def render_html(view: ReportView, charts: dict[str, str]) -> str:
    """The whole page; ``charts`` are the SVGs ``charts.render_all`` drew, by name
    (missing ones are left out)."""
    parts = [
        _head(view),
        _verdict(view),
        _modes(view),
        _comparisons(view, charts),
        _distributions(view, charts),
        _scenario_table(view),
        _metrics(view),
        _checkpoints(view),
        _errors(view),
        _plugin_sections(view),
        _artifacts(view),
        _method(view),
    ]
    return "".join(parts)


def _nav(view: ReportView) -> list[tuple[str, str]]:
    """The page's links; the plugins' sections (when any) before the method."""
    if not view.sections:
        return _NAV
    return [*_NAV[:-1], ("plugin-section-1", "Plugins"), _NAV[-1]]


def _artifacts(view: ReportView) -> str:
    """The trials' artifacts, linked (paths relative to the run's report folder, where
    this page is)."""
    if not view.artifacts:
        return ""
    items = "".join(
        f"<li><b>{_e(label)}</b>: "
        + ", ".join(
            f'<a href="{_e(quote(f))}">{_e(f.split("/", 3)[-1])}</a>' for f in files
        )
        + "</li>"
        for label, files in view.artifacts
    )
    return f'<section id="artifacts"><h2>Artifacts</h2><ul>{items}</ul></section>'


def _head(view: ReportView) -> str:
    h = view.headline
    parts = [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',
        f"<title>Report: {_e(h.run_id)}</title><style>{CSS}</style></head><body>",
        f'<header class="top"><h1>Report <code>{_e(h.run_id)}</code></h1>',
        f'<p class="meta">{fmt.count(h.rows, "run")} · '
        f"{fmt.count(h.modes, 'mode')} · {fmt.count(h.scenarios, 'scenario')} · "
        f"{len(h.models)} model{'s' if len(h.models) != 1 else ''} ({_e(', '.join(h.models))}) · "
        f"provider {_e(h.providers)} · baseline <b>{_e(h.baseline)}</b>"
        + (f" · {_e(h.when)}" if h.when else "")
        + "</p>",
        "<nav>"
        + "".join(f'<a href="#{a}">{t}</a>' for a, t in _nav(view))
        + "</nav></header><main>",
    ]
    return "".join(parts)


def _verdict(view: ReportView) -> str:
    v = view.verdict
    parts = ['<section id="verdict"><h2>Verdict</h2>']
    if v.errors:
        parts.append(f'<p class="errored"><strong>⚠ {_e(v.errors)}.</strong></p>')
    if v.stop_headline is not None and v.stop_table is not None:
        head = "".join(f"<th>{_e(h)}</th>" for h in v.stop_table.header)
        body = "".join(
            "<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>"
            for row in v.stop_table.rows
        )
        parts.append(f'<p class="stopped"><strong>{_e(v.stop_headline)}.</strong></p>'
                     '<table '
                         f'class="stop"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')  # fmt: skip
    if not v.compared:
        parts.append(
            '<p class="note">Only one mode in the results: nothing to compare.</p>'
        )
        return "".join(parts) + "</section>"
    parts.append('<div class="verdicts">')
    for w in v.winners:
        cls = "v sig" if w.significant else "v"
        mode, _, why = w.text.partition(" — ")
        parts.append(f'<div class="{cls}"><span '
            f'class="crit">{_e(w.criterion)}</span><strong>{_e(mode)}</strong>'
                     f'<span class="why">{_e(why or "")}</span></div>')  # fmt: skip
    parts.append('</div><ul class="findings">')
    parts += [
        f"<li>{_pill(f.better, f.significant)}<b>{_e(f.criterion)}:</b> {_e(f.text)}</li>"
        for f in v.findings
    ]
    return "".join(parts) + "</ul></section>"


#: The metrics a mode card lists, in this order (those the run reported).
CARD_METRICS = (
    "cost_total_usd",
    "latency_wall_ms",
    "tokens_total",
    "tool_calls_total",
    "agent_turns",
)


def _tail(text: str) -> str:
    """A failed verifier's last lines, folded (empty when no verifier ran)."""
    if not text:
        return ""
    return f"<details><summary>last lines</summary><pre>{_e(text)}</pre></details>"


def _modes(view: ReportView) -> str:
    parts = ['<section id="modes"><h2>Modes</h2><div class="cards">']
    card_metrics = [m for name in CARD_METRICS if (m := view.metric(name)) is not None]
    for mode in view.modes:
        tag = '<span class="tag">baseline</span>' if mode.baseline else ""
        parts.append(
            '<div class="card" '
            f'style="--c:{mode_color(mode.index)}"><h3><span>{_e(mode.name)}</span>{tag}</h3>'
        )
        parts.append(f'<div class="big">{mode.rate}</div>')
        parts.append(
            f'<div class="sub">success · 95% CI {mode.lower}–{mode.upper} · '
            f"{mode.successes}/{mode.trials}</div><dl>"
        )
        if view.has_reward:  # Harbor's figure, beside the success rate
            parts.append(f"<dt>mean reward</dt><dd>{mode.reward}</dd>")
        parts.append(f"<dt>pass@1</dt><dd>{mode.pass_at_1}</dd>")
        if view.k > 1:  # at one repetition pass@k and pass^k repeat pass@1
            parts.append(
                f"<dt>pass@{view.k}</dt><dd>{mode.pass_at_k}</dd><dt>pass^{view.k}</dt><dd>{mode.pass_hat_k}</dd>"
            )
        comp = view.comparison(mode.name)
        for metric in card_metrics:
            row = comp.row(metric.name) if comp is not None else None
            delta = ""
            if row is not None and row.delta is not None:
                delta = (
                    ' <span class="delta '
                    f'{_DELTA_CLASS.get(row.verdict, "")}">{row.delta}</span>'
                )
            parts.append(
                f"<dt>{_e(metric.label)} "
                f"(median)</dt><dd>{metric.overall_medians[mode.index]}{delta}</dd>"
            )
        parts.append(f"<dt>Errors</dt><dd>{mode.errors}</dd></dl></div>")
    parts.append("</div>")
    if view.comparisons:
        parts.append('<p class="note">Coloured deltas are changes of the median against '
            f'{_e(view.baseline)} that are significant '
                     "(Holm-adjusted p &lt; 0.05): green = lower (better), red "
                         "= higher.</p>")  # fmt: skip
    return "".join(parts) + "</section>"


_DELTA_CLASS = {1: "better", -1: "worse"}


def _comparisons(view: ReportView, charts: dict[str, str]) -> str:
    parts = ['<section id="comparison"><h2>Comparison with the baseline</h2>']
    if not view.comparisons:
        return (
            "".join(parts)
            + '<p class="note">Only one mode: nothing to compare.</p></section>'
        )
    if view.charts.note:
        parts.append(f'<p class="note">{_e(view.charts.note)}</p>')
    parts.append('<div class="figs">' + _figure(charts, view.charts.forest) + "</div>")
    parts += [_comparison(comp) for comp in view.comparisons]
    parts.append('<p class="note">Reduction = (1 − median(mode) / '
        f'median({_e(view.baseline)})) × 100; positive = the mode is lower. '
                 "Click a metric for its per-scenario breakdown.</p>")  # fmt: skip
    return "".join(parts) + "</section>"


def _comparison(comp: ComparisonView) -> str:
    sc = comp.success
    head = (f"<h3>{_e(comp.mode)} vs {_e(comp.baseline)}</h3>"
            f'<p class="note">{_e(comp.pairing)}. Success {sc.rate} vs {sc.baseline_rate} '
            f"({sc.difference}, 95% CI {sc.ci_low} to {sc.ci_high}, "
            f"p {sc.p}){' — <b>significant</b>' if sc.significant else ''}.</p>")  # fmt: skip
    header = ["Metric", f"{_e(comp.baseline)} median", f"{_e(comp.mode)} median", "Reduction", "95% CI",
              "Cohen's d", "p", "p (Holm)", "Verdict"]  # fmt: skip
    return head + _table(header, [_metric_row(r) for r in comp.rows])


def _metric_row(r: MetricRow) -> str:
    cls = ' class="sig"' if r.significant else ""
    return (
        f'<tr{cls}><td><a href="#{r.anchor}">{_e(r.label)}</a></td>'
        f"<td>{r.baseline_median}</td><td>{r.mode_median}</td>"
        f"<td>{r.reduction}</td><td>{r.ci}</td>"
        f"<td>{r.effect}</td><td>{r.p}</td>"
        f'<td>{r.p_holm}</td><td class="l">{_pill(r.verdict, r.significant)}</td></tr>'
    )


def _distributions(view: ReportView, charts: dict[str, str]) -> str:
    parts = ['<section id="distributions"><h2>Distributions and success</h2>']
    if not view.charts.drawn:
        parts.append(
            f'<p class="note">No charts: they are drawn from {MIN_CHART_ROWS} '
            "runs of a mode on; the tables give every number.</p>"
        )
    elif view.charts.note:
        parts.append(f'<p class="note" id="chart-modes">{_e(view.charts.note)}</p>')
    parts.append('<div class="figs">')
    parts += [_figure(charts, slot) for slot in view.charts.figures]
    return "".join(parts) + "</div></section>"


#: The scenario table's metric columns, in this order (those the run reported).
SCENARIO_METRICS = ("cost_total_usd", "latency_wall_ms", "tokens_total")


def _scenario_table(view: ReportView) -> str:
    modes = view.mode_names
    main = [m for name in SCENARIO_METRICS if (m := view.metric(name)) is not None]
    header = ["Scenario"] + [f"Success {_e(m)}" for m in modes]
    for metric in main:
        header += [f"{_e(metric.label)} {_e(m)}" for m in modes]
    header += ["Checks passed"]
    rows = []
    for j, scen in enumerate(view.scenarios):
        cells = [f'<td><a href="#{scen.anchor}">{_e(scen.name)}</a></td>']
        cells += [
            f"<td>{rate.rate}</td>" if rate else "<td>–</td>" for rate in scen.success
        ]
        cells += [
            f"<td>{median}</td>" for metric in main for median in metric.medians[j]
        ]
        cells.append(
            f"<td>{' · '.join(scen.checks) if scen.has_checks else 'no checks'}</td>"
        )
        rows.append(f'<tr id="{scen.anchor}">{"".join(cells)}</tr>')
    return (
        '<section id="scenarios"><h2>Scenarios</h2>'
        + _table(header, rows)
        + '<p class="note">Medians per mode. '
        "Checks passed: share of scorer checks passed, per mode in mode order.</p></section>"
    )


def _metrics(view: ReportView) -> str:
    """Per metric, its medians by scenario: the targets of the comparison table's links."""
    parts = ['<section id="metrics"><h2>Metrics by scenario</h2>']
    ordered = [m for m in view.metrics if m.main] + [
        m for m in view.metrics if not m.main
    ]
    header = (
        ["Scenario"]
        + [f"{_e(m)} median" for m in view.mode_names]
        + [_e(h) for h in view.change_header]
    )
    parts += [_metric_table(view, metric, header) for metric in ordered]
    if view.omitted:
        parts.append(
            '<p class="note">Same value in every row, not compared: '
            f"{_e(', '.join(view.omitted))}.</p>"
        )
    return "".join(parts) + "</section>"


def _metric_table(view: ReportView, metric: MetricView, header: list[str]) -> str:
    rows = [
        f'<tr><td><a href="#{scen.anchor}">{_e(scen.name)}</a></td>'
        + "".join(f"<td>{c}</td>" for c in (*metric.medians[j], *metric.changes[j]))
        + "</tr>"
        for j, scen in enumerate(view.scenarios)
    ]
    overall = (*metric.overall_medians, *metric.overall_changes)
    rows.append(
        "<tr><td><b>all scenarios</b></td>"
        + "".join(f"<td><b>{c}</b></td>" for c in overall)
        + "</tr>"
    )
    unit = ", " + _e(metric.unit) if metric.unit else ""
    return (f'<div class="metric" id="{metric.anchor}"><h3>{_e(metric.label)} <span '
        f'class="note">({_e(metric.name)}'
            f"{unit})</span></h3>{_table(header, rows)}</div>")  # fmt: skip


def _checkpoints(view: ReportView) -> str:
    parts = ['<section id="checkpoints"><h2>Checkpoints</h2>']
    if no_checks := [scen.name for scen in view.scenarios if not scen.has_checks]:
        parts.append(f'<p class="note">No checks: {_e(", ".join(no_checks))}.</p>')
    for scen in view.scenarios:
        if scen.checkpoints is None:
            continue
        rows = [
            f'<tr><td><code>{_e(cid)}</code></td><td class="l">{_e(desc)}</td>'
            + "".join(f"<td>{c}</td>" for c in counts)
            + "</tr>"
            for cid, desc, *counts in scen.checkpoints.rows
        ]
        parts.append(f'<h3><a href="#{scen.anchor}">{_e(scen.name)}</a></h3>')
        parts.append(_table([_e(h) for h in scen.checkpoints.header], rows, left=2))
    return "".join(parts) + "</section>"


#: An error message in a table is cut to this many characters (data/results.csv has all of it).
MESSAGE_CHARS = 300


def _errors(view: ReportView) -> str:
    e = view.errors
    parts = ['<section id="errors"><h2>Errors and anomalies</h2>', _plain(e.reasons)]
    if e.rows:
        rows = [
            f"<tr><td>{_e(r.mode)}</td><td "
            f'class="l">{_e(r.scenario)}</td><td>{r.iteration}</td><td '
            f'class="l">{_e(r.code)}</td>'
            f'<td class="l">{_e(r.message[:MESSAGE_CHARS])}</td><td '
            f'class="l">{_session_link(r.mode, r.scenario, r.iteration)}</td></tr>'
            for r in e.rows
        ]
        parts.append(
            _table(["Mode", "Scenario", "Iteration", "Code", "Error", "Session"], rows)
        )
    else:
        parts.append('<p class="note">No row carries an error.</p>')
    if e.failed:
        parts.append("<h3>Runs that failed their checks</h3>")
        rows = [
            f"<tr><td>{_e(r.mode)}</td><td "
            f'class="l">{_e(r.scenario)}</td><td>{r.iteration}</td><td '
            f'class="l">{_e(r.checks)}</td>'
            f'<td>{r.reward}</td><td class="l">{_tail(r.verifier_tail)}</td>'
            f'<td class="l">{_session_link(r.mode, r.scenario, r.iteration)}</td></tr>'
            for r in e.failed
        ]
        parts.append(
            _table(
                [
                    "Mode",
                    "Scenario",
                    "Iteration",
                    "Failed checks",
                    "Reward",
                    "Verifier output",
                    "Session",
                ],
                rows,
            )
        )
    if e.rows or e.failed:
        parts.append('<p class="note">To read what the agent did in a session, open this '
            'report through the viewer: '
                     f"<code>profiler view {_e(view.headline.run_id)}</code> "
                         "(pip install 'agent-profiler[view]'), then the run's "
                     "report.html link; there each “transcript” link opens "
                         "that session. (Opened as a file, the links lead "
                         "nowhere.)</p>")  # fmt: skip
    if view.problems:
        parts.append(
            '<h3 id="problems">Lines of the results file that were skipped</h3><ul class="note">'
        )
        parts.append("".join(f"<li>{_e(p)}</li>" for p in view.problems) + "</ul>")
    return "".join(parts) + "</section>"


def _plugin_sections(view: ReportView) -> str:
    """The plugins' sections, every character of theirs escaped (a plugin never writes HTML)."""
    parts = []
    for number, shown in enumerate(view.sections, 1):
        anchor = f' id="plugin-section-{number}"'
        if shown.section is None:
            parts.append(
                f"<section{anchor}><h2>Plugin {_e(shown.plugin)}</h2>"
                f'<p class="plugin-error">{_e(shown.warning)}</p></section>'
            )
            continue
        section = shown.section
        paragraphs = [p.strip() for p in section.text.split("\n\n") if p.strip()]
        body = "".join(f"<p>{_e(p)}</p>" for p in paragraphs)
        if section.header:
            rows = (
                "<tr>" + "".join(f'<td class="l">{_e(c)}</td>' for c in row) + "</tr>"
                for row in section.rows
            )
            body += _table([_e(h) for h in section.header], rows, len(section.header))
        parts.append(
            f"<section{anchor}><h2>{_e(section.title)}</h2>"
            f'<p class="note">From plugin {_e(shown.plugin)}.</p>{body}</section>'
        )
    return "".join(parts)


def _method(view: ReportView) -> str:
    base = _e(view.baseline)
    return (
        '<footer id="method"><h2>Method</h2><p>'
        f"Every mode is compared with the baseline <b>{base}</b> on every "
        "numeric metric, over all scenarios. "
        "Reduction = (1 − median(mode)/median(baseline)) × 100, so positive "
        "means the mode used less. "
        "The 95% interval is a percentile bootstrap of that reduction (10,000 resamples, seed 42); "
        "p is a two-sided permutation test of the difference of means (10,000 "
        "permutations, or sign flips of the "
        "per-cell differences when both modes ran the same (model, scenario, "
        "iteration) cells); p-values are "
        "Holm-adjusted across the metrics of a comparison and a difference is "
        "significant when the adjusted p &lt; 0.05. "
        f"Above {EXACT_LIMIT} runs per mode the interval resamples each mode "
        "independently and p uses the normal "
        "approximation of the permutation distribution (see docs/reports.md). "
        "Cohen's d uses the pooled standard deviation: "
        "|d| &lt; 0.2 negligible, &lt; 0.5 small, &lt; 0.8 medium, else large. "
        "Success intervals are Wilson score "
        f"intervals; pass@k / pass^k (k = {view.k}) are the chance that at "
        "least one / all of k runs of a scenario "
        "succeed, averaged over scenarios.</p>"
        '<p>Files: <a href="report.md">report.md</a> · <a href="analysis.md">analysis.md</a> · '
        '<a href="data/results.csv">data/results.csv</a> · <a '
        'href="data/results.json">data/results.json</a> · '
        '<a href="data/summary.json">data/summary.json</a> · source '
        f"<code>{_e(view.source)}</code></p>"
        "</footer></main></body></html>\n"
    )


def _session_link(mode: str, scenario: str, iteration: int) -> str:
    """A link to the session in ``profiler view``, which serves this page beside its
    run's sessions."""
    query = urlencode({"mode": mode, "scenario": scenario, "iteration": iteration})
    return f'<a class="session" href="session?{_e(query)}">transcript</a>'
