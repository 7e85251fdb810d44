"""Where charts and the HTML helper process start to pay: ``write_report`` of N rows,
whole processes.

Run: ``PYTHONPATH=src python bench/bench_report_small.py [--sizes
1,4,20,100,400,1000,4000] [--runs 5]``.

For each size (the first N rows of the parity file, plain JSONL) it times a
fresh process writing the report three ways: as shipped (``auto``: charts from
``charts.MIN_CHART_ROWS`` rows in a mode, the helper process from
``worker.MIN_BYTES`` of input), with charts forced on and the helper off
(``charts``), and with charts and the helper forced on (``charts+helper``).
Medians of ``--runs`` alternating rounds after a warm-up, in seconds. See
docs/reports.md ("Charts and helper processes").
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from anchor import anchor_dir  # bench/anchor.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
PARITY = anchor_dir() / "report-rows.jsonl.gz"

_CHILD = """
import sys
from pathlib import Path
from profiler_core.report import charts, worker, write_report
import profiler_core.report as report
how = sys.argv[3]
if how != "auto":
    charts.MIN_CHART_ROWS = 1
if how == "charts":
    report._start_worker = lambda path: None
elif how == "charts+helper":
    worker.MIN_BYTES = 0
write_report(Path(sys.argv[1]), Path(sys.argv[2]))
"""

WAYS = ("auto", "charts", "charts+helper")


def _once(rows: Path, out: Path, how: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")])
    )
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", _CHILD, str(rows), str(out), how],
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Print a table: rows, input size, and the median seconds of each way."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="1,4,20,100,400,1000,4000",
        help="row counts, comma-separated",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=5,
        help="measured rounds per size (after one warm-up)",
    )
    args = parser.parse_args(argv)
    with gzip.open(PARITY, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    print(
        f"{'rows':>6} {'input':>9} "
        + " ".join(f"{w:>14}" for w in WAYS)
        + "   (seconds, whole process)"
    )
    with tempfile.TemporaryDirectory(prefix="profiler-report-small-") as tmp:
        for size in (int(x) for x in args.sizes.split(",")):
            rows = Path(tmp) / f"rows-{size}.jsonl"
            rows.write_bytes(b"".join(lines[:size]))
            times: dict[str, list[float]] = {w: [] for w in WAYS}
            for round_ in range(args.runs + 1):
                for how in WAYS:
                    seconds = _once(rows, Path(tmp) / f"out-{size}-{how}", how)
                    if round_:
                        times[how].append(seconds)
            cells = " ".join(f"{statistics.median(times[w]):>14.3f}" for w in WAYS)
            print(f"{size:>6} {rows.stat().st_size / 1e6:>7.2f}MB {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
