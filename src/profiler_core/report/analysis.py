"""A run's analysis bundles, read one line at a time into what analysis.md compares.

Holding every bundle as a dict cost the report ~20 KB per session (473 MB
at 20,000 iterations). The digest keeps only what the page shows: per
(scenario, analyzer, finding, mode) the numbers as 8-byte floats (for the
median), the count of each string value, and the distinct list items and
table rows (shown and compared as sets). So it grows with the number of
distinct values, not with the sessions' text.
"""

from __future__ import annotations

from array import array
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from ..storage.lines import open_binary
from ..util.textclean import clean_json_bytes, replaced_note

#: what a malformed line raises while it is read (orjson's JSONDecodeError is a ValueError)
_LINE_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
)


class Finding:
    """One finding of one analyzer in one scenario, across modes."""

    __slots__ = ("headers", "kind", "modes", "unit")

    def __init__(self, kind: Any, unit: Any) -> None:
        self.kind = kind
        self.unit = unit
        self.headers: list[str] | None = None
        #: mode -> array('d') (number, ratio), Counter (string) or dict used as an
        #: ordered set (list, table)
        self.modes: dict[str, Any] = {}

    def add(self, mode: str, f: dict) -> None:
        """Fold one session's finding in."""
        kind = f.get("type")
        if kind in ("number", "ratio"):
            value = f.get("value")
            slot = self.modes.setdefault(mode, array("d"))
            if isinstance(value, int | float) and not isinstance(value, bool):
                slot.append(value)
        elif kind == "string":
            self.modes.setdefault(mode, Counter())[str(f.get("value"))] += 1
        elif kind == "list":
            seen = self.modes.setdefault(mode, {})
            for v in f.get("values") or ():
                seen.setdefault(str(v), None)
        elif kind == "table":
            if self.headers is None:
                self.headers = [str(h) for h in f.get("headers") or []]
            seen = self.modes.setdefault(mode, {})
            for row in f.get("rows") or ():
                seen.setdefault(tuple(str(c) for c in row), None)
        else:
            self.modes.setdefault(mode, {})


class AnalysisDigest:
    """What analysis.md needs of a run's analysis bundles, gathered one bundle at a time."""

    def __init__(self) -> None:
        self.sessions = 0
        #: modes and scenarios in the order they first appear (dicts as ordered sets)
        self.modes: dict[str, None] = {}
        self.scenarios: dict[str, None] = {}
        #: (scenario, analyzer, finding key) -> Finding
        self.findings: dict[tuple[str, str, str], Finding] = {}

    def add(self, bundle: dict) -> None:
        """Fold one bundle (``{mode, scenarioId, results: {analyzer: {findings: {...}}}}``) in."""
        mode, scenario = bundle["mode"], bundle["scenarioId"]
        self.sessions += 1
        self.modes.setdefault(mode, None)
        self.scenarios.setdefault(scenario, None)
        for analyzer, result in bundle["results"].items():
            findings = result.get("findings") if isinstance(result, dict) else None
            if not isinstance(findings, dict):
                continue
            for key, f in findings.items():
                if not isinstance(f, dict):
                    continue
                entry = self.findings.get((scenario, analyzer, key))
                if entry is None:
                    entry = self.findings[(scenario, analyzer, key)] = Finding(
                        f.get("type"), f.get("unit", "")
                    )
                entry.add(mode, f)


def read_analysis(path: Path) -> tuple[AnalysisDigest, list[str]]:
    """Stream ``<run>.analysis.jsonl`` (or ``.gz``) into a digest; malformed lines are
    reported (file:line) and skipped."""
    digest = AnalysisDigest()
    problems: list[str] = []
    if not path.exists():
        return digest, problems
    try:
        f = open_binary(path)
    except OSError as exc:
        return digest, [f"{path}: cannot read ({exc})"]
    with f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            if b"\\u" in line:  # a NUL or half an emoji becomes U+FFFD, as in the rows
                line, replaced = clean_json_bytes(line)
                if replaced:
                    problems.append(replaced_note(f"{path}:{number}", replaced))
            try:
                bundle = orjson.loads(line)
                if not (
                    isinstance(bundle.get("mode"), str)
                    and isinstance(bundle.get("scenarioId"), str)
                    and isinstance(bundle.get("results"), dict)
                ):
                    raise TypeError(
                        "expected an analysis bundle with mode, scenarioId and results"
                    )
            except _LINE_ERRORS as exc:
                problems.append(f"{path}:{number}: skipped ({exc})")
                continue
            digest.add(bundle)
    return digest, problems
