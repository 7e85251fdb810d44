"""A session's page: its row's metrics, checkpoints, the analyzers' findings and its
trace as a timeline.

Also two sessions side by side (the same scenario in two modes). Long texts fold
(``<details>``); every value is escaped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

import attrs

from ..model import (
    AnalysisResult,
    CheckpointResult,
    ErrorEvent,
    ListFinding,
    NumberFinding,
    ProfileRow,
    RatioFinding,
    ReasoningEvent,
    SessionAnalysisBundle,
    SessionTrace,
    StringFinding,
    TableFinding,
    TextOutputEvent,
    ToolCallEvent,
)
from ..model.record import Record
from ..report import format as fmt
from .catalog import RunView
from .index import Cell
from .pages import e, layout, session_query, table
from .timeline import TurnEvents, turns_of

#: Texts longer than this (or with more lines) fold behind a preview.
FOLD_CHARS, FOLD_LINES = 600, 10
#: Characters of one value put in a page at most (the trace keeps them all).
MAX_SHOWN = 200_000


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Session(Record):
    """What a session's page shows, read from the run's files."""

    cell: Cell
    row: ProfileRow
    trace: SessionTrace | None
    bundle: SessionAnalysisBundle | None
    #: why the trace or the analysis could not be read, if so
    problems: tuple[str, ...] = ()


def outcome_of(row: ProfileRow) -> str:
    """ "error", "pass" or "fail"."""
    return "error" if row.error else "pass" if row.success else "fail"


# ---------------------------------------------------------------- folding


def as_text(value: Any) -> str:
    """A tool input or output as text: strings as they are, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def fold(text: str, cls: str = "") -> str:
    """``<pre>`` of a short text; a preview and the whole text behind ``<details>`` for
    a long one."""
    cut = ""
    if len(text) > MAX_SHOWN:
        cut = (
            f'<p class="note">… {len(text) - MAX_SHOWN:,} more characters not shown '
            "(the trace holds them).</p>"
        )
        text = text[:MAX_SHOWN]
    lines = text.count("\n") + 1
    if len(text) <= FOLD_CHARS and lines <= FOLD_LINES:
        return f'<pre class="{cls}">{e(text)}</pre>{cut}'
    preview = "\n".join(text[: FOLD_CHARS // 2].split("\n")[:4])
    return (
        f'<div class="fold"><pre class="{cls} preview">{e(preview)}…</pre>'
        f"<details><summary>show all ({len(text):,} characters, {lines:,} "
        "lines)</summary><pre "
        f'class="{cls}">{e(text)}</pre></details>{cut}</div>'
    )


# ---------------------------------------------------------------- timeline


def turn_tokens(turn: TurnEvents) -> str:
    """A turn's tokens: exact when the trace recorded them per model call, else labelled
    as the estimate they are."""
    exact = turn.exact_tokens
    if exact is not None:
        return f"{exact:,} tokens"
    return f"~{turn.estimated_tokens:,} tokens (estimated)"


def timeline(trace: SessionTrace | None) -> str:
    """The trace as turns of events."""
    if trace is None:
        return (
            '<p class="note">No trace was kept for this session (session export '
            "off, or the run has no trace store).</p>"
        )
    turns = turns_of(trace)
    if not turns:
        return '<p class="note">The trace has no events.</p>'
    out = []
    for turn in turns:
        calls = sum(1 for ev in turn.events if isinstance(ev, ToolCallEvent))
        facts = [turn_tokens(turn), f"{calls} tool call{'s' if calls != 1 else ''}"]
        if turn.duration_ms is not None:
            facts.append(fmt.value(turn.duration_ms, "ms"))
        events = "".join(event_html(ev) for ev in turn.events)
        out.append(
            f'<section class="turn"><h3>Turn {turn.number} <span '
            f'class="note">{e(" · ".join(facts))}</span></h3>{events}</section>'
        )
    return "".join(out)


def event_html(event: Any) -> str:
    """One event of the timeline."""
    if isinstance(event, ToolCallEvent):
        return _tool_call(event)
    if isinstance(event, ReasoningEvent):
        facts = f"~{event.token_count:,} tokens (estimated)" + (
            f" · {fmt.value(event.duration_ms, 'ms')}" if event.duration_ms else ""
        )
        return (
            '<div class="ev reasoning"><span class="kind">reasoning</span> <span '
            f'class="note">{e(facts)}</span>{fold(event.content)}</div>'
        )
    if isinstance(event, TextOutputEvent):
        return (
            '<div class="ev text"><span class="kind">text</span> <span '
            f'class="note">~{event.token_count:,} tokens '
            f"(estimated)</span>{fold(event.content)}</div>"
        )
    if isinstance(event, ErrorEvent):
        kind = "recoverable" if event.recoverable else "fatal"
        return (
            '<div class="ev error"><span class="kind">error</span> <span '
            f'class="note">{kind}</span>{fold(event.message)}</div>'
        )
    return (
        '<div class="ev"><span '
        f'class="kind">event</span>{fold(as_text(attrs.asdict(event)))}</div>'
    )


def _tool_call(event: ToolCallEvent) -> str:
    status = "ok" if event.success else "failed"
    mark = "✓" if event.success else "✗ failed"
    error = f'<p class="bad">{e(event.error)}</p>' if event.error else ""
    return (
        f'<div class="ev tool {status}"><span class="kind">tool</span> <b '
        f'class="tool-name">{e(event.name)}</b> '
        f'<span class="status {status}">{mark}</span> <span '
        f'class="note">{fmt.value(event.duration_ms, "ms")}</span>{error}'
        '<div class="io"><span '
        f'class="io-label">input</span>{fold(as_text(event.input), "input")}</div>'
        '<div class="io"><span '
        f'class="io-label">output</span>{fold(as_text(event.output), "output")}</div></div>'
    )


# ---------------------------------------------------------------- row, checks, findings


def _metric_text(value: Any) -> str:
    """An extension's value: a float rounded to 4 significant figures (not
    0.30000000000000004), anything else as text."""
    if isinstance(value, float) and not isinstance(value, bool):
        return f"{value:.4g}"
    return as_text(value)


def row_cost(row: ProfileRow, *, parts: bool = True) -> str:
    """The row's cost; "unknown" when it has no price, or errored before anything was
    measured (not $0)."""
    c, source = row.cost, row.extensions.get("cost_source")
    if source == "unknown" or (row.error and source is None and not c.total_usd):
        return "unknown"
    if not parts:
        return fmt.value(c.total_usd, "usd")
    return (
        f"{fmt.value(c.total_usd, 'usd')} (input {fmt.value(c.input_usd, 'usd')}, "
        f"output {fmt.value(c.output_usd, 'usd')})"
    )


def metrics_html(row: ProfileRow) -> str:
    """The row's measurements as a definition list."""
    t, calls = row.tokens, row.tool_calls
    items = [
        ("Result", outcome_of(row)), ("Completion", row.completion_reason),
        ("Checks", f"{row.checkpoints_passed}/{row.checkpoints_total}"),
        ("Tokens", f"{t.total:,} (input {t.input:,}, output {t.output:,}, reasoning "
            f"{t.reasoning:,}, "
                   f"cache read {t.cache_read:,}, cache write {t.cache_write:,})"),
        ("Wall time", fmt.value(row.timing.wall_ms, "ms")),
        *((f"Segment: {s.label}", fmt.value(s.end_ms - s.start_ms, "ms")) for s in row.timing.segments),
        ("Cost", row_cost(row)),
        *((("Reward", f"{row.reward:.2f}"),) if row.reward is not None else ()),
        ("Tool calls", f"{calls.total} ({calls.failed} failed, {calls.retried} retried)"
                       + (" · "
                           f"{', '.join(f'{k} {v}' for k, v in sorted(calls.by_category.items()))}" if calls.by_category else "")),
        ("Agent turns", "–" if row.agent_turns is None else str(row.agent_turns)),
        ("Attempts", str(row.attempts)), ("Started", row.started_at), ("Completed", row.completed_at),
        ("Provider", row.provider), ("Session", row.session_id), ("Output valid", "yes" if row.output_valid else "no"),
        *((f"{k}", _metric_text(v)) for k, v in sorted(row.extensions.items())),
    ]  # fmt: skip
    return (
        '<dl class="facts">'
        + "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in items)
        + "</dl>"
    )


def checkpoints_html(details: Sequence[CheckpointResult]) -> str:
    """The scorer's checks with their actual and expected values."""
    if not details:
        return '<p class="note">The scorer reported no checks.</p>'
    rows = []
    for check in details:
        mark = (
            '<span class="badge pass">passed</span>'
            if check.passed
            else '<span class="badge fail">failed</span>'
        )
        rows.append(
            f'<tr class="{"pass" if check.passed else "fail"}"><td '
            f'class="l"><code>{e(check.id)}</code></td><td '
            f'class="l">{e(check.description)}</td>'
            f'<td class="l">{mark}</td><td class="l wide">{fold(as_text(check.actual))}</td>'
            f'<td class="l wide">{fold(as_text(check.expected))}</td><td '
            f'class="l">{e(check.error or "")}</td></tr>'
        )
    return table(
        ["Check", "Description", "Result", "Actual", "Expected", "Error"],
        rows,
        "checks",
    )


def findings_html(bundle: SessionAnalysisBundle | None) -> str:
    """The analyzers' findings, one table per analyzer."""
    if bundle is None or not bundle.results:
        return '<p class="note">No analyzer results for this session.</p>'
    return "".join(
        _analyzer(name, result) for name, result in sorted(bundle.results.items())
    )


def _analyzer(name: str, result: AnalysisResult) -> str:
    rows = [
        f'<tr><td class="l">{e(key)}</td><td class="l wide">{finding_html(f)}</td></tr>'
        for key, f in result.findings.items()
    ]
    summary = f'<p class="note">{e(result.summary)}</p>' if result.summary else ""
    return (
        "<div "
        f'class="analyzer"><h3>{e(name)}</h3>{summary}{table(["Finding", "Value"], rows, "findings")}</div>'
    )


def finding_html(finding: Any) -> str:
    """One finding's value."""
    if isinstance(finding, NumberFinding):
        return e(f"{fmt.num(finding.value)} {finding.unit}".strip())
    if isinstance(finding, RatioFinding):
        return e(f"{fmt.rate(finding.value)} ({finding.label})")
    if isinstance(finding, StringFinding):
        return fold(finding.value)
    if isinstance(finding, ListFinding):
        return (
            "<ul>" + "".join(f"<li>{e(v)}</li>" for v in finding.values) + "</ul>"
            if finding.values
            else "–"
        )
    if isinstance(finding, TableFinding):
        if not finding.rows:
            return "–"
        return table(
            [e(h) for h in finding.headers],
            [
                "<tr>" + "".join(f'<td class="l">{e(c)}</td>' for c in r) + "</tr>"
                for r in finding.rows
            ],
        )
    return e(finding)


# ---------------------------------------------------------------- pages


def session_title(cell: Cell) -> str:
    """``scenario · mode · iteration N`` (and the model, when there is one)."""
    model, mode, scenario, iteration = cell
    return f"{scenario} · {mode} · iteration {iteration}" + (
        f" · {model}" if model else ""
    )


def _tokens_note(row: Any) -> str:
    """Why the turns' tokens do not add up to the row's: they are the events' estimates,
    the row has the provider's count."""
    return (
        '<p class="note tokens-note">Token counts of turns and events marked '
        '"estimated" come from the events\' text; '
        f"the session's {row.tokens.total:,} tokens are the provider's count "
        "(prompts and tool results included).</p>"
    )


def session_page(
    run: RunView,
    session: Session,
    other_modes: Sequence[str],
    contrast: Cell | None = None,
) -> str:
    """One session: outcome, error, metrics, checks, findings, timeline; links to it
    beside another mode, and beside
    a session of the same scenario that ended the other way (``contrast``)."""
    row = session.row
    model, mode, scenario, iteration = session.cell
    pair_links = [
        "<a "
        f'href="pair?{e(urlencode({"model": model, "scenario": scenario, "iteration": iteration, "a": mode, "b": other}))}">beside '
        f"{e(other)}</a>"
        for other in other_modes
    ]
    parts = [f'<p class="meta"><span class="badge {outcome_of(row)}">{outcome_of(row)}</span> '
             f'{e(row.completion_reason)} · '
                 f'{e(fmt.value(row.timing.wall_ms, "ms"))} · {row.tokens.total:,} '
                 'tokens · '
             f'{e(row_cost(row, parts=False))}</p>']  # fmt: skip
    if pair_links:
        parts.append(
            f'<p class="files">Same scenario and iteration: {" · ".join(pair_links)}</p>'
        )
    if contrast is not None:
        query = {
            "model": model,
            "scenario": scenario,
            "iteration": iteration,
            "a": mode,
            "b": contrast[1],
            "ib": contrast[3],
        }
        other = "a passed session" if outcome_of(row) != "pass" else "a failed session"
        parts.append(
            '<p class="files">Same scenario: <a class="contrast" '
            f'href="pair?{e(urlencode(query))}">beside {other} '
            f"({e(contrast[1])}, iteration {contrast[3]})</a></p>"
        )
    if row.error:
        parts.append(
            '<section id="error" '
            f'class="error-box"><h2>Error{f" ({e(row.error_code)})" if row.error_code else ""}</h2>{fold(row.error)}</section>'
        )
    parts += [
        f'<ul class="note problems">{"".join(f"<li>{e(p)}</li>" for p in session.problems)}</ul>'
        if session.problems
        else ""
    ]
    parts.append(
        f'<section id="checks"><h2>Checks</h2>{checkpoints_html(row.checkpoint_details)}</section>'
    )
    parts.append(
        "<section "
        f'id="timeline"><h2>Timeline</h2>{_tokens_note(row)}{timeline(session.trace)}</section>'
    )
    parts.append(f'<section id="metrics"><h2>Metrics</h2>{metrics_html(row)}</section>')
    parts.append(
        f'<section id="findings"><h2>Analyzers</h2>{findings_html(session.bundle)}</section>'
    )
    crumbs = [("Runs", "/"), (run.key, "./"), (session_title(session.cell), None)]
    return layout(session_title(session.cell), "".join(parts), crumbs)


_COMPARED = (
    ("Result", lambda r: outcome_of(r)),
    ("Checks", lambda r: f"{r.checkpoints_passed}/{r.checkpoints_total}"),
    ("Completion", lambda r: r.completion_reason),
    ("Tokens", lambda r: f"{r.tokens.total:,}"),
    ("Wall time", lambda r: fmt.value(r.timing.wall_ms, "ms")),
    ("Reward", lambda r: "–" if r.reward is None else f"{r.reward:.2f}"),
    ("Cost", lambda r: row_cost(r, parts=False)),
    ("Tool calls", lambda r: f"{r.tool_calls.total} ({r.tool_calls.failed} failed)"),
    ("Agent turns", lambda r: "–" if r.agent_turns is None else str(r.agent_turns)),
)


def pair_page(run: RunView, left: Session, right: Session) -> str:
    """Two sessions of one scenario side by side: their numbers, checks and workspace
    diffs, then their turns, row by row."""
    rows = [
        f'<tr><td class="l">{e(name)}</td><td '
        f'class="l">{e(get(left.row))}</td><td '
        f'class="l">{e(get(right.row))}</td></tr>'
        for name, get in _COMPARED
    ]
    header = [
        "",
        *(
            f'<a href="session?{e(session_query(*s.cell))}">{e(_side_name(s))}</a>'
            for s in (left, right)
        ),
    ]
    columns = "".join(
        f'<div class="side"><h2>{e(_side_name(s))} <span class="badge '
        f'{outcome_of(s.row)}">{outcome_of(s.row)}</span></h2>'
        + (f'<div class="error-box">{fold(s.row.error)}</div>' if s.row.error else "")
        + f"{checkpoints_html(s.row.checkpoint_details)}<h3>Workspace</h3>{workspace_html(s.trace)}</div>"
        for s in (left, right)
    )
    model, _mode, scenario, _iteration = left.cell
    title = (
        f"{scenario}"
        + (f" · {model}" if model else "")
        + f": {_side_name(left)} beside {_side_name(right)}"
    )
    body = (
        table(header, rows, "pair")
        + f'<div class="sides">{columns}</div>'
        + turns_side_by_side(left.trace, right.trace)
    )
    return layout(title, body, [("Runs", "/"), (run.key, "./"), (title, None)])


def _side_name(s: Session) -> str:
    """A side's heading: its mode and iteration."""
    return f"{s.cell[1]} · iteration {s.cell[3]}"


def workspace_html(trace: SessionTrace | None) -> str:
    """What the session left in its workspace: ``git diff --stat`` of a git workspace,
    else its files."""
    ws = trace.workspace if trace is not None else None
    if ws is None:
        return (
            '<p class="note">Not recorded (no trace, or a run from before '
            "workspaces were recorded).</p>"
        )
    if ws.diff_stat is not None:
        return (
            f'<pre class="diff-stat">{e(ws.diff_stat)}</pre>'
            if ws.diff_stat.strip()
            else '<p class="note">No change.</p>'
        )
    if ws.files:
        return f'<pre class="files-list">{e(chr(10).join(ws.files))}</pre>'
    return '<p class="note">Empty.</p>'


def turns_side_by_side(left: SessionTrace | None, right: SessionTrace | None) -> str:
    """Both timelines aligned turn by turn: turn n of one beside turn n of the other (a
    blank where one had fewer)."""
    sides = [turns_of(t) if t is not None else [] for t in (left, right)]
    if not any(sides):
        return (
            '<section id="turns"><h2>Turns</h2><p class="note">Neither session '
            "kept a trace.</p></section>"
        )
    by_number = [{t.number: t for t in turns} for turns in sides]
    numbers = sorted(set(by_number[0]) | set(by_number[1]))
    out = ['<section id="turns"><h2>Turns, side by side</h2>']
    for n in numbers:
        cells = []
        for found in by_number:
            turn = found.get(n)
            if turn is None:
                cells.append(f'<div class="none">no turn {n}</div>')
                continue
            calls = sum(1 for ev in turn.events if isinstance(ev, ToolCallEvent))
            facts = " · ".join(
                [turn_tokens(turn), f"{calls} tool call{'s' if calls != 1 else ''}"]
            )
            cells.append(
                f"<div><h3>Turn {n} <span "
                f'class="note">{e(facts)}</span></h3>{"".join(event_html(ev) for ev in turn.events)}</div>'
            )
        out.append(f'<div class="turn-row" data-turn="{n}">{"".join(cells)}</div>')
    return "".join(out) + "</section>"


__all__ = [
    "Session",
    "as_text",
    "fold",
    "pair_page",
    "session_page",
    "timeline",
    "turns_side_by_side",
    "workspace_html",
]
