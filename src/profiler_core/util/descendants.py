"""The processes below a process, read from ``/proc``: to end what a session of a shared
server started.

A program that serves several sessions (``opencode serve``) runs each
session's tools as its own children; a tool that leaves its shell (``&``,
``nohup``, ``setsid``) would outlive the session. :data:`SUBREAPER` makes
the server adopt such orphans (``PR_SET_CHILD_SUBREAPER``, kept across
``execve``), so they stay below it, where :func:`descendants` finds them.
Processes are told apart by PID *and* start time, so a reused PID is never
signalled. Linux only; elsewhere nothing is found.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

__all__ = ["SUBREAPER", "descendants", "end_processes", "working_folder"]

#: ``python -c SUBREAPER PROGRAM ARGS...``: become a child subreaper, then exec the
#: program (the flag stays).
SUBREAPER = (
    "import ctypes, os, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER\n"
    "os.execvp(sys.argv[1], sys.argv[1:])\n"
)


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent PID, start time) of a live process; None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else (int(fields[1]), fields[19])


def descendants(root: int) -> dict[int, str]:
    """Every live process below ``root`` (not ``root`` itself): PID -> start time."""
    children: dict[int, list[tuple[int, str]]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    for entry in entries:
        if entry.isdigit() and (info := _stat(int(entry))) is not None:
            children.setdefault(info[0], []).append((int(entry), info[1]))
    found: dict[int, str] = {}
    todo = [root]
    while todo:
        for pid, started in children.get(todo.pop(), ()):
            if pid not in found:
                found[pid] = started
                todo.append(pid)
    return found


def working_folder(pid: int) -> Path | None:
    """The current folder of a process, or None when it cannot be read."""
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


def end_processes(processes: dict[int, str], wait_s: float = 2.0) -> int:
    """SIGKILL each process still running with the same start time, and wait (bounded)
    until they are gone;
    how many were signalled."""
    signalled = []
    for pid, started in processes.items():
        info = _stat(pid)
        if info is None or info[1] != started:
            continue  # gone, or the PID now belongs to another process
        try:
            os.kill(pid, signal.SIGKILL)
            signalled.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
    # A SIGKILL takes effect a moment later: the caller's next step must not meet the
    # process still running.
    deadline = time.monotonic() + wait_s
    while (
        any(_stat(pid) is not None for pid in signalled) and time.monotonic() < deadline
    ):
        time.sleep(0.005)
    return len(signalled)
