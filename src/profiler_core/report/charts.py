"""Charts for report.html, written as inline SVG: one value axis, one row per label.

Every chart of the report has the same shape (rows of a mode, a metric or a
scenario against one horizontal value axis), so a small ``_Plot`` writes the
SVG directly: no plotting library is imported. Drawing the seven charts of a
report this way takes a few milliseconds; matplotlib took ~0.5 s (its import
and its drawing), a third of a 10,000-row report (``bench/run_all.py``).
Text stays text (the page's font), each chart scales with its container
(``viewBox``), and ids are not used, so several charts never clash in a page. Every
coordinate is finite: a missing value is left out, never drawn at ``nan``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import numpy as np

from . import format as fmt
from .summary import MAIN_METRICS, Summary

#: Okabe-Ito colours (colour-blind safe), one per mode, in mode order.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
BETTER, WORSE, NEUTRAL = "#1a7f37", "#cf222e", "#6e7781"
DISTRIBUTION_METRICS = ("cost_total_usd", "latency_wall_ms", "tokens_total", "tool_calls_total")
_MARKERS = ("circle", "square", "diamond", "triangle", "triangle-down", "plus", "cross", "star")

_INK, _MUTED, _GRID, _AXIS = "#24292f", "#57606a", "#d0d7de", "#8c959f"
#: Average width of a character of the 11 px label font (for the left margin).
_CHAR_PX = 6.3


def mode_color(index: int) -> str:
    """The colour of the mode at ``index`` (charts and HTML cards agree)."""
    return PALETTE[index % len(PALETTE)]


def _num(x: float) -> str:
    """A coordinate: short, and never ``nan``."""
    return f"{x:.1f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round tick values (steps of 1, 2 or 5 x 10^k) covering ``[lo, hi]``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(1, target)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    count = math.floor((hi - first) / step + 1e-9) + 1
    return [round(first + i * step, 12) for i in range(count)]


def tick_label(value: float, step: float) -> str:
    """A tick value with as many decimals as its step needs (``1.5k`` for thousands)."""
    if abs(value) >= 10_000 and step >= 1000:
        return f"{value / 1000:g}k"
    decimals = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    return f"{value:,.{min(decimals, 6)}f}"


def _marker(kind: str, x: float, y: float, size: float, colour: str, fill: str) -> str:
    """A marker shape centred on (x, y)."""
    r = size / 2
    style = f'fill="{fill}" stroke="{colour}" stroke-width="1.6"'
    if kind == "circle":
        return f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{_num(r)}" {style}/>'
    if kind == "square":
        return f'<rect x="{_num(x - r)}" y="{_num(y - r)}" width="{_num(size)}" height="{_num(size)}" {style}/>'
    points = {
        "diamond": ((0, -1.2), (1.2, 0), (0, 1.2), (-1.2, 0)),
        "triangle": ((0, -1.2), (1.1, 0.9), (-1.1, 0.9)),
        "triangle-down": ((0, 1.2), (1.1, -0.9), (-1.1, -0.9)),
        "plus": ((-0.4, -1.1), (0.4, -1.1), (0.4, -0.4), (1.1, -0.4), (1.1, 0.4), (0.4, 0.4), (0.4, 1.1),
                 (-0.4, 1.1), (-0.4, 0.4), (-1.1, 0.4), (-1.1, -0.4), (-0.4, -0.4)),
        "cross": ((-1, -0.6), (-0.6, -1), (0, -0.4), (0.6, -1), (1, -0.6), (0.4, 0), (1, 0.6), (0.6, 1),
                  (0, 0.4), (-0.6, 1), (-1, 0.6), (-0.4, 0)),
        "star": ((0, -1.2), (0.3, -0.4), (1.1, -0.4), (0.5, 0.15), (0.7, 1), (0, 0.5), (-0.7, 1), (-0.5, 0.15),
                 (-1.1, -0.4), (-0.3, -0.4)),
    }[kind]  # fmt: skip
    path = " ".join(f"{_num(x + dx * r)},{_num(y + dy * r)}" for dx, dy in points)
    return f'<polygon points="{path}" {style}/>'


class _Plot:
    """One chart: a title, labelled rows, a horizontal value axis with grid lines."""

    def __init__(
        self,
        *,
        title: str,
        aria: str,
        labels: Sequence[str],
        lo: float,
        hi: float,
        xlabel: str,
        width: float = 720,
        row: float = 26,
        right: float = 16,
        legend: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.width = width
        self.row = row
        self.labels = list(labels)
        self.left = min(0.45 * width, 14 + _CHAR_PX * max((len(t) for t in self.labels), default=4))
        self.right = width - right
        self.top = 30.0
        self.bottom = self.top + row * max(1, len(self.labels))
        self.height = self.bottom + 40 + (18 if legend else 0)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo, hi = 0.0, 1.0
        if hi <= lo:
            pad = abs(lo) * 0.1 or 1.0
            lo, hi = lo - pad, hi + pad
        self.lo, self.hi = lo, hi
        self.parts: list[str] = [
            (
                f'<svg class="chart" role="img" aria-label="{escape(aria)}" viewBox="0 0 {_num(width)} {_num(self.height)}"'
                ' xmlns="http://www.w3.org/2000/svg" font-size="11" fill="currentColor">'
            ),
            f'<text x="4" y="16" font-size="12.5" font-weight="bold" fill="{_INK}">{escape(title)}</text>',
        ]
        self._axes(xlabel, legend)

    def x(self, value: float) -> float:
        """The horizontal position of ``value`` (clipped to the plot)."""
        value = min(max(value, self.lo), self.hi)
        return self.left + (value - self.lo) / (self.hi - self.lo) * (self.right - self.left)

    def y(self, index: int) -> float:
        """The vertical centre of row ``index``."""
        return self.top + (index + 0.5) * self.row

    def _axes(self, xlabel: str, legend: Sequence[tuple[str, str]]) -> None:
        add = self.parts.append
        ticks = nice_ticks(self.lo, self.hi)
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
        for value in ticks:
            x = _num(self.x(value))
            add(f'<line x1="{x}" x2="{x}" y1="{_num(self.top)}" y2="{_num(self.bottom)}" stroke="{_GRID}" stroke-width="0.6"/>')
            add(
                f'<text x="{x}" y="{_num(self.bottom + 14)}" text-anchor="middle" fill="{_MUTED}">'
                f"{escape(tick_label(value, step))}</text>"
            )
        add(
            f'<line x1="{_num(self.left)}" x2="{_num(self.right)}" y1="{_num(self.bottom)}" y2="{_num(self.bottom)}"'
            f' stroke="{_AXIS}"/>'
        )
        add(
            f'<line x1="{_num(self.left)}" x2="{_num(self.left)}" y1="{_num(self.top)}" y2="{_num(self.bottom)}"'
            f' stroke="{_AXIS}"/>'
        )
        for i, label in enumerate(self.labels):
            add(
                f'<text x="{_num(self.left - 6)}" y="{_num(self.y(i) + 4)}" text-anchor="end" fill="{_INK}">'
                f"{escape(label)}</text>"
            )
        middle = (self.left + self.right) / 2
        add(f'<text x="{_num(middle)}" y="{_num(self.bottom + 32)}" text-anchor="middle" fill="{_INK}">{escape(xlabel)}</text>')
        x = self.left
        for name, colour in legend:
            y = self.bottom + 50
            add(f'<circle cx="{_num(x + 4)}" cy="{_num(y - 4)}" r="4" fill="{colour}"/>')
            add(f'<text x="{_num(x + 12)}" y="{_num(y)}" fill="{_INK}">{escape(name)}</text>')
            x += 24 + _CHAR_PX * len(name)

    def line(self, x1: float, x2: float, y: float, colour: str, width: float = 2.2, dash: str = "") -> None:
        """A horizontal segment between two values, at height ``y`` (pixels)."""
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<line x1="{_num(self.x(x1))}" x2="{_num(self.x(x2))}" y1="{_num(y)}" y2="{_num(y)}"'
            f' stroke="{colour}" stroke-width="{width}"{extra}/>'
        )

    def vline(self, value: float, y1: float, y2: float, colour: str, width: float = 1.0, dash: str = "") -> None:
        """A vertical segment at ``value`` from ``y1`` to ``y2`` (pixels)."""
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        x = _num(self.x(value))
        self.parts.append(
            f'<line x1="{x}" x2="{x}" y1="{_num(y1)}" y2="{_num(y2)}" stroke="{colour}" stroke-width="{width}"{extra}/>'
        )

    def marker(self, value: float, y: float, colour: str, *, kind: str = "circle", size: float = 8, fill: str = "") -> None:
        """A marker at ``value`` on height ``y`` (filled with ``colour`` unless ``fill`` is given)."""
        self.parts.append(_marker(kind, self.x(value), y, size, colour, fill or colour))

    def text(self, value: float, y: float, text: str, colour: str = _INK, *, dx: float = 4, anchor: str = "start") -> None:
        """A label next to ``value`` on height ``y``."""
        self.parts.append(
            f'<text x="{_num(self.x(value) + dx)}" y="{_num(y + 4)}" text-anchor="{anchor}" font-size="10.5"'
            f' fill="{colour}">{escape(text)}</text>'
        )

    def svg(self) -> str:
        """The finished ``<svg>`` element."""
        return "".join(self.parts) + "</svg>"


def _scale(unit: str) -> tuple[float, str]:
    """Display scale and axis unit: ms are shown in seconds."""
    if unit == "ms":
        return 1e-3, "s"
    if unit == "usd":
        return 1.0, "USD"
    if unit == "ratio":
        return 100.0, "%"
    return 1.0, unit


def _span(values: Sequence[float], *, include_zero: bool = False, pad: float = 0.05) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v)] + ([0.0] if include_zero else [])
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    margin = (hi - lo) * pad or abs(hi) * 0.1 or 1.0
    return lo - margin, hi + margin


def forest(summary: Summary) -> str | None:
    """Reduction vs the baseline with 95% CI for the main metrics, one row per (metric, mode)."""
    metrics = [m for m in MAIN_METRICS if summary.metric(m)]
    comps = summary.comparisons
    if not comps or not metrics:
        return None
    rows = []  # (y label, reduction, lo, hi, colour, marker, significant)
    for metric in metrics:
        for ci, comp in enumerate(comps):
            mc = comp.get(metric)
            if mc is None:
                continue
            r = mc.result
            colour = {1: BETTER, -1: WORSE}.get(mc.verdict, NEUTRAL)
            label = fmt.label(metric) + (f" · {comp.mode}" if len(comps) > 1 else "")
            rows.append(
                (label, r.reduction_pct, r.ci95[0], r.ci95[1], colour, _MARKERS[ci % len(_MARKERS)], mc.significant)
            )
    finite = [v for row in rows for v in row[1:4] if isinstance(v, float) and math.isfinite(v)]
    if not finite:
        return None
    low, high = min(finite + [0.0]), max(finite + [0.0])
    pad = max(2.0, 0.08 * (high - low))
    # Unbounded intervals are clipped to the drawn range (the table gives the numbers).
    span_lo, span_hi = low - pad, high + pad
    plot = _Plot(
        title="Reductions with 95% confidence intervals (filled = significant after Holm)",
        aria="Forest plot of reductions vs the baseline",
        labels=[r[0] for r in rows],
        lo=span_lo,
        hi=span_hi + 0.12 * (span_hi - span_lo),
        xlabel=f"Reduction vs {summary.baseline} (%) — right of 0 = lower than {summary.baseline}",
    )
    plot.vline(0, plot.top, plot.bottom, _MUTED, dash="4 3")
    for i, (_label, red, lo, hi, colour, marker, sig) in enumerate(rows):
        y = plot.y(i)
        if not math.isfinite(red):
            plot.text(0, y, "undefined", NEUTRAL, dx=0, anchor="middle")
            continue
        lo = span_lo if not math.isfinite(lo) else lo
        hi = span_hi if not math.isfinite(hi) else hi
        plot.line(lo, hi, y, colour)
        plot.marker(red, y, colour, kind=marker, size=9, fill=colour if sig else "white")
        plot.text(hi, y, fmt.pct(red), colour)
    return plot.svg()


def distribution(summary: Summary, metric: str) -> str | None:
    """Box per mode: p25–p75 box, median line, p5–p95 whiskers, mean diamond."""
    info = summary.metric(metric)
    if info is None:
        return None
    st = summary.by_mode[metric]
    factor, unit = _scale(info.unit)
    boxes = [
        (mode, mode_color(i), *(float(st[k][i]) * factor for k in ("p5", "p25", "median", "p75", "p95", "mean")))
        for i, mode in enumerate(summary.modes)
        if st["count"][i] > 0
    ]
    if not boxes:
        return None
    lo, hi = _span([v for b in boxes for v in b[2:]])
    plot = _Plot(
        title=f"{info.label} per run",
        aria=f"Distribution of {info.label} per mode",
        labels=[b[0] for b in boxes],
        lo=lo,
        hi=hi,
        xlabel=unit,
        width=420,
        row=30,
    )
    half = plot.row * 0.28
    for i, (_mode, colour, p5, p25, median, p75, p95, mean) in enumerate(boxes):
        y = plot.y(i)
        plot.line(p5, p25, y, _INK, 1.0)
        plot.line(p75, p95, y, _INK, 1.0)
        plot.vline(p5, y - half / 2, y + half / 2, _INK)
        plot.vline(p95, y - half / 2, y + half / 2, _INK)
        x1, x2 = plot.x(p25), plot.x(p75)
        plot.parts.append(
            f'<rect x="{_num(x1)}" y="{_num(y - half)}" width="{_num(max(x2 - x1, 1))}" height="{_num(2 * half)}"'
            f' fill="{colour}" fill-opacity="0.55" stroke="{colour}"/>'
        )
        plot.vline(median, y - half, y + half, _INK, 1.6)
        if math.isfinite(mean):
            plot.marker(mean, y, _INK, kind="diamond", size=6, fill="white")
    return plot.svg()


def success(summary: Summary) -> str | None:
    """Success rate per mode with its Wilson 95% interval, and pass^k."""
    plot = _Plot(
        title="Success rate",
        aria="Success rate per mode with 95% intervals",
        labels=summary.modes,
        lo=0,
        hi=108,
        xlabel=f"% of runs that succeeded (bar: Wilson 95% CI; | = pass^{summary.k})",
        width=420,
        row=30,
    )
    for i, _mode in enumerate(summary.modes):
        r = summary.success_by_mode[i]
        if r.trials == 0:
            continue
        colour, y = mode_color(i), plot.y(i)
        plot.line(r.lower * 100, r.upper * 100, y, colour, 2.4)
        plot.marker(r.rate * 100, y, colour, size=8)
        if not math.isnan(r.pass_hat_k):
            plot.vline(r.pass_hat_k * 100, y - 7, y + 7, _INK, 1.5)
        plot.text(r.upper * 100, y, fmt.rate(r.rate), _INK, dx=6)
    return plot.svg()


def scenario_medians(summary: Summary, metric: str, limit: int = 40) -> str | None:
    """Median of a metric per scenario, one dot per mode (the first ``limit`` scenarios)."""
    info = summary.metric(metric)
    if info is None or len(summary.scenarios) < 2:
        return None
    med = np.asarray(summary.by_scenario[metric]["median"][:, :limit], dtype=float)
    factor, unit = _scale(info.unit)
    names = summary.scenarios[:limit]
    lo, hi = _span((med * factor).ravel().tolist())
    plot = _Plot(
        title=f"Median {info.label.lower()} by scenario",
        aria=f"Median {info.label} per scenario and mode",
        labels=names,
        lo=lo,
        hi=hi,
        xlabel=unit,
        row=18,
        legend=[(mode, mode_color(i)) for i, mode in enumerate(summary.modes)],
    )
    for s in range(len(names)):
        plot.line(plot.lo, plot.hi, plot.y(s), "#eaeef2", 0.6)
    for i, _mode in enumerate(summary.modes):
        for s, value in enumerate(med[i].tolist()):
            if math.isfinite(value):
                plot.marker(value * factor, plot.y(s), mode_color(i), size=7)
    return plot.svg()


def render_all(summary: Summary) -> dict[str, str]:
    """Every chart of the HTML report, by name (missing when there is nothing to draw)."""
    charts: dict[str, str | None] = {"forest": forest(summary), "success": success(summary)}
    for metric in DISTRIBUTION_METRICS:
        charts[f"dist:{metric}"] = distribution(summary, metric)
    charts["scenarios:cost_total_usd"] = scenario_medians(summary, "cost_total_usd")
    return {k: v for k, v in charts.items() if v}
