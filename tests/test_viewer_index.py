"""The viewer's lazy index of a run: one pass over the rows, a seek per session, the
last line of a cell wins."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from profiler_core import to_json
from profiler_core.viewer import index as ix
from profiler_core.viewer.catalog import extract_sections, verdict_line
from synthetic_runs import Cell, grid, row_of, write_run


@pytest.fixture
def run(tmp_path):
    cells = grid(
        ["a", "b"],
        ["s1", "s2"],
        3,
        lambda m, s, i: {
            "cost": 0.01 * (i + 1) + (0.1 if m == "b" else 0),
            "outcome": "fail" if (s, i) == ("s2", 2) else "pass",
        },
    )
    return write_run(tmp_path, "run_x", cells, report=False)


def test_index_reads_every_row_and_seeks_to_one(run):
    index = ix.RowIndex(run)
    assert index.n == 12 and index.problems == [] and index.duplicates == 0
    assert index.counts() == {"pass": 10, "fail": 2, "error": 0}
    i = index.find(("m1", "b", "s2", 2))
    assert i is not None and index.cell(i) == ("m1", "b", "s2", 2)
    row = index.row(i)
    assert (row.mode, row.scenario_id, row.iteration, row.success) == (
        "b",
        "s2",
        2,
        False,
    )
    assert (
        index.find(("m1", "b", "s2", 3)) is None
        and index.find(("m2", "b", "s2", 2)) is None
        and index.find(("m1", "zz", "s2", 0)) is None
    )


def test_select_filters_searches_and_sorts(run):
    index = ix.RowIndex(run)
    chosen = index.select(ix.RowFilter(mode="b", sort="cost", desc=True))
    assert [index.cell(int(i))[1] for i in chosen] == ["b"] * 6
    assert np.all(np.diff(index.cost[chosen]) <= 0)
    failed = index.select(ix.RowFilter(outcome="fail"))
    assert sorted(index.cell(int(i))[1:] for i in failed) == [
        ("a", "s2", 2),
        ("b", "s2", 2),
    ]
    assert index.select(ix.RowFilter(q="S2", scenario="s1")).size == 0
    assert index.select(ix.RowFilter(mode="no-such-mode")).size == 0
    by_mode = index.select(ix.RowFilter(sort="mode", desc=True))
    assert (
        index.cell(int(by_mode[0]))[1] == "b" and index.cell(int(by_mode[-1]))[1] == "a"
    )


def test_a_later_row_of_a_cell_wins_and_bad_lines_cost_only_themselves(tmp_path):
    path = tmp_path / "r.jsonl"
    first = to_json(row_of("r", Cell(mode="a", scenario="s", iteration=0, cost=1.0)))
    again = to_json(row_of("r", Cell(mode="a", scenario="s", iteration=0, cost=2.0)))
    other = to_json(
        row_of("r", Cell(mode="a", scenario="t", iteration=0, outcome="error"))
    )
    lines = [first, "{not json", again, json.dumps({"mode": "a"}), other]
    path.write_text("\n".join(lines) + "\n" + other[:40])  # and a torn last line
    index = ix.RowIndex(path)
    assert index.n == 2 and index.duplicates == 1
    assert index.cost[index.find(("m1", "a", "s", 0))] == 2.0
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in index.problems] == [
        "2",
        "4",
        "6",
    ]
    assert "truncated last line" in index.problems[-1]
    assert index.errors[index.find(("m1", "a", "t", 0))][1] == "provider_error"


def test_many_batches_and_gzip(tmp_path, monkeypatch):
    monkeypatch.setattr(ix, "BATCH", 7)
    cells = grid(["a"], [f"s{k}" for k in range(10)], 5)
    path = tmp_path / "r.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for cell in cells:
            f.write(to_json(row_of("r", cell)) + "\n")
    index = ix.RowIndex(path)
    assert index.n == 50
    assert index.row(index.find(("m1", "a", "s9", 4))).scenario_id == "s9"


def test_traces_and_findings_by_cell(run, tmp_path):
    index = ix.RowIndex(run)
    store = tmp_path / "reports" / "run_x" / "sessions" / "traces.jsonl"
    # A retried cell appends its trace again: the last one is the session's.
    lines = store.read_text().splitlines()
    retried = json.loads(lines[0])
    retried["trace"]["sessionId"] = "the-retry"
    unknown = dict(retried, scenarioId="not-in-the-run")
    store.write_text(
        "\n".join([*lines, json.dumps(retried), json.dumps(unknown)]) + "\n"
    )
    traces = ix.Traces(store, index)
    cell = (
        retried["model"],
        retried["mode"],
        retried["scenarioId"],
        retried["iteration"],
    )
    assert traces.get(cell).session_id == "the-retry"
    assert traces.get(("m1", "b", "s1", 1)).session_id == "s-b-s1-1"
    assert traces.get(("m1", "b", "s1", 9)) is None
    findings = ix.Analysis(tmp_path / "results" / "run_x.analysis.jsonl", index).get(
        ("m1", "a", "s2", 2)
    )
    assert findings.results["strategy"].findings["approach"].value == "flailing"
    assert (
        ix.Analysis(None, index).get(cell) is None
        and ix.Traces(None, index).get(cell) is None
    )


def test_report_sections_and_verdict_line():
    page = (
        '<section id="verdict"><a href="#metric-x">x</a></section><section '
        'id="modes">m</section><section id="other">o</section>'
    )
    found = extract_sections(page, ("verdict", "modes", "missing"))
    assert found == {
        "verdict": '<section id="verdict"><a href="report.html#metric-x">x</a></section>',
        "modes": '<section id="modes">m</section>',
    }
    summary = {"verdict": {"errored": 2}, "comparisons": [{"mode": "b", "baseline": "a", "success": {"significant": True, "differencePp": -20},
               "metrics": [{"metric": "cost_total_usd", "verdict": "better"}, {"metric": "latency_wall_ms", "verdict": "no difference"}]}]}  # fmt: skip
    assert (
        verdict_line(summary)
        == "⚠ 2 rows errored · b vs a: better on cost; worse on success"
    )
    assert verdict_line(None) == "no report"


@pytest.mark.slow
def test_bench_viewer_quick_prints_its_figures():
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parent.parent / "bench" / "bench_viewer.py"
    out = subprocess.run(
        [sys.executable, str(bench), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    assert figures["rows"] == 1000
    for key in (
        "first_page_ms",
        "filtered_page_ms",
        "first_session_ms",
        "next_session_ms",
        "server_rss_mb",
        "index_cpu_ms",
    ):
        assert figures[key] > 0, key


@pytest.mark.slow
def test_the_viewer_assets_ship_in_the_wheel(tmp_path):
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(root)],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for asset in ("viewer.css", "viewer.js"):
        assert f"profiler_core/viewer/assets/{asset}" in names


def test_traces_kept_as_one_file_per_session(run, tmp_path):
    from profiler_core.storage.runfiles import run_files
    from profiler_core.storage.tracestore import export_files

    store = tmp_path / "reports" / "run_x" / "sessions" / "traces.jsonl"
    export_files(store, store.parent)
    store.unlink()  # as `output.trace_format: files` leaves it
    files = run_files(run)
    assert files.traces == store.parent
    trace = ix.Traces(files.traces, ix.RowIndex(run)).get(("m1", "b", "s2", 1))
    assert trace is not None and trace.session_id == "s-b-s2-1"
