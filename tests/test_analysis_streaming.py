"""The report and `analyze --json` read analyses one at a time: memory does not grow
with the sessions (issue 31.13).

The figures at 2,000 and 20,000 iterations come from bench/bench_analysis_memory.py;
here tracemalloc compares the peak of 10x more sessions, in process.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tracemalloc
from pathlib import Path

import profiler_builtin_analyzers.plugin as builtin_analyzers
from profiler_core.cli import cli
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.report import write_report

ROOT = Path(__file__).resolve().parent.parent
ROWS = ROOT / "examples" / "original" / "rows.jsonl.gz"
TRACE = (
    Path(__file__).resolve().parent
    / "fixtures"
    / "transcripts"
    / "trace"
    / "pr-review.json"
)


def _bundle(i: int) -> dict:
    mode = ("baseline", "with_skill")[i % 2]
    return {
        "sessionId": f"s{i}",
        "scenarioId": f"task-{i % 3}",
        "mode": mode,
        "model": "m",
        "iteration": i,
        "results": {
            "efficiency": {
                "analyzer": "efficiency",
                "summary": "x" * 400,
                "findings": {
                    "turns": {"type": "number", "value": i % 7, "unit": "turns"},
                    "ratio": {"type": "ratio", "value": (i % 10) / 10, "label": "r"},
                    "style": {"type": "string", "value": ("fast", "slow")[i % 2]},
                    "tools": {
                        "type": "list",
                        "values": [f"tool-{j}" for j in range(i % 5)] + ["x" * 300],
                    },
                    "calls": {
                        "type": "table",
                        "headers": ["tool", "n"],
                        "rows": [["bash", str(i % 4)], ["y" * 300, "1"]],
                    },
                },
            },
        },
    }


def _project(folder: Path, sessions: int) -> Path:
    import gzip

    folder.mkdir()
    results = folder / "run.jsonl"
    results.write_bytes(gzip.decompress(ROWS.read_bytes()))
    (folder / "run.analysis.jsonl").write_text(
        "".join(json.dumps(_bundle(i)) + "\n" for i in range(sessions))
    )
    return results


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_reports_analysis_is_read_one_bundle_at_a_time(tmp_path):
    small, large = _project(tmp_path / "small", 300), _project(tmp_path / "large", 3000)
    write_report(
        small, tmp_path / "warm", parallel=False
    )  # imports and caches outside the measurement
    peaks = [
        _peak(lambda p=p: write_report(p, p.parent / "report", parallel=False))
        for p in (small, large)
    ]
    assert peaks[1] < 1.5 * peaks[0], (
        f"peaks {peaks[0] / 1e6:.1f} MB and {peaks[1] / 1e6:.1f} MB for 10x the sessions"
    )
    page = (tmp_path / "large" / "report" / "analysis.md").read_text()
    assert (
        "3000 analysed sessions" in page and "| ratio | 40.0% | 50.0% |" in page
    )  # medians per mode
    assert "| style | fast | slow |" in page  # the most frequent string per mode


def test_analyze_json_prints_one_trace_at_a_time(tmp_path):
    record = {
        "scenarioId": "s",
        "mode": "a",
        "model": "m",
        "trace": json.loads(TRACE.read_text()),
    }
    manager = get_plugin_manager(
        entrypoints=False, plugins=[("builtin_analyzers", builtin_analyzers)]
    )
    stores = []
    for n in (40, 400):
        store = tmp_path / f"store-{n}" / "traces.jsonl"
        store.parent.mkdir()
        store.write_text(
            "".join(json.dumps({**record, "iteration": i}) + "\n" for i in range(n))
        )
        stores.append(store)

    def analyze(store, out):
        # Printed text goes to `out`, not into memory: only what analyze itself keeps is measured.
        with contextlib.redirect_stdout(out):
            try:
                cli.main(
                    args=["analyze", str(store), "--json", "--analyzer", "efficiency"],
                    standalone_mode=False,
                    obj=manager,
                )
            except SystemExit as exit_:
                assert exit_.code in (0, None)

    with open(os.devnull, "w") as null:
        analyze(stores[0], null)
        peaks = [_peak(lambda s=s: analyze(s, null)) for s in stores]
    # Only the store's index of cells (a few hundred bytes each, to find each cell's
    # last record) grows;
    # holding every result, as before, made it 10x.
    assert peaks[1] < 3 * peaks[0], (
        f"peaks {peaks[0] / 1e6:.2f} MB and {peaks[1] / 1e6:.2f} MB for 10x the traces"
    )
    printed = io.StringIO()
    analyze(stores[1], printed)
    out = json.loads(printed.getvalue())
    assert (
        len(out) == 400 and out[0]["results"]["efficiency"]["analyzer"] == "efficiency"
    )
