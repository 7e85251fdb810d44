"""Two `profiler run --resume` of one run started together: one finishes it, the other
is refused in one line (issue 31.5)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiler_core.errors import StoreError
from profiler_core.storage.store import RunLock, RunPaths

pytestmark = pytest.mark.slow

PROFILER = Path(sys.executable).with_name("profiler")
DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo"
RUN = "run_race"


def _start(profile: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(PROFILER), "run", str(profile), "--repetitions", "6", "--concurrency", "2", "--no-report", "--allow-errors", *extra],
        cwd=profile.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def _cells(results: Path) -> list[tuple[str, str, str, int]]:
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    return [(r["model"], r["mode"], r["scenarioId"], r["iteration"]) for r in rows]


def test_two_resumes_started_together_record_every_cell_once(tmp_path):
    shutil.copytree(
        DEMO, tmp_path / "demo", ignore=shutil.ignore_patterns("results", "reports")
    )
    profile = tmp_path / "demo" / "profile.yaml"
    results = tmp_path / "demo" / "results" / f"{RUN}.jsonl"
    first = _start(profile, "--run-id", RUN)
    deadline = time.monotonic() + 60
    while (
        not (results.exists() and len(_cells(results)) >= 4)
        and time.monotonic() < deadline
        and first.poll() is None
    ):
        time.sleep(0.02)
    assert first.poll() is None, (
        "the run ended before it could be killed; give it more cells"
    )
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    left_before = 2 * 5 * 6 - len(set(_cells(results)))
    assert left_before > 10  # the resumes have real work to race for

    racers = [_start(profile, "--resume", RUN) for _ in range(2)]
    outcomes = []
    for proc in racers:
        try:
            out, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        outcomes.append((proc.returncode, out, err))

    statuses = sorted(code for code, _, _ in outcomes)
    assert statuses == [0, 1], outcomes
    refused = next(err for code, _, err in outcomes if code == 1)
    assert (
        len(refused.strip().splitlines()) == 1
        and "is being written by process" in refused
    ), refused
    cells = _cells(results)
    assert (
        len(cells) == len(set(cells)) == 2 * 5 * 6
    )  # modes x demo scenarios x repetitions, none twice
    assert not list(results.parent.glob("*.lock"))


def test_a_lock_file_removed_while_it_was_waited_for_is_not_taken(
    tmp_path, monkeypatch
):
    """The narrow race of a release: a writer that opened the lock file just before its
    holder removed it
    must not lock that removed file while a third writer locks the new one at the same name."""
    from profiler_core.storage import store

    paths = RunPaths(tmp_path, "r1")
    holder = RunLock(paths)
    holder.acquire()
    opened = store._lock_fd(holder.path)  # a second writer has opened the file...
    holder.release()  # ...and its holder ends: the file is removed, its lock dropped
    third = RunLock(paths)
    third.acquire()  # a third writer makes a new lock file and locks it
    try:
        real, first = store._lock_fd, [opened]
        # The second writer goes on with the descriptor it opened; a retry opens the name again.
        monkeypatch.setattr(
            store, "_lock_fd", lambda path: first.pop() if first else real(path)
        )
        with pytest.raises(StoreError, match="being written by process"):
            RunLock(paths).acquire()
    finally:
        third.release()
    assert not holder.path.exists()
