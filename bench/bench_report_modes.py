"""Reports of many modes: where the time goes (statistics, charts, the page) and how big
report.html gets.

Run: PYTHONPATH=src python bench/bench_report_modes.py [--modes 50 400 3000]

Each mode gets three rows of one scenario, taken from examples/original/rows.jsonl.gz.
Printed per mode count: seconds for the statistics (``build_summary``), for the
charts (``render_all``; above ``CHART_MODE_LIMIT`` modes they draw that many),
for the page, and the size of report.html. The issue that capped the charts
(31.11) measured 3,000 modes at over 180 s, most of it charts, and 7.5 MB of
HTML for 400 modes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from profiler_core.report import charts, html
from profiler_core.report.load import load_rows
from profiler_core.report.summary import build_summary
from profiler_core.report.view import report_view


def write_rows(path: Path, modes: int) -> None:
    """Three rows per mode of one scenario (the original's rows, renamed)."""
    with gzip.open(ROOT / "examples" / "original" / "rows.jsonl.gz", "rt") as f:
        source = [json.loads(line) for line in f]
    with open(path, "w", encoding="utf-8") as out:
        for m in range(modes):
            for iteration in range(3):
                row = dict(source[(m * 3 + iteration) % len(source)])
                row.update(
                    mode=f"mode-{m:04d}",
                    scenarioId="s",
                    iteration=iteration,
                    runId="bench",
                )
                out.write(json.dumps(row) + "\n")


def measure(modes: int, folder: Path) -> dict[str, float]:
    """Seconds of statistics, charts and page, and the page's megabytes, for ``modes`` modes."""
    path = folder / f"m{modes}.jsonl"
    write_rows(path, modes)
    t0 = time.perf_counter()
    summary = build_summary(load_rows(path, parallel=False), run_id="bench")
    t1 = time.perf_counter()
    drawn = charts.render_all(summary)
    t2 = time.perf_counter()
    page = html.render_html(report_view(summary, {"source": str(path)}, []), drawn)
    t3 = time.perf_counter()
    return {
        "modes": modes,
        "charted": len(charts.chart_modes(summary)),
        "stats_s": t1 - t0,
        "charts_s": t2 - t1,
        "page_s": t3 - t2,
        "charts_mb": sum(len(v) for v in drawn.values()) / 1e6,
        "html_mb": len(page.encode()) / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", type=int, nargs="+", default=[50, 400])
    args = parser.parse_args()
    print(
        f"{'modes':>6} {'charted':>7} {'stats s':>8} {'charts s':>9} "
        f"{'page s':>7} {'charts MB':>10} {'html MB':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for modes in args.modes:
            r = measure(modes, Path(tmp))
            print(
                f"{r['modes']:>6} {r['charted']:>7} {r['stats_s']:>8.1f} "
                f"{r['charts_s']:>9.1f} {r['page_s']:>7.1f} "
                f"{r['charts_mb']:>10.2f} {r['html_mb']:>8.2f}"
            )


if __name__ == "__main__":
    main()
