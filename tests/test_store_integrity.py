"""One writer per run, and resume keeps every complete row (issues 15.4, 15.5, 15.6)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiler_core import SessionAnalysisBundle
from profiler_core.errors import StoreError
from profiler_core.storage.store import (
    RunLock,
    RunPaths,
    read_jsonl,
    repair_truncated_tail,
)

PROFILER = Path(sys.executable).with_name("profiler")
DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo" / "profile.yaml"


def _rows_file(tmp_path, n=3):
    src = (
        Path(__file__).resolve().parent.parent
        / "examples"
        / "original"
        / "rows.jsonl.gz"
    )
    import gzip

    lines = gzip.open(src, "rt").read().splitlines()[:n]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, lines


def test_a_complete_last_row_without_its_newline_is_kept(tmp_path):
    path, lines = _rows_file(tmp_path)
    path.write_text("\n".join(lines))  # the final newline is missing, the row is whole
    message = repair_truncated_tail(path)
    assert "kept a complete last line" in message and ":3:" in message
    assert path.read_text() == "\n".join(lines) + "\n"
    assert len(read_jsonl(path).rows) == 3


def test_a_torn_last_row_is_dropped_with_its_line_named(tmp_path):
    path, lines = _rows_file(tmp_path)
    path.write_text("\n".join(lines[:2]) + "\n" + lines[2][: len(lines[2]) // 2])
    message = repair_truncated_tail(path)
    assert message.startswith(f"{path}:3: dropped a torn last line")
    assert path.read_text() == "\n".join(lines[:2]) + "\n"
    assert repair_truncated_tail(path) is None


def test_the_analysis_file_is_repaired_too(tmp_path):
    path = tmp_path / "a.analysis.jsonl"
    bundle = (
        '{"sessionId": "s", "scenarioId": "x", "mode": "m", "model": "mm", '
        '"iteration": 0, "results": {}}'
    )
    path.write_text(bundle + "\n" + bundle[:20])
    assert "dropped a torn last line" in repair_truncated_tail(
        path, SessionAnalysisBundle
    )
    assert path.read_text() == bundle + "\n"


def test_a_second_writer_is_refused_and_a_dead_ones_lock_does_not_linger(tmp_path):
    paths = RunPaths(tmp_path, "run_x")
    first = RunLock(paths)
    first.acquire()
    with pytest.raises(StoreError, match=f"being written by process {os.getpid()}"):
        RunLock(paths).acquire()
    first.release()
    # A process that dies holding the lock releases it with its file descriptors.
    code = (
        "import os; from pathlib import Path; from profiler_core.storage.store "
        f"import RunLock, RunPaths; RunLock(RunPaths(Path({str(tmp_path)!r}), "
        "'run_x')).acquire(); os._exit(9)"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 9
    again = RunLock(paths)
    again.acquire()
    again.release()


def test_resume_while_the_run_is_written_is_refused_and_adds_no_row(tmp_path):
    env = dict(os.environ)
    slow = [
        str(PROFILER),
        "run",
        str(DEMO),
        "--run-id",
        "run_busy",
        "--repetitions",
        "3",
        "--no-report",
    ]
    # The demo sleeps for real only with a time scale: make cells slow enough to overlap
    # the second command.
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        DEMO.read_text().replace("time_scale: 0.002", "time_scale: 0.02") + "\n"
    )
    for item in (DEMO.parent / "scenarios").iterdir():
        (tmp_path / "scenarios").mkdir(exist_ok=True)
        (tmp_path / "scenarios" / item.name).write_bytes(item.read_bytes())
    slow[2] = str(profile)
    first = subprocess.Popen(
        slow,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        results = tmp_path / "results" / "run_busy.jsonl"
        while (
            not (results.exists() and results.read_text())
            and time.monotonic() < deadline
        ):
            time.sleep(0.1)
        second = subprocess.run(
            [str(PROFILER), "run", str(profile), "--resume", "run_busy", "--no-report"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1
        assert (
            "being written by process" in second.stderr
            and len(second.stderr.strip().splitlines()) == 1
        )
    finally:
        first.send_signal(signal.SIGINT)
        first.wait(timeout=60)
    rows = [
        json.loads(line)
        for line in (tmp_path / "results" / "run_busy.jsonl").read_text().splitlines()
    ]
    cells = [(r["mode"], r["scenarioId"], r["iteration"]) for r in rows]
    assert len(cells) == len(set(cells))
