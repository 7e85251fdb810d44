"""``data/summary.json``: the summary and the verdict as one JSON document (camelCase
keys, null for undefined numbers)."""

from __future__ import annotations

import math
from typing import Any

from ..util.arrays import np
from .summary import RateSummary, StopView, Summary
from .verdict import error_line, winners


def clean(x: Any) -> Any:
    """JSON-safe value: nan and infinities become null, numpy scalars Python numbers."""
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    return x


_DESCRIPTIVE_FIELDS = (
    "count",
    "mean",
    "median",
    "p90",
    "p95",
    "min",
    "max",
    "iqr",
    "cv",
    "stddev",
    "p5",
    "p25",
    "p75",
)


def _rate_json(r: RateSummary | None) -> dict | None:
    if r is None:
        return None
    return {
        "successes": r.successes,
        "trials": r.trials,
        "rate": r.rate,
        "wilson95": [r.lower, r.upper],
        "passAt1": r.pass_at_1,
        "passAtK": r.pass_at_k,
        "passHatK": r.pass_hat_k,
        "k": r.k,
    }


def _reward_json(summary: Summary, m: int) -> dict[str, Any] | None:
    """The mode's mean reward and how many rows have one; null when no verifier wrote a reward."""
    if (
        summary.reward_rows_by_mode is None
        or summary.reward_by_mode is None
        or not summary.reward_rows_by_mode[m]
    ):
        return None
    return {
        "mean": float(summary.reward_by_mode[m]),
        "rows": int(summary.reward_rows_by_mode[m]),
    }


def summary_json(summary: Summary, meta: dict[str, Any]) -> dict[str, Any]:
    """The ``data/summary.json`` document (camelCase keys, null for undefined numbers)."""
    modes, scenarios = summary.modes, summary.scenarios
    mode_block = {mode: _mode_json(summary, m) for m, mode in enumerate(modes)}
    scenario_block = {
        scen: _scenario_json(summary, s, scen) for s, scen in enumerate(scenarios)
    }
    comparisons = [_comparison_json(c) for c in summary.comparisons]
    doc = {
        "version": 1,
        **meta,
        "baseline": summary.baseline,
        "modes": modes,
        "scenarios": scenarios,
        "models": summary.models,
        "confidence": summary.confidence,
        "k": summary.k,
        "metrics": [
            {
                "name": i.name,
                "label": i.label,
                "unit": i.unit,
                "lowerIsBetter": i.lower_is_better,
                "source": i.source,
            }
            for i in summary.metrics
        ],
        "omittedConstantMetrics": summary.omitted_metrics,
        "modeSummaries": mode_block,
        "scenarioSummaries": scenario_block,
        "comparisons": comparisons,
        "errors": {
            "byCode": summary.error_codes,
            "firstRows": [list(r) for r in summary.error_rows],
        },
        "verdict": _verdict_json(summary),
    }
    if summary.stop is not None:
        doc["stop"] = _stop_json(summary.stop)
    return clean(doc)


def _mode_json(summary: Summary, m: int) -> dict[str, Any]:
    """One mode's rows, rates, errors and descriptive statistics."""
    mode = summary.modes[m]
    return {
        "rows": int(summary.rows_by_mode[m]),
        "success": _rate_json(summary.success_by_mode[m]),
        "reward": _reward_json(summary, m),
        "errors": int(summary.errors_by_mode[m]),
        "completionReasons": summary.reasons_by_mode[mode],
        "metrics": {
            info.name: {
                f: summary.by_mode[info.name][f][m] for f in _DESCRIPTIVE_FIELDS
            }
            for info in summary.metrics
        },
    }


def _scenario_json(summary: Summary, s: int, scen: str) -> dict[str, Any]:
    """One scenario: per mode that ran it, and its checkpoints' counts per mode."""
    no_checks = bool(summary.checks_total[:, s].sum() == 0)
    per_mode = {
        mode: _scenario_mode_json(summary, m, s, no_checks)
        for m, mode in enumerate(summary.modes)
        if summary.rows_by_scenario[m, s] != 0
    }
    checks = [
        {
            "id": cid,
            "description": desc,
            "modes": {
                summary.modes[m]: {"passed": p, "total": t}
                for m, (p, t) in enumerate(counts)
                if t
            },
        }
        for cid, desc, counts in summary.checkpoint_detail.get(scen, [])
    ]
    return {"noChecks": no_checks, "modes": per_mode, "checkpoints": checks}


def _scenario_mode_json(
    summary: Summary, m: int, s: int, no_checks: bool
) -> dict[str, Any]:
    checkpoints = None
    if not no_checks:
        checkpoints = {
            "passed": summary.checks_passed[m, s],
            "total": summary.checks_total[m, s],
        }
    return {
        "rows": int(summary.rows_by_scenario[m, s]),
        "success": _rate_json(summary.success_by_scenario[m][s]),
        "checkpoints": checkpoints,
        "metrics": {
            info.name: {
                f: summary.by_scenario[info.name][f][m, s] for f in _DESCRIPTIVE_FIELDS
            }
            for info in summary.metrics
        },
    }


def _comparison_json(c: Any) -> dict[str, Any]:
    """One mode against the baseline: success rates, then each metric's change."""
    return {
        "mode": c.mode,
        "baseline": c.baseline,
        "paired": c.paired,
        "pairing": c.pairing,
        "success": {
            "rate": c.success.rate_a,
            "baselineRate": c.success.rate_b,
            "differencePp": c.success.difference_pp,
            "ci95Pp": list(c.success.ci95_pp),
            "pValue": c.success.p_value,
            "significant": c.success.significant,
        },
        "metrics": [_metric_change_json(mc) for mc in c.metrics],
    }


def _verdict_word(mc: Any) -> str:
    if mc.verdict == 1:
        return "better"
    if mc.verdict == -1:
        return "worse"
    return "different" if mc.significant else "no difference"


def _metric_change_json(mc: Any) -> dict[str, Any]:
    return {
        "metric": mc.metric,
        "median": mc.median_a,
        "baselineMedian": mc.median_b,
        "reductionPct": mc.result.reduction_pct,
        "ci95": list(mc.result.ci95),
        "effectSize": mc.result.effect_size,
        "effectMagnitude": mc.result.effect_magnitude,
        "pValue": mc.result.p_value,
        "pValueAdjusted": mc.result.p_value_adjusted,
        "significant": mc.significant,
        "verdict": _verdict_word(mc),
        "n": mc.result.n_a,
        "baselineN": mc.result.n_b,
        "method": mc.method,
        "reason": mc.result.reason,
    }


def _stop_json(view: StopView) -> dict[str, Any]:
    """Why the run stopped and every comparison of its stop rule (``summary.json``'s ``stop``)."""
    return {
        "reason": view.record.reason,
        "repetitions": view.record.repetitions,
        "maxRepetitions": view.max_repetitions,
        "baseline": view.baseline,
        "comparisons": [
            {
                "model": c.model,
                "mode": c.mode,
                "metric": c.metric,
                "estimate": c.estimate,
                "lower": c.lower,
                "upper": c.upper,
                "margin": c.margin,
                "pairs": c.pairs,
                "confidence": c.confidence,
                "method": c.method,
                "decision": c.outcome,
                "why": c.why,
            }
            for c in view.comparisons
        ],
    }


def _verdict_json(summary: Summary) -> dict[str, Any]:
    """The verdict's error count and the criteria it refused to judge, with the reason."""
    return {
        "errored": int(summary.errors_by_mode.sum()),
        "errorLine": error_line(summary),
        "noVerdict": {w.criterion: w.text for w in winners(summary) if w.mode is None},
    }
