"""The sections plugins add to a report (``profiler_report_sections``), asked one plugin at a time.

Each plugin gets the summary document read-only and the rows as records; what
it returns is checked here, so a plugin that raises or returns something else
becomes one error line in the report (docs/reports.md), never a failed report.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs

from ..model.record import Record
from ..model.report import ReportSection
from ..util.redact import redact_text

if TYPE_CHECKING:
    from ..model import ProfileRow
    from ..plugins.manager import PluginManager

HOOK = "profiler_report_sections"

#: An error line quotes at most this much of the exception's message.
ERROR_CHARS = 300


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SectionView(Record):
    """One plugin's section as the reports show it, or the line saying why it is missing."""

    plugin: str
    section: ReportSection | None = None
    error: str | None = None

    @property
    def warning(self) -> str:
        """The error as a warning line for the terminal ("" when the section is fine)."""
        if self.error is None:
            return ""
        return f"plugin {self.plugin!r}: report section failed: {self.error}"


class RunRows:
    """The run's rows as ``ProfileRow`` records, read from the results file on each iteration."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __iter__(self) -> Iterator[ProfileRow]:
        from ..storage.lines import iter_lines
        from ..storage.rowcodec import decode_row

        for _number, line in iter_lines(self.path):
            try:
                yield decode_row(line)
            except Exception:  # noqa: BLE001 - the report lists the lines it skipped
                continue


def read_only(value: Any) -> Any:
    """A deep read-only copy of a JSON document: mappings become proxies, lists tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: read_only(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(read_only(item) for item in value)
    return value


def collect_sections(
    manager: PluginManager, summary: Mapping[str, Any], results_path: Path
) -> tuple[SectionView, ...]:
    """Ask every plugin implementing the hook for its sections, in pluggy's call order."""
    frozen = read_only(summary)
    rows = RunRows(results_path)
    views: list[SectionView] = []
    for plugin, call in manager.callers(HOOK):
        try:
            results = call(summary=frozen, rows=rows)
        except Exception as exc:  # noqa: BLE001 - one plugin's failure is a line in the report
            views.append(SectionView(plugin=plugin, error=_describe(exc)))
            continue
        views += _checked(plugin, results)
    return tuple(views)


def _checked(plugin: str, results: Iterable[Any]) -> list[SectionView]:
    """The sections of one plugin's results (pluggy's list of its non-None returns)."""
    sections: list[ReportSection] = []
    for result in results:
        items = result if isinstance(result, list | tuple) else [result]
        for item in items:
            if not isinstance(item, ReportSection):
                what = type(item).__name__
                problem = (
                    f"returned a {what}, expected a ReportSection or a list of them"
                )
                return [SectionView(plugin=plugin, error=problem)]
            sections.append(item)
    return [SectionView(plugin=plugin, section=section) for section in sections]


def _describe(exc: Exception) -> str:
    message = redact_text(str(exc)).replace("\n", " ").strip()
    if len(message) > ERROR_CHARS:
        message = message[:ERROR_CHARS] + "…"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


__all__ = ["HOOK", "RunRows", "SectionView", "collect_sections", "read_only"]
