"""Analyzer findings."""

from __future__ import annotations

from typing import Union

import attrs

from ._validators import as_tuple
from .record import Record


@attrs.frozen(kw_only=True, repr=False, eq=False)
class NumberFinding(Record):
    """A number with its unit."""

    value: int | float
    unit: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class StringFinding(Record):
    """A label or short text."""

    value: str


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ListFinding(Record):
    """A list of strings."""

    values: tuple[str, ...] = attrs.field(converter=as_tuple)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TableFinding(Record):
    """A small table of strings."""

    headers: tuple[str, ...] = attrs.field(converter=as_tuple)
    rows: tuple[tuple[str, ...], ...] = attrs.field(
        converter=lambda rows: tuple(tuple(r) for r in rows)
    )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RatioFinding(Record):
    """A ratio (usually 0..1) with a label."""

    value: int | float
    label: str


AnalysisFinding = Union[  # noqa: UP007 - a runtime union for the tagged-union hooks
    NumberFinding, StringFinding, ListFinding, TableFinding, RatioFinding
]

#: JSON ``type`` tag of each finding class (the original's names).
FINDING_TAGS: dict[type, str] = {
    NumberFinding: "number",
    StringFinding: "string",
    ListFinding: "list",
    TableFinding: "table",
    RatioFinding: "ratio",
}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AnalysisResult(Record):
    """What one analyzer found in one trace."""

    analyzer: str
    findings: dict[str, AnalysisFinding] = attrs.field(factory=dict)
    summary: str = ""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SessionAnalysisBundle(Record):
    """All analyzer results of one iteration (the original's SessionAnalysisBundle)."""

    session_id: str
    scenario_id: str
    mode: str
    model: str
    iteration: int = 0
    results: dict[str, AnalysisResult] = attrs.field(factory=dict)
