"""The contract check of a report section (``profiler_report_sections``): a real report, written.

:func:`check_report_section` registers the plugin on a fresh plugin manager,
writes the report of a small run (a sample of two modes by two scenarios, or a
results file you give) and checks that the plugin's sections arrived: no error
line in place of them (a plugin that raises, changes the read-only summary or
returns something else than ``ReportSection``), each title in report.md and,
escaped, in report.html, and the same sections when asked twice (a report
written again is the same report). A broken rule raises :class:`ContractError`.
"""

from __future__ import annotations

import json
import tempfile
from html import escape
from pathlib import Path
from typing import Any

from ..model import (
    CostBreakdown,
    ProfileRow,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallSummary,
)
from ..model.report import ReportSection
from ..plugins.manager import get_plugin_manager
from ..report import write_report
from ..report.sections import HOOK, SectionView, collect_sections
from ..storage.serde import to_json
from .contract import ContractError

__all__ = ["check_report_section", "sample_results"]

#: The name the plugin under test is registered under.
PLUGIN = "plugin-under-test"


def check_report_section(
    plugin: Any,
    /,
    *,
    results: Path | None = None,
    expect_sections: bool = True,
) -> tuple[ReportSection, ...]:
    """Write a real report with ``plugin`` registered; its sections, once they passed the checks.

    :param plugin: a module or object with a ``@hookimpl`` ``profiler_report_sections``.
    :param results: a results JSONL to report on (default: :func:`sample_results`).
    :param expect_sections: False accepts a plugin that adds nothing to this run.
    """
    manager = get_plugin_manager(entrypoints=False, plugins=[(PLUGIN, plugin)])
    if PLUGIN not in dict(manager.callers(HOOK)):
        raise ContractError(f"plugin {PLUGIN!r} does not implement {HOOK}")
    with tempfile.TemporaryDirectory(prefix="profiler-kit-report-") as tmp:
        source = results if results is not None else sample_results(Path(tmp))
        written = write_report(
            source, Path(tmp) / "report", parallel=False, plugins=manager
        )
        failed = [w for w in written.warnings if w.startswith(f"plugin {PLUGIN!r}:")]
        if failed:
            raise ContractError(failed[0])
        summary = _summary(written.summary)
        first = _sections(collect_sections(manager, summary, source))
        again = _sections(collect_sections(manager, summary, source))
        _expect_rendered(first, written.md.read_text(), written.html.read_text())
    if first != again:
        raise ContractError(
            f"{HOOK} gave different sections when asked twice on one run"
        )
    if expect_sections and not first:
        raise ContractError(f"{HOOK} added no section to the sample run")
    return first


def sample_results(folder: Path) -> Path:
    """Write a small results file (2 modes x 2 scenarios x 3 iterations) into ``folder``."""
    path = folder / "kit-run.jsonl"
    lines = [
        to_json(_row(mode, scenario, iteration))
        for mode in ("baseline", "candidate")
        for scenario in ("first-task", "second-task")
        for iteration in range(3)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _row(mode: str, scenario: str, iteration: int) -> ProfileRow:
    spread = (len(mode) * 7 + len(scenario) * 3 + iteration * 5) % 11
    return ProfileRow(
        run_id="kit-run",
        scenario_id=scenario,
        mode=mode,
        model="kit-model",
        iteration=iteration,
        started_at=f"2026-01-01T00:0{iteration}:00Z",
        completed_at=f"2026-01-01T00:0{iteration}:30Z",
        tokens=TokenBreakdown(input=1000 + 50 * spread, output=200 + spread),
        timing=TimingBreakdown(wall_ms=1000 + 90 * spread),
        tool_calls=ToolCallSummary(total=2 + spread % 3, by_category={"shell": 2}),
        cost=CostBreakdown(total_usd=0.01 * (1 + spread)),
        success=spread % 3 != 0,
        checkpoints_passed=0,
        checkpoints_total=0,
        provider="kit",
        session_id=f"{mode}-{scenario}-{iteration}",
    )


def _summary(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _sections(views: tuple[SectionView, ...]) -> tuple[ReportSection, ...]:
    for shown in views:
        if shown.error is not None:
            raise ContractError(shown.warning)
    return tuple(shown.section for shown in views if shown.section is not None)


def _expect_rendered(
    sections: tuple[ReportSection, ...], markdown: str, html: str
) -> None:
    from ..report.markdown import md  # numpy: only when a check runs

    for section in sections:
        if f"## {md(section.title)}" not in markdown:
            raise ContractError(f"section {section.title!r} is missing from report.md")
        if f"<h2>{escape(section.title, quote=True)}</h2>" not in html:
            raise ContractError(
                f"section {section.title!r} is missing from report.html"
            )
