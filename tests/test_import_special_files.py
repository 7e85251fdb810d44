"""``profiler import`` reads only regular files: a FIFO does not hang it, ``/dev/zero``
does not grow it without bound."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest


def _bounded() -> None:
    resource.setrlimit(
        resource.RLIMIT_AS, (2 << 30, 2 << 30)
    )  # what an unbounded read would meet first


def _import(tmp_path: Path, source: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "profiler_core", "import", "openai", str(source), "--out", str(tmp_path / "out" / "r.jsonl")],
        capture_output=True, text=True, timeout=60, preexec_fn=_bounded,
    )  # fmt: skip


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_a_device_is_one_line_not_a_hang(tmp_path, kind):
    if kind == "fifo":
        source = tmp_path / "trace.json"
        os.mkfifo(source)  # nothing ever writes to it
    else:
        source = Path("/dev/zero")
    done = _import(tmp_path, source)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert (
        f"Error: {source}: is not a regular file (a FIFO, socket or device); expected a file"
        in done.stderr
    )
    assert not (tmp_path / "out").exists()


def test_a_regular_file_with_windows_line_ends_still_imports(tmp_path):
    fixture = (
        Path(__file__).parent
        / "fixtures"
        / "import"
        / "openai"
        / "overdue-invoice.json"
    )
    if not fixture.exists():
        fixture = next(
            (Path(__file__).parent / "fixtures").rglob("overdue-invoice.json")
        )
    source = tmp_path / "t.json"
    source.write_bytes(fixture.read_bytes().replace(b"\n", b"\r\n"))
    done = _import(tmp_path, source)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "r.jsonl").read_text().count("\n") == 1
