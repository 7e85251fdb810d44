"""Runs written straight to disk, with the files a real run leaves: rows, manifest,
analysis, trace store, report.

The rows, traces and findings are built from the model classes and written with
the project's own writers (``to_json``, ``record_json``, ``write_manifest``,
``write_report``), so what the viewer, ``compare`` and ``export`` read is what a
run writes; the tests choose every outcome and number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from profiler_core import (
    AnalysisResult,
    CheckpointResult,
    CostBreakdown,
    NumberFinding,
    ProfileRow,
    ReasoningEvent,
    SessionAnalysisBundle,
    SessionTrace,
    StringFinding,
    TextOutputEvent,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    ToolCallSummary,
    TraceSummary,
    Turn,
    TurnBoundaryEvent,
    to_json,
)
from profiler_core.model import WorkspaceReport
from profiler_core.model.run import RunCounts, RunManifest
from profiler_core.storage.store import write_manifest
from profiler_core.storage.tracestore import TraceRecord, record_json

#: What a tool call of a failed session printed: markup that must show as text, never run.
HOSTILE_OUTPUT = "</pre><script>window.__pwned = 1</script><b>not bold</b>"
HOSTILE_ERROR = "<img src=x onerror=\"window.__pwned=2\"> boom & 'quotes'"


@attrs.frozen(kw_only=True)
class Cell:
    """One iteration's outcome and numbers, as a test wants them."""

    mode: str
    scenario: str
    iteration: int
    model: str = "m1"
    outcome: str = "pass"  # "pass", "fail" or "error"
    cost: float = 0.01
    wall_ms: float = 1000.0
    tokens: int = 1000
    completion_reason: str = "stop"
    #: the verifiers' reward, its named sub-rewards (``reward_<name>`` extensions) and
    #: output (a ``verify:tests`` check)
    reward: float | None = None
    sub_rewards: tuple[tuple[str, float], ...] = ()
    verifier_output: str | None = None
    #: more extensions of the row (e.g. ``cost_source``)
    extensions: tuple[tuple[str, object], ...] = ()


def trace_of(cell: Cell) -> SessionTrace:
    """A two-turn trace: reasoning, a tool call (failed, with hostile output, when the
    cell failed), text."""
    ok = cell.outcome == "pass"
    output = (
        f"all {cell.scenario} tests passed"
        if ok
        else HOSTILE_OUTPUT + "\n" + "long line of output\n" * 40
    )
    first = (
        ReasoningEvent(
            content=f"Plan for {cell.scenario}", duration_ms=120, token_count=30
        ),
        ToolCallEvent(
            name="bash",
            input={"command": "pytest -q"},
            output=output,
            duration_ms=250.5,
            success=ok,
            error=None if ok else "exit 1",
        ),
        TurnBoundaryEvent(turn_number=1, timestamp="2026-01-01T00:00:01Z"),
    )
    second = (
        ToolCallEvent(
            name="read_file",
            input={"path": "src/app.py"},
            output="print('hi')",
            duration_ms=12,
            success=True,
        ),
        TextOutputEvent(content="Done." if ok else "Gave up.", token_count=7),
        TurnBoundaryEvent(turn_number=2, timestamp="2026-01-01T00:00:02Z"),
    )
    turns = (
        Turn(
            number=1,
            events=first[:-1],
            start_timestamp="2026-01-01T00:00:00Z",
            end_timestamp="2026-01-01T00:00:01Z",
            duration_ms=1000,
        ),
        Turn(
            number=2,
            events=second[:-1],
            start_timestamp="2026-01-01T00:00:01Z",
            end_timestamp="2026-01-01T00:00:02Z",
            duration_ms=800,
        ),
    )
    return SessionTrace(
        session_id=f"s-{cell.mode}-{cell.scenario}-{cell.iteration}",
        events=first + second,
        turns=turns,
        summary=TraceSummary(
            total_turns=2,
            total_tool_calls=2,
            total_tokens=TokenBreakdown(output=cell.tokens),
            total_duration=cell.wall_ms,
        ),
        # a passed session changed the code; a failed one left the workspace as it was
        workspace=WorkspaceReport(
            diff_stat=f" src/{cell.scenario}.py | 3 ++-\n 1 file changed" if ok else ""
        ),
    )


def row_of(run_id: str, cell: Cell) -> ProfileRow:
    """The row of one cell: its outcome, numbers, two tool calls and two checks."""
    ok = cell.outcome == "pass"
    records = (
        ToolCallRecord(
            name="bash",
            category="shell",
            success=ok,
            duration_ms=250.5,
            error=None if ok else "exit 1",
        ),
        ToolCallRecord(name="read_file", category="file", success=True, duration_ms=12),
    )
    checks = (
        CheckpointResult(
            id="tests-pass",
            description="the tests pass",
            passed=ok,
            actual="1 failed" if not ok else "3 passed",
            expected="/passed/",
        ),
        CheckpointResult(
            id="said-done",
            description="it says it finished",
            passed=ok,
            actual="Done." if ok else "Gave up.",
            expected="Done.",
        ),
    )
    if cell.verifier_output is not None:
        checks += (
            CheckpointResult(
                id="verify:tests",
                description="bash /tests/test.sh",
                passed=ok,
                actual=cell.verifier_output,
                expected="reward 1",
            ),
        )
    extensions = {
        **{f"reward_{k}": v for k, v in cell.sub_rewards},
        **dict(cell.extensions),
    }
    return ProfileRow(
        reward=cell.reward, extensions=extensions,
        run_id=run_id, scenario_id=cell.scenario, mode=cell.mode, model=cell.model, iteration=cell.iteration,
        started_at="2026-01-01T00:00:00Z", completed_at="2026-01-01T00:00:02Z",
        tokens=TokenBreakdown(input=cell.tokens // 2, output=cell.tokens - cell.tokens // 2),
        timing=TimingBreakdown(wall_ms=cell.wall_ms), tool_calls=ToolCallSummary.from_records(records),
        cost=CostBreakdown(total_usd=cell.cost, input_usd=cell.cost / 2, output_usd=cell.cost / 2), success=ok,
        checkpoints_passed=len(checks) if ok else 0, checkpoints_total=len(checks), checkpoint_details=checks, provider="synthetic",
        session_id=f"s-{cell.mode}-{cell.scenario}-{cell.iteration}", agent_turns=2,
        completion_reason="error" if cell.outcome == "error" else cell.completion_reason,
        error=HOSTILE_ERROR if cell.outcome == "error" else None, error_code="provider_error" if cell.outcome == "error" else None,
    )  # fmt: skip


def bundle_of(cell: Cell) -> SessionAnalysisBundle:
    """Two analyzers' findings of one cell."""
    return SessionAnalysisBundle(
        session_id=f"s-{cell.mode}-{cell.scenario}-{cell.iteration}", scenario_id=cell.scenario, mode=cell.mode,
        model=cell.model, iteration=cell.iteration,
        results={
            "efficiency": AnalysisResult(analyzer="efficiency", findings={"total_turns": NumberFinding(value=2, unit="turns")}, summary="2/2 productive turns"),
            "strategy": AnalysisResult(analyzer="strategy", findings={"approach": StringFinding(value="test-first" if cell.outcome == "pass" else "flailing")}),
        },
    )  # fmt: skip


def grid(
    modes: Sequence[str],
    scenarios: Sequence[str],
    repetitions: int,
    make: Callable[[str, str, int], dict] | None = None,
) -> list[Cell]:
    """Every (mode, scenario, iteration) cell; ``make`` returns the fields that differ
    from the defaults."""
    return [
        Cell(
            mode=mode,
            scenario=scenario,
            iteration=i,
            **(make(mode, scenario, i) if make else {}),
        )
        for mode in modes
        for scenario in scenarios
        for i in range(repetitions)
    ]


def write_run(
    root: Path,
    run_id: str,
    cells: Sequence[Cell],
    *,
    report: bool = True,
    started_at: str = "2026-01-01T00:00:00Z",
) -> Path:
    """Write a run's files under ``root/results`` and ``root/reports/<run_id>``; the
    results file."""
    results, report_dir = root / "results", root / "reports" / run_id
    sessions = report_dir / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    results.mkdir(parents=True, exist_ok=True)
    rows_path = results / f"{run_id}.jsonl"
    with open(rows_path, "w", encoding="utf-8") as rows, open(sessions / "traces.jsonl", "w", encoding="utf-8") as traces, \
            open(results / f"{run_id}.analysis.jsonl", "w", encoding="utf-8") as analysis:  # fmt: skip
        for cell in cells:
            rows.write(to_json(row_of(run_id, cell)) + "\n")
            record = TraceRecord(
                scenario_id=cell.scenario,
                mode=cell.mode,
                model=cell.model,
                iteration=cell.iteration,
                trace=trace_of(cell),
            )
            traces.write(record_json(record) + "\n")
            analysis.write(to_json(bundle_of(cell)) + "\n")
    modes = list(dict.fromkeys(c.mode for c in cells))
    manifest = RunManifest(
        run_id=run_id, profile_hash="sha256:0", profile_path=str(root / "profile.yaml"), started_at=started_at,
        completed_at=started_at, status="completed",
        counts=RunCounts(expected=len(cells), completed=len(cells), errored=sum(c.outcome == "error" for c in cells),
                         succeeded=sum(c.outcome == "pass" for c in cells)),
        provider="synthetic", models=tuple(dict.fromkeys(c.model for c in cells)), modes=tuple(modes),
        scenarios=tuple(dict.fromkeys(c.scenario for c in cells)), repetitions=max(c.iteration for c in cells) + 1,
        sessions_dir=str(sessions), trace_store=str(sessions / "traces.jsonl"),
    )  # fmt: skip
    write_manifest(results / f"{run_id}.manifest.json", manifest)
    if report:
        from profiler_core.report import write_report

        write_report(rows_path, report_dir, parallel=False)
    return rows_path
