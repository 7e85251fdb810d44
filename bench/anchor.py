"""The benchmarks' inputs: the TypeScript original's parity files (tests/fixtures/anchor-parity).

The repository keeps 1,000 of the original's 10,000 report rows (iterations
0-49 of each mode x scenario). Unless ``PROFILER_BENCH_ANCHOR`` names a folder
with the full file, the benchmarks read a copy of the fixtures whose report
rows are those 1,000 tiled to 10,000 (iterations 0-499, in the original's
order: each mode x scenario's iterations together), built once in the temp
folder. Ours and the original's harness read the same folder.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "anchor-parity"
ROWS = "report-rows.jsonl.gz"
#: How many times the kept rows are tiled: back to the original's 10,000.
TILES = 10

_ITERATION = re.compile(r'"iteration":(\d+)')
_SESSION = re.compile(r'("sessionId":"[^"]*?_)(\d+)"')
_GROUP = re.compile(r'"scenarioId":"([^"]*)".*?"mode":"([^"]*)"')


def shifted(line: str, offset: int) -> str:
    """One JSONL row with ``offset`` added to its iteration number and session id suffix."""
    if offset == 0:
        return line
    # Text substitution, not a JSON round trip: 1,000,000 rows are written in seconds.
    line = _ITERATION.sub(
        lambda m: f'"iteration":{int(m.group(1)) + offset}', line, count=1
    )
    return _SESSION.sub(
        lambda m: f'{m.group(1)}{int(m.group(2)) + offset}"', line, count=1
    )


def span(lines: list[str]) -> int:
    """One more than the highest iteration number of ``lines``."""
    return 1 + max(int(m.group(1)) for m in map(_ITERATION.search, lines) if m)


def _tiled(source: Path, target: Path) -> None:
    with gzip.open(source, "rt", encoding="utf-8") as f:
        lines = [
            line if line.endswith("\n") else line + "\n" for line in f if line.strip()
        ]
    groups: dict[tuple[str, str], list[str]] = {}
    for line in lines:
        match = _GROUP.search(line)
        groups.setdefault(match.groups() if match else ("", ""), []).append(line)
    step = span(lines)
    tmp = target.with_name(target.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as out:
        for group in groups.values():
            for tile in range(TILES):
                out.writelines(shifted(line, tile * step) for line in group)
    tmp.replace(target)


def anchor_dir() -> Path:
    """``PROFILER_BENCH_ANCHOR``, or the fixtures with their report rows tiled to 10,000
    (built once)."""
    named = os.environ.get("PROFILER_BENCH_ANCHOR")
    if named:
        return Path(named)
    digest = hashlib.sha256((FIXTURES / ROWS).read_bytes()).hexdigest()[:12]
    folder = (
        Path(tempfile.gettempdir()) / "agent-profiler-bench" / f"anchor-parity-{digest}"
    )
    if not (folder / ROWS).is_file():
        folder.mkdir(parents=True, exist_ok=True)
        for path in FIXTURES.iterdir():
            if path.is_file() and path.name != ROWS:
                shutil.copyfile(path, folder / path.name)
        _tiled(FIXTURES / ROWS, folder / ROWS)
    return folder


ANCHOR = anchor_dir()
