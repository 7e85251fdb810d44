"""The report of a run that stopped by ``execution.stop``: why it stopped, and its
confidence sequences.

When the manifest carries ``stop``, the report recomputes the stop rule's
intervals from the rows (``profiler_core.runner.stopping``, with the settings the run
recorded, over the rounds it decided on), says why and after how many
repetitions the run stopped, and the verdict's findings on those metrics use
these anytime-valid intervals instead of the fixed-sample p-values (which
would not be valid after looking every round). See docs/reports.md.
"""

from __future__ import annotations

import math

import attrs

from ..model import StopRecord
from ..model.record import Record
from ..runner.stopping import (
    REPORT_METRICS,
    Comparison,
    Observations,
    StopRule,
    settings_from_record,
)
from ..util.arrays import np
from . import format as fmt
from .load import RowTable

#: the verdict's criteria and the stop metric each one is about
CRITERION_METRIC = {
    "Success": "success",
    "Cost": "cost",
    "Speed": "wall_ms",
    "Tokens": "tokens",
}

_REASONS = {
    "decided": "every comparison was decided",
    "max_repetitions": "it reached max_repetitions",
    "budget": "its budget ran out",
}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class StopView(Record):
    """What the report shows of a sequentially stopped run."""

    record: StopRecord
    baseline: str
    max_repetitions: int
    comparisons: tuple[Comparison, ...]
    #: rows of later rounds (in flight when the rule stopped): in the other statistics,
    #: not in the decision
    in_flight: int = 0

    def get(self, mode: str, metric: str) -> list[Comparison]:
        """The comparisons of one mode on one stop metric (one per model)."""
        return [c for c in self.comparisons if c.mode == mode and c.metric == metric]


def stop_view(
    table: RowTable,
    columns: dict[str, np.ndarray],
    modes: list[str],
    record: StopRecord | None,
) -> StopView | None:
    """The stop rule's comparisons recomputed from the table (None when the run had no
    stop rule)."""
    if record is None:
        return None
    settings = settings_from_record(record.settings)
    baseline = settings.baseline if settings.baseline in modes else modes[0]
    rule = StopRule(settings=settings, baseline=baseline, modes=tuple(modes))
    obs = _observations(table, columns, settings.metrics)
    decision = rule.check_observations(obs, rounds=record.repetitions)
    in_flight = int((obs.iteration >= record.repetitions).sum())
    return StopView(
        record=record, baseline=baseline, max_repetitions=settings.max_repetitions, comparisons=decision.comparisons,
        in_flight=in_flight,
    )  # fmt: skip


def _observations(
    table: RowTable, columns: dict[str, np.ndarray], metrics: tuple[str, ...]
) -> Observations:
    """The stop rule's columns from the report's table (the same cost and error handling
    as its comparisons)."""

    def labels(name: str) -> np.ndarray:
        cat = table.categorical[name]
        return (
            np.array(cat.values, dtype=object)[cat.codes]
            if table.n
            else np.array([], dtype=object)
        )

    errored = np.zeros(table.n, dtype=bool)
    errored[np.fromiter(table.errors, dtype=np.int64, count=len(table.errors))] = True
    values = {}
    for metric in metrics:
        if metric == "success":
            values[metric] = table.success.astype(np.float64)
        else:
            values[metric] = columns.get(
                REPORT_METRICS[metric], np.full(table.n, math.nan)
            )
    return Observations(
        model=labels("model"),
        mode=labels("mode"),
        scenario=labels("scenario_id"),
        iteration=table.numeric["iteration"].astype(np.int64),
        errored=errored,
        values=values,
    )


def headline(view: StopView) -> str:
    """One sentence: why the run stopped and after how many repetitions."""
    open_ = sum(1 for c in view.comparisons if not c.decided)
    text = (
        f"Stopped after {view.record.repetitions} of at most {view.max_repetitions} repetitions: "
        f"{_REASONS.get(view.record.reason, view.record.reason)}"
    )
    if open_:
        text += f" ({open_} of {len(view.comparisons)} comparisons undecided)"
    text += (
        " (execution.stop: decided; intervals are anytime-valid confidence sequences"
    )
    if view.comparisons:
        each = view.comparisons[0].confidence
        whole = (1.0 - each) * len(view.comparisons)
        text += (
            f", {whole:.0%} error for the whole run shared by its "
            f"{len(view.comparisons)} intervals"
        )
    text += ")"
    if view.in_flight:
        text += (f"; {view.in_flight} rows of later rounds were in flight when it "
            "stopped: they are in the other "
                 f"statistics, not in the decision")  # fmt: skip
    return text


def amount(c: Comparison, value: float) -> str:
    """A difference in the metric's unit (success in percentage points)."""
    if c.metric == "success":
        return fmt.pp(value * 100)
    unit = fmt.builtin_unit(REPORT_METRICS[c.metric])
    text = fmt.value(abs(value), unit)
    return ("−" if value < 0 else "+") + text if math.isfinite(value) else "–"


def interval(c: Comparison) -> str:
    """The interval of the difference, with its share of the baseline for resource metrics."""
    text = f"{amount(c, c.lower)} to {amount(c, c.upper)}"
    if (
        c.metric != "success"
        and math.isfinite(c.relative(c.lower))
        and math.isfinite(c.relative(c.upper))
    ):
        text += (
            f" ({fmt.pct(c.relative(c.lower))} to {fmt.pct(c.relative(c.upper))} of "
            "the baseline)"
        )
    return text


def decision_text(c: Comparison) -> str:
    """``higher`` / ``lower`` / ``no meaningful difference (within ±margin)`` /
    ``undecided: why``."""
    if c.outcome == "equivalent":
        return f"no meaningful difference (within ±{amount(c, c.margin).lstrip('+')})"
    if c.outcome == "undecided":
        return f"undecided: {c.why}"
    return c.outcome


def sentence(c: Comparison, lower_is_better: bool) -> str:
    """A verdict finding for one model: the mean difference, its sequence and the decision."""
    label = (
        "success rate"
        if c.metric == "success"
        else fmt.label(REPORT_METRICS[c.metric]).lower()
    )
    level = f"{c.confidence:.1%}".replace(".0%", "%")
    # Cost, time, tokens are decided on each pair's (a - b) / (a + b), shown as a ratio
    # times the baseline's mean:
    # the typical pair, not the total (runner/stopping.py; docs/statistics.md).
    what = (
        f"mean {label} difference"
        if c.metric == "success"
        else f"per-pair {label} change (typical pair, not the total)"
    )
    return (
        f"{c.mode} vs {c.baseline}{f' ({c.model})' if c.model else ''}: {what} "
        f"{amount(c, c.estimate)} "
        f"over {c.pairs} pairs; {level} confidence sequence {interval(c)} — {decision_text(c)}"
    )


def judge(c: Comparison, lower_is_better: bool) -> int:
    """+1 when the mode is decidedly better than the baseline, -1 worse, 0 otherwise."""
    if c.outcome not in ("higher", "lower"):
        return 0
    lower = c.outcome == "lower"
    return 1 if lower == lower_is_better else -1


def table_rows(view: StopView) -> list[tuple[str, ...]]:
    """One row per comparison: model, mode, metric, mean difference, interval, margin, decision."""
    return [
        (c.model, f"{c.mode} vs {c.baseline}", c.metric, amount(c, c.estimate), interval(c),
         f"±{amount(c, c.margin).lstrip('+')}", decision_text(c))
        for c in view.comparisons
    ]  # fmt: skip


TABLE_HEADER = (
    "Model",
    "Comparison",
    "Metric",
    "Difference",
    "Confidence sequence",
    "Margin",
    "Decision",
)
