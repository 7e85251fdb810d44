"""SIGKILL at random points, resume each time: every cell exactly once, every row with
its trace, no temporary file left (issue 15)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiler_core.storage.tracestore import TRACES_FILE, latest_records

pytestmark = pytest.mark.slow

PROFILER = Path(sys.executable).with_name("profiler")
DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo"
RUN = "run_crash"


def _start(profile, *extra):
    return subprocess.Popen(
        [
            str(PROFILER),
            "run",
            str(profile),
            "--repetitions",
            "10",
            "--concurrency",
            "4",
            "--no-report",
            "--allow-errors",
            *extra,
        ],
        cwd=profile.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_sigkill_and_resume_lose_and_duplicate_nothing(tmp_path):
    shutil.copytree(
        DEMO, tmp_path / "demo", ignore=shutil.ignore_patterns("results", "reports")
    )
    profile = tmp_path / "demo" / "profile.yaml"
    results = tmp_path / "demo" / "results" / f"{RUN}.jsonl"
    rng = random.Random(20261122)
    proc = _start(profile, "--run-id", RUN)
    kills = 0
    for _ in range(4):
        deadline = time.monotonic() + 60
        # Kill once some rows are on disk, at a random moment after that.
        while (
            not (results.exists() and results.stat().st_size)
            and time.monotonic() < deadline
            and proc.poll() is None
        ):
            time.sleep(0.02)
        time.sleep(rng.uniform(0.05, 0.6))
        if proc.poll() is not None:
            break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        kills += 1
        proc = _start(profile, "--resume", RUN)
    assert proc.wait(timeout=300) == 0, proc.stderr.read()
    assert kills >= 2

    rows = [json.loads(line) for line in results.read_text().splitlines()]
    cells = [(r["model"], r["mode"], r["scenarioId"], r["iteration"]) for r in rows]
    assert (
        len(cells) == len(set(cells)) == 2 * 5 * 10
    )  # modes x demo scenarios x repetitions
    manifest = json.loads((results.parent / f"{RUN}.manifest.json").read_text())
    sessions = Path(manifest["sessionsDir"])
    if not sessions.is_absolute():
        sessions = profile.parent / sessions
    # The trace is on disk before its row: every row's cell has its trace in the store.
    stored = {tuple(r) for r in latest_records(sessions / TRACES_FILE)}
    for cell in cells:
        assert cell in stored, cell
    leftovers = [
        p
        for p in (tmp_path / "demo").rglob("*")
        if p.name.endswith(".tmp") or p.name.endswith(".lock")
    ]
    assert leftovers == []
