"""What a process leaves if it dies before its clean-up: process groups and temporary
folders, written down.

A Ray worker (or any process started with ``$PROFILER_LEFTOVERS`` set to a
folder) records every process group it starts and every temporary folder it
makes there, one small file each, and removes the record when it ends the
group or deletes the folder. A worker killed mid-session (the driver
interrupted, the worker's own exit handler never run) leaves its records
behind; the driver then calls :func:`clean_up` on the folder: each recorded
group still alive — checked by its PID *and* the start time of that process,
so a reused PID is never signalled — is killed, and each folder removed.
Without the variable nothing is written: the process's own exit handler
(``processes``) is the guard.

A run records the same way into its own folder while it executes
(:func:`recording`, a context variable, so two runs in one process keep
theirs apart), and also notes the container runtimes it started containers
with and labels them with its id: a run killed outright (SIGKILL) is cleaned
up by the next run that starts (``runner.deadruns``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

#: The environment variable naming the folder where records are kept.
SPOOL_ENV = "PROFILER_LEFTOVERS"


#: the run executing in this context: (run id, its records folder)
_RUN: ContextVar[tuple[str, Path] | None] = ContextVar(
    "profiler_leftovers_run", default=None
)


def _spool() -> Path | None:
    current = _RUN.get()
    if current is not None:
        return current[1]
    value = os.environ.get(SPOOL_ENV)
    return Path(value) if value else None


@contextmanager
def recording(run_id: str, spool: Path) -> Iterator[None]:
    """Within the block (and the tasks and threads it starts), record groups, folders
    and runtimes into ``spool``."""
    token = _RUN.set((run_id, spool))
    try:
        yield
    finally:
        _RUN.reset(token)


def current_run() -> tuple[str, int] | None:
    """The id of the run recording in this context and the PID of its process (labels
    for its containers)."""
    current = _RUN.get()
    return (current[0], os.getpid()) if current is not None else None


def remember_runtime(binary: str) -> None:
    """Record that a container runtime (``docker``, ``podman``) started containers for this run."""
    spool = _spool()
    if spool is not None:
        _write(
            spool / ("runtime-" + hashlib.sha256(binary.encode()).hexdigest()[:20]),
            binary,
        )


def runtimes(spool: Path) -> list[str]:
    """The container runtimes recorded in ``spool``."""
    found = (_read(record) for record in sorted(spool.glob("runtime-*")))
    return [binary for binary in found if binary is not None]


def start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (to tell it from a later process given the same
    PID), or None."""
    return _start_time(pid)


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot, ``/proc/PID/stat``
    field 22), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def remember_group(pgid: int) -> None:
    """Record a process group this process started (its leader's PID and start time)."""
    spool = _spool()
    if spool is None:
        return
    started = _start_time(pgid)
    if started is not None:
        _write(spool / f"group-{pgid}", started)


def forget_group(pgid: int) -> None:
    """The group has been ended."""
    spool = _spool()
    if spool is not None:
        (spool / f"group-{pgid}").unlink(missing_ok=True)


def temporary_folder(prefix: str, parent: Path | None = None) -> Path:
    """``tempfile.mkdtemp``, recorded until :func:`remove_folder` removes it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    spool = _spool()
    if spool is not None:
        _write(spool / _folder_record(folder), str(folder))
    return folder


def remove_folder(folder: Path) -> None:
    """Delete a folder made by :func:`temporary_folder`, and its record."""
    shutil.rmtree(folder, ignore_errors=True)
    spool = _spool()
    if spool is not None:
        (spool / _folder_record(folder)).unlink(missing_ok=True)


def clean_up(spool: Path) -> tuple[int, int]:
    """Kill the recorded groups still alive and remove the recorded folders; (groups
    killed, folders removed)."""
    killed = removed = 0
    # Two starting runs may clean up after the same dead one: a record the other
    # removed first is skipped.
    for record in sorted(spool.glob("group-*")):
        pgid = int(record.name.removeprefix("group-"))
        started = _start_time(pgid)
        if started is not None and started == (_read(record) or "").strip():
            try:
                os.killpg(pgid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
        record.unlink(missing_ok=True)
    for record in sorted(spool.glob("folder-*")):
        text = _read(record)
        folder = Path(text) if text else None
        if (
            folder is not None
            and folder.name.startswith("profiler-")
            and folder.is_dir()
        ):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
        record.unlink(missing_ok=True)
    return killed, removed


def _folder_record(folder: Path) -> str:
    return "folder-" + hashlib.sha256(str(folder).encode()).hexdigest()[:20]


def _read(record: Path) -> str | None:
    """A record's text; None when it is gone (removed by another run cleaning up)."""
    try:
        return record.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError:
        pass  # a record is a second line of defence; its loss must not stop a session


__all__ = [
    "SPOOL_ENV",
    "clean_up",
    "current_run",
    "forget_group",
    "recording",
    "remember_group",
    "remember_runtime",
    "remove_folder",
    "runtimes",
    "start_time",
    "temporary_folder",
]
