"""What a killed run leaves behind — containers, temporary folders, process groups —
removed by the next run.

While a run executes it records, in its own folder below
``$TMPDIR/profiler-runs-UID/``, its PID (with the process's start time), the
process groups it starts, the temporary folders it makes and the container
runtimes it used (``util.leftovers``); its containers carry its id and PID as
labels (``sandbox.containers``). A run that ends, however it ends short of
SIGKILL, removes its own folder. Every run that starts (a ``--resume`` too)
first looks at the folders there: one whose process is gone (no process has
its PID, or one with another start time) was killed, so its recorded groups
are killed, its folders and labelled containers removed, one line says so,
and its folder goes.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..util.leftovers import clean_up, recording, runtimes, start_time

log = logging.getLogger(__name__)

#: the file in a run's folder holding ``PID START_TIME``
OWNER = "owner"


def runs_folder() -> Path:
    """The folder of this user's live runs' records (one user's runs never touch another's)."""
    return Path(tempfile.gettempdir()) / f"profiler-runs-{os.getuid()}"


def _own_folder(folder: Path) -> Path | None:
    """``folder``, made if missing; None when it is not a plain folder of this user (a
    planted link)."""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return None
    return folder if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() else None


@contextmanager
def tracked(run_id: str) -> Iterator[Path | None]:
    """Record the run's leftovers while the block runs; its folder is removed when the
    block ends."""
    parent = _own_folder(runs_folder())
    pid = os.getpid()
    started = start_time(pid)
    if parent is None or started is None:
        # no record (no /proc, an unusable temp folder): the run's own clean-up is the
        # only guard
        yield None
        return
    spool = parent / f"{_safe(run_id)}.{pid}"
    try:
        try:
            spool.mkdir(mode=0o700)
        except (
            FileNotFoundError
        ):  # another run removed the emptied parent just now: make it again
            if _own_folder(parent) is None:
                raise
            spool.mkdir(mode=0o700)
        (spool / OWNER).write_text(f"{pid} {started}\n{run_id}\n", encoding="utf-8")
    except OSError:
        yield None
        return
    try:
        with recording(run_id, spool):
            yield spool
    finally:
        shutil.rmtree(spool, ignore_errors=True)
        _remove_if_empty(parent)


def _remove_if_empty(parent: Path) -> None:
    """The records' folder goes with its last record, so a run leaves nothing in the
    temp folder.

    Runs start and end at the same time (in several processes), so a reader of the
    folder finds it gone, or a dead run's records gone under it, and goes on.
    """
    try:
        parent.rmdir()
    except OSError:
        pass  # another run's record is there (or the folder is gone already)


def reap() -> list[str]:
    """Clean up after every recorded run whose process is gone; one line per run cleaned up."""
    if not runs_folder().exists():
        return []  # no run recorded anything: nothing to make, nothing to clean
    parent = _own_folder(runs_folder())
    if parent is None:
        return []
    try:
        spools = sorted(parent.iterdir())
    except FileNotFoundError:  # the last live run removed the emptied folder just now
        return []
    lines = []
    for spool in spools:
        owner = _owner(spool)
        if owner is None or _alive(owner[0], owner[1]):
            continue
        lines.append(_reap_one(spool, *owner))
    _remove_if_empty(parent)
    return lines


def _reap_one(spool: Path, pid: int, started: str, run_id: str) -> str:
    from ..sandbox.containers import (
        remove_labelled,
    )  # the runtimes are asked only when a dead run used them

    containers = 0
    for binary in runtimes(spool):
        if Path(binary).is_file():
            try:
                containers += remove_labelled(binary, run_id, pid)
            # a runtime that does not answer must not stop this run
            except Exception as exc:  # noqa: BLE001
                log.warning(
                    "run %s: could not remove its containers with %s: %s",
                    run_id,
                    binary,
                    exc,
                )
    killed, removed = clean_up(spool)
    shutil.rmtree(spool, ignore_errors=True)
    return (
        f"run {run_id} (process {pid}) ended without cleaning up: removed "
        f"{containers} container(s), "
        f"{removed} temporary folder(s), {killed} process group(s)"
    )


def _owner(spool: Path) -> tuple[int, str, str] | None:
    """(PID, start time, run id) from a run's folder; None for anything else."""
    try:
        if not stat.S_ISDIR(spool.lstat().st_mode):
            return None
        first, run_id = (
            (spool / OWNER).read_text(encoding="utf-8")[:400].splitlines()[:2]
        )
        pid, started = first.split()
        return int(pid), started, run_id
    except (OSError, ValueError):
        return None


def _alive(pid: int, started: str) -> bool:
    return start_time(pid) == started


def _safe(run_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", run_id)[:80] or "run"


__all__ = ["reap", "runs_folder", "tracked"]
