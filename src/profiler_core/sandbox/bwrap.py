"""The bubblewrap command line of one job.

The sandbox's root is bwrap's own temporary file system, made read-only at
the end (``--remount-ro /``); on it every top-level entry of the host's ``/``
is bound read-only (symbolic links re-made as links), except fresh ``/dev``,
``/proc``, ``/tmp`` and ``/run`` (which holds the Docker socket). Over that
go, shallowest path first, the hidden paths (an empty tmpfs, or
``/dev/null`` for a file), then the writable workspace, home and tmp and the
job's mounts, each at its own path. ``--unshare-all`` gives new user, PID,
network, IPC, UTS and cgroup namespaces (``--share-net`` keeps the host's
network for ``network: full``); ``--cap-drop ALL`` matters when the profiler
runs as root, where bwrap would otherwise keep every capability inside and
``mount -o remount,rw /`` would succeed.

Ending: the caller starts bwrap in a session of its own and ends it by its
process group. The sandbox's processes stay in that group (no
``--new-session``), so the group's SIGTERM reaches the program itself and
SIGKILL reaches the sandbox's PID 1, whose end takes every process of the
sandbox with it; ``--die-with-parent`` covers bwrap being killed alone.
bwrap is started by a small launcher (``launcher_main.py``, the group's
leader) rather than by the profiler itself: the parent-death signal is tied to
the thread that started bwrap, and trio starts processes from worker threads
that exit after ten idle seconds, which killed the sandbox with them. The
launcher lives as long as bwrap and ends it when the profiler's process is gone.
(With ``--new-session`` a kill during bwrap's first milliseconds left the
sandbox running: the parent-death signal was not armed yet. The terminal
attack ``--new-session`` guards against needs a controlling terminal, which
a program started in a new session does not have.) A SIGTERM alone in that
window still ends only bwrap; the sandbox's own PID 1 carries the job's
token as its host name, and :func:`kill_sandbox` finds and kills it when the
job is closed.

The environment is not written on the command line (``--setenv`` would show
API keys to every local user through ``/proc/PID/cmdline``): bwrap is
started with exactly the job's environment and passes it on as it is. Nor
are the mounts: bwrap is the sandbox's PID 1, so the launcher hands its
options over through ``--args FD`` and ``/proc/1/cmdline`` shows the agent
only ``--hostname TOKEN`` and its own program, not the hidden paths.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from ..errors import SandboxError
from .layout import Layout, relay_python
from .network import NetworkPlan

__all__ = ["bwrap_command", "kill_sandbox"]

#: top-level host entries replaced by fresh ones inside
_FRESH = {"dev": "--dev", "proc": "--proc", "tmp": "--tmpfs", "run": "--tmpfs"}


#: container runtimes' storage, where other programs' containers mount and unmount their
#: file systems at any moment: never shown inside. bwrap binds a folder with every mount
#: beneath it, and one that goes away meanwhile fails the sandbox's start ("Can't bind
#: mount /oldroot/var ... Invalid argument"); nor has an agent any business there.
UNSHOWN = ("/var/lib/docker", "/var/lib/containers")


def _root_entries() -> list[tuple[int, int, list[str]]]:
    ops: list[tuple[int, int, list[str]]] = []
    for name in sorted(os.listdir("/")):
        path = f"/{name}"
        if name in _FRESH:
            ops.append((1, 0, [_FRESH[name], path]))
        else:
            _host_entry(path, ops)
    if os.path.isdir("/var/run") and not os.path.islink("/var/run"):
        ops.append((2, 1, ["--tmpfs", "/var/run"]))
    return ops


def _host_entry(path: str, ops: list[tuple[int, int, list[str]]]) -> None:
    """``path`` shown read-only: bound whole, or, when something ``UNSHOWN`` lies
    beneath it, entry by entry without that."""
    depth = _depth(Path(path))
    if os.path.islink(path):
        ops.append((depth, 0, ["--symlink", os.readlink(path), path]))
        return
    beneath = any(u.startswith(path + "/") and os.path.lexists(u) for u in UNSHOWN)
    if not beneath or not os.path.isdir(path):
        ops.append((depth, 0, ["--ro-bind", path, path]))
        return
    try:
        names = sorted(os.listdir(path))
    except OSError:
        names = []  # unreadable: shown empty, as its contents could not be shown anyway
    ops.append((depth, 0, ["--dir", path]))
    for name in names:
        entry = f"{path}/{name}"
        if entry not in UNSHOWN:
            _host_entry(entry, ops)


def _depth(path: Path) -> int:
    return len(path.parts) - 1


def _check_target(target: Path, layout: Layout) -> None:
    """A mount point bwrap can make: existing, new at the top level, or in a folder
    writable inside."""
    ancestor = target
    while not ancestor.exists():
        ancestor = ancestor.parent
    if ancestor == target or ancestor == Path("/"):
        return
    writable = (
        Path("/tmp"),
        Path("/run"),
        *layout.hidden,
        layout.workspace,
        layout.home,
        layout.tmp,
    )
    if not any(ancestor == w or w in ancestor.parents for w in writable):
        raise SandboxError(
            f"sandbox: bwrap cannot mount at {target}: {ancestor} is read-only inside "
            "(use a path that exists on the host, or a new top-level folder such as /logs)"
        )


def _mount_ops(layout: Layout) -> list[list[str]]:
    """Mount options, shallowest target first (a parent before what is mounted inside it)."""
    ops = _root_entries()
    for hidden in layout.hidden:
        if hidden.is_dir():
            ops.append((_depth(hidden), 1, ["--tmpfs", str(hidden)]))
        elif hidden.exists():
            ops.append((_depth(hidden), 1, ["--ro-bind", "/dev/null", str(hidden)]))
    for folder in (layout.workspace, layout.home, layout.tmp):
        ops.append((_depth(folder), 2, ["--bind", str(folder), str(folder)]))
    if layout.runtime is not None:
        ops.append(
            (
                _depth(layout.out_dir),
                2,
                ["--ro-bind", str(layout.out_dir), str(layout.out_dir)],
            )
        )
        ops.append(
            (
                _depth(layout.in_dir),
                2,
                ["--bind", str(layout.in_dir), str(layout.in_dir)],
            )
        )
    for mount in layout.mounts:
        _check_target(mount.inside, layout)
        flag = "--bind" if mount.writable else "--ro-bind"
        ops.append(
            (_depth(mount.inside), 2, [flag, str(mount.source), str(mount.inside)])
        )
    ops.sort(key=lambda op: (op[0], op[1]))
    return [op[2] for op in ops]


def bwrap_command(
    bwrap: str,
    layout: Layout,
    plan: NetworkPlan,
    network: str,
    argv: tuple[str, ...],
    token: str,
) -> list[str]:
    """``LAUNCHER bwrap OPTIONS -- [relay ... --] ARGV`` for one job; ``token`` (unique)
    becomes the sandbox's host name."""
    # The launcher passes everything between the host name and "--" through --args FD:
    # never on the command line.
    command = [*launcher_prefix(), bwrap, "--hostname", token]
    for op in _mount_ops(layout):
        command += op
    command += ["--remount-ro", "/", "--chdir", str(layout.workspace), "--unshare-all"]
    if network == "full":
        command.append("--share-net")
    command += ["--cap-drop", "ALL", "--die-with-parent", "--"]
    if plan.relayed:
        command += [
            str(relay_python()),
            "-I",
            "-S",
            str(layout.out_dir / "relay.py"),
            *layout.relay_arguments(plan),
            "--",
        ]
    return command + list(argv)


def launcher_prefix() -> list[str]:
    """``python -I -S launcher_main.py PID``: bwrap's parent for as long as it runs (see
    launcher_main)."""
    return [
        sys.executable,
        "-I",
        "-S",
        str(Path(__file__).with_name("launcher_main.py")),
        str(os.getpid()),
    ]


def kill_sandbox(token: str) -> None:
    """SIGKILL any bwrap process of the sandbox named ``token`` still running (its PID 1
    takes the rest with it)."""
    needle = b"\0--hostname\0" + token.encode() + b"\0"
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
        except OSError:
            continue
        if needle in cmdline:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
