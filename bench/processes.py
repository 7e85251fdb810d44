"""One benchmark process, run and measured: its wall time, peak memory and output.

run_all.py and bench_original.py both use it; run_all.py imports bench_original.py, so
these helpers live here rather than in run_all.py (no import cycle, tests/test_layers.py).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = Path(__file__).resolve().parent / "workloads.py"


class BenchError(Exception):
    """A benchmark process failed or printed something unexpected."""


@attrs.frozen
class ProcessRun:
    """One finished child process: its wall time, peak RSS and output."""

    wall_ms: float
    peak_rss_mb: float
    stdout: str
    stderr: str
    returncode: int


def _child_env() -> dict[str, str]:
    # Bytecode caches written and used, as on a user's machine (whole-process figures
    # include imports).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    return env


def _tree_rss_kb(pid: int) -> int:
    """Current resident set of ``pid`` and all its descendants, in KiB (0 where /proc is
    missing)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            with open(
                f"/proc/{current}/status", encoding="ascii", errors="replace"
            ) as f:
                total += next(
                    (int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0
                )
            for task in os.listdir(f"/proc/{current}/task"):
                with open(
                    f"/proc/{current}/task/{task}/children", encoding="ascii"
                ) as f:
                    todo.extend(int(child) for child in f.read().split())
        except (OSError, ValueError):
            continue  # the process ended between two reads
    return total


def run_process(
    cmd: Sequence[str], timeout_s: float = 900, cwd: Path = ROOT
) -> ProcessRun:
    """Run ``cmd`` to completion, tracking its wall time and peak memory.

    Peak RSS is the larger of the process's own ``ru_maxrss`` (from ``wait4``, which
    also covers children it waited for) and the peak of the whole process tree's RSS
    sampled every ~10 ms, since a helper process (the report's HTML worker) runs
    *alongside* its parent and their memory adds up.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd), stdout=out, stderr=err, env=_child_env(), cwd=cwd
        )
        deadline = start + timeout_s
        tree_peak_kb, next_sample = 0, start
        # wait4 (not Popen.wait) because it returns the rusage of exactly this child.
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            now = time.perf_counter()
            if now >= next_sample:
                tree_peak_kb = max(tree_peak_kb, _tree_rss_kb(proc.pid))
                next_sample = now + 0.01
            if now > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.002)
        wall_ms = (time.perf_counter() - start) * 1000
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        # Linux reports ru_maxrss in KiB.
        return ProcessRun(
            wall_ms=wall_ms,
            peak_rss_mb=max(usage.ru_maxrss, tree_peak_kb) / 1024,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            returncode=proc.returncode,
        )


def checked(run: ProcessRun, what: str) -> ProcessRun:
    if run.returncode != 0:
        tail = (run.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise BenchError(f"{what}: exited with {run.returncode}: {tail}")
    return run
