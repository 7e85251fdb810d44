"""An agent's program run through the environment contract alone (a plugin's kind).

An environment with no ``command_line`` of its own (a remote sandbox, a
third-party kind) still runs Claude Code, Codex and OpenCode inside: the
program is started by the contract's ``exec``, whose streamed output
(``on_output``) is read as the agent's JSON lines while they arrive, and the
session's folders go in and out by ``put`` / ``get`` (in_trial.py). Input the
program reads on its standard input is put in as a file and redirected by the
shell inside. A session ended early (its timeout, Ctrl-C, an agent asked to
stop) ends the command through the optional ``cancel`` event of ``exec``
(docs/environments.md, "The contract"); a kind without it has its command
ended at the latest when the trial stops, and a warning says so.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..util.signature import accepts_keyword
from .agent_run import AgentRun, take_line

log = logging.getLogger("agent_profiler")

__all__ = ["accepts_cancel", "run_by_contract"]

#: seconds a cancelled command may take to end before its worker thread is left behind
END_S = 30.0
#: the file of a program's standard input, in the session's folder (copied in with it)
STDIN_NAME = "profiler-stdin"
#: runs ``"$@"`` with ``$1`` as its standard input
_REDIRECT = 'f=$1; shift; exec "$@" < "$f"'


def accepts_cancel(method: Callable[..., Any]) -> bool:
    """Whether an environment's ``exec`` takes the optional ``cancel`` event."""
    return accepts_keyword(method, "cancel")


class _Lines:
    """The program's output as it streams: JSON lines into an :class:`AgentRun`."""

    def __init__(
        self,
        run: AgentRun,
        on_line: Callable[[dict[str, Any]], bool] | None,
        stop: threading.Event,
    ) -> None:
        self.run, self.on_line, self.stop = run, on_line, stop
        self.started = time.monotonic()
        self.buffer = b""
        self.lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        """One chunk of output (from the environment's thread, or the loop's)."""
        with self.lock:
            self.buffer += chunk
            *complete, self.buffer = self.buffer.split(b"\n")
            for raw in complete:
                self._line(raw)

    def close(self) -> None:
        """The output's last line without its newline."""
        with self.lock:
            if self.buffer.strip():
                self._line(self.buffer)
            self.buffer = b""

    def _line(self, raw: bytes) -> None:
        at = time.monotonic() - self.started
        if take_line(self.run, raw, at, self.on_line):
            self.stop.set()  # the provider asked the agent to stop


async def run_by_contract(
    environment: Any,
    argv: list[str],
    env: dict[str, str],
    *,
    cwd: str | None,
    user: str | None,
    stdin_file: str | None,
    on_line: Callable[[dict[str, Any]], bool] | None,
    keep: bool,
) -> AgentRun:
    """Run ``argv`` by ``environment.exec`` with its output streamed; ``stdin_file``:
    a path inside holding its standard input."""
    if stdin_file is not None:
        argv = ["sh", "-c", _REDIRECT, "sh", stdin_file, *argv]
    run = AgentRun(pid=0, started_at=datetime.now(UTC), output=[] if keep else None)
    cancel = threading.Event()
    lines = _Lines(run, on_line, cancel)
    kwargs: dict[str, Any] = {
        "env": env,
        "cwd": cwd,
        "user": user,
        "timeout_s": None,
        "on_output": lines.feed,
    }
    try:
        result = await _exec(environment, argv, kwargs, cancel)
    finally:
        lines.close()
        run.wall_ms = round((time.monotonic() - lines.started) * 1000, 3)
    run.exit_code = result.exit_code
    if result.error:
        run.noise.append(result.error[:500])
    return run


async def _exec(
    environment: Any,
    argv: list[str],
    kwargs: dict[str, Any],
    cancel: threading.Event,
) -> Any:
    """``environment.exec`` ended through its ``cancel`` event when it takes one; else an
    ``async def`` is cancelled as it is, a ``def`` left to the trial's stop."""
    import trio

    method = environment.exec
    if accepts_cancel(method):
        return await _cancellable(
            functools.partial(method, argv, cancel=cancel, **kwargs), cancel
        )
    if inspect.iscoroutinefunction(method):
        return await method(argv, **kwargs)
    try:
        return await trio.to_thread.run_sync(
            functools.partial(method, argv, **kwargs), abandon_on_cancel=True
        )
    except trio.Cancelled:
        log.warning(
            "the agent's command could not be ended: the environment's exec takes no "
            "`cancel` (docs/environments.md); it ends when the trial stops"
        )
        raise


async def _cancellable(call: functools.partial[Any], cancel: threading.Event) -> Any:
    """Run ``call`` (an ``exec``) to its end; a cancellation of the caller sets ``cancel``
    and waits up to :data:`END_S` for the command to end before going on."""
    import trio

    result: Any = None
    async with trio.open_nursery() as nursery:
        waiting = trio.CancelScope(shield=True)

        async def end_on_cancel() -> None:
            try:
                await trio.sleep_forever()
            finally:
                cancel.set()  # the session is ending: the command must end too
                waiting.deadline = trio.current_time() + END_S

        nursery.start_soon(end_on_cancel)
        with waiting:
            if inspect.iscoroutinefunction(call.func):
                result = await call()
            else:
                result = await trio.to_thread.run_sync(call, abandon_on_cancel=True)
        nursery.cancel_scope.cancel()
    return result
