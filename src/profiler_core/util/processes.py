"""Ending child processes by their own PID: process groups, SIGTERM then SIGKILL,
nothing left at exit.

Every program a provider or plugin starts (an agent CLI, ``opencode serve``,
``ghx``) runs in a new session (``start_new_session=True``), so its PID is
also the id of a process group holding whatever it spawned in turn. These
helpers signal that group, never a name or a pattern, and remember the groups
still alive so the interpreter's exit kills them even after an unhandled error.
"""

from __future__ import annotations

import atexit
import os
import signal
from collections.abc import Callable
from typing import Protocol

from . import leftovers

__all__ = [
    "end_process_group",
    "forget_group",
    "process_alive",
    "signal_group",
    "track_group",
]

#: live groups -> what else their owner removes when it ends one (a temporary folder, a
#: sandbox), if anything
_LIVE_GROUPS: dict[int, Callable[[], None] | None] = {}


class _Process(Protocol):
    pid: int

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> object: ...


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to a process group; a group that is gone already is fine."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def track_group(pgid: int, cleanup: Callable[[], None] | None = None) -> None:
    """Remember a live group, so the interpreter's exit kills it (then calls
    ``cleanup``) if nothing else does.

    Where ``$PROFILER_LEFTOVERS`` is set, a parent also cleans it up if this
    process is killed (``leftovers``). The one registry of the process: every
    group a provider, judge or plugin starts goes here.
    """
    _LIVE_GROUPS[pgid] = cleanup
    leftovers.remember_group(pgid)


def forget_group(pgid: int) -> None:
    """The group has been ended (and its owner cleaned up): no need to kill it at exit."""
    _LIVE_GROUPS.pop(pgid, None)
    leftovers.forget_group(pgid)


async def end_process_group(process: _Process, grace_s: float) -> None:
    """SIGTERM the process's group, SIGKILL it after ``grace_s``; also after a clean
    exit (children may linger).

    Shielded from cancellation: a Ctrl-C or timeout around it must not leave the group running.
    """
    import trio  # here: the providers importing this module are listed without loading trio

    with trio.CancelScope(shield=True):
        if process.returncode is None:
            signal_group(process.pid, signal.SIGTERM)
            with trio.move_on_after(grace_s):
                await process.wait()
        signal_group(process.pid, signal.SIGKILL)
        if process.returncode is None:
            await process.wait()
        forget_group(process.pid)


def process_alive(pid: int) -> bool:
    """Whether a process with this id still exists (and is not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


@atexit.register
def _kill_leftovers() -> None:
    for pgid, cleanup in list(_LIVE_GROUPS.items()):
        signal_group(pgid, signal.SIGKILL)
        if cleanup is not None:
            try:
                cleanup()
            # at exit, one owner's failed clean-up must not stop the others
            except Exception:  # noqa: BLE001
                pass
        forget_group(pgid)
