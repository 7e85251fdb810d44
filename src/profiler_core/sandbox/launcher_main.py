"""Start bwrap and stay its parent until it ends; end it if the profiler dies. Run as a
script, stdlib only.

    python -I -S launcher_main.py PROFILER_PID bwrap --hostname TOKEN OPTIONS... -- PROGRAM...

bwrap's OPTIONS (the host paths it mounts and hides) are handed to it through
``--args FD`` (a memory file), not its command line: the sandbox's PID 1 is
bwrap, and its ``/proc/1/cmdline`` would show every hidden path to the agent.
Only ``--hostname TOKEN`` (how ``kill_sandbox`` finds it) and the program stay.

bwrap's ``--die-with-parent`` ties the sandbox to the *thread* that started
it. trio starts processes from a worker thread of its thread cache, which
exits after ten idle seconds, so a sandbox started directly from the profiler
was killed at a random moment (docs/sandbox.md, "Ending"). This launcher is
single-threaded and lives exactly as long as bwrap: bwrap's parent-death
signal then fires only when the launcher ends, and the launcher ends bwrap
when the profiler's process is gone (a pidfd of PROFILER_PID, polled where
pidfds are missing): with its whole process group when it leads one, so a
sandbox whose bwrap had not yet armed its own parent-death signal ends too.

Signals sent to the process group (the profiler's SIGTERM) reach bwrap and the
program directly; the launcher ignores them and waits, then exits as bwrap
did — with its status, or by the same signal.
"""

from __future__ import annotations

import os
import select
import signal
import sys

_IGNORED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def main(argv: list[str]) -> int:
    profiler = int(argv[0])
    if os.getppid() != profiler:
        return 125  # the profiler is already gone
    watch = _pidfd(profiler)
    # Blocked, not yet ignored, across the fork: a signal to the group in that window
    # must still reach bwrap.
    # Ignored in the child, it would be lost, and bwrap (and the launcher waiting for
    # it) would run on.
    signal.pthread_sigmask(signal.SIG_BLOCK, _IGNORED)
    child = os.fork()
    if child == 0:
        for sig in _IGNORED:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(
            signal.SIG_UNBLOCK, _IGNORED
        )  # one sent since the fork ends the child here
        try:
            os.execvp(argv[1], _with_args_fd(argv[1:]))
        except OSError as exc:
            os.write(2, f"launcher: cannot start {argv[1]}: {exc}\n".encode())
            os._exit(127)
    early = signal.sigpending() & set(
        _IGNORED
    )  # read first: ignoring a pending signal discards it
    for sig in _IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    for sig in early:
        os.kill(
            child, sig
        )  # sent to the group before the fork, when only the launcher could get it
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _IGNORED)
    _let_go_of_stdio()
    return _wait(child, profiler, watch)


def _with_args_fd(command: list[str]) -> list[str]:
    """``bwrap --hostname T OPTIONS -- PROGRAM`` as ``bwrap --hostname T --args FD --
    PROGRAM``, OPTIONS in FD."""
    if len(command) < 3 or command[1] != "--hostname" or "--" not in command:
        return command
    end = command.index("--")
    options = command[3:end]
    fd = os.memfd_create("bwrap-args", 0)  # inherited by bwrap (no close-on-exec)
    os.write(
        fd, b"".join(o.encode("utf-8", "surrogateescape") + b"\0" for o in options)
    )
    os.lseek(fd, 0, os.SEEK_SET)
    return [*command[:3], "--args", str(fd), *command[end:]]


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _let_go_of_stdio() -> None:
    # The profiler reads the program's output to its end: the launcher must not hold the pipes open.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _wait(child: int, profiler: int, watch: int | None) -> int:
    ended = _pidfd(child)
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid == child:
            return _exit_as(status)
        if _profiler_gone(profiler, watch):
            _end_sandbox(child)
            os.waitpid(child, 0)
            return 137
        if watch is not None and ended is not None:
            select.select([watch, ended], [], [])  # wakes when either process ends
        else:
            select.select(
                [], [], [], 0.05
            )  # old kernels without pidfds: look every 50 ms


def _end_sandbox(child: int) -> None:
    # bwrap's own parent-death signal for the sandbox's PID 1 is armed only some milliseconds
    # after bwrap starts: killed in that window, bwrap alone died and the sandbox ran on. Its
    # processes stay in the launcher's group, so when the launcher leads a group of its own (the
    # profiler starts it in a new session) the whole group ends, the launcher with it.
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os.kill(child, signal.SIGKILL)


def _profiler_gone(profiler: int, watch: int | None) -> bool:
    if watch is not None:
        readable, _, _ = select.select([watch], [], [], 0)
        return bool(readable)
    return os.getppid() != profiler


def _exit_as(status: int) -> int:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
