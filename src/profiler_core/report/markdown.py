"""``report.md`` and ``analysis.md``: Markdown of a ``view.ReportView`` /
``view.AnalysisView`` (formatting only)."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from . import format as fmt
from .view import (
    AnalysisView,
    AnalyzerView,
    ComparisonView,
    ListFinding,
    ReportView,
    ScenarioView,
    Table,
    TableFinding,
)

#: What can start Markdown markup or raw HTML inside a line: backslash, code, emphasis, raw HTML and
#: autolinks, table pipes, strike-through, an inline link's "](", and "_" at a word's edge (inside a
#: word, as in with_tool, CommonMark does not read it as emphasis, so it stays readable).
_MARKUP = re.compile(r"([\\`*<>|~]|\](?=\()|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def md(value: Any) -> str:
    """Text shown as written by a Markdown renderer: markup characters and raw HTML are
    escaped, one line."""
    return _MARKUP.sub(r"\\\1", str(value)).replace("\n", " ").replace("\r", " ")


def cell(value: Any) -> str:
    """Text safe inside a Markdown table cell (names, messages: nothing in a cell is markup)."""
    return md(value)


def table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], align: str = ""
) -> list[str]:
    """A Markdown table; ``align`` is one letter per column (l/r/c), default left then right."""
    align = align or "l" + "r" * (len(header) - 1)
    seps = [{"r": "---:", "c": ":---:"}.get(a, "---") for a in align]
    lines = [
        "| " + " | ".join(cell(h) for h in header) + " |",
        "| " + " | ".join(seps) + " |",
    ]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _table(t: Table, align: str = "") -> list[str]:
    return table(t.header, t.rows, align)


#: The modes table's metric columns, in this order (those the run reported).
MODE_METRICS = ("tokens_total", "latency_wall_ms", "cost_total_usd", "tool_calls_total")

#: An error message in a table is cut to this many characters (data/results.csv has all of it).
MESSAGE_CHARS = 200

FILES = [
    "## Files",
    "",
    "| File | What |",
    "| --- | --- |",
    "| [report.html](report.html) | This report with charts (one self-contained file) |",
    "| [analysis.md](analysis.md) | Analyzer findings compared across modes |",
    "| [data/results.csv](data/results.csv) | One line per row, flat columns, "
    "extensions as `extensions.<name>` |",
    "| [data/results.json](data/results.json) | All rows (JSON array of ProfileRow objects) |",
    "| [data/summary.json](data/summary.json) | Descriptive statistics per "
    "mode × scenario × metric, and the comparisons |",
    "",
]


def render_report(view: ReportView) -> str:
    """The Markdown report."""
    h = view.headline
    lines: list[str] = [f"# Report: {md(h.run_id)}", ""]
    lines += [
        f"{fmt.count(h.rows, 'row')} · {fmt.count(h.modes, 'mode')} · "
        f"{fmt.count(h.scenarios, 'scenario')} · baseline **{md(h.baseline)}** "
        f"· confidence {h.confidence:.0%}",
        "",
    ]
    lines += _verdict(view)
    lines += _sequential(view)
    lines += ["## Run", "", *_table(view.run, "ll")]
    lines += _modes(view)
    for comp in view.comparisons:
        lines += _comparison(comp)
    if view.omitted:
        lines += [
            f"Metrics with one value in every row (not compared): {md(', '.join(view.omitted))}.",
            "",
        ]
    lines += ["## Scenarios", ""]
    for j, scen in enumerate(view.scenarios):
        lines += _scenario(view, j, scen)
    lines += _checkpoints(view)
    lines += _errors(view)
    lines += _plugin_sections(view)
    lines += _artifacts(view)
    if view.problems:
        lines += [
            "## Data problems",
            "",
            "Lines of the results file that could not be read (skipped):",
            "",
        ]
        lines += [f"- {cell(p)}" for p in view.problems] + [""]
    return "\n".join(lines + FILES)


def _plugin_sections(view: ReportView) -> list[str]:
    """The plugins' sections: their Markdown as written, their tables escaped cell by cell."""
    lines: list[str] = []
    for shown in view.sections:
        if shown.section is None:
            lines += [
                f"## Plugin {md(shown.plugin)}",
                "",
                f"**Error:** {md(shown.warning)}",
                "",
            ]
            continue
        section = shown.section
        lines += [
            f"## {md(section.title)}",
            "",
            f"*From plugin {md(shown.plugin)}.*",
            "",
        ]
        if section.text.strip():
            lines += [section.text.strip(), ""]
        if section.header:
            lines += table(section.header, section.rows, "l" * len(section.header))
    return lines


def _artifacts(view: ReportView) -> list[str]:
    """The trials' artifacts (``/logs/artifacts`` and the task's declared ones), linked, by cell."""
    if not view.artifacts:
        return []
    lines = ["## Artifacts", ""]
    for label, files in view.artifacts:
        # the names are the agent's: the link's target is percent-encoded, its text escaped
        links = ", ".join(f"[{md(f.split('/', 3)[-1])}]({quote(f)})" for f in files)
        lines.append(f"- **{md(label)}**: {links}")
    return [*lines, ""]


def _verdict(view: ReportView) -> list[str]:
    v = view.verdict
    lines = ["## Verdict", ""]
    if v.errors:
        lines += [f"**⚠ {v.errors}.**", ""]
    if v.stop_headline is not None:
        lines += [f"**{md(v.stop_headline)}.**", ""]
    if not v.compared:
        return lines + ["Only one mode: nothing to compare.", ""]
    lines += table(
        ["Criterion", "Best mode"], [(w.criterion, w.text) for w in v.winners], "ll"
    )
    for f in v.findings:
        mark = {1: "✅", -1: "❌"}.get(f.better, "➖")
        lines.append(f"- {mark} **{f.criterion}:** {md(f.text)}")
    return lines + [""]


def _sequential(view: ReportView) -> list[str]:
    if view.verdict.stop_table is None:
        return []
    return [
        "## Sequential decisions",
        "",
        *_table(view.verdict.stop_table, "lllrrrl"),
        "Each interval is an exact anytime-valid confidence sequence, valid "
        "although the run looked after every round: "
        "of the mean paired difference (mode − baseline) for success; for "
        "cost, time and the other unbounded metrics of "
        "each pair's (a − b) / (a + b), shown as a ratio of the baseline's "
        "mean (the typical pair, not the total). "
        "The run's error is shared by all of them; a comparison is decided when it excludes 0 "
        'or lies inside the margin. See docs/statistics.md, "Sequential stopping".',
        "",
    ]


def _modes(view: ReportView) -> list[str]:
    k = view.k
    # With one repetition pass@1, pass@k and pass^k are one number: show it once.
    header = (
        ["Mode", "Rows", "Success [95% CI]"]
        + (["Mean reward"] if view.has_reward else [])
        + ["pass@1"]
    )
    header += [f"pass@{k}", f"pass^{k}"] if k > 1 else []
    main = [
        metric for name in MODE_METRICS if (metric := view.metric(name)) is not None
    ]
    header += [f"{m.label} median" for m in main] + ["Errors"]
    rows: list[list[Any]] = []
    for mode in view.modes:
        success = (
            "–"
            if mode.trials == 0
            else f"{mode.rate} [{mode.lower}, {mode.upper}] ({mode.successes}/{mode.trials})"
        )
        row: list[Any] = [
            f"{mode.name} (baseline)" if mode.baseline else mode.name,
            mode.rows,
            success,
        ]
        row += [mode.reward] if view.has_reward else []
        row.append(mode.pass_at_1)
        if k > 1:
            row += [mode.pass_at_k, mode.pass_hat_k]
        rows.append(row + [m.overall_medians[mode.index] for m in main] + [mode.errors])
    return [
        "## Modes",
        "",
        *table(header, rows),
        "pass@k: chance that at least one of k runs of a scenario succeeds; "
        "pass^k: that all k succeed "
        f"(k = {k} = repetitions per scenario), averaged over scenarios. "
        "Success intervals are Wilson score intervals.",
        "",
    ]


def _comparison(comp: ComparisonView) -> list[str]:
    mode, base, sc = md(comp.mode), md(comp.baseline), comp.success
    lines = [f"## Comparison: {mode} vs {base}", ""]
    lines += [
        f"_{md(comp.pairing)}._ Reduction = (1 − median({mode}) / "
        f"median({base})) × 100: positive means {mode} is lower.",
        "",
        f"Success: {sc.rate} vs {sc.baseline_rate} ({sc.difference}, 95% CI "
        f"{sc.ci_low} to {sc.ci_high}, p {sc.p})"
        + (" **significant**" if sc.significant else ""),
        "",
    ]
    rows = [
        [r.label, r.baseline_median, r.mode_median, r.reduction, r.ci, r.effect, r.p, r.p_holm,
         {1: "✅ better", -1: "❌ worse"}.get(r.verdict, "✔ different" if r.significant else "")]
        for r in comp.rows
    ]  # fmt: skip
    header = ["Metric", f"{comp.baseline} median", f"{comp.mode} median", "Reduction", "95% CI",
              "Cohen's d (mode − baseline)", "p", "p (Holm)", "Significant"]  # fmt: skip
    lines += table(header, rows, "lrrrrrrrl")
    if comp.large_sample:
        lines.append(
            "_Large-sample method: the 95% CI resamples each mode "
            "independently (10,000 bootstrap resamples of the "
            "median); the p-value is the normal approximation of the permutation test"
            + (" (sign flips of the paired differences)" if comp.paired else "")
            + "._"
        )
    else:
        lines.append(
            "_95% CI: percentile bootstrap (10,000 resamples"
            + (", paired cells" if comp.paired else "")
            + "); p: permutation test (10,000 permutations"
            + (", sign flips" if comp.paired else "")
            + ")._"
        )
    return lines + [""]


def _scenario(view: ReportView, j: int, scen: ScenarioView) -> list[str]:
    lines = [f"### {md(scen.name)}", ""]
    parts = []
    for mode, rate, checks in zip(view.modes, scen.success, scen.checks):
        if rate is None:
            continue
        shown = f"checks {checks}" if scen.has_checks else "no checks"
        parts.append(
            f"**{md(mode.name)}** {rate.rate} ({rate.successes}/{rate.trials}), {shown}"
        )
    lines += ["Success: " + " · ".join(parts), ""]
    if scen.outcomes is not None:
        lines += _table(scen.outcomes, "l" + "c" * (len(scen.outcomes.header) - 1))
    header = ["Metric"] + [f"{m} median" for m in view.mode_names] + view.change_header
    rows = [[m.label, *m.medians[j], *m.changes[j]] for m in view.metrics]
    return lines + table(header, rows)


def _checkpoints(view: ReportView) -> list[str]:
    lines = ["## Checkpoints", ""]
    bare = [
        scen
        for scen in view.scenarios
        if not scen.has_checks and scen.checkpoints is None
    ]
    lines += [f"- **{md(scen.name)}**: no checks" for scen in bare] + [""]
    for scen in view.scenarios:
        if scen.checkpoints is not None:
            lines += [f"### {md(scen.name)}", ""]
            lines += _table(scen.checkpoints, "ll" + "r" * len(view.modes))
    if len(bare) == len(view.scenarios):
        lines += ["No scenario has checks.", ""]
    return lines


def _errors(view: ReportView) -> list[str]:
    e = view.errors
    lines = ["## Errors and anomalies", "", *_table(e.reasons)]
    if e.codes is not None:
        lines += _table(e.codes, "lr")
        errored = [
            (r.mode, r.scenario, r.iteration, r.code, r.message[:MESSAGE_CHARS])
            for r in e.rows
        ]
        lines += table(
            ["Mode", "Scenario", "Iteration", "Code", "Error"], errored, "llrll"
        )
        if e.more:
            lines += [
                f"First {len(e.rows)} errors shown; all are in data/results.csv.",
                "",
            ]
    else:
        lines += ["No row carries an error.", ""]
    if e.failed:
        lines += [
            "Rows that failed without an error (the agent ran; its checks did not pass):",
            "",
        ]
        failed = [
            (r.mode, r.scenario, r.iteration, r.checks, r.reward) for r in e.failed
        ]
        lines += table(
            ["Mode", "Scenario", "Iteration", "Failed checks", "Reward"],
            failed,
            "llrlr",
        )
        for r in e.failed:
            if r.verifier_tail:
                lines += [
                    f"Verifier output of {md(r.scenario)} · {md(r.mode)} · "
                    f"iteration {r.iteration} (last lines):",
                    "",
                    *_fenced(r.verifier_tail),
                    "",
                ]
    return lines


# ---------------------------------------------------------------- analysis.md


def render_analysis(view: AnalysisView) -> str:
    """Analyzer findings compared across modes: only findings where the modes differ."""
    lines = ["# Session analysis", ""]
    if not view.sessions:
        lines += [
            f"No session analysis data available (looked for `{view.source}`).",
            "",
        ]
        lines += [f"- {cell(p)}" for p in view.problems]
        return "\n".join(lines) + "\n"
    lines += [
        f"{view.sessions} analysed sessions · modes: "
        f"{md(', '.join(view.modes))}. Only findings that differ between modes "
        "are shown.",
        "",
    ]
    for scen in view.scenarios:
        lines += [f"## {md(scen.name)}", ""]
        for analyzer in scen.analyzers:
            lines += _analyzer(analyzer)
        if not scen.analyzers:
            lines += ["No differences between modes.", ""]
    if view.problems:
        lines += (
            ["## Data problems", ""] + [f"- {cell(p)}" for p in view.problems] + [""]
        )
    return "\n".join(lines) + "\n"


def _analyzer(analyzer: AnalyzerView) -> list[str]:
    lines = [f"### {md(analyzer.name)}", ""]
    if analyzer.scalars is not None:
        lines += _table(analyzer.scalars)
    for detail in analyzer.details:
        lines += ["<details>", f"<summary>{html.escape(detail.key)}</summary>", ""]
        if isinstance(detail, ListFinding):
            lines += [
                f"**{md(m)}:** {cell(', '.join(items) or '–')}"
                + (" …" if more else "")
                + "  "
                for m, items, more in detail.per_mode
            ]
            lines += ["", "</details>", ""]
        else:
            lines += _table_details(detail)
    return lines


def _table_details(detail: TableFinding) -> list[str]:
    lines = []
    for mode, rows in detail.per_mode:
        lines += [f"**{md(mode)}:**", ""]
        lines += _table(rows, "l" * len(rows.rows[0]))
    return lines + ["</details>", ""]


def _fenced(text: str) -> list[str]:
    """A code block that the text cannot close (a fence longer than any run of backticks in it)."""
    run, best = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    fence = "`" * max(3, best + 1)
    return [fence + "text", *text.splitlines(), fence]
