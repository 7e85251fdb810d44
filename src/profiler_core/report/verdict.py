"""The one-minute answer: which mode won on cost, speed, success and tokens, and is it
significant."""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from .. import stats
from ..model.record import Record
from ..util.arrays import np
from . import format as fmt
from . import sequential as seq
from .summary import MetricComparison, Summary

#: (criterion, metric, phrase when the mode is lower, phrase when higher)
CRITERIA = (
    ("Cost", "cost_total_usd", "is {x}% cheaper than", "is {x}% more expensive than"),
    (
        "Speed",
        "latency_wall_ms",
        "takes {x}% less wall time than",
        "takes {x}% more wall time than",
    ),
    (
        "Tokens",
        "tokens_total",
        "uses {x}% fewer tokens than",
        "uses {x}% more tokens than",
    ),
)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Finding(Record):
    """One sentence comparing a mode with the baseline on one criterion."""

    criterion: str
    mode: str
    text: str
    significant: bool
    #: +1 the mode is significantly better than the baseline, -1 worse, 0 no significant difference
    better: int


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Winner(Record):
    """The best mode on one criterion and whether its lead is significant."""

    criterion: str
    mode: str | None
    text: str
    significant: bool


def error_line(summary: Summary) -> str | None:
    """The verdict's first line when any row errored: how many, per mode."""
    total = int(summary.errors_by_mode.sum())
    if not total:
        return None
    parts = ", ".join(
        f"{int(summary.errors_by_mode[i])} of {int(summary.rows_by_mode[i])} {m}"
        for i, m in enumerate(summary.modes)
        if summary.errors_by_mode[i]
    )
    return (
        f"{total} of {int(summary.rows_by_mode.sum())} rows errored ({parts}); "
        "errored rows are left out of every metric comparison"
    )


def refusal(
    summary: Summary, criterion: str, modes: tuple[str, ...], metric: str | None = None
) -> str | None:
    """Why there is no verdict on ``criterion`` between ``modes``, in plain words, or
    None when there is one."""
    for mode in modes:
        i = summary.modes.index(mode)
        errored, rows = int(summary.errors_by_mode[i]), int(summary.rows_by_mode[i])
        if rows and errored * 2 >= rows:
            return f"no verdict on {criterion.lower()}: {errored} of {rows} {mode} rows errored"
        if metric is not None:
            median = summary.by_mode[metric]["median"][i]
            if rows == errored or math.isnan(median):
                return f"no verdict on {criterion.lower()}: nothing ran for {mode}"
    return None


def smallest_p(n_a: int, n_b: int, *, paired: bool) -> tuple[float, bool]:
    """The smallest p-value the permutation test can give at these sizes, and whether it is exact.

    Asked of the stats module itself: perfectly separated samples give the most extreme arrangement.
    """
    a = np.arange(1.0, n_a + 1.0) + (0.0 if paired else n_b)
    b = np.zeros(n_b) if paired else np.arange(1.0, n_b + 1.0)
    result = stats.permutation_test(a, b, paired=paired)
    return result.p_value, result.exact


def method_note(
    mc: MetricComparison, paired: bool, n_metrics: int, confidence: float
) -> str:
    """Which method gave the interval and the p-value, and whether the sample can reach
    significance at all."""
    r = mc.result
    kind = "paired" if paired else "unpaired"
    if mc.method == "large-sample":
        test = "normal approximation of the permutation test"
        floor = None
    else:
        floor, exact = smallest_p(r.n_a, r.n_b, paired=paired)
        name = "sign-flip test" if paired else "permutation test"
        test = f"{'exact' if exact else 'sampled'} {name}"
    note = (
        f"CI: {kind} bootstrap percentile interval of the reduction; "
        f"p: {test}, Holm-adjusted across {n_metrics} metrics"
    )
    alpha = 1 - confidence
    if floor is not None and math.isfinite(floor) and floor > alpha:
        cells = f"{r.n_a} paired cells" if paired else f"{r.n_a} vs {r.n_b} rows"
        note += (
            f". Too few for significance: with {cells} the smallest possible p is {floor:.3g}, "
            f'above {alpha:g}, so "not significant" here says nothing about a difference'
        )
    return note


def stop_findings(
    summary: Summary, mode: str, criterion: str, lower_is_better: bool
) -> Finding | None:
    """The finding from the stop rule's confidence sequences, when the run stopped by
    one and decided on this criterion."""
    view = summary.stop
    if view is None or view.baseline != summary.baseline:
        # compared with another baseline than the stop rule was: the ordinary test
        # applies
        return None
    comps = view.get(mode, seq.CRITERION_METRIC[criterion])
    if not comps:
        return None
    votes = {seq.judge(c, lower_is_better) for c in comps}
    better = votes.pop() if len(votes) == 1 else 0
    significant = all(c.outcome in ("higher", "lower") for c in comps)
    text = "; ".join(seq.sentence(c, lower_is_better) for c in comps)
    return Finding(
        criterion=criterion,
        mode=mode,
        text=text,
        significant=significant,
        better=better,
    )


#: what a finding the stop rule did not decide says after a stopped run
NOT_VALID = "not valid after stopping"


def after_stopping(summary: Summary, finding: Finding) -> Finding:
    """A finding from the ordinary (fixed-sample) test, marked when the run stopped by
    the stop rule.

    The run's length was chosen by looking at its other metrics every round, so a fixed-sample
    p-value on this metric is no longer at its level (simulated: 8.9% false "significant" instead of
    5%); it stays in the report as a description, not a verdict.
    """
    if summary.stop is None:
        return finding
    text = (
        f"{finding.text} — {NOT_VALID}: the stop rule did not decide this, and its "
        "p-value assumes a fixed number of runs"
    )
    return attrs.evolve(finding, text=text, significant=False, better=0)


def _success_finding(summary: Summary, comp) -> Finding:
    """Success of one mode against the baseline: rates, Newcombe's interval, permutation p."""
    base = summary.baseline
    s = comp.success
    diff = s.difference_pp
    why = refusal(summary, "Success", (base, comp.mode))
    if why:
        return Finding(
            criterion="Success", mode=comp.mode, text=why, significant=False, better=0
        )
    if (
        found := stop_findings(summary, comp.mode, "Success", lower_is_better=False)
    ) is not None:
        return found
    if math.isnan(diff):
        text = "success rate undefined"
        better = 0
    else:
        direction = "higher" if diff > 0 else "lower" if diff < 0 else "the same"
        text = (
            f"{comp.mode} succeeded in {fmt.rate(s.rate_a)} of runs vs "
            f"{fmt.rate(s.rate_b)} for {base} "
            f"({abs(diff):.1f} pp {direction}; 95% CI {fmt.pp(s.ci95_pp[0])} to "
            f"{fmt.pp(s.ci95_pp[1])})"
        )
        better = (1 if diff > 0 else -1) if s.significant else 0
    text += f" — {'significant' if s.significant else 'not significant'} (p {_p(s.p_value)})"
    return after_stopping(
        summary,
        Finding(
            criterion="Success",
            mode=comp.mode,
            text=text,
            significant=s.significant,
            better=better,
        ),
    )


def findings(summary: Summary) -> list[Finding]:
    """Per non-baseline mode: cost, speed, success and tokens against the baseline."""
    out: list[Finding] = []
    base = summary.baseline
    for comp in summary.comparisons:
        out.append(_success_finding(summary, comp))
        for criterion, metric, lower_word, higher_word in CRITERIA:
            mc = comp.get(metric)
            info = summary.metric(metric)
            if mc is None or info is None:
                continue
            why = refusal(summary, criterion, (base, comp.mode), metric)
            if why:
                out.append(
                    Finding(
                        criterion=criterion,
                        mode=comp.mode,
                        text=why,
                        significant=False,
                        better=0,
                    )
                )
                continue
            if (
                found := stop_findings(
                    summary, comp.mode, criterion, lower_is_better=True
                )
            ) is not None:
                out.append(found)
                continue
            r = mc.result
            red = r.reduction_pct
            if not math.isfinite(red):
                text = f"{comp.mode} vs {base}: reduction undefined ({r.reason or 'no data'})"
            else:
                phrase = (lower_word if red > 0 else higher_word).format(
                    x=f"{abs(red):.1f}"
                )
                lo, hi = r.ci95
                text = (
                    f"{comp.mode} {phrase} {base} "
                    f"(median {fmt.value(mc.median_a, info.unit)} vs "
                    f"{fmt.value(mc.median_b, info.unit)}; "
                    f"95% CI of the reduction {fmt.pct(lo)} to {fmt.pct(hi)})"
                )
            text += (
                f" — {'significant' if mc.significant else 'not significant'} "
                f"(Holm-adjusted p {_p(r.p_value_adjusted)})"
            )
            text += f" [{method_note(mc, comp.paired, len(comp.metrics), summary.confidence)}]"
            out.append(after_stopping(summary, Finding(criterion=criterion, mode=comp.mode, text=text, significant=mc.significant,
                                                       better=mc.verdict)))  # fmt: skip
    return out


def _p(p: float) -> str:
    text = fmt.p_value(p)
    return text if text.startswith("<") else f"= {text}"


def winners(summary: Summary) -> list[Winner]:
    """The best mode per criterion (lowest median / highest success) and whether it is
    significant."""
    out: list[Winner] = []
    base = summary.baseline
    comps = {c.mode: c for c in summary.comparisons}
    rates = {m: summary.success_by_mode[i].rate for i, m in enumerate(summary.modes)}
    best = max(
        summary.modes, key=lambda m: rates[m] if not math.isnan(rates[m]) else -1
    )
    why = refusal(summary, "Success", tuple(summary.modes))
    tied = _tied(summary.modes, [rates[m] for m in summary.modes], rates[best])
    if why:
        out.append(Winner(criterion="Success", mode=None, text=why, significant=False))
    elif tied:
        out.append(_tie("Success", tied, f"{fmt.rate(rates[best])} success"))
    else:

        def success_judge(c):
            """+1 / -1 / 0: this mode's success significantly (or, stopped sequentially,
            decidedly) higher / lower."""
            vote = _stop_vote(summary, c.mode, "Success", False)
            if vote is not None:
                return vote
            if summary.stop is not None:
                return 0  # not decided by the stop rule: no significance after stopping
            return (
                (1 if c.success.difference_pp > 0 else -1)
                if c.success.significant
                else 0
            )

        out.append(_winner("Success", best, base, comps, success_judge))
    for criterion, metric, _, _ in CRITERIA:
        info = summary.metric(metric)
        if info is None:
            continue
        medians = summary.by_mode[metric]["median"]
        why = refusal(summary, criterion, tuple(summary.modes), metric)
        if why:
            out.append(
                Winner(criterion=criterion, mode=None, text=why, significant=False)
            )
            continue
        best_index = min(
            range(len(summary.modes)),
            key=lambda i: math.inf if math.isnan(medians[i]) else medians[i],
        )
        best = summary.modes[best_index]
        tied = _tied(summary.modes, list(medians), medians[best_index])
        if tied:
            out.append(
                _tie(
                    criterion,
                    tied,
                    f"median {fmt.value(medians[best_index], info.unit)}",
                )
            )
            continue

        def judge(c, metric=metric, criterion=criterion):
            """+1 / -1 / 0: this mode significantly better / worse than the baseline on
            ``metric``."""
            vote = _stop_vote(summary, c.mode, criterion, True)
            if vote is not None:
                return vote
            if summary.stop is not None:
                return 0  # not decided by the stop rule: no significance after stopping
            mc = c.get(metric)
            return 0 if mc is None else mc.verdict

        out.append(_winner(criterion, best, base, comps, judge))
    return [_winner_after_stopping(summary, w, comps) for w in out]


def _winner_after_stopping(summary: Summary, winner: Winner, comps: dict) -> Winner:
    """A winner line on a criterion the stop rule did not decide, marked as such after a
    stopped run."""
    if summary.stop is None or winner.mode is None or not comps:
        return winner
    lower_is_better = winner.criterion != "Success"
    if all(
        stop_findings(summary, mode, winner.criterion, lower_is_better) is not None
        for mode in comps
    ):
        return winner
    return attrs.evolve(winner, text=f"{winner.text} ({NOT_VALID})", significant=False)


def _stop_vote(
    summary: Summary, mode: str, criterion: str, lower_is_better: bool
) -> int | None:
    """The stop rule's +1 / -1 / 0 on a criterion, or None when the run did not decide
    it sequentially."""
    found = stop_findings(summary, mode, criterion, lower_is_better)
    return None if found is None else found.better


def _tied(modes: list[str], values: list[float], best: float) -> list[str]:
    """The modes sharing the best value when more than one does (a tie), else []."""
    if math.isnan(best):
        return []
    tied = [
        m
        for m, v in zip(modes, values)
        if not math.isnan(v) and math.isclose(v, best, rel_tol=1e-12, abs_tol=0.0)
    ]
    return tied if len(tied) > 1 else []


def _tie(criterion: str, modes: list[str], value: str) -> Winner:
    """No best mode: several share the best value, so none is named the winner."""
    names = (
        f"{', '.join(modes[:-1])} and {modes[-1]}"
        if len(modes) <= 4
        else f"{len(modes)} modes"
    )
    return Winner(
        criterion=criterion,
        mode=None,
        text=f"tie: {names} — the same {value}; no mode is best",
        significant=False,
    )


def _winner(criterion, best, base, comps, judge) -> Winner:
    """Is ``best`` significantly better than the baseline (or, for the baseline, than
    every other mode)?

    ``judge(comparison)`` is +1 when that mode is significantly better than the
    baseline, -1 worse, 0 neither.
    """
    if not comps:
        return Winner(
            criterion=criterion,
            mode=best,
            text=f"{best} (only one mode)",
            significant=False,
        )
    if best == base:
        significant = all(judge(c) == -1 for c in comps.values())
        text = f"{best} (baseline)" + (
            " — every other mode is significantly worse"
            if significant
            else " — not significantly better than every other mode"
        )
    else:
        significant = judge(comps[best]) == 1
        text = f"{best}" + (
            f" — significantly better than {base}"
            if significant
            else f" — not significantly different from {base}"
        )
    return Winner(criterion=criterion, mode=best, text=text, significant=significant)


def verdict_lines(summary: Summary) -> list[str]:
    """The verdict as plain text lines: the best mode per criterion, then every finding
    (+ better, - worse, = no difference)."""
    stop = seq.headline(summary.stop) if summary.stop is not None else None
    if not summary.comparisons:
        return verdict_text(error_line(summary), stop, False, (), ())
    return verdict_text(
        error_line(summary), stop, True, winners(summary), findings(summary)
    )


def verdict_text(
    errors: str | None,
    stop: str | None,
    compared: bool,
    best: Sequence[Winner],
    found: Sequence[Finding],
) -> list[str]:
    """The verdict's parts (``error_line``, the stop headline, ``winners``,
    ``findings``) as plain text lines."""
    head = [f"! {errors}"] if errors else []
    if stop is not None:
        head.append(stop)
    if not compared:
        return [*head, "Only one mode: nothing to compare."]
    lines = head + [f"{w.criterion}: {w.text}" for w in best]
    lines += [
        f"{ {1: '+', -1: '-'}.get(f.better, '=') } {f.criterion}: {f.text}"
        for f in found
    ]
    return lines
