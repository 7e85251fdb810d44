"""The summary ``profiler analyze`` ends with: each analyzer's findings over all the
sessions analysed."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from ..model import AnalysisResult, NumberFinding, RatioFinding, StringFinding
from ..util.textcut import printable


class AnalysisSummary:
    """Collects the findings of many sessions; numbers as median [min–max], strings as
    their most common value."""

    def __init__(self) -> None:
        self.sessions = 0
        self.failed = 0
        #: (analyzer, finding) -> numbers, or the strings seen
        self._numbers: dict[tuple[str, str], list[float]] = {}
        self._units: dict[tuple[str, str], str] = {}
        self._strings: dict[tuple[str, str], Counter[str]] = {}

    def add(self, results: dict[str, AnalysisResult]) -> None:
        """Count one session's results."""
        self.sessions += 1
        for name, result in results.items():
            for key, finding in result.findings.items():
                if isinstance(finding, NumberFinding):
                    self._numbers.setdefault((name, key), []).append(
                        float(finding.value)
                    )
                    self._units[(name, key)] = finding.unit
                elif isinstance(finding, RatioFinding):
                    self._numbers.setdefault((name, key), []).append(
                        float(finding.value) * 100
                    )
                    self._units[(name, key)] = "%"
                elif isinstance(finding, StringFinding):
                    self._strings.setdefault((name, key), Counter())[finding.value] += 1

    def rows(self) -> list[tuple[str, str, str]]:
        """(analyzer, finding, summary text), analyzers sorted, findings in the order
        they first appeared."""
        out = []
        for (name, key), values in self._numbers.items():
            unit = self._units[(name, key)]
            text = f"median {_n(statistics.median(values))}{_unit(unit)}"
            if len(values) > 1:
                text += f" (min {_n(min(values))}, max {_n(max(values))})"
            if len(values) != self.sessions:
                text += f" in {len(values)} sessions"
            out.append((name, key, text))
        for (name, key), counts in self._strings.items():
            value, count = counts.most_common(1)[0]
            out.append(
                (name, key, f"{value} in {count} of {sum(counts.values())} sessions")
            )
        order = {k: i for i, k in enumerate([*self._numbers, *self._strings])}
        return sorted(out, key=lambda row: (row[0], order[(row[0], row[1])]))

    def print(self, console: Any) -> None:
        """A heading, then one line per finding (whole lines, so pipes and greps see them)."""
        from rich.text import Text

        failed = f", {self.failed} could not be read or analysed" if self.failed else ""
        console.print(
            Text(
                f"Summary: {self.sessions} "
                f"session{'s' if self.sessions != 1 else ''} analysed{failed}",
                style="bold",
            ),
            soft_wrap=True,
        )
        rows = self.rows()
        width = max(
            (len(printable(key, one_line=True)) for _, key, _ in rows), default=0
        )
        for name, key, text in rows:
            line = Text("  ")
            # Analyzer names, finding keys and string findings come from plugins and
            # traces: escaped.
            line.append(f"{printable(name, one_line=True):<14}", style="bold cyan")
            line.append(f"{printable(key, one_line=True):<{width}}  ", style="dim")
            line.append(printable(text, one_line=True))
            console.print(line, soft_wrap=True)


def _n(value: float) -> str:
    return (
        f"{value:,.0f}" if abs(value) >= 1000 or value.is_integer() else f"{value:.3g}"
    )


def _unit(unit: str) -> str:
    return unit if unit == "%" else f" {unit}" if unit else ""
