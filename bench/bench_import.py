"""Import speed on the real-world corpus (tests/fixtures/realworld): each file parsed,
and what reading null as absent costs.

    python bench/bench_import.py [--runs N]

Prints, per file: its size, the median time to parse it into a session
(``load_sessions``), and the part of that spent in ``absent_nulls`` (the walk
that reads a JSON null as an absent field). Not part of run_all.py: the
corpus is small and the figures are milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from profiler_core.importers import load_sessions
from profiler_core.traces.readers import absent_nulls

CORPUS = ROOT / "tests" / "fixtures" / "realworld"
FORMATS = {"claude-code": "*.jsonl", "codex": "*.jsonl", "opencode": "*.json"}


def median_ms(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    print(f"{'file':60} {'KB':>6} {'parse ms':>9} {'nulls ms':>9}")
    for format, pattern in FORMATS.items():
        for path in sorted((CORPUS / format).rglob(pattern)):
            text = path.read_text()
            values = (
                [json.loads(line) for line in text.splitlines() if line.strip()]
                if path.suffix == ".jsonl"
                else [json.loads(text)]
            )
            # called at once
            parse = median_ms(lambda: load_sessions(format, path), args.runs)  # noqa: B023
            nulls = median_ms(lambda: [absent_nulls(v) for v in values], args.runs)  # noqa: B023
            name = str(path.relative_to(CORPUS))
            print(f"{name[-60:]:60} {len(text) / 1024:6.1f} {parse:9.2f} {nulls:9.2f}")


if __name__ == "__main__":
    main()
