"""Charts for report.html: matplotlib (object API, SVG canvas) rendered to inline SVG strings.

No pyplot and no global backend switch: figures are drawn on their own SVG
canvas inside ``rc_context``, so the caller's matplotlib state is untouched and
nothing needs closing. Text stays text (``svg.fonttype = none``), which keeps
each chart at a few kilobytes; every chart gets its own id salt so that ids of
several inline SVGs never clash in one page.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..util.arrays import np
from . import format as fmt
from .summary import MAIN_METRICS, Summary

#: Okabe-Ito colours (colour-blind safe), one per mode, in mode order.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)
BETTER, WORSE, NEUTRAL = "#1a7f37", "#cf222e", "#6e7781"
DISTRIBUTION_METRICS = (
    "cost_total_usd",
    "latency_wall_ms",
    "tokens_total",
    "tool_calls_total",
)
#: Above this many modes the charts draw a selection of them (the tables keep every
#: mode): a chart of
#: thousands of modes is unreadable, and drawing it took minutes and megabytes. See docs/reports.md.
CHART_MODE_LIMIT = 24
_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")

_RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#8c959f",
    "axes.labelcolor": "#24292f",
    "xtick.color": "#57606a",
    "ytick.color": "#24292f",
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
}
#: Charts are drawn when some mode has at least this many rows. Below it a box of p5–p95, an
#: interval or a dot per mode shows nothing the tables do not, and the charts would be most of
#: the report's time: ~1.3 s whatever the size (matplotlib's import and five drawings), against
#: ~0.1 s for the rest of a report of a few rows (bench/bench_report_small.py, docs/reports.md).
MIN_CHART_ROWS = 5


def worth_drawing(summary: Summary) -> bool:
    """True when the data is big enough for charts (``MIN_CHART_ROWS`` rows in some mode)."""
    return int(np.max(summary.rows_by_mode, initial=0)) >= MIN_CHART_ROWS


_FONT = re.compile(r"font-family: [^;\"]*")
_GROUP_ID = re.compile(r'(<g) id="[^"]*"')


def mode_color(index: int) -> str:
    """The colour of the mode at ``index`` (charts and HTML cards agree)."""
    return PALETTE[index % len(PALETTE)]


def _svg(fig, name: str, title: str) -> str:
    """Render a figure to an inline-ready ``<svg>``: no prolog, no fixed size, no group ids."""
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buf = io.StringIO()
    with (
        matplotlib.rc_context({**_RC, "svg.hashsalt": f"report-{name}"}),
        warnings.catch_warnings(),
    ):
        # A label the font cannot draw (an emoji, a control character in a mode name) is
        # a box in the
        # chart; matplotlib's warning would print that character, raw, to the terminal.
        warnings.filterwarnings(
            "ignore", message="Glyph .* missing from", category=UserWarning
        )
        FigureCanvasSVG(fig).print_svg(
            buf, metadata={"Date": None, "Creator": None, "Format": None, "Type": None}
        )
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.DOTALL)
    # The page sets the font; matplotlib's long fallback list on every label only adds bytes.
    text = _FONT.sub("font-family: inherit", text)
    text = _GROUP_ID.sub(r"\1", text)
    text = re.sub(
        r'<svg ([^>]*?)width="[^"]*" height="[^"]*"', r"<svg \1", text, count=1
    )
    return text.replace(
        "<svg ", f'<svg class="chart" role="img" aria-label="{_attr(title)}" ', 1
    )


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _figure(
    width: float, height: float, labels: Sequence[str] = (), right: float = 0.25
):
    """A figure with one axes and margins sized for the y labels (no layout engine: it
    doubles the draw time)."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width, height))
        fig.patch.set_alpha(0)
        # ~0.075 in per character of a 9 pt label, plus the tick padding.
        left = min(0.45 * width, 0.2 + 0.075 * max((len(t) for t in labels), default=4))
        fig.subplots_adjust(
            left=left / width,
            right=1 - right / width,
            bottom=0.5 / height,
            top=1 - 0.32 / height,
        )
        return fig, fig.subplots()


def _scale(unit: str) -> tuple[float, str]:
    """Display scale and axis unit: ms are shown in seconds."""
    if unit == "ms":
        return 1e-3, "s"
    if unit == "usd":
        return 1.0, "USD"
    if unit == "ratio":
        return 100.0, "%"
    return 1.0, unit


def chart_modes(summary: Summary, limit: int = CHART_MODE_LIMIT) -> list[str]:
    """The modes the charts draw, in mode order: all of them, or above ``limit`` the
    baseline and the most notable.

    Notable: most significant differences from the baseline (success and the main
    metrics), then the largest reduction on a main metric, then mode order.
    """
    if len(summary.modes) <= limit:
        return list(summary.modes)
    comps = {c.mode: c for c in summary.comparisons}

    def rank(item: tuple[int, str]) -> tuple[int, float, int]:
        index, mode = item
        comp = comps.get(mode)
        if comp is None:
            return (0, 0.0, index)
        found = [mc for m in MAIN_METRICS if (mc := comp.get(m)) is not None]
        significant = sum(mc.significant for mc in found) + int(
            comp.success.significant
        )
        spread = max(
            (
                abs(mc.result.reduction_pct)
                for mc in found
                if math.isfinite(mc.result.reduction_pct)
            ),
            default=0.0,
        )
        return (-significant, -spread, index)

    others = sorted(
        ((i, m) for i, m in enumerate(summary.modes) if m != summary.baseline), key=rank
    )
    chosen = {summary.baseline, *(m for _, m in others[: limit - 1])}
    return [m for m in summary.modes if m in chosen]


def chart_note(summary: Summary, limit: int = CHART_MODE_LIMIT) -> str | None:
    """What the report says when the charts leave modes out (None when they draw every mode)."""
    shown = len(chart_modes(summary, limit))
    if shown == len(summary.modes):
        return None
    return (
        f"The charts show {shown} of {len(summary.modes):,} modes: the baseline "
        f"{summary.baseline} and the "
        f"{shown - 1} that differ most from it (significant differences first, "
        "then the largest reductions). "
        "The tables list every mode."
    )


class _ForestRow(NamedTuple):
    """One (metric, mode) line of the forest plot."""

    label: str
    reduction: float
    lo: float
    hi: float
    colour: str
    marker: str
    significant: bool


def forest(summary: Summary) -> str | None:
    """Reduction vs the baseline with 95% CI for the main metrics, one row per (metric, mode)."""
    import matplotlib

    metrics = [m for m in MAIN_METRICS if summary.metric(m)]
    drawn = set(chart_modes(summary))
    comps = [c for c in summary.comparisons if c.mode in drawn]
    if not comps or not metrics:
        return None
    rows = _forest_rows(metrics, comps)
    span = _forest_span(rows)
    if span is None:
        return None
    with matplotlib.rc_context(_RC):
        fig, ax = _figure(
            10, 0.36 * len(rows) + 0.95, [r.label for r in rows], right=0.1
        )
        for y, row in enumerate(rows):
            _forest_line(ax, y, row, span)
        ax.axvline(0, color="#57606a", lw=1, ls="--")
        ax.set_yticks(range(len(rows)), [r.label for r in rows])
        ax.invert_yaxis()
        span_lo, span_hi = span
        ax.set_xlim(span_lo, span_hi + 0.12 * (span_hi - span_lo))
        ax.set_xlabel(
            f"Reduction vs {summary.baseline} (%) — right of 0 = lower than {summary.baseline}"
        )
        ax.grid(axis="x", color="#d0d7de", lw=0.6)
        ax.set_axisbelow(True)
        ax.set_title(
            "Reductions with 95% confidence intervals (filled = significant after Holm)"
        )
    return _svg(fig, "forest", "Forest plot of reductions vs the baseline")


def _forest_rows(metrics: list[str], comps: list[Any]) -> list[_ForestRow]:
    """One row per metric and mode, the mode named when there are several."""
    rows = []
    for metric in metrics:
        for ci, comp in enumerate(comps):
            mc = comp.get(metric)
            if mc is None:
                continue
            r = mc.result
            label = fmt.label(metric)
            if len(comps) > 1:
                label += f" · {comp.mode}"
            rows.append(
                _ForestRow(
                    label=label,
                    reduction=r.reduction_pct,
                    lo=r.ci95[0],
                    hi=r.ci95[1],
                    colour={1: BETTER, -1: WORSE}.get(mc.verdict, NEUTRAL),
                    marker=_MARKERS[ci % len(_MARKERS)],
                    significant=mc.significant,
                )
            )
    return rows


def _forest_span(rows: list[_ForestRow]) -> tuple[float, float] | None:
    """The x range drawn: every finite value and 0, padded; None when nothing is finite."""
    values = [v for row in rows for v in (row.reduction, row.lo, row.hi)]
    finite = [v for v in values if isinstance(v, float) and math.isfinite(v)]
    if not finite:
        return None
    low, high = min(finite + [0.0]), max(finite + [0.0])
    pad = max(2.0, 0.08 * (high - low))
    return low - pad, high + pad


def _forest_line(ax: Any, y: int, row: _ForestRow, span: tuple[float, float]) -> None:
    """One row: its interval, its point (filled when significant) and its value."""
    if not math.isfinite(row.reduction):
        ax.text(0, y, "undefined", ha="center", va="center", color=NEUTRAL, fontsize=8)
        return
    # Clip unbounded intervals to the drawn range (the table gives the numbers).
    lo = row.lo if math.isfinite(row.lo) else span[0]
    hi = row.hi if math.isfinite(row.hi) else span[1]
    colour = row.colour
    ax.plot([lo, hi], [y, y], color=colour, lw=2.2, solid_capstyle="butt")
    ax.plot(
        [row.reduction],
        [y],
        marker=row.marker,
        ms=7,
        color=colour,
        mfc=colour if row.significant else "white",
        mew=1.6,
    )
    ax.annotate(
        fmt.pct(row.reduction),
        (hi, y),
        xytext=(4, 0),
        textcoords="offset points",
        va="center",
        fontsize=8,
        color=colour,
    )


def distribution(summary: Summary, metric: str) -> str | None:
    """Box per mode: p25–p75 box, median line, p5–p95 whiskers, mean diamond."""
    import matplotlib

    info = summary.metric(metric)
    if info is None:
        return None
    st = summary.by_mode[metric]
    factor, unit = _scale(info.unit)
    boxes, colours = [], []
    drawn = set(chart_modes(summary))
    for i, mode in enumerate(summary.modes):
        if st["count"][i] == 0 or mode not in drawn:
            continue
        boxes.append(
            {
                "label": mode,
                "whislo": st["p5"][i] * factor,
                "q1": st["p25"][i] * factor,
                "med": st["median"][i] * factor,
                "q3": st["p75"][i] * factor,
                "whishi": st["p95"][i] * factor,
                "mean": st["mean"][i] * factor,
                "fliers": [],
            }
        )
        colours.append(mode_color(i))
    if not boxes:
        return None
    with matplotlib.rc_context(_RC):
        fig, ax = _figure(5.6, 0.42 * len(boxes) + 0.95, [b["label"] for b in boxes])
        art = ax.bxp(
            boxes,
            orientation="horizontal",
            showmeans=True,
            showfliers=False,
            patch_artist=True,
            widths=0.55,
            medianprops={"color": "#24292f", "lw": 1.6},
            meanprops={
                "marker": "D",
                "markerfacecolor": "white",
                "markeredgecolor": "#24292f",
                "markersize": 4,
            },
        )
        for patch, colour in zip(art["boxes"], colours, strict=True):
            patch.set_facecolor(colour)
            patch.set_alpha(0.55)
            patch.set_edgecolor(colour)
        ax.invert_yaxis()
        ax.set_xlabel(unit)
        ax.grid(axis="x", color="#d0d7de", lw=0.6)
        ax.set_axisbelow(True)
        ax.set_title(f"{info.label} per run")
    return _svg(
        fig, f"dist-{fmt.slug(metric)}", f"Distribution of {info.label} per mode"
    )


def success(summary: Summary) -> str | None:
    """Success rate per mode with its Wilson 95% interval, and pass^k."""
    import matplotlib

    drawn = chart_modes(summary)
    with matplotlib.rc_context(_RC):
        fig, ax = _figure(5.6, 0.42 * len(drawn) + 0.95, drawn, right=0.1)
        for y, mode in enumerate(drawn):
            i = summary.modes.index(mode)
            r = summary.success_by_mode[i]
            if r.trials == 0:
                continue
            colour = mode_color(i)
            ax.plot(
                [r.lower * 100, r.upper * 100],
                [y, y],
                color=colour,
                lw=2.4,
                solid_capstyle="butt",
            )
            ax.plot([r.rate * 100], [y], "o", color=colour, ms=7)
            if not math.isnan(r.pass_hat_k):
                ax.plot([r.pass_hat_k * 100], [y], "|", color="#24292f", ms=10, mew=1.5)
            ax.annotate(
                fmt.rate(r.rate),
                (r.upper * 100, y),
                xytext=(5, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
        ax.set_yticks(range(len(drawn)), drawn)
        ax.invert_yaxis()
        ax.set_xlim(0, 108)
        ax.set_xlabel(
            f"% of runs that succeeded (bar: Wilson 95% CI; | = pass^{summary.k})"
        )
        ax.grid(axis="x", color="#d0d7de", lw=0.6)
        ax.set_axisbelow(True)
        ax.set_title("Success rate")
    return _svg(fig, "success", "Success rate per mode with 95% intervals")


def scenario_medians(summary: Summary, metric: str, limit: int = 40) -> str | None:
    """Median of a metric per scenario, one dot per mode (the first ``limit`` scenarios)."""
    import matplotlib

    info = summary.metric(metric)
    if info is None or len(summary.scenarios) < 2:
        return None
    med = summary.by_scenario[metric]["median"][:, :limit]
    factor, unit = _scale(info.unit)
    names = summary.scenarios[:limit]
    with matplotlib.rc_context(_RC):
        fig, ax = _figure(10, 0.24 * len(names) + 0.95, names)
        y = np.arange(len(names))
        drawn = chart_modes(summary)
        for i, mode in enumerate(summary.modes):
            if mode in drawn:
                ax.plot(
                    med[i] * factor,
                    y,
                    "o",
                    color=mode_color(i),
                    ms=5,
                    label=mode,
                    alpha=0.9,
                )
        ax.set_yticks(y, names)
        ax.invert_yaxis()
        ax.set_xlabel(unit)
        ax.grid(axis="both", color="#eaeef2", lw=0.6)
        ax.set_axisbelow(True)
        ax.legend(
            loc="lower right", fontsize=8, frameon=False, ncols=min(4, len(drawn))
        )
        ax.set_title(f"Median {info.label.lower()} by scenario")
    return _svg(
        fig, f"scen-{fmt.slug(metric)}", f"Median {info.label} per scenario and mode"
    )


def render_all(summary: Summary) -> dict[str, str]:
    """Every chart of the HTML report, by name (missing when there is nothing to draw)."""
    charts: dict[str, str | None] = {
        "forest": forest(summary),
        "success": success(summary),
    }
    for metric in DISTRIBUTION_METRICS:
        charts[f"dist:{metric}"] = distribution(summary, metric)
    charts["scenarios:cost_total_usd"] = scenario_medians(summary, "cost_total_usd")
    return {k: v for k, v in charts.items() if v}
