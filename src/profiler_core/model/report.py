"""A section a plugin adds to a run's report (the ``profiler_report_sections`` hook)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from ._validators import non_empty
from .record import Record


def _texts(values: Iterable[Any]) -> tuple[str, ...]:
    return tuple(str(value) for value in values)


def _table_rows(rows: Iterable[Iterable[Any]]) -> tuple[tuple[str, ...], ...]:
    return tuple(_texts(row) for row in rows)


def _rows_fit_header(instance: ReportSection, attribute: Any, rows: Any) -> None:
    """Every row has one cell per header column (a table without a header has no rows)."""
    width = len(instance.header)
    for number, row in enumerate(rows, 1):
        if len(row) != width:
            raise ValueError(
                f"rows: row {number} has {len(row)} cells, the header {width} columns"
            )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReportSection(Record):
    """A titled block of a report: Markdown text and an optional table, shown escaped in HTML.

    ``text`` goes into report.md as written (it is Markdown) and into report.html
    as escaped paragraphs (split at blank lines): a plugin never writes HTML.
    ``header`` and ``rows`` make a table; every cell is turned into a string.
    """

    title: str = attrs.field(validator=non_empty)
    text: str = ""
    header: tuple[str, ...] = attrs.field(default=(), converter=_texts)
    rows: tuple[tuple[str, ...], ...] = attrs.field(
        default=(), converter=_table_rows, validator=_rows_fit_header
    )


__all__ = ["ReportSection"]
