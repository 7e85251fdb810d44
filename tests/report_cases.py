"""Summaries and analysis digests of many shapes, built in memory, for the report renderers' tests.

Each case is rows made with the model classes, read back by the report's own
loader (``load_rows``) and summarised by ``build_summary``, so a renderer sees
what ``write_report`` would give it. The cases cover the edges a report has to
draw: one mode, another baseline, no successes, errors (more than are listed),
a sequential stop, more modes than the charts draw, names full of markup,
ties, a large sample, custom units, and analysis bundles of every finding kind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from profiler_core import (
    CheckpointResult,
    CostBreakdown,
    ProfileRow,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallSummary,
    to_json,
)
from profiler_core.model import StopRecord
from profiler_core.report.analysis import read_analysis
from profiler_core.report.load import load_rows
from profiler_core.report.summary import build_summary

#: A chart per name the HTML page can show: the renderers only place them, so any SVG text will do.
FAKE_CHARTS = {
    name: f'<svg class="chart" data-name="{name}"></svg>'
    for name in (
        "forest",
        "success",
        "dist:cost_total_usd",
        "dist:latency_wall_ms",
        "dist:tokens_total",
        "dist:tool_calls_total",
        "scenarios:cost_total_usd",
    )
}


def row(mode: str, scenario: str, iteration: int, **over: Any) -> ProfileRow:
    """A row whose numbers depend on its cell, so modes and scenarios differ; ``over``
    replaces fields."""
    h = (sum(map(ord, mode)) * 7 + sum(map(ord, scenario)) * 3 + iteration * 11) % 23
    cost = 0.05 + 0.01 * h + 0.002 * iteration
    checks = (
        CheckpointResult(
            id="built", description="it builds | with a pipe", passed=True
        ),
        CheckpointResult(id="tests", description="the *tests* pass", passed=h % 3 != 0),
    )
    fields: dict[str, Any] = {
        "run_id": "run_case",
        "scenario_id": scenario,
        "mode": mode,
        "model": "m1",
        "iteration": iteration,
        "started_at": f"2026-01-01T00:{iteration % 60:02d}:00Z",
        "completed_at": f"2026-01-01T00:{iteration % 60:02d}:30Z",
        "tokens": TokenBreakdown(
            input=1000 + 40 * h, output=200 + iteration, cache_read=10 * h
        ),
        "timing": TimingBreakdown(wall_ms=1000 + 97 * h + iteration),
        "tool_calls": ToolCallSummary(
            total=3 + h % 4, by_category={"file": 2, "shell": 1 + h % 4}
        ),
        "cost": CostBreakdown(
            total_usd=cost, input_usd=cost * 0.6, output_usd=cost * 0.4
        ),
        "success": h % 3 != 0,
        "checkpoints_passed": sum(c.passed for c in checks),
        "checkpoints_total": len(checks),
        "checkpoint_details": checks,
        "provider": "case",
        "session_id": f"s-{mode}-{scenario}-{iteration}",
        "agent_turns": 2 + h % 3,
        "extensions": {"judge_score": 0.3 + 0.02 * h, "label": f"n{h}"},
    }
    fields.update(over)
    return ProfileRow(**fields)


def grid(
    modes, scenarios, repetitions: int, make: Callable[..., dict] | None = None
) -> list[ProfileRow]:
    """Every (mode, scenario, iteration) row; ``make(mode, scenario, i)`` returns the
    fields that differ."""
    return [
        row(m, s, i, **(make(m, s, i) if make else {}))
        for m in modes
        for s in scenarios
        for i in range(repetitions)
    ]


def summary_of(
    tmp: Path,
    name: str,
    rows: list[ProfileRow],
    extra_lines: tuple[str, ...] = (),
    **options: Any,
):
    """Write the rows, read them back and summarise them: (summary, meta, problems) as
    ``write_report`` has them."""
    path = tmp / f"{name}.jsonl"
    path.write_text(
        "".join(to_json(r) + "\n" for r in rows) + "".join(extra_lines),
        encoding="utf-8",
    )
    table = load_rows(path, parallel=False)
    summary = build_summary(table, run_id=name, **options)
    meta = {
        "runId": name,
        "source": str(path),
        "startedAt": min(table.started_at),
        "completedAt": max(table.completed_at),
        "status": "completed",
        "providers": table.categorical["provider"].values,
        "repetitions": options.get("repetitions"),
        "plugins": ["case-plugin 1.0"],
        "rows": table.n,
        "skippedLines": table.skipped,
        "problems": list(table.problems),
    }
    return summary, meta, list(table.problems)


def _errors(m: str, s: str, i: int) -> dict:
    if (
        m == "broken" and i % 4 != 3
    ):  # most rows of one mode errored, more than the report lists
        return {
            "error": f"boom <b>{i}</b>",
            "error_code": f"code_{i % 3}",
            "completion_reason": "error",
            "success": False,
        }
    if m == "slow" and i == 0:
        return {"completion_reason": "timeout", "success": False}
    return {}


def _no_success(m: str, s: str, i: int) -> dict:
    failed = CheckpointResult(id="tests", description="the tests pass", passed=False)
    return {
        "success": False,
        "checkpoint_details": (failed,),
        "checkpoints_passed": 0,
        "checkpoints_total": 1,
    }


def _no_checks(m: str, s: str, i: int) -> dict:
    return (
        {"checkpoint_details": (), "checkpoints_passed": 0, "checkpoints_total": 0}
        if s == "bare"
        else {}
    )


def _tied(m: str, s: str, i: int) -> dict:
    # Both modes have the same numbers, cell by cell: every criterion is a tie.
    return {
        "cost": CostBreakdown(total_usd=0.1 + 0.01 * i),
        "timing": TimingBreakdown(wall_ms=1000 + i),
        "tokens": TokenBreakdown(input=1000 + i, output=100),
        "success": True,
    }


def _all_errored(m: str, s: str, i: int) -> dict:
    return (
        {"error": "dead", "error_code": "dead", "success": False} if m == "dead" else {}
    )


MARKUP_MODES = ("a|b*c_d_", "<script>alert(1)</script>", "[x](javascript:1)")


def summary_cases(tmp: Path) -> dict[str, tuple]:
    """Every case: name -> (summary, meta, problems)."""
    stop = StopRecord(
        reason="decided",
        repetitions=6,
        settings={"metrics": ["cost", "success"], "max_repetitions": 20},
    )
    bad = ('{"runId": "x", "mode": 3}\n', "not json at all\n")
    return {
        "hand": summary_of(tmp, "hand", grid(("base", "fast"), ("s1", "s2"), 6)),
        "other-baseline": summary_of(
            tmp,
            "other",
            grid(("base", "fast", "lean"), ("s1", "s2"), 4),
            baseline="fast",
        ),
        "one-mode": summary_of(tmp, "one", grid(("only",), ("s1", "s2", "s3"), 3)),
        "one-repetition": summary_of(
            tmp, "onerep", grid(("base", "fast", "lean"), ("s1", "s2"), 1)
        ),
        "no-success": summary_of(
            tmp, "nosuccess", grid(("base", "fast"), ("s1",), 5, _no_success)
        ),
        "no-checks": summary_of(
            tmp, "nochecks", grid(("base", "fast"), ("bare", "checked"), 3, _no_checks)
        ),
        "errors": summary_of(
            tmp,
            "errors",
            grid(("base", "broken", "slow"), ("s1", "s2"), 40, _errors),
            extra_lines=bad,
        ),
        "all-errored": summary_of(
            tmp, "dead", grid(("base", "dead"), ("s1",), 4, _all_errored)
        ),
        "tie": summary_of(tmp, "tie", grid(("base", "twin"), ("s1",), 4, _tied)),
        "stopped": summary_of(
            tmp, "stopped", grid(("base", "skill"), ("s1", "s2"), 6), stop=stop
        ),
        "many-modes": summary_of(
            tmp,
            "many",
            grid(
                [f"mode{i:02d}" for i in range(27)],
                [f"scenario-{j}" for j in range(23)],
                1,
            ),
        ),
        "markup": summary_of(
            tmp, "markup", grid(MARKUP_MODES, ("<img src=x>", "s|2"), 3)
        ),
        "large-sample": summary_of(
            tmp, "large", grid(("base", "fast"), ("s1", "s2"), 120)
        ),
        "units": summary_of(
            tmp,
            "units",
            grid(("base", "fast"), ("s1",), 5),
            units={"judge_score": "points"},
            repetitions=3,
        ),
    }


# ---------------------------------------------------------------- analysis


def _bundle(mode: str, scenario: str, i: int) -> dict:
    fast = mode == "fast"
    return {
        "sessionId": f"s-{mode}-{scenario}-{i}",
        "scenarioId": scenario,
        "mode": mode,
        "model": "m1",
        "iteration": i,
        "results": {
            "efficiency": {
                "findings": {
                    "turns": {
                        "type": "number",
                        "value": 3 + i + (2 if fast else 0),
                        "unit": "turns",
                    },
                    "same": {"type": "number", "value": 1, "unit": "x"},
                    "productive": {
                        "type": "ratio",
                        "value": 0.5 + (0.25 if fast else 0),
                    },
                }
            },
            "strategy": {
                "findings": {
                    "approach": {"type": "string", "value": "plan" if fast else "flail"}
                }
            },
            "custom-z": {
                "findings": {
                    "tools": {
                        "type": "list",
                        "values": [f"t{k}" for k in range(60 if fast else 3)],
                    },
                    "files": {
                        "type": "table",
                        "headers": ["path", "edits|n"],
                        "rows": [["a.py", str(i)], ["b<c>.py", "1"]],
                    },
                    "bare": {"type": "table", "rows": [["x", "y", mode]]},
                    "odd": {"type": "mystery"},
                }
            },
            "error": {
                "findings": {"same-list": {"type": "list", "values": ["one", "two"]}}
            },
            "broken": "not a dict",
        },
    }


def analysis_cases(tmp: Path) -> dict[str, tuple]:
    """Every analysis case: name -> (digest, problems, source)."""
    out: dict[str, tuple] = {}
    missing = tmp / "missing.analysis.jsonl"
    out["absent"] = (*read_analysis(missing), str(missing))
    path = tmp / "run.analysis.jsonl"
    lines = [
        json.dumps(_bundle(m, s, i))
        for m in ("base", "fast")
        for s in ("s1", "s_2")
        for i in range(3)
    ]
    same = {
        **_bundle("base", "quiet", 0),
        "results": {"efficiency": {"findings": {"n": {"type": "number", "value": 1}}}},
    }
    lines += [json.dumps(same), json.dumps({**same, "mode": "fast"}), "{broken"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out["present"] = (*read_analysis(path), str(path))
    return out
