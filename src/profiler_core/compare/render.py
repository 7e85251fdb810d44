"""A comparison as a terminal table, a Markdown summary sized for a pull-request
comment, and JSON."""

from __future__ import annotations

import math
import re
from typing import Any

from ..report import format as fmt
from ..util.textcut import printable, rich_text
from .gates import MIN_ROWS, POSSIBLE, is_possible
from .runs import Comparison, GateResult, MetricChange

_OUTCOME_WORDS = {
    "pass": "✅ pass",
    "regression": "❌ regression",
    "inconclusive": "⚠️ inconclusive",
    POSSIBLE: "⚠️ possible regression",
}
#: Cells listed by name in the Markdown summary (the rest are counted).
_LISTED = 10


def _value(change: MetricChange, value: float) -> str:
    if change.unit == "pp":
        return fmt.rate(value)
    return fmt.value(value, fmt.builtin_unit(change.metric))


def _change(change: MetricChange) -> str:
    if change.unit == "pp":
        return fmt.pp(change.change)
    return fmt.pct(change.change)


def _interval(change: MetricChange) -> str:
    return fmt.ci(
        change.lower, change.upper, fmt.pp if change.unit == "pp" else fmt.pct
    )


def _label(metric: str) -> str:
    return "Success rate" if metric == "success_rate" else fmt.label(metric)


def change_rows(comparison: Comparison) -> list[tuple[str, ...]]:
    """(mode, metric, BASE, NEW, change, CI, p (Holm)) for every compared metric."""
    rows: list[tuple[str, ...]] = []
    for mode in comparison.modes:
        for c in mode.changes:
            rows.append(
                (
                    mode.mode,
                    _label(c.metric),
                    _value(c, c.base_value),
                    _value(c, c.new_value),
                    _change(c),
                    _interval(c),
                    fmt.p_value(c.p_adjusted),
                )
            )
    return rows


def print_terminal(comparison: Comparison, console) -> None:
    """Rich tables: the changes per mode and metric, then the gates."""
    from rich.table import Table

    # Mode, model and scenario names, run ids and file names come from data: every cell is rich Text
    # (a mode named `[/x]` is no markup tag), control characters shown escaped.
    level = f"{comparison.confidence:.0%}"
    table = Table(
        title=rich_text(
            f"{comparison.new_id} (NEW) against {comparison.base_id} (BASE)"
        ),
        title_justify="left",
    )
    for header in (
        "mode",
        "metric",
        "BASE",
        "NEW",
        "change",
        f"{level} CI",
        "p (Holm)",
    ):
        table.add_column(
            header,
            justify="left" if header in ("mode", "metric") else "right",
            no_wrap=True,
        )
    for row in change_rows(comparison):
        table.add_row(*map(rich_text, row))
    console.print(table)
    for line in cell_lines(comparison):
        console.print(printable(line), markup=False, highlight=False)
    if comparison.gates:
        gates = Table(
            title="Gates (per scenario, one-sided test of the tolerance)",
            title_justify="left",
        )
        for header in (
            "mode",
            "gate",
            "change",
            f"{_gate_level(comparison)} CI",
            "outcome",
            "rows for margin",
            "why",
        ):
            gates.add_column(header, no_wrap=header != "why")
        for g in comparison.gates:
            c = g.change
            cells = (
                g.mode,
                g.gate.text,
                _change(c) if c else "–",
                _interval(c) if c else "–",
                _gate_word(g),
                _rows_needed(g),
                g.why,
            )
            gates.add_row(*map(rich_text, cells))
        console.print(gates)


def _gate_level(comparison: Comparison) -> str:
    """A gate's two-sided level: each end is a one-sided bound at the comparison's confidence."""
    return f"{2 * comparison.confidence - 1:.0%}"


def _gate_word(g: GateResult) -> str:
    return POSSIBLE if g.outcome == "inconclusive" and is_possible(g.why) else g.outcome


def _rows_needed(g: GateResult) -> str:
    """Rows per mode that catch a change ``margin`` past the tolerance with 80% power,
    e.g. "~240 for 10 pts past"."""
    if not math.isfinite(g.rows_needed):
        return "–"
    unit = " pp" if g.gate.unit == "pp" else " pts"
    return f"~{max(MIN_ROWS, math.ceil(g.rows_needed))} for {g.margin:g}{unit} past"


def cell_lines(comparison: Comparison) -> list[str]:
    """Plain lines: scenarios newly failing or passing, what only one run has, errored
    rows left out."""
    lines = []
    for title, cells in (
        ("Newly failing", comparison.newly_failing),
        ("Newly passing", comparison.newly_passing),
    ):
        if cells:
            shown = ", ".join(
                f"{s.mode}/{s.scenario} ({s.base_passed}/{s.base_total} → "
                f"{s.new_passed}/{s.new_total})"
                for s in cells[:_LISTED]
            )
            more = f" and {len(cells) - _LISTED} more" if len(cells) > _LISTED else ""
            lines.append(f"{title}: {shown}{more}")
    for title, names in (
        ("Only in BASE (not compared)", comparison.only_base),
        ("Only in NEW (not compared)", comparison.only_new),
    ):
        if names:
            lines.append(
                f"{title}: {', '.join(names[:_LISTED])}"
                + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")
            )
    for mode in comparison.modes:
        if mode.base_errors or mode.new_errors:
            lines.append(
                f"{mode.mode}: errored rows left out of the comparison: "
                f"{mode.base_errors} in BASE, {mode.new_errors} in NEW"
            )
    return lines


def markdown(comparison: Comparison) -> str:
    """A summary for a pull-request comment: the outcome, the gates, the headline
    changes, what newly fails."""
    c = comparison
    out = [
        f"## agent-profiler: {_OUTCOME_WORDS[c.outcome] if c.gates else 'comparison'}",
        "",
    ]
    out.append(
        f"{_code(c.new_id)} (NEW) against {_code(c.base_id)} (BASE), "
        f"{c.confidence:.0%} confidence intervals, p-values Holm-adjusted per "
        "mode."
    )
    out.append("")
    if c.gates:
        out += [
            f"| mode | gate | change | {_gate_level(c)} CI | outcome | rows for margin |",
            "|---|---|---:|---:|---|---:|",
        ]
        for g in c.gates:
            ch = g.change
            word = _OUTCOME_WORDS[_gate_word(g)]
            out.append(
                f"| {_md(g.mode)} | {_code(g.gate.text)} | "
                f"{_change(ch) if ch else '–'} | {_interval(ch) if ch else '–'} "
                f"| {word} | {_rows_needed(g)} |"
            )
        out.append("")
        notes = sorted({g.why for g in c.gates if g.outcome != "pass"})
        out += [f"- {_md(n)}" for n in notes] + ([""] if notes else [])
    out += [
        "| mode | metric | BASE | NEW | change | CI | p (Holm) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    out += ["| " + " | ".join(_md(x) for x in row) + " |" for row in change_rows(c)]
    out.append("")
    out += [
        f"**{_md(line.split(':', 1)[0])}:**{_md(line.split(':', 1)[1])}" + "  "
        for line in cell_lines(c)
    ]
    out.append("")
    out.append("<sub>Gates compare each scenario with itself (ratio of means, paired by "
        "iteration where the cells pair; rates for success) "
               "and test \"worse than the tolerance\" one-sided at "
                   f"{1 - c.confidence:.0%}, Holm-adjusted across the gates. "
               "`regression`: the interval's good end is past the tolerance "
                   "and the adjusted p-value is below "
               f"{1 - c.confidence:.2f}; `pass`: its bad end is within it; "
                   "`possible regression`: only the point estimate is past it; "
               "`inconclusive`: the interval reaches past the tolerance. "
                   "Possible and inconclusive exit 3. "
               "Read a session's transcript with `profiler view`.</sub>")  # fmt: skip
    return "\n".join(out).rstrip() + "\n"


#: characters with a meaning in (GitHub) Markdown, shown literally when backslash-escaped
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def _md(text: Any) -> str:
    """A name as plain text in a Markdown table cell of a PR comment: no link, @mention,
    code, HTML or line break.

    Control characters are shown escaped, Markdown's punctuation backslash-escaped,
    ``&<>`` as entities,
    and a zero-width space after ``@`` and in ``://`` / ``www.`` so GitHub links and
    notifies no one.
    """
    plain = (
        printable(str(text), one_line=True)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
    )
    plain = (
        plain.replace("@", "@\u200b")
        .replace("://", ":\u200b//")
        .replace("www.", "www\u200b.")
    )
    return _MD_SPECIAL.sub(r"\\\1", plain)


def _code(text: Any) -> str:
    """A name as a code span in a table cell: fenced by more backticks than it holds,
    ``|`` escaped for the table."""
    plain = printable(str(text), one_line=True)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", plain)), default=0) + 1)
    pad = (
        " " if plain.startswith("`") or plain.endswith("`") else ""
    )  # else the fence would run into the text
    return f"{fence}{pad}{plain.replace('|', chr(92) + '|')}{pad}{fence}"


def _num(x: float) -> float | None:
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def as_json(comparison: Comparison) -> dict[str, Any]:
    """The comparison as a JSON document (camelCase keys; null for undefined numbers)."""
    c = comparison

    def change(ch: MetricChange | None) -> dict[str, Any] | None:
        if ch is None:
            return None
        return {"metric": ch.metric, "unit": ch.unit, "baseN": ch.base_n, "newN": ch.new_n, "baseValue": _num(ch.base_value),
                "newValue": _num(ch.new_value), "change": _num(ch.change), "ci": [_num(ch.lower), _num(ch.upper)],
                "pValue": _num(ch.p_value), "pValueAdjusted": _num(ch.p_adjusted), "reason": ch.reason}  # fmt: skip

    def cell(s) -> dict[str, Any]:
        return {
            "model": s.model,
            "mode": s.mode,
            "scenario": s.scenario,
            "base": [s.base_passed, s.base_total],
            "new": [s.new_passed, s.new_total],
        }

    return {
        "base": c.base_id, "new": c.new_id, "outcome": c.outcome, "exitCode": c.exit_code, "confidence": c.confidence,
        "modes": [{"mode": m.mode, "paired": m.paired, "pairing": m.pairing, "baseRows": m.base_rows, "newRows": m.new_rows,
                   "baseErrors": m.base_errors, "newErrors": m.new_errors, "changes": [change(ch) for ch in m.changes]} for m in c.modes],
        "gates": [{"gate": g.gate.text, "metric": g.gate.metric, "mode": g.mode, "outcome": g.outcome, "possibleRegression": _gate_word(g) == POSSIBLE,
                   "why": g.why, "change": change(g.change), "rowsNeeded": _num(g.rows_needed), "margin": _num(g.margin)} for g in c.gates],
        "newlyFailing": [cell(s) for s in c.newly_failing], "newlyPassing": [cell(s) for s in c.newly_passing],
        "onlyInBase": list(c.only_base), "onlyInNew": list(c.only_new), "problems": list(c.problems),
    }  # fmt: skip


__all__ = ["as_json", "cell_lines", "change_rows", "markdown", "print_terminal"]
