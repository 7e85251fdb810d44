"""Shell commands of a task (workspace set-up, verifiers): run to their end or their timeout, output kept.

Each command runs in a process group of its own, with a minimal environment
(``PATH``, ``LANG``, a private ``HOME`` and ``TMPDIR``, plus what the task
gives) — never the profiler's own, which may hold API keys. A command that
outlives its timeout is ended by its group's PID (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs
import trio

from ..processes import end_process_group, track_group

#: Bytes of a command's output kept (its end: where failures are reported).
OUTPUT_TAIL = 4000
#: Seconds between SIGTERM and SIGKILL when a command is ended.
GRACE_S = 2.0
#: Seconds the output is still read after the command exited.
DRAIN_S = 1.0

#: Turns (argv, env, cwd) into what is really started (a sandbox's wrapper); the default starts it as it is.
Confine = Callable[[list[str], dict[str, str], Path], tuple[list[str], dict[str, str]]]


@attrs.frozen(kw_only=True)
class CommandResult:
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


def base_environment(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a task command starts from: no variable of the profiler's except ``PATH`` and the locale."""
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(home)}
    for name in ("LANG", "LC_ALL", "TZ"):
        if name in os.environ:
            env[name] = os.environ[name]
    env.update({k: str(v) for k, v in (extra or {}).items()})
    return env


async def run_command(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float, confine: Confine | None = None
) -> CommandResult:
    """Run ``argv`` in ``cwd`` until it exits or ``timeout_s`` passes; its group is ended either way."""
    command, environment = list(argv), dict(env)
    if confine is not None:
        command, environment = confine(command, environment, cwd)
    t0 = time.monotonic()
    try:
        process = await trio.lowlevel.open_process(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment,
            cwd=cwd, start_new_session=True,
        )
    except OSError as exc:
        return CommandResult(exit_code=None, output="", error=f"cannot start {command[0]!r}: {exc.strerror or exc}")
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
        exit_code=None if timed_out else process.returncode, output=text, timed_out=timed_out,
        wall_ms=round((time.monotonic() - t0) * 1000, 3),
    )


async def _read_tail(process: trio.Process, tail: bytearray, scope: trio.CancelScope) -> None:
    """Read the command's output to its end, keeping the last ``OUTPUT_TAIL`` bytes."""
    assert process.stdout is not None
    with scope:
        async with process.stdout:
            while chunk := await process.stdout.receive_some(65536):
                tail += chunk
                if len(tail) > OUTPUT_TAIL:
                    del tail[: len(tail) - OUTPUT_TAIL]


__all__ = ["CommandResult", "Confine", "base_environment", "run_command"]
