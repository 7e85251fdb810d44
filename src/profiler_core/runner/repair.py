"""What resume repairs beyond a torn last line: analyses lost between a row and its analysis.

A run killed after appending a cell's trace and row but before its analysis
bundle leaves a cell that resume counts as done, with no analysis. Resume
finds such cells (a row, a trace in the store, no bundle) and runs the
analyzers on their stored traces, so the report's analysis is whole.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..model import AnalysisResult, ProfileRow, Scenario, SessionAnalysisBundle
from ..storage.store import RowWriter, RunPaths, read_jsonl
from ..storage.tracestore import iter_latest
from ..util.asyncs import await_me_maybe
from .outcome import analyzer_failure

log = logging.getLogger("agent_profiler")


async def repair_analyses(
    paths: RunPaths,
    store: Path | None,
    rows: Sequence[ProfileRow],
    analyzers: Sequence[Any],
    scenarios: Sequence[Scenario],
    writer: RowWriter,
) -> list[str]:
    """Analyse the stored traces of recorded cells that have no analysis bundle; what
    was done, as warnings."""
    if not analyzers or not rows:
        return []
    done = {
        (r.model, r.mode, r.scenario_id, r.iteration) for r in rows if r.iteration >= 0
    }
    if paths.analysis.exists():
        done -= {
            (b.model, b.mode, b.scenario_id, b.iteration)
            for b in read_jsonl(paths.analysis, SessionAnalysisBundle).rows
        }
    if not done:
        return []
    if store is None or not store.exists():
        return [
            f"{len(done)} recorded cell(s) have no analysis and no stored trace to analyse again"
        ]
    by_id = {s.id: s for s in scenarios}
    session_ids = {r.cell: r.session_id for r in rows}
    repaired = 0
    for record, _ in iter_latest(store):
        if record.key not in done or record.scenario_id not in by_id:
            continue
        results = await _analyze(
            analyzers, record.trace, by_id[record.scenario_id], record.mode
        )
        if results:
            writer.write_analysis(
                SessionAnalysisBundle(
                    session_id=session_ids.get(record.key, ""),
                    scenario_id=record.scenario_id,
                    mode=record.mode,
                    model=record.model,
                    iteration=record.iteration,
                    results=results,
                )
            )
            repaired += 1
    return (
        [
            f"analysed {repaired} recorded cell(s) again whose analysis an "
            "interrupted run had not written"
        ]
        if repaired
        else []
    )


async def _analyze(
    analyzers: Sequence[Any], trace: Any, scenario: Scenario, mode: str
) -> dict[str, AnalysisResult]:
    results: dict[str, AnalysisResult] = {}
    for analyzer in analyzers:
        try:
            results[analyzer.name] = await await_me_maybe(
                analyzer.analyze(trace, scenario, mode)
            )
        except Exception as exc:  # noqa: BLE001 - one analyzer's failure leaves the others' results
            log.warning("%s", analyzer_failure(analyzer, exc))
    return results


__all__ = ["repair_analyses"]
