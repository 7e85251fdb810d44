"""Time ``write_report`` (HTML included) on the original's 10,000 rows, or on 1,000,000
with --scale.

Run: cd /work/main && PYTHONPATH=src python bench/bench_report.py [--repeat N] [--serial]
     PYTHONPATH=src python bench/bench_report.py --scale [--rows N] [--serial] [--keep |
     --source FILE]

Each measurement runs in a fresh subprocess (so Python start-up, imports and
peak RSS are those of a real ``profiler report``) and prints wall time and
peak RSS of that process. ``--scale`` builds a results file of 1,000,000 rows
(default ``--rows``) by replicating the parity file's 10,000 rows with new
iteration numbers (and session ids), written uncompressed to a temp folder.
``--serial`` passes ``parallel=False`` (no forked reader, no HTML helper
process), to see what those two buy; ``--keep`` keeps the replicated file and
``--source`` reuses it.
Targets: 10,000 rows well under 2 s; 1,000,000 rows under 60 s and 2 GB.
"""

from __future__ import annotations

import argparse
import gzip
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from anchor import anchor_dir  # bench/anchor.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
PARITY = anchor_dir() / "report-rows.jsonl.gz"

_CHILD = """
import sys, time
from pathlib import Path
t = time.perf_counter()
from profiler_core.report import write_report
mode = sys.argv[3]
paths = write_report(Path(sys.argv[1]), Path(sys.argv[2]), parallel=False if mode == "serial" else None)
print(f"{time.perf_counter() - t:.3f} {paths.rows} {mode}")
"""


def replicate(source: Path, target: Path, rows: int) -> None:
    """Write ``rows`` rows: copies of the source rows, each copy with iterations shifted
    past the previous."""
    with gzip.open(source, "rb") as f:
        lines = f.read().splitlines()
    iteration = re.compile(rb'"iteration":(\d+)')
    session = re.compile(rb'"sessionId":"([^"]*)"')
    span = 1 + max(int(iteration.search(line).group(1)) for line in lines)
    written = 0
    copy = 0
    with open(target, "wb") as f:
        while written < rows:
            shift = copy * span
            block = []
            for line in lines[: rows - written]:
                it = int(iteration.search(line).group(1))
                line = iteration.sub(b'"iteration":%d' % (it + shift), line, count=1)
                sid = session.search(line).group(1)
                line = session.sub(b'"sessionId":"%s-c%d"' % (sid, copy), line, count=1)
                block.append(line)
            f.write(b"\n".join(block) + b"\n")
            written += len(block)
            copy += 1


def measure(
    results: Path, out: Path, mode: str
) -> tuple[float, float, float, int, str]:
    """Run one report in a subprocess: (wall s incl. start-up, write_report s, peak RSS
    MB, rows, mode)."""
    env_path = str(ROOT / "src")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(results), str(out), mode],
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"report failed:\n{proc.stderr}")
    inner, rows, used = proc.stdout.split()
    # ru_maxrss of the largest process among the waited-for descendants (KB on Linux): the
    # report, its forked helpers and the HTML helper are each counted alone.
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return wall, float(inner), peak_mb, int(rows), used


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--scale",
        action="store_true",
        help="benchmark a replicated file (1,000,000 rows by default)",
    )
    parser.add_argument(
        "--rows", type=int, default=1_000_000, help="rows of the replicated file"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of the 10,000-row report (best is shown)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the temp folder and print it"
    )
    parser.add_argument(
        "--serial",
        action="store_true",
        help="everything in one process: no forked reader, no HTML helper",
    )
    parser.add_argument(
        "--source", type=Path, help="with --scale: an existing replicated file to reuse"
    )
    args = parser.parse_args()
    if not PARITY.exists():
        sys.exit(f"parity file not found: {PARITY}")
    tmp = Path(tempfile.mkdtemp(prefix="bench-report-"))
    try:
        import os

        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
        mode = "serial" if args.serial else "default"
        if not args.scale:
            runs = [measure(PARITY, tmp / f"out{i}", mode) for i in range(args.repeat)]
            wall, inner, peak, rows, used = min(runs)
            print(
                f"{rows:,} rows (parity file, gzip), {used}: best of "
                f"{args.repeat}: {wall:.2f} s end to end "
                f"(write_report {inner:.2f} s), peak RSS {peak:.0f} MB; all "
                f"runs: {', '.join(f'{r[0]:.2f}' for r in runs)} s"
            )
            return
        source = args.source
        if source is None:
            source = tmp / "rows.jsonl"
            t = time.perf_counter()
            replicate(PARITY, source, args.rows)
            size = source.stat().st_size / 2**20
            print(
                f"built {args.rows:,} rows ({size:,.0f} MB) in {time.perf_counter() - t:.1f} s"
            )
        wall, inner, peak, rows, used = measure(source, tmp / "out", mode)
        print(
            f"{rows:,} rows, {used}: {wall:.1f} s end to end (write_report "
            f"{inner:.1f} s), peak RSS {peak:.0f} MB"
        )
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
