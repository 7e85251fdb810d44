"""The runs a viewer serves: found once in the folders it was pointed at, each opened lazily.

A URL names a run by its key in this catalog (its run id, made unique), never by
a path: no part of a URL is ever joined to a folder. The catalog is read again
when the runs page is asked for, so a run that finished meanwhile appears; a
run whose results file grew since it was indexed is indexed again.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from ..storage.paths import safe_name
from ..storage.runfiles import RunFiles, find_runs, run_files
from .index import Analysis, RowIndex, Traces

#: Report sections shown on a run's page, in this order.
REPORT_SECTIONS = ("verdict", "modes", "comparison", "distributions")


class RunView:
    """One run of the catalog: its files, and its indexes built on first use."""

    def __init__(self, key: str, files: RunFiles) -> None:
        self.key = key
        self.files = files
        self._lock = threading.Lock()
        self._index: RowIndex | None = None
        self._stamp: tuple[int, int] | None = None
        self._traces: Traces | None = None
        self._analysis: Analysis | None = None

    @property
    def run_id(self) -> str:
        """The run's id (from its manifest, else its file name)."""
        return self.files.run_id

    def rows(self) -> RowIndex:
        """The rows index, built on first use and again when the results file changed."""
        stamp = _stamp(self.files.results)
        with self._lock:
            if self._index is None or stamp != self._stamp:
                self._index = RowIndex(self.files.results)
                self._stamp = stamp
                self._traces = Traces(self.files.traces, self._index)
                self._analysis = Analysis(self.files.analysis, self._index)
                # Index the traces and findings now, while the user reads the run's
                # page, not when they click.
                threading.Thread(
                    target=self._warm,
                    args=(self._traces, self._analysis),
                    name="profiler-view-index",
                    daemon=True,
                ).start()
            return self._index

    @staticmethod
    def _warm(traces: Traces, analysis: Analysis) -> None:
        for lines in (traces.store, analysis.lines):
            if lines is not None:
                try:
                    lines.build()
                # the session page meets the same error and shows it
                except Exception:  # noqa: BLE001
                    pass

    def traces(self) -> Traces:
        """The run's session traces."""
        self.rows()
        assert self._traces is not None
        return self._traces

    def analysis(self) -> Analysis:
        """The run's analysis bundles."""
        self.rows()
        assert self._analysis is not None
        return self._analysis

    def summary(self) -> dict[str, Any] | None:
        """The report's ``data/summary.json``, when the run has a report."""
        if self.files.report_dir is None:
            return None
        path = self.files.report_dir / "data" / "summary.json"
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return doc if isinstance(doc, dict) else None

    def report_sections(self) -> dict[str, str]:
        """The verdict, mode cards, comparison and charts of the run's report.html (our
        own, already escaped HTML)."""
        html = self.files.report_html
        if html is None:
            return {}
        try:
            text = html.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return {}
        found = extract_sections(text, REPORT_SECTIONS)
        number = (
            1  # the sections plugins added (profiler_report_sections), in page order
        )
        while extracted := extract_sections(text, (f"plugin-section-{number}",)):
            found.update(extracted)
            number += 1
        return found


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def extract_sections(html: str, ids: tuple[str, ...]) -> dict[str, str]:
    """``<section id="…">…</section>`` blocks of a report page (sections do not nest there).

    In-page links (``<a href="#metric-…">``) are pointed at the full report, which the
    viewer serves beside the run's page. Only links: the charts' own ``xlink:href="#m…"``
    references (matplotlib's shared marker shapes) must keep resolving inside the page.
    """
    found: dict[str, str] = {}
    for section_id in ids:
        start = html.find(f'<section id="{section_id}">')
        if start < 0:
            continue
        end = html.find("</section>", start)
        if end < 0:
            continue
        found[section_id] = html[start : end + len("</section>")].replace(
            '<a href="#', '<a href="report.html#'
        )
    return found


class Catalog:
    """The runs of one results folder (or one run), by key: the run id as a safe file
    name, unique."""

    def __init__(
        self,
        results_dir: Path | None,
        reports_dir: Path | None,
        only: Path | None = None,
    ) -> None:
        self.results_dir = results_dir
        self.reports_dir = reports_dir
        self.only = only
        self._runs: dict[str, RunView] = {}
        self._lock = threading.Lock()
        self.refresh()

    def refresh(self) -> list[RunView]:
        """Look for runs again (keeping the indexes of runs already open); newest first."""
        if self.only is not None:
            found = [run_files(self.only, self.reports_dir)]
        else:
            assert self.results_dir is not None
            found = find_runs(self.results_dir, self.reports_dir)
        with self._lock:
            by_file = {view.files.results: view for view in self._runs.values()}
            runs: dict[str, RunView] = {}
            for files in found:
                view = by_file.get(files.results)
                if view is None:
                    view = RunView(_unique(safe_name(files.run_id), runs), files)
                runs[view.key] = view
            self._runs = runs
            return list(runs.values())

    def get(self, key: str) -> RunView | None:
        """The run with this key, or None."""
        return self._runs.get(key)

    def runs(self) -> list[RunView]:
        """The runs found at the last refresh, newest first."""
        return list(self._runs.values())


def _unique(run_id: str, taken: dict[str, RunView]) -> str:
    key, n = run_id, 1
    while key in taken:
        n += 1
        key = f"{run_id}~{n}"
    return key


_CRITERIA = (
    ("success", None),
    ("cost", "cost_total_usd"),
    ("speed", "latency_wall_ms"),
    ("tokens", "tokens_total"),
)


def verdict_line(summary: dict[str, Any] | None) -> str:
    """One line per run for the runs list: which modes were better or worse than the
    baseline, on what."""
    if not summary:
        return "no report"
    parts: list[str] = []
    verdict = summary.get("verdict") or {}
    if verdict.get("errored"):
        parts.append(
            f"⚠ {verdict['errored']} row{'' if verdict['errored'] == 1 else 's'} errored"
        )
    comparisons = summary.get("comparisons") or []
    if not comparisons:
        parts.append("one mode: nothing compared")
    for comp in comparisons:
        better, worse = _judged(comp)
        words = [f"better on {', '.join(better)}"] if better else []
        words += [f"worse on {', '.join(worse)}"] if worse else []
        parts.append(
            f"{comp.get('mode')} vs {comp.get('baseline')}: "
            f"{'; '.join(words) or 'no significant difference'}"
        )
    return " · ".join(parts)


def _judged(comp: dict[str, Any]) -> tuple[list[str], list[str]]:
    better: list[str] = []
    worse: list[str] = []
    metrics = {
        m.get("metric"): m for m in comp.get("metrics") or [] if isinstance(m, dict)
    }
    for name, metric in _CRITERIA:
        if metric is None:
            success = comp.get("success") or {}
            diff = success.get("differencePp")
            if (
                success.get("significant")
                and isinstance(diff, (int, float))
                and diff != 0
            ):
                (better if diff > 0 else worse).append(name)
            continue
        word = (metrics.get(metric) or {}).get("verdict")
        if word == "better":
            better.append(name)
        elif word == "worse":
            worse.append(name)
    return better, worse


__all__ = ["Catalog", "RunView", "extract_sections", "verdict_line"]
