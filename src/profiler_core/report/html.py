"""``report.html``: one self-contained page (inline CSS and SVG charts, no scripts, nothing fetched)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any
from urllib.parse import urlencode

from . import format as fmt
from . import sequential as seq
from .charts import DISTRIBUTION_METRICS, MIN_CHART_ROWS, chart_note, mode_color, worth_drawing
from .summary import EXACT_LIMIT, MAIN_METRICS, MetricComparison, Summary
from .verdict import error_line, findings, winners

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
.heat{display:inline-block;min-width:3.6em}
footer{color:var(--muted);font-size:.86rem;border-top:1px solid var(--line);padding-top:10px}
@media (max-width:640px){body{font-size:14px}main{padding:4px 10px 30px}header.top{padding:12px 10px 8px}.big{font-size:1.7rem}th,td{padding:4px 6px}}
@media print{nav{display:none}.scroll{overflow:visible}}
"""


def _e(x: Any) -> str:
    return escape(str(x), quote=True)


def _ids(names: Sequence[str], prefix: str) -> dict[str, str]:
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


def _table(header: Sequence[str], rows: Iterable[str], left: int = 1) -> str:
    heads = "".join(f'<th class="l">{h}</th>' if i < left else f"<th>{h}</th>" for i, h in enumerate(header))
    return f'<div class="scroll"><table><thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _pill(mc: MetricComparison | None) -> str:
    if mc is None:
        return ""
    if mc.verdict == 1:
        return '<span class="pill better">better</span>'
    if mc.verdict == -1:
        return '<span class="pill worse">worse</span>'
    if mc.significant:
        return '<span class="pill diff">different</span>'
    return '<span class="pill">n.s.</span>'


def _figure(svg: str | None, caption: str, wide: bool = False) -> str:
    if not svg:
        return ""
    cls = ' class="wide"' if wide else ""
    return f"<figure{cls}>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def render_html(summary: Summary, meta: dict[str, Any], charts: dict[str, str], problems: Sequence[str]) -> str:
    """The whole page."""
    s = summary
    run_id = meta.get("runId")
    scen_ids = _ids(s.scenarios, "scenario")
    metric_ids = _ids([m.name for m in s.metrics], "metric")
    parts: list[str] = []
    add = parts.append

    add('<!doctype html><html lang="en"><head><meta charset="utf-8">')
    add('<meta name="viewport" content="width=device-width, initial-scale=1">')
    add('<link rel="icon" href="data:,">')
    add(f"<title>Report: {_e(run_id)}</title><style>{CSS}</style></head><body>")
    when = " → ".join(x for x in (meta.get("startedAt"), meta.get("completedAt")) if x)
    add(f'<header class="top"><h1>Report <code>{_e(run_id)}</code></h1>')
    add(
        f'<p class="meta">{meta.get("rows")} runs · {len(s.modes)} modes · {len(s.scenarios)} scenarios · '
        f"{len(s.models)} model{'s' if len(s.models) != 1 else ''} ({_e(', '.join(s.models))}) · "
        f"provider {_e(', '.join(meta.get('providers') or []) or '–')} · baseline <b>{_e(s.baseline)}</b>"
        + (f" · {_e(when)}" if when else "")
        + "</p>"
    )
    nav = [("verdict", "Verdict"), ("modes", "Modes"), ("comparison", "Comparison"), ("distributions", "Distributions"),
           ("scenarios", "Scenarios"), ("metrics", "Metrics by scenario"), ("checkpoints", "Checkpoints"),
           ("errors", "Errors"), ("method", "Method")]  # fmt: skip
    add("<nav>" + "".join(f'<a href="#{a}">{t}</a>' for a, t in nav) + "</nav></header><main>")

    # Verdict
    add('<section id="verdict"><h2>Verdict</h2>')
    if errors := error_line(s):
        add(f'<p class="errored"><strong>⚠ {_e(errors)}.</strong></p>')
    if s.stop is not None:
        add(_stop_html(s.stop))
    if s.comparisons:
        add('<div class="verdicts">')
        for w in winners(s):
            cls = "v sig" if w.significant else "v"
            mode, _, why = w.text.partition(" — ")
            add(f'<div class="{cls}"><span class="crit">{_e(w.criterion)}</span><strong>{_e(mode)}</strong>'
                f'<span class="why">{_e(why or "")}</span></div>')  # fmt: skip
        add('</div><ul class="findings">')
        for f in findings(s):
            pill = {1: '<span class="pill better">better</span>', -1: '<span class="pill worse">worse</span>'}.get(
                f.better,
                '<span class="pill">n.s.</span>' if not f.significant else '<span class="pill diff">different</span>',
            )
            add(f"<li>{pill}<b>{_e(f.criterion)}:</b> {_e(f.text)}</li>")
        add("</ul>")
    else:
        add('<p class="note">Only one mode in the results: nothing to compare.</p>')
    add("</section>")

    # Mode cards
    add('<section id="modes"><h2>Modes</h2><div class="cards">')
    comps = {c.mode: c for c in s.comparisons}
    for i, mode in enumerate(s.modes):
        r = s.success_by_mode[i]
        tag = '<span class="tag">baseline</span>' if mode == s.baseline else ""
        add(f'<div class="card" style="--c:{mode_color(i)}"><h3><span>{_e(mode)}</span>{tag}</h3>')
        add(f'<div class="big">{fmt.rate(r.rate)}</div>')
        add(
            f'<div class="sub">success · 95% CI {fmt.rate(r.lower)}–{fmt.rate(r.upper)} · {r.successes}/{r.trials}</div><dl>'
        )
        add(f"<dt>pass@1</dt><dd>{fmt.rate(r.pass_at_1)}</dd>")
        if s.k > 1:  # at one repetition pass@k and pass^k repeat pass@1
            add(f"<dt>pass@{s.k}</dt><dd>{fmt.rate(r.pass_at_k)}</dd><dt>pass^{s.k}</dt><dd>{fmt.rate(r.pass_hat_k)}</dd>")
        for metric in ("cost_total_usd", "latency_wall_ms", "tokens_total", "tool_calls_total", "agent_turns"):
            info = s.metric(metric)
            if info is None:
                continue
            delta = ""
            comp = comps.get(mode)
            mc = comp.get(metric) if comp else None
            if mc is not None and math.isfinite(mc.result.reduction_pct):
                cls = {1: "better", -1: "worse"}.get(mc.verdict, "")
                delta = f' <span class="delta {cls}">{fmt.pct(-mc.result.reduction_pct, 0)}</span>'
            add(
                f"<dt>{_e(info.label)} (median)</dt><dd>{fmt.value(s.by_mode[metric]['median'][i], info.unit)}{delta}</dd>"
            )
        add(f"<dt>Errors</dt><dd>{int(s.errors_by_mode[i])}</dd></dl></div>")
    add("</div>")
    if s.comparisons:
        add(f'<p class="note">Coloured deltas are changes of the median against {_e(s.baseline)} that are significant '
            "(Holm-adjusted p &lt; 0.05): green = lower (better), red = higher.</p>")  # fmt: skip
    add("</section>")

    # Comparison
    add('<section id="comparison"><h2>Comparison with the baseline</h2>')
    if s.comparisons:
        if note := chart_note(s):
            add(f'<p class="note">{_e(note)}</p>')
        add('<div class="figs">' + _figure(charts.get("forest"), "Each line: the 95% bootstrap CI of the reduction of the median; "
            "right of the dashed line the mode is lower (cheaper, faster, fewer tokens).", wide=True) + "</div>")  # fmt: skip
        for comp in s.comparisons:
            add(f"<h3>{_e(comp.mode)} vs {_e(comp.baseline)}</h3>")
            sc = comp.success
            add(f'<p class="note">{_e(comp.pairing)}. Success {fmt.rate(sc.rate_a)} vs {fmt.rate(sc.rate_b)} '
                f"({fmt.pp(sc.difference_pp)}, 95% CI {fmt.pp(sc.ci95_pp[0])} to {fmt.pp(sc.ci95_pp[1])}, "
                f"p {fmt.p_value(sc.p_value)}){' — <b>significant</b>' if sc.significant else ''}.</p>")  # fmt: skip
            rows = []
            for mc in comp.metrics:
                info = s.metric(mc.metric)
                if info is None:  # every compared metric has its info; keeps the types honest
                    continue
                res = mc.result
                cls = ' class="sig"' if mc.significant else ""
                rows.append(
                    f'<tr{cls}><td><a href="#{metric_ids[mc.metric]}">{_e(info.label)}</a></td>'
                    f"<td>{fmt.value(mc.median_b, info.unit)}</td><td>{fmt.value(mc.median_a, info.unit)}</td>"
                    f"<td>{fmt.pct(res.reduction_pct)}</td><td>{fmt.ci(*res.ci95)}</td>"
                    f"<td>{fmt.effect(res.effect_size, res.effect_magnitude)}</td><td>{fmt.p_value(res.p_value)}</td>"
                    f'<td>{fmt.p_value(res.p_value_adjusted)}</td><td class="l">{_pill(mc)}</td></tr>'
                )
            add(_table(["Metric", f"{_e(comp.baseline)} median", f"{_e(comp.mode)} median", "Reduction", "95% CI",
                        "Cohen's d", "p", "p (Holm)", "Verdict"], rows))  # fmt: skip
        add(f'<p class="note">Reduction = (1 − median(mode) / median({_e(s.baseline)})) × 100; positive = the mode is lower. '
            "Click a metric for its per-scenario breakdown.</p>")  # fmt: skip
    else:
        add('<p class="note">Only one mode: nothing to compare.</p>')
    add("</section>")

    # Distributions and success
    add('<section id="distributions"><h2>Distributions and success</h2>')
    if not worth_drawing(s):
        add(f'<p class="note">No charts: they are drawn from {MIN_CHART_ROWS} runs of a mode on; the tables give every number.</p>')
    elif note := chart_note(s):
        add(f'<p class="note" id="chart-modes">{_e(note)}</p>')
    add('<div class="figs">')
    add(
        _figure(
            charts.get("success"), f"Dot: share of runs that succeeded; bar: Wilson 95% interval; tick: pass^{s.k}."
        )
    )
    for metric in DISTRIBUTION_METRICS:
        add(
            _figure(
                charts.get(f"dist:{metric}"),
                "Box: 25th–75th percentile, line: median, diamond: mean, whiskers: 5th–95th percentile.",
            )
        )
    add(_figure(charts.get("scenarios:cost_total_usd"), "Median cost per scenario; one dot per mode.", wide=True))
    add("</div></section>")

    # Scenario table
    add('<section id="scenarios"><h2>Scenarios</h2>')
    main = [m for m in ("cost_total_usd", "latency_wall_ms", "tokens_total") if s.metric(m)]
    header = ["Scenario"] + [f"Success {_e(m)}" for m in s.modes]
    for metric in main:
        header += [f"{_e(fmt.label(metric))} {_e(m)}" for m in s.modes]
    header += ["Checks passed"]
    rows = []
    for j, scen in enumerate(s.scenarios):
        cells = [f'<td><a href="#{scen_ids[scen]}">{_e(scen)}</a></td>']
        for i in range(len(s.modes)):
            rate = s.success_by_scenario[i][j]
            cells.append(f"<td>{fmt.rate(rate.rate)}</td>" if rate else "<td>–</td>")
        for metric in main:
            info = s.metric(metric)
            if info is None:
                continue
            for i in range(len(s.modes)):
                cells.append(f"<td>{fmt.value(s.by_scenario[metric]['median'][i, j], info.unit)}</td>")
        total = s.checks_total[:, j]
        if total.sum() == 0:
            checks = "no checks"
        else:
            checks = " · ".join(
                fmt.rate(s.checks_passed[i, j] / total[i]) if total[i] else "–" for i in range(len(s.modes))
            )
        cells.append(f"<td>{checks}</td>")
        rows.append(f'<tr id="{scen_ids[scen]}">{"".join(cells)}</tr>')
    add(_table(header, rows))
    add(
        '<p class="note">Medians per mode. Checks passed: share of scorer checks passed, per mode in mode order.</p></section>'
    )

    # Per-metric breakdown by scenario (targets of the comparison links)
    add('<section id="metrics"><h2>Metrics by scenario</h2>')
    b = s.modes.index(s.baseline)
    ordered = [m for m in s.metrics if m.name in MAIN_METRICS] + [m for m in s.metrics if m.name not in MAIN_METRICS]
    for info in ordered:
        st = s.by_scenario[info.name]
        others = [i for i, m in enumerate(s.modes) if m != s.baseline]
        header = (
            ["Scenario"]
            + [f"{_e(m)} median" for m in s.modes]
            + [f"{_e(s.modes[i])} vs {_e(s.baseline)}" for i in others]
        )
        rows = []
        for j, scen in enumerate(s.scenarios):
            med = st["median"][:, j]
            cells = [f'<td><a href="#{scen_ids[scen]}">{_e(scen)}</a></td>']
            cells += [f"<td>{fmt.value(med[i], info.unit)}</td>" for i in range(len(s.modes))]
            cells += [f"<td>{fmt.pct(_reduction(med[i], med[b]))}</td>" for i in others]
            rows.append("<tr>" + "".join(cells) + "</tr>")
        allmed = s.by_mode[info.name]["median"]
        cells = ["<td><b>all scenarios</b></td>"] + [
            f"<td><b>{fmt.value(allmed[i], info.unit)}</b></td>" for i in range(len(s.modes))
        ]
        cells += [f"<td><b>{fmt.pct(_reduction(allmed[i], allmed[b]))}</b></td>" for i in others]
        rows.append("<tr>" + "".join(cells) + "</tr>")
        add(f'<div class="metric" id="{metric_ids[info.name]}"><h3>{_e(info.label)} <span class="note">({_e(info.name)}'
            f'{", " + _e(info.unit) if info.unit else ""})</span></h3>{_table(header, rows)}</div>')  # fmt: skip
    if s.omitted_metrics:
        add(f'<p class="note">Same value in every row, not compared: {_e(", ".join(s.omitted_metrics))}.</p>')
    add("</section>")

    # Checkpoints
    add('<section id="checkpoints"><h2>Checkpoints</h2>')
    no_checks = [scen for j, scen in enumerate(s.scenarios) if s.checks_total[:, j].sum() == 0]
    if no_checks:
        add(f'<p class="note">No checks: {_e(", ".join(no_checks))}.</p>')
    for scen in s.scenarios:
        detail = s.checkpoint_detail.get(scen)
        if not detail:
            continue
        rows = [
            f'<tr><td><code>{_e(cid)}</code></td><td class="l">{_e(desc)}</td>'
            + "".join(f"<td>{fmt.rate(p / t)} ({p}/{t})</td>" if t else "<td>–</td>" for p, t in counts)
            + "</tr>"
            for cid, desc, counts in detail
        ]
        add(f'<h3><a href="#{scen_ids[scen]}">{_e(scen)}</a></h3>')
        add(_table(["Checkpoint", "Description"] + [_e(m) for m in s.modes], rows, left=2))
    add("</section>")

    # Errors
    add('<section id="errors"><h2>Errors and anomalies</h2>')
    reasons = sorted({r for m in s.modes for r in s.reasons_by_mode[m]})
    rows = [
        f"<tr><td>{_e(m)}</td>"
        + "".join(f"<td>{s.reasons_by_mode[m].get(r, 0)}</td>" for r in reasons)
        + f"<td>{int(s.errors_by_mode[i])}</td></tr>"
        for i, m in enumerate(s.modes)
    ]
    add(_table(["Mode"] + [f"completion: {_e(r)}" for r in reasons] + ["rows with an error"], rows))
    if s.error_rows:
        rows = [
            f'<tr><td>{_e(m)}</td><td class="l">{_e(sc)}</td><td>{it}</td><td class="l">{_e(code)}</td>'
            f'<td class="l">{_e(msg[:300])}</td><td class="l">{_session_link(m, sc, it)}</td></tr>'
            for m, sc, it, code, msg in s.error_rows
        ]
        add(_table(["Mode", "Scenario", "Iteration", "Code", "Error", "Session"], rows))
    else:
        add('<p class="note">No row carries an error.</p>')
    if s.failed_rows:
        add("<h3>Runs that failed their checks</h3>")
        rows = [
            f'<tr><td>{_e(m)}</td><td class="l">{_e(sc)}</td><td>{it}</td><td class="l">{_e(checks or "–")}</td>'
            f'<td class="l">{_session_link(m, sc, it)}</td></tr>'
            for m, sc, it, checks in s.failed_rows
        ]
        add(_table(["Mode", "Scenario", "Iteration", "Failed checks", "Session"], rows))
    if s.error_rows or s.failed_rows:
        add(f'<p class="note">To read what the agent did in a session, open this report through the viewer: '
            f"<code>profiler view {_e(run_id)}</code> (pip install 'agent-profiler[view]'), then the run's "
            "report.html link; there each “transcript” link opens that session. (Opened as a file, the links lead nowhere.)</p>")  # fmt: skip
    if problems:
        add('<h3 id="problems">Lines of the results file that were skipped</h3><ul class="note">')
        add("".join(f"<li>{_e(p)}</li>" for p in problems) + "</ul>")
    add("</section>")

    add('<footer id="method"><h2>Method</h2><p>')
    add(f"Every mode is compared with the baseline <b>{_e(s.baseline)}</b> on every numeric metric, over all scenarios. "
        "Reduction = (1 − median(mode)/median(baseline)) × 100, so positive means the mode used less. "
        "The 95% interval is a percentile bootstrap of that reduction (10,000 resamples, seed 42); "
        "p is a two-sided permutation test of the difference of means (10,000 permutations, or sign flips of the "
        "per-cell differences when both modes ran the same (model, scenario, iteration) cells); p-values are "
        "Holm-adjusted across the metrics of a comparison and a difference is significant when the adjusted p &lt; 0.05. "
        f"Above {EXACT_LIMIT} runs per mode the interval resamples each mode independently and p uses the normal "
        "approximation of the permutation distribution (see docs/reports.md). Cohen's d uses the pooled standard deviation: "
        "|d| &lt; 0.2 negligible, &lt; 0.5 small, &lt; 0.8 medium, else large. Success intervals are Wilson score "
        f"intervals; pass@k / pass^k (k = {s.k}) are the chance that at least one / all of k runs of a scenario "
        "succeed, averaged over scenarios.</p>")  # fmt: skip
    add('<p>Files: <a href="report.md">report.md</a> · <a href="analysis.md">analysis.md</a> · '
        '<a href="data/results.csv">data/results.csv</a> · <a href="data/results.json">data/results.json</a> · '
        f'<a href="data/summary.json">data/summary.json</a> · source <code>{_e(meta.get("source"))}</code></p>')  # fmt: skip
    add("</footer></main></body></html>\n")
    return "".join(parts)


def _session_link(mode: str, scenario: str, iteration: int) -> str:
    """A link to the session in ``profiler view``, which serves this page beside its run's sessions."""
    query = urlencode({"mode": mode, "scenario": scenario, "iteration": iteration})
    return f'<a class="session" href="session?{_e(query)}">transcript</a>'


def _reduction(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b) or b == 0:
        return math.nan
    return (1 - a / b) * 100


def _stop_html(view) -> str:
    """Why a sequentially stopped run stopped, and its comparisons' confidence sequences (a table)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in seq.TABLE_HEADER)
    body = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>" for row in seq.table_rows(view))
    return (
        f'<p class="stopped"><strong>{_e(seq.headline(view))}.</strong></p>'
        f'<table class="stop"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )
