"""The viewer's pages as HTML strings: the runs list and a run (its report's verdict and
charts, its rows).

Every value from a run (ids, messages, outputs) goes through ``e`` (HTML-escaped,
quotes included) or ``urlencode``; the only HTML not built here is the run's own
report.html, whose sections are shown as that report wrote them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from ..report import format as fmt
from ..util.arrays import np
from .catalog import RunView, verdict_line
from .index import OUTCOME_NAMES, RowFilter, RowIndex

#: Rows per page of a run's table.
PAGE_SIZE = 100


def e(value: Any) -> str:
    """HTML-escaped text of any value (quotes too, so it is safe inside attributes)."""
    return escape(str(value), quote=True)


def run_url(key: str) -> str:
    """The page of a run (relative links on it resolve inside the run)."""
    return f"/runs/{quote(key, safe='')}/"


def session_query(model: str, mode: str, scenario: str, iteration: int) -> str:
    """The query string naming one session (relative to a run's page: ``session?…``)."""
    return urlencode(
        {"model": model, "mode": mode, "scenario": scenario, "iteration": iteration}
    )


def layout(title: str, body: str, crumbs: Sequence[tuple[str, str | None]] = ()) -> str:
    """A whole page: the shipped stylesheet and script, breadcrumbs, ``body``."""
    trail = " › ".join(
        f'<a href="{e(href)}">{e(text)}</a>' if href else e(text)
        for text, href in crumbs
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,"><link rel="stylesheet" href="/static/report.css">'
        '<link rel="stylesheet" href="/static/viewer.css"><script '
        'src="/static/viewer.js" defer></script>'
        f"<title>{e(title)} · profiler view</title></head><body>"
        f'<header class="top"><nav class="crumbs">{trail}</nav><h1>{e(title)}</h1></header>'
        f"<main>{body}</main></body></html>"
    )


def table(header: Sequence[str], rows: Iterable[str], cls: str = "") -> str:
    """A scrolling table; ``header`` cells are HTML already."""
    heads = "".join(f"<th>{h}</th>" for h in header)
    return (
        '<div class="scroll"><table '
        f'class="{cls}"><thead><tr>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
    )


# ---------------------------------------------------------------- the runs list


def runs_page(runs: Sequence[RunView], where: str) -> str:
    """Every run found, newest first: date, profile, models, modes, rows, errors, verdict."""
    if not runs:
        return layout(
            "Runs",
            f'<p class="note">No runs in {e(where)} (looked for &lt;runId&gt;.jsonl files).</p>',
            [("Runs", None)],
        )
    rows = [_run_row(run) for run in runs]
    header = [
        "Run",
        "Started",
        "Status",
        "Profile",
        "Models",
        "Modes",
        "Rows",
        "Errors",
        "Verdict",
    ]
    body = (
        f'<p class="note">{len(runs)} run{"s" if len(runs) != 1 else ""} in '
        f"{e(where)}, newest first.</p>"
    )
    return layout("Runs", body + table(header, rows, "runs"), [("Runs", None)])


def _run_row(run: RunView) -> str:
    m = run.files.manifest
    profile = m.profile_path.rsplit("/", 1)[-1] if m and m.profile_path else "–"
    counts = m.counts if m else None
    cells = [
        f'<td class="l"><a href="{e(run_url(run.key))}">{e(run.key)}</a></td>',
        f'<td class="l">{e(_when(m.started_at) if m else "–")}</td>',
        f'<td class="l">{e(m.status if m else "–")}</td>',
        f'<td class="l">{e(profile)}</td>',
        f'<td class="l">{e(", ".join(m.models) if m and m.models else "–")}</td>',
        f'<td class="l">{e(", ".join(m.modes) if m and m.modes else "–")}</td>',
        f"<td>{counts.completed if counts else '–'}</td>",
        f"<td>{counts.errored if counts else '–'}</td>",
        f'<td class="l verdict">{e(verdict_line(run.summary()))}</td>',
    ]
    return f"<tr>{''.join(cells)}</tr>"


def _when(stamp: str | None) -> str:
    return (stamp or "–").replace("T", " ").removesuffix("Z")[:19]


# ---------------------------------------------------------------- a run


def run_page(run: RunView, flt: RowFilter, page: int) -> str:
    """A run: its header, its report's verdict, mode cards and charts, and its rows table."""
    index = run.rows()
    parts = [_run_header(run, index)]
    sections = run.report_sections()
    if not sections:
        parts.append(
            '<p class="note">No report for this run yet: <code>profiler report '
            f"{e(run.run_id)}</code> writes one.</p>"
        )
    parts.append(_report_block("Verdict and modes", sections, ("verdict", "modes")))
    parts.append(rows_section(index, flt, page))
    parts.append(
        _report_block(
            "Charts and comparison", sections, ("distributions", "comparison")
        )
    )
    plugins = [name for name in sections if name.startswith("plugin-section-")]
    parts.append(_report_block("From plugins", sections, plugins))
    return layout(f"Run {run.key}", "".join(parts), [("Runs", "/"), (run.key, None)])


def _report_block(title: str, sections: dict[str, str], names: Sequence[str]) -> str:
    shown = "".join(sections[name] for name in names if name in sections)
    if not shown:
        return ""
    return (
        f'<details class="report" open><summary>{e(title)}</summary><div '
        f'class="report-body">{shown}</div></details>'
    )


def _run_header(run: RunView, index: RowIndex) -> str:
    m = run.files.manifest
    counts = index.counts()
    facts = [
        fmt.count(index.n, "row"),
        f"{counts['pass']} passed",
        f"{counts['fail']} failed",
        f"{counts['error']} errored",
    ]
    if m:
        facts = [f"started {_when(m.started_at)}", f"status {m.status}"] + facts
    links = []
    if run.files.report_html is not None:
        links += ['<a href="report.html">report.html</a>', '<a href="report.md">report.md</a>', '<a href="analysis.md">analysis.md</a>',
                  '<a href="data/results.csv">results.csv</a>', '<a href="data/summary.json">summary.json</a>']  # fmt: skip
    problems = index.problems[:5]
    notes = "".join(f"<li>{e(p)}</li>" for p in problems)
    if index.duplicates:
        notes += (
            f"<li>{index.duplicates} rows replaced by a later row of the same cell "
            "(a resumed run): the last one is shown</li>"
        )
    return (
        f'<p class="meta">{e(" · ".join(facts))}</p>'
        + (f'<p class="files">{" · ".join(links)}</p>' if links else "")
        + (f'<ul class="note problems">{notes}</ul>' if notes else "")
    )


_COLUMNS: tuple[tuple[str, str | None], ...] = (
    ("#", "row"), ("Mode", "mode"), ("Scenario", "scenario"), ("Model", "model"), ("Iter", "iteration"),
    ("Result", "outcome"), ("Checks", "checks"), ("Reward", "reward"), ("Completion", "reason"), ("Tokens", "tokens"),
    ("Wall", "wall"), ("Cost", "cost"), ("Tool calls", "tools"), ("Turns", "turns"), ("Error", None),
)  # fmt: skip


def rows_section(index: RowIndex, flt: RowFilter, page: int) -> str:
    """The filter form, the sortable table of one page of rows, and the page links."""
    chosen = index.select(flt)
    pages = max(1, math.ceil(chosen.size / PAGE_SIZE))
    page = min(max(page, 1), pages)
    shown = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    several_models = len(index.values["model"]) > 1
    columns = [c for c in _COLUMNS if several_models or c[1] != "model"]
    header = [_sort_link(label, key, flt) if key else label for label, key in columns]
    rows = [_row_html(index, int(i), several_models) for i in shown.tolist()]
    first = (page - 1) * PAGE_SIZE + 1 if shown.size else 0
    status = (
        f"Rows {first:,}–{first + shown.size - 1:,} of {chosen.size:,}"
        if shown.size
        else "No row matches"
    )
    if chosen.size != index.n:
        status += f" (of {index.n:,} in the run)"
    return (
        '<section id="rows"><h2>Rows</h2>'
        + _filter_form(index, flt, several_models)
        + f'<p class="note" id="row-status">{e(status)}. Click a row for its session.</p>'
        + table(header, rows, "rows")
        + _pager(flt, page, pages)
        + "</section>"
    )


def filter_query(flt: RowFilter, **changes: Any) -> str:
    """The query string of ``flt`` with some fields changed (empty fields left out)."""
    fields = {"mode": flt.mode, "scenario": flt.scenario, "model": flt.model, "outcome": flt.outcome,
              "reason": flt.reason, "q": flt.q, "sort": flt.sort, "desc": "1" if flt.desc else ""}  # fmt: skip
    fields.update(changes)
    return urlencode(
        {
            k: v
            for k, v in fields.items()
            if v not in ("", None) and not (k == "sort" and v == "row")
        }
    )


def _sort_link(label: str, key: str, flt: RowFilter) -> str:
    desc = (
        not flt.desc
        if flt.sort == key
        else key in ("tokens", "wall", "cost", "tools", "turns", "reward")
    )
    arrow = (" ▼" if flt.desc else " ▲") if flt.sort == key else ""
    return (
        f'<a class="sort" data-sort="{e(key)}" '
        f'href="?{e(filter_query(flt, sort=key, desc="1" if desc else "", page=""))}">{e(label)}{arrow}</a>'
    )


def _options(values: Sequence[str], chosen: str, everything: str) -> str:
    out = [f'<option value="">{e(everything)}</option>']
    for value in sorted(values):
        selected = " selected" if value == chosen else ""
        out.append(f'<option value="{e(value)}"{selected}>{e(value)}</option>')
    return "".join(out)


def _filter_form(index: RowIndex, flt: RowFilter, several_models: bool) -> str:
    outcome = _options(OUTCOME_NAMES, flt.outcome, "all results").replace(
        ">fail<", ">fail (no error)<"
    )
    selects = [
        "<label>Mode <select "
        f'name="mode">{_options(index.values["mode"], flt.mode, "all modes")}</select></label>',
        "<label>Scenario <select "
        f'name="scenario">{_options(index.values["scenario"], flt.scenario, "all scenarios")}</select></label>',
        f'<label>Result <select name="outcome">{outcome}</select></label>',
        "<label>Completion <select "
        f'name="reason">{_options(index.values["reason"], flt.reason, "any")}</select></label>',
    ]
    if several_models:
        selects.insert(
            2,
            "<label>Model <select "
            f'name="model">{_options(index.values["model"], flt.model, "all models")}</select></label>',
        )
    hidden = f'<input type="hidden" name="sort" value="{e(flt.sort)}">' + (
        '<input type="hidden" name="desc" value="1">' if flt.desc else ""
    )
    return (
        '<form class="filters" method="get" action="">'
        + "".join(selects)
        + f'<label>Search <input type="search" name="q" value="{e(flt.q)}" '
        'placeholder="scenario, mode, error…"></label>'
        + hidden
        + '<button type="submit">Filter</button> <a href="?">reset</a></form>'
    )


def _row_html(index: RowIndex, i: int, several_models: bool) -> str:
    model, mode, scenario, iteration = index.cell(i)
    href = "session?" + session_query(model, mode, scenario, iteration)
    outcome = OUTCOME_NAMES[int(index.outcome[i])]
    error = index.errors.get(i)
    checks_total = index.checks_total[i]
    cells = [
        f'<td><a href="{e(href)}">{i + 1}</a></td>',
        f'<td class="l">{e(mode)}</td>',
        f'<td class="l">{e(scenario)}</td>',
        *([f'<td class="l">{e(model)}</td>'] if several_models else []),
        f"<td>{iteration}</td>",
        f'<td class="l"><span class="badge {outcome}">{outcome}</span></td>',
        f"<td>{_int(index.checks_passed[i])}/{_int(checks_total)}</td>"
        if checks_total
        else "<td>–</td>",
        f"<td>{_reward(index.reward[i])}</td>",
        f'<td class="l">{e(index.values["reason"][index.reason[i]])}</td>',
        f"<td>{fmt.value(float(index.tokens[i]), 'tokens')}</td>",
        f"<td>{fmt.value(float(index.wall_ms[i]), 'ms')}</td>",
        f"<td>{_cost(index.cost[i])}</td>",
        f"<td>{_int(index.tool_calls[i])}{_failed(index.tool_failed[i])}</td>",
        f"<td>{_int(index.turns[i])}</td>",
        f'<td class="l err">{e(_short(error[0])) if error else ""}</td>',
    ]
    return f'<tr class="{outcome}" data-href="{e(href)}">{"".join(cells)}</tr>'


def _cost(x: float) -> str:
    return "unknown" if np.isnan(x) else fmt.value(float(x), "usd")


def _reward(x: float) -> str:
    return "–" if np.isnan(x) else f"{x:.2f}"


def _int(x: float) -> str:
    return "–" if np.isnan(x) else f"{int(x):,}"


def _failed(n: float) -> str:
    return f' <span class="bad">({int(n)} failed)</span>' if n else ""


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pager(flt: RowFilter, page: int, pages: int) -> str:
    if pages <= 1:
        return ""
    links = []
    if page > 1:
        links.append(
            f'<a rel="prev" href="?{e(filter_query(flt, page=page - 1))}">← previous</a>'
        )
    links.append(f"page {page} of {pages:,}")
    if page < pages:
        links.append(
            f'<a rel="next" href="?{e(filter_query(flt, page=page + 1))}">next →</a>'
        )
    return f'<p class="pager">{" · ".join(links)}</p>'


def message_page(title: str, what: str) -> str:
    """A page that only says something: a 404, a file that cannot be read."""
    return layout(
        title,
        f'<p class="note">{e(what)}</p><p><a href="/">All runs</a></p>',
        [("Runs", "/"), (title.lower(), None)],
    )


def not_found_page(what: str) -> str:
    """The 404 page."""
    return message_page("Not found", what)


__all__ = [
    "PAGE_SIZE",
    "e",
    "filter_query",
    "layout",
    "message_page",
    "not_found_page",
    "rows_section",
    "run_page",
    "run_url",
    "runs_page",
    "session_query",
    "table",
]
