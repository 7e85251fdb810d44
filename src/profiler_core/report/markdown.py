"""``report.md`` and ``analysis.md``."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import format as fmt
from . import sequential as seq
from .summary import Summary
from .verdict import error_line, findings, winners

if TYPE_CHECKING:
    from .analysis import AnalysisDigest

#: What can start Markdown markup or raw HTML inside a line: backslash, code, emphasis, raw HTML and
#: autolinks, table pipes, strike-through, an inline link's "](", and "_" at a word's edge (inside a
#: word, as in with_tool, CommonMark does not read it as emphasis, so it stays readable).
_MARKUP = re.compile(r"([\\`*<>|~]|\](?=\()|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


def md(value: Any) -> str:
    """Text shown as written by a Markdown renderer: markup characters and raw HTML are escaped, one line."""
    return _MARKUP.sub(r"\\\1", str(value)).replace("\n", " ").replace("\r", " ")


def cell(value: Any) -> str:
    """Text safe inside a Markdown table cell (names, messages: nothing in a cell is markup)."""
    return md(value)


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], align: str = "") -> list[str]:
    """A Markdown table; ``align`` is one letter per column (l/r/c), default left then right."""
    align = align or "l" + "r" * (len(header) - 1)
    seps = [{"r": "---:", "c": ":---:"}.get(a, "---") for a in align]
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "| " + " | ".join(seps) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _rate_text(r) -> str:
    if r is None or r.trials == 0:
        return "–"
    return f"{fmt.rate(r.rate)} [{fmt.rate(r.lower)}, {fmt.rate(r.upper)}] ({r.successes}/{r.trials})"


def render_report(summary: Summary, meta: dict[str, Any], problems: Sequence[str]) -> str:
    """The Markdown report."""
    s = summary
    lines: list[str] = [f"# Report: {md(meta.get('runId'))}", ""]
    lines.append(
        f"{meta.get('rows')} rows · {len(s.modes)} modes · {len(s.scenarios)} scenarios · "
        f"baseline **{md(s.baseline)}** · confidence {s.confidence:.0%}"
    )
    lines.append("")

    lines += ["## Verdict", ""]
    if errors := error_line(s):
        lines += [f"**⚠ {errors}.**", ""]
    if s.stop is not None:
        lines += [f"**{md(seq.headline(s.stop))}.**", ""]
    if s.comparisons:
        lines += table(["Criterion", "Best mode"], [(w.criterion, w.text) for w in winners(s)], "ll")
        for f in findings(s):
            mark = {1: "✅", -1: "❌"}.get(f.better, "➖")
            lines.append(f"- {mark} **{f.criterion}:** {md(f.text)}")
        lines.append("")
    else:
        lines += ["Only one mode: nothing to compare.", ""]

    if s.stop is not None:
        lines += ["## Sequential decisions", ""]
        lines += table(list(seq.TABLE_HEADER), seq.table_rows(s.stop), "lllrrrl")
        lines += [
            "Each interval is an anytime-valid confidence sequence of the mean paired difference (mode − baseline), "
            "valid although the run looked after every round; a comparison is decided when it excludes 0 "
            "or lies inside the margin. See docs/statistics.md, \"Sequential stopping\".",
            "",
        ]

    lines += ["## Run", ""]
    run_rows = [
        ("Run ID", meta.get("runId")),
        ("Started", meta.get("startedAt") or "–"),
        ("Completed", meta.get("completedAt") or "–"),
        ("Status", meta.get("status") or "–"),
        ("Provider", ", ".join(meta.get("providers") or []) or "–"),
        ("Models", ", ".join(s.models)),
        ("Modes", ", ".join(s.modes)),
        ("Scenarios", f"{len(s.scenarios)}: " + ", ".join(s.scenarios[:20]) + (" …" if len(s.scenarios) > 20 else "")),
        ("Repetitions", str(meta.get("repetitions") or s.k)),
        (
            "Rows",
            f"{meta.get('rows')}"
            + (f" ({meta.get('skippedLines')} malformed lines skipped)" if meta.get("skippedLines") else ""),
        ),
        ("Plugins", ", ".join(meta.get("plugins") or []) or "–"),
        ("Source", meta.get("source")),
    ]
    lines += table(["Property", "Value"], run_rows, "ll")

    lines += ["## Modes", ""]
    k = s.k
    # With one repetition pass@1, pass@k and pass^k are one number: show it once.
    header = ["Mode", "Rows", "Success [95% CI]", "pass@1"] + ([f"pass@{k}", f"pass^{k}"] if k > 1 else [])
    main = [m for m in ("tokens_total", "latency_wall_ms", "cost_total_usd", "tool_calls_total") if s.metric(m)]
    header += [f"{fmt.label(m)} median" for m in main] + ["Errors"]
    rows: list[list[Any]] = []
    for i, mode in enumerate(s.modes):
        r = s.success_by_mode[i]
        name = f"{mode} (baseline)" if mode == s.baseline else mode
        row: list[Any] = [
            name,
            int(s.rows_by_mode[i]),
            _rate_text(r),
            fmt.rate(r.pass_at_1),
        ]
        if k > 1:
            row += [fmt.rate(r.pass_at_k), fmt.rate(r.pass_hat_k)]
        row += [fmt.value(s.by_mode[m]["median"][i], s.metric_info(m).unit) for m in main]
        row.append(int(s.errors_by_mode[i]))
        rows.append(row)
    lines += table(header, rows)
    lines.append(
        f"pass@k: chance that at least one of k runs of a scenario succeeds; pass^k: that all k succeed "
        f"(k = {k} = repetitions per scenario), averaged over scenarios. Success intervals are Wilson score intervals."
    )
    lines.append("")

    for comp in s.comparisons:
        lines += [f"## Comparison: {md(comp.mode)} vs {md(comp.baseline)}", ""]
        lines.append(
            f"_{md(comp.pairing)}._ Reduction = (1 − median({md(comp.mode)}) / median({md(comp.baseline)})) × 100: positive means {md(comp.mode)} is lower."
        )
        lines.append("")
        sc = comp.success
        lines.append(
            f"Success: {fmt.rate(sc.rate_a)} vs {fmt.rate(sc.rate_b)} ({fmt.pp(sc.difference_pp)}, 95% CI "
            f"{fmt.pp(sc.ci95_pp[0])} to {fmt.pp(sc.ci95_pp[1])}, p {fmt.p_value(sc.p_value)})"
            + (" **significant**" if sc.significant else "")
        )
        lines.append("")
        rows = []
        for mc in comp.metrics:
            info = s.metric_info(mc.metric)
            res = mc.result
            mark = {1: "✅ better", -1: "❌ worse"}.get(mc.verdict, "✔ different" if mc.significant else "")
            rows.append(
                [
                    info.label,
                    fmt.value(mc.median_b, info.unit),
                    fmt.value(mc.median_a, info.unit),
                    fmt.pct(res.reduction_pct),
                    fmt.ci(*res.ci95),
                    fmt.effect(res.effect_size, res.effect_magnitude),
                    fmt.p_value(res.p_value),
                    fmt.p_value(res.p_value_adjusted),
                    mark,
                ]
            )
        lines += table(
            [
                "Metric",
                f"{comp.baseline} median",
                f"{comp.mode} median",
                "Reduction",
                "95% CI",
                "Cohen's d (mode − baseline)",
                "p",
                "p (Holm)",
                "Significant",
            ],
            rows,
            "lrrrrrrrl",
        )
        methods = {mc.method for mc in comp.metrics}
        if "large-sample" in methods:
            lines.append(
                "_Large-sample method: the 95% CI resamples each mode independently (10,000 bootstrap resamples of the "
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
        lines.append("")
    if s.omitted_metrics:
        lines.append(f"Metrics with one value in every row (not compared): {md(', '.join(s.omitted_metrics))}.")
        lines.append("")

    lines += ["## Scenarios", ""]
    for j, scen in enumerate(s.scenarios):
        lines += [f"### {md(scen)}", ""]
        no_checks = s.checks_total[:, j].sum() == 0
        parts = []
        for i, mode in enumerate(s.modes):
            sr = s.success_by_scenario[i][j]
            if sr is None:
                continue
            checks = (
                "no checks"
                if no_checks
                else (
                    f"checks {fmt.rate(s.checks_passed[i, j] / s.checks_total[i, j]) if s.checks_total[i, j] else '–'}"
                )
            )
            parts.append(f"**{md(mode)}** {fmt.rate(sr.rate)} ({sr.successes}/{sr.trials}), {checks}")
        lines.append("Success: " + " · ".join(parts))
        lines.append("")
        lines += _outcome_table(s, scen)
        header = ["Metric"] + [f"{m} median" for m in s.modes]
        header += [f"{m} vs {s.baseline}" for m in s.modes if m != s.baseline]
        b = s.modes.index(s.baseline)
        rows = []
        for info in s.metrics:
            med = s.by_scenario[info.name]["median"][:, j]
            row = [info.label] + [fmt.value(med[i], info.unit) for i in range(len(s.modes))]
            row += [fmt.pct(_reduction(med[i], med[b])) for i, m in enumerate(s.modes) if m != s.baseline]
            rows.append(row)
        lines += table(header, rows)

    lines += ["## Checkpoints", ""]
    any_checks = False
    for j, scen in enumerate(s.scenarios):
        detail = s.checkpoint_detail.get(scen)
        if s.checks_total[:, j].sum() == 0 and not detail:
            lines.append(f"- **{md(scen)}**: no checks")
            continue
        any_checks = True
    lines.append("")
    for scen in s.scenarios:
        detail = s.checkpoint_detail.get(scen)
        if not detail:
            continue
        lines += [f"### {md(scen)}", ""]
        rows = [
            [cid, desc] + [f"{fmt.rate(p / t)} ({p}/{t})" if t else "–" for p, t in counts]
            for cid, desc, counts in detail
        ]
        lines += table(["Checkpoint", "Description", *s.modes], rows, "ll" + "r" * len(s.modes))
    if not any_checks:
        lines += ["No scenario has checks.", ""]

    lines += ["## Errors and anomalies", ""]
    reasons = sorted({r for m in s.modes for r in s.reasons_by_mode[m]})
    rows = [
        [m] + [s.reasons_by_mode[m].get(r, 0) for r in reasons] + [int(s.errors_by_mode[i])]
        for i, m in enumerate(s.modes)
    ]
    lines += table(["Mode", *(f"completion: {r}" for r in reasons), "rows with an error"], rows)
    if s.error_codes:
        lines += table(["Error code", "Rows"], sorted(s.error_codes.items(), key=lambda kv: -kv[1]), "lr")
        lines += table(
            ["Mode", "Scenario", "Iteration", "Code", "Error"],
            [(m, sc, it, code, msg[:200]) for m, sc, it, code, msg in s.error_rows],
            "llrll",
        )
        if sum(s.error_codes.values()) > len(s.error_rows):
            lines += [f"First {len(s.error_rows)} errors shown; all are in data/results.csv.", ""]
    else:
        lines += ["No row carries an error.", ""]
    if s.failed_rows:
        lines += ["Rows that failed without an error (the agent ran; its checks did not pass):", ""]
        lines += table(["Mode", "Scenario", "Iteration", "Failed checks"], [(m, sc, it, checks or "–") for m, sc, it, checks in s.failed_rows], "llrl")

    if problems:
        lines += ["## Data problems", "", "Lines of the results file that could not be read (skipped):", ""]
        lines += [f"- {cell(p)}" for p in problems] + [""]

    lines += [
        "## Files",
        "",
        "| File | What |",
        "| --- | --- |",
        "| [report.html](report.html) | This report with charts (one self-contained file) |",
        "| [analysis.md](analysis.md) | Analyzer findings compared across modes |",
        "| [data/results.csv](data/results.csv) | One line per row, flat columns, extensions as `extensions.<name>` |",
        "| [data/results.json](data/results.json) | All rows (JSON array of ProfileRow objects) |",
        "| [data/summary.json](data/summary.json) | Descriptive statistics per mode × scenario × metric, and the comparisons |",
        "",
    ]
    return "\n".join(lines)


def _outcome_table(s: Summary, scen: str) -> list[str]:
    """Iteration by iteration, pass / FAIL / error per mode (small runs only)."""
    per_mode = (s.outcomes or {}).get(scen)
    if not per_mode:
        return []
    iterations = sorted({it for cells in per_mode.values() for it, _ in cells})
    by_mode = {m: dict(cells) for m, cells in per_mode.items()}
    rows = [[m] + [by_mode[m].get(it, "–") for it in iterations] for m in s.modes if m in by_mode]
    return table(["Mode", *(f"#{it}" for it in iterations)], rows, "l" + "c" * len(iterations))


def _reduction(a: float, b: float) -> float:
    """Point reduction of medians (1 - a/b) * 100; nan when undefined."""
    if math.isnan(a) or math.isnan(b) or b == 0:
        return math.nan
    return (1 - a / b) * 100


# ---------------------------------------------------------------- analysis.md

#: Analyzer display order (the original's), others follow by name.
ANALYZER_ORDER = ("efficiency", "tool-pattern", "strategy", "reasoning", "error")


def _scalar(kind: str, values: Any, unit: str) -> str:
    """The median of numbers (``array``) or the most frequent string (a ``Counter``, first seen wins a tie)."""
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


def render_analysis(digest: AnalysisDigest, problems: Sequence[str], source: str) -> str:
    """Analyzer findings compared across modes: only findings where the modes differ."""
    lines = ["# Session analysis", ""]
    if not digest.sessions:
        lines += [f"No session analysis data available (looked for `{source}`).", ""]
        lines += [f"- {cell(p)}" for p in problems]
        return "\n".join(lines) + "\n"
    modes = list(digest.modes)
    agg = digest.findings
    lines.append(
        f"{digest.sessions} analysed sessions · modes: {md(', '.join(modes))}. Only findings that differ between modes are shown."
    )
    lines.append("")
    for scen in digest.scenarios:
        lines += [f"## {md(scen)}", ""]
        analyzers = sorted(
            {a for (s_, a, _) in agg if s_ == scen},
            key=lambda a: (ANALYZER_ORDER.index(a) if a in ANALYZER_ORDER else len(ANALYZER_ORDER), a),
        )
        shown = False
        for analyzer in analyzers:
            entries = [(k, e) for (s_, a, k), e in agg.items() if s_ == scen and a == analyzer]
            scalar_rows = []
            blocks: list[str] = []
            for key, e in entries:
                kind = e.kind
                if kind in ("number", "ratio", "string"):
                    cells = [_scalar(kind, e.modes.get(m, ()), e.unit) for m in modes]
                    if len(set(cells)) > 1:
                        scalar_rows.append([key, *cells])
                elif kind == "list":
                    per_mode = {m: list(e.modes.get(m, ())) for m in modes}
                    if len({tuple(sorted(v)) for v in per_mode.values()}) > 1:
                        blocks += ["<details>", f"<summary>{html.escape(key)}</summary>", ""]
                        blocks += [
                            f"**{md(m)}:** {cell(', '.join(v[:50]) or '–')}" + (" …" if len(v) > 50 else "") + "  "
                            for m, v in per_mode.items()
                        ]
                        blocks += ["", "</details>", ""]
                elif kind == "table":
                    per_mode = {m: list(e.modes.get(m, ())) for m in modes}
                    if len({tuple(sorted(v)) for v in per_mode.values()}) > 1:
                        blocks += ["<details>", f"<summary>{html.escape(key)}</summary>", ""]
                        for m, rows in per_mode.items():
                            if not rows:
                                continue
                            blocks += [f"**{md(m)}:**", ""]
                            blocks += table(
                                e.headers or [f"col{i + 1}" for i in range(len(rows[0]))],
                                rows[:50],
                                "l" * len(rows[0]),
                            )
                        blocks += ["</details>", ""]
            if scalar_rows or blocks:
                shown = True
                lines += [f"### {md(analyzer)}", ""]
                if scalar_rows:
                    lines += table(["Finding", *(f"{m} (median)" for m in modes)], scalar_rows)
                lines += blocks
        if not shown:
            lines += ["No differences between modes.", ""]
    if problems:
        lines += ["## Data problems", ""] + [f"- {cell(p)}" for p in problems] + [""]
    return "\n".join(lines) + "\n"
