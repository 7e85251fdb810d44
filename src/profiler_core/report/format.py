"""Number formatting shared by the Markdown and HTML reports."""

from __future__ import annotations

import math

#: Units of the built-in metrics (a run manifest's ``metricUnits`` adds the rest).
BUILTIN_UNITS = {
    "tokens_": "tokens",
    "latency_": "ms",
    "cost_": "usd",
    "tool_calls_error_rate": "ratio",
    "tool_calls_": "count",
    "agent_turns": "turns",
    "attempts": "count",
}

#: Human names of the headline metrics.
LABELS = {
    "cost_total_usd": "Cost",
    "cost_input_usd": "Cost (input)",
    "cost_output_usd": "Cost (output)",
    "cost_reasoning_usd": "Cost (reasoning)",
    "latency_wall_ms": "Wall time",
    "tokens_total": "Tokens (total)",
    "tokens_active": "Tokens (active)",
    "tokens_input": "Tokens (input)",
    "tokens_output": "Tokens (output)",
    "tokens_reasoning": "Tokens (reasoning)",
    "tokens_cache_read": "Tokens (cache read)",
    "tokens_cache_write": "Tokens (cache write)",
    "tool_calls_total": "Tool calls",
    "tool_calls_failed": "Failed tool calls",
    "tool_calls_retried": "Retried tool calls",
    "tool_calls_error_rate": "Tool error rate",
    "tool_calls_unique": "Distinct tools",
    "agent_turns": "Agent turns",
    "attempts": "Attempts",
    "reward": "Reward",
}


def builtin_unit(metric: str) -> str:
    """The unit of a built-in metric name, '' when unknown."""
    if metric in BUILTIN_UNITS:
        return BUILTIN_UNITS[metric]
    for prefix, unit in BUILTIN_UNITS.items():
        if prefix.endswith("_") and metric.startswith(prefix):
            return unit
    return ""


def label(metric: str) -> str:
    """A readable name for a metric."""
    if metric in LABELS:
        return LABELS[metric]
    if metric.startswith("tool_calls_category_"):
        return f"Tool calls: {metric.removeprefix('tool_calls_category_')}"
    if metric.startswith("latency_") and metric.endswith("_ms"):
        return f"Latency: {metric.removeprefix('latency_').removesuffix('_ms')}"
    if metric.startswith("reward_"):
        return f"Reward: {metric.removeprefix('reward_')}"
    return metric


def count(n: int | str, noun: str) -> str:
    """``1 mode``, ``2 modes``, ``1,000 rows``: a count (or its text) with its noun,
    plural when it is not one."""
    text = f"{n:,}" if isinstance(n, int) else n
    return f"{text} {noun}{'' if str(n) == '1' else 's'}"


def finite(x: float | None) -> bool:
    """True for a real, finite number."""
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def num(x: float | None, digits: int = 3) -> str:
    """A compact number: thousands as k/M, otherwise ``digits`` significant figures."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    ax = abs(x)
    if ax >= 1e6:
        return f"{x / 1e6:.{max(digits - 1, 1)}g}M".replace("-", "−")
    if ax >= 1e4:
        return f"{x / 1e3:.{digits}g}k".replace("-", "−")
    if ax >= 100 or float(x).is_integer():
        return f"{x:,.0f}".replace("-", "−")
    return f"{x:.{digits}g}".replace("-", "−")


def value(x: float | None, unit: str) -> str:
    """A metric value with its unit: ``$0.0743``, ``23.6 s``, ``25.6k``, ``7.1%``."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return num(x)
    if unit == "usd":
        if abs(x) >= 100:
            return f"${x:,.0f}"
        if abs(x) >= 1:
            return f"${x:,.2f}"
        return f"${x:.4f}" if abs(x) >= 0.0001 or x == 0 else f"${x:.2e}"
    if unit == "ms":
        if abs(x) >= 1000:
            return f"{x / 1000:.1f} s"
        return f"{x:.0f} ms"
    if unit == "ratio":
        return f"{x * 100:.1f}%"
    if unit in ("tokens", "count", "turns", ""):
        return num(x)
    return f"{num(x)} {unit}"


def pct(x: float | None, digits: int = 1, *, signed: bool = True) -> str:
    """A percentage such as ``+12.3%`` (``–`` when undefined)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if math.isinf(x):
        return "+∞%" if x > 0 else "−∞%"
    text = f"{x:+.{digits}f}%" if signed else f"{x:.{digits}f}%"
    return text.replace("-", "−")


def pp(x: float | None) -> str:
    """Percentage points: ``+1.2 pp``."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:+.1f} pp".replace("-", "−")


def rate(x: float | None) -> str:
    """A 0..1 rate as a percentage: ``92.5%``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x * 100:.1f}%"


def p_value(p: float | None) -> str:
    """A p-value: ``0.012``, ``< 0.001``."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "–"
    if p < 0.001:
        return "< 0.001"
    if p < 0.01:
        return f"{p:.3f}"
    return f"{p:.2f}"


def ci(lower: float | None, upper: float | None, fmt=pct) -> str:
    """An interval ``[a, b]`` with the given formatter."""
    if not (finite(lower) or finite(upper)) and (
        lower is None or upper is None or math.isnan(lower) or math.isnan(upper)
    ):
        return "–"
    return f"[{fmt(lower)}, {fmt(upper)}]"


def effect(d: float | None, magnitude: str) -> str:
    """Cohen's d with its magnitude: ``−0.42 (small)``."""
    if d is None or (isinstance(d, float) and math.isnan(d)):
        return "–"
    if math.isinf(d):
        return f"{'+' if d > 0 else '−'}∞ ({magnitude})"
    return f"{d:+.2f} ({magnitude})".replace("-", "−")


def slug(text: str) -> str:
    """An HTML id / Markdown anchor part: lower case, safe characters only."""
    out = []
    for ch in text.lower():
        out.append(ch if ch.isalnum() or ch in "-_" else "-")
    return "".join(out).strip("-") or "x"
