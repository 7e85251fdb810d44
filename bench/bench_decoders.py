"""Per-row cost of decoding results JSONL: the report's columnar reader against the
alternatives (issue 12.7).

Run: cd /work/main && PYTHONPATH=src python bench/bench_decoders.py [--repeat N]

Decodes the original's 10,000 parity rows (``report-rows.jsonl.gz``, ~2.5 KB a
row) with each decoder, in this process, and prints microseconds per row (best
of ``--repeat``):

* ``columnar``: ``report.load.load_rows(parallel=False)``, what ``profiler report`` uses
  (the one row decoder, then numbers into arrays);
* ``rowcodec``: the one row decoder alone (msgspec structs generated from the model);
* ``rowcodec+model``: the decoder, then ``ProfileRow`` objects (what ``store.read_jsonl``,
  ``--resume`` and ``from_json(..., ProfileRow)`` use);
* ``orjson``: ``orjson.loads`` alone, with no check at all;
* ``orjson+cattrs``: ``orjson.loads`` then the model's cattrs converter into ``ProfileRow``
  (what rows were read with before the one decoder);
* ``polars`` / ``pyarrow``: their NDJSON readers, when installed (they are not
  dependencies); they only parse into nested columns, with none of the checks.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from anchor import anchor_dir  # bench/anchor.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
PARITY = anchor_dir() / "report-rows.jsonl.gz"
try:
    import profiler_core  # noqa: F401
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(ROOT / "src"))


def _best(func: Callable[[], int], repeat: int) -> float:
    """Best time of ``repeat`` calls in µs per row (``func`` returns the row count)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        rows = func()
        best = min(best, (time.perf_counter() - start) * 1e6 / rows)
    return best


def main() -> int:
    """Print each decoder's µs per row on the parity rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not PARITY.is_file():
        print(f"bench: {PARITY}: parity rows not found", file=sys.stderr)
        return 1

    import orjson

    from profiler_core.model import ProfileRow
    from profiler_core.report.load import load_rows
    from profiler_core.storage import rowcodec
    from profiler_core.storage.serde import converter

    raw = gzip.decompress(PARITY.read_bytes())
    lines = raw.splitlines()
    with tempfile.TemporaryDirectory(prefix="profiler-decoders-") as tmp:
        path = Path(tmp) / "rows.jsonl"
        path.write_bytes(raw)
        decoders: dict[str, Callable[[], int]] = {
            "columnar": lambda: load_rows(path, parallel=False).n,
            "rowcodec": lambda: sum(
                1 for line in lines if rowcodec.decode(line) is not None
            ),
            "rowcodec+model": lambda: sum(
                1 for line in lines if rowcodec.decode_row(line) is not None
            ),
            "orjson": lambda: sum(
                1 for line in lines if orjson.loads(line) is not None
            ),
            "orjson+cattrs": lambda: sum(
                1
                for line in lines
                if converter.structure(orjson.loads(line), ProfileRow) is not None
            ),
        }
        try:
            import polars

            decoders["polars"] = lambda: polars.read_ndjson(path).height
        except ImportError:
            pass
        try:
            import pyarrow.json

            decoders["pyarrow"] = lambda: pyarrow.json.read_json(path).num_rows
        except ImportError:
            pass
        print(
            f"{len(lines):,} rows, {len(raw) / len(lines):,.0f} bytes a row; best of {args.repeat}"
        )
        for name, decode in decoders.items():
            print(f"{name:<15} {_best(decode, args.repeat):8.1f} µs/row")
    return 0


if __name__ == "__main__":
    sys.exit(main())
