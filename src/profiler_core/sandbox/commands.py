"""Shell commands of a task (workspace set-up, verifiers): run to their end or their
timeout, output kept.

Each command runs in a process group of its own, with a minimal environment
(``PATH``, ``LANG``, a private ``HOME`` and ``TMPDIR``, plus what the task
gives) — never the profiler's own, which may hold API keys — and, when the
run has a sandbox, inside it (``profiler_core.sandbox``). A command that
outlives its timeout is ended by its group's PID (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs
import trio

from ..errors import SandboxError
from ..model.record import Record
from ..util.processes import end_process_group, track_group
from .job import Job, Mount
from .settings import SandboxSettings

#: Bytes of a command's output kept (its end: where failures are reported).
OUTPUT_TAIL = 4000
#: Seconds between SIGTERM and SIGKILL when a command is ended.
GRACE_S = 2.0
#: Seconds the output is still read after the command exited.
DRAIN_S = 1.0


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Confinement(Record):
    """Where a task command runs: the run's sandbox (None: on the host) and what it shows inside."""

    settings: SandboxSettings | None = None
    #: more host paths shown inside (a verifier's tests at ``/tests``, its logs at
    #: ``/logs/verifier``)
    mounts: tuple[Mount, ...] = ()
    #: model endpoints it may reach with ``network: model``
    endpoints: tuple[str, ...] = ()

    @property
    def confined(self) -> bool:
        """Whether the command runs in a sandbox."""
        return self.settings is not None and self.settings.confined


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CommandResult(Record):
    """How a command ended."""

    #: the exit status; None when it was ended at its timeout or could not start
    exit_code: int | None
    #: the end of its standard output and error, merged
    output: str
    timed_out: bool = False
    #: why it could not start (missing program), else None
    error: str | None = None
    wall_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """True when it ran to its end with status 0."""
        return self.exit_code == 0


def base_environment(
    home: Path, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment a task command starts from: no variable of the profiler's except
    ``PATH`` and the locale."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
    }
    for name in ("LANG", "LC_ALL", "TZ"):
        if name in os.environ:
            env[name] = os.environ[name]
    env.update({k: str(v) for k, v in (extra or {}).items()})
    return env


async def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    where: Confinement | None = None,
) -> CommandResult:
    """Run ``argv`` in ``cwd`` (in the sandbox of ``where``) until it exits or
    ``timeout_s`` passes; its group is ended either way."""
    if where is None or not where.confined:
        return await _run(list(argv), cwd=cwd, env=dict(env), timeout_s=timeout_s)
    assert where.settings is not None
    # Inside, the sandbox gives the command a private HOME and TMPDIR of its own.
    inner = {k: v for k, v in env.items() if k not in ("HOME", "TMPDIR")}
    job = Job(
        argv=tuple(argv),
        env=inner,
        workspace=cwd,
        mounts=where.mounts,
        endpoints=where.endpoints,
        name="task",
    )
    from .confinement import (
        confine,
    )  # bwrap's and the containers' machinery: only for a confined command

    try:
        async with confine(where.settings, job) as box:
            return await _run(box.argv, cwd=box.cwd, env=box.env, timeout_s=timeout_s)
    except SandboxError as exc:
        return CommandResult(
            exit_code=None, output="", error=f"the sandbox could not start: {exc}"
        )


async def _run(
    command: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float
) -> CommandResult:
    t0 = time.monotonic()
    try:
        process = await trio.lowlevel.open_process(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        return CommandResult(
            exit_code=None,
            output="",
            error=f"cannot start {command[0]!r}: {exc.strerror or exc}",
        )
    track_group(process.pid)
    tail = bytearray()
    timed_out = False
    try:
        with trio.move_on_after(timeout_s):
            async with trio.open_nursery() as nursery:
                reader = trio.CancelScope()
                nursery.start_soon(_read_tail, process, tail, reader)
                await process.wait()
                # A process it left running may hold the pipe open: read what is there, then stop.
                reader.deadline = trio.current_time() + DRAIN_S
        timed_out = process.returncode is None
    finally:
        await end_process_group(process, GRACE_S)
    text = tail.decode("utf-8", errors="replace")
    return CommandResult(
        exit_code=None if timed_out else process.returncode,
        output=text,
        timed_out=timed_out,
        wall_ms=round((time.monotonic() - t0) * 1000, 3),
    )


async def _read_tail(
    process: trio.Process, tail: bytearray, scope: trio.CancelScope
) -> None:
    """Read the command's output to its end, keeping the last ``OUTPUT_TAIL`` bytes."""
    assert process.stdout is not None
    with scope:
        async with process.stdout:
            while chunk := await process.stdout.receive_some(65536):
                tail += chunk
                if len(tail) > OUTPUT_TAIL:
                    del tail[: len(tail) - OUTPUT_TAIL]


__all__ = ["CommandResult", "Confinement", "base_environment", "run_command"]
