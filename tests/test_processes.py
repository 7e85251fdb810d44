"""One registry of live process groups: an exit that skipped the clean-up (an uncaught
error) still ends them."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from profiler_core.util.processes import process_alive

SRC = Path(__file__).resolve().parent.parent / "src"


def test_an_uncaught_error_still_kills_tracked_groups_and_runs_their_clean_up(tmp_path):
    marker = tmp_path / "cleaned"
    code = (
        "import subprocess, sys\n"
        "from pathlib import Path\n"
        "from profiler_core.util.processes import track_group\n"
        "kept = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "plain = subprocess.Popen(['sleep', '301'], start_new_session=True)\n"
        f"track_group(kept.pid, lambda: Path({str(marker)!r}).write_text('done'))\n"
        "track_group(plain.pid)\n"
        "print(kept.pid, plain.pid, flush=True)\n"
        "raise RuntimeError('a crash before shutdown')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(SRC)},
    )
    assert "a crash before shutdown" in done.stderr
    pids = [int(p) for p in done.stdout.split()]
    deadline = time.monotonic() + 5
    while any(process_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(process_alive(p) for p in pids), (
        "a tracked group outlived the interpreter"
    )
    assert marker.read_text() == "done"


def test_a_failing_clean_up_does_not_stop_the_others(tmp_path):
    code = (
        "import subprocess\n"
        "from profiler_core.util.processes import track_group\n"
        "a = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "b = subprocess.Popen(['sleep', '301'], start_new_session=True)\n"
        "track_group(a.pid, lambda: 1 / 0)\n"
        "track_group(b.pid)\n"
        "print(a.pid, b.pid, flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(SRC)},
    )
    pids = [int(p) for p in done.stdout.split()]
    deadline = time.monotonic() + 5
    while any(process_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done.returncode == 0 and not any(process_alive(p) for p in pids)
