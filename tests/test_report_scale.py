"""Reports of many modes: the charts draw a documented number of them and say so; the
tables keep all (issue 31.11)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from profiler_core.report import write_report
from profiler_core.report.charts import (
    CHART_MODE_LIMIT,
    MIN_CHART_ROWS,
    chart_modes,
    chart_note,
)
from profiler_core.report.load import load_rows
from profiler_core.report.summary import build_summary

ROOT = Path(__file__).resolve().parent.parent
MODES = CHART_MODE_LIMIT + 6


def rows_of_many_modes(path: Path, modes: int) -> Path:
    """MIN_CHART_ROWS rows per mode (fewer draw no chart), the same in every mode but
    m07, which uses a tenth of the tokens."""
    source = [
        json.loads(line)
        for line in gzip.open(ROOT / "examples" / "original" / "rows.jsonl.gz", "rt")
    ]
    with open(path, "w", encoding="utf-8") as out:
        for m in range(modes):
            for iteration in range(MIN_CHART_ROWS):
                row = dict(
                    source[iteration % len(source)]
                )  # the same rows in every mode: only m07 differs
                row.update(
                    mode=f"m{m:02d}", scenarioId="s", iteration=iteration, runId="many"
                )
                if m == 7:
                    row["tokens"] = {k: v // 10 for k, v in row["tokens"].items()}
                out.write(json.dumps(row) + "\n")
    return path


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    folder = tmp_path_factory.mktemp("many")
    results = rows_of_many_modes(folder / "many.jsonl", MODES)
    written = write_report(results, folder / "report", parallel=False)
    return results, written.html.read_text(encoding="utf-8")


def svg(html: str, label: str) -> str:
    """The inline SVG chart whose aria-label is ``label``."""
    start = html.index(f'aria-label="{label}"')
    return html[start : html.index("</svg>", start)]


def test_charts_draw_the_limit_and_the_page_says_which(many):
    _, html = many
    assert (
        f"The charts show {CHART_MODE_LIMIT} of {MODES} modes: the baseline m00" in html
    )
    for label in (
        "Success rate per mode with 95% intervals",
        "Distribution of Tokens (total) per mode",
    ):
        drawn = set(re.findall(r">(m\d\d)<", svg(html, label)))
        assert len(drawn) == CHART_MODE_LIMIT and {"m00", "m07"} <= drawn, (
            label,
            sorted(drawn),
        )
    # Every mode still has its card and its comparison table.
    for m in range(MODES):
        assert f"<h3><span>m{m:02d}</span>" in html
        assert m == 0 or f"<h3>m{m:02d} vs m00</h3>" in html


def test_the_selection_is_the_baseline_then_the_most_different_in_mode_order(many):
    results, _ = many
    summary = build_summary(load_rows(results, parallel=False), run_id="many")
    drawn = chart_modes(summary)
    assert drawn[0] == "m00" and "m07" in drawn and drawn == sorted(drawn)
    assert (
        chart_modes(summary, limit=MODES) == summary.modes
        and chart_note(summary, limit=MODES) is None
    )
    assert chart_modes(summary, limit=2) == [
        "m00",
        "m07",
    ]  # m07: the significant difference
