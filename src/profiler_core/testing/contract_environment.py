"""The contract check of an execution environment (``profiler_register_environments``):
a real trial, started and stopped.

:func:`check_environment` builds the kind from its factory as the registry
would, asks ``check()`` (None, or one line), starts one trial and drives it:
a command's exit status and streamed output, a timeout that ends the command
and everything it started, ``put`` that replaces a folder instead of merging
into it, ``get`` that copies a link as a link, what the declared
capabilities promise (a process outliving its command, a network switch),
an ``exec`` taking the optional ``cancel`` event ended when it is set, and
``stop``. A broken rule raises :class:`ContractError` naming the kind.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from ..errors import SandboxError
from ..model.environment import EnvironmentCapabilities, ExecResult, TrialSpec
from ..model.live import Environment
from ..util.asyncs import call_off_loop
from .contract import ContractError, _build

__all__ = ["check_environment"]


def check_environment(
    factory: Callable[..., Any],
    /,
    *,
    spec: TrialSpec | None = None,
    timeout_s: float = 2.0,
) -> str | None:
    """Check an environment kind on one real trial; the line ``check()`` gave when it
    cannot run here (then nothing else runs)."""
    kind = _build(factory, "environments", {})
    problem = kind.check()
    if problem is not None:
        if not isinstance(problem, str) or "\n" in problem.strip():
            raise ContractError(
                f"environment {kind.id!r}: check() must return None or one line, got {problem!r}"
            )
        return problem
    caps = getattr(kind, "capabilities", EnvironmentCapabilities())
    if not isinstance(caps, EnvironmentCapabilities):
        raise ContractError(
            f"environment {kind.id!r}: capabilities must be an "
            f"EnvironmentCapabilities, got {type(caps).__name__}"
        )
    trio.run(
        _drive,
        kind,
        spec or TrialSpec(name="contract", network_switch=caps.network_switch),
        caps,
        timeout_s,
    )
    return None


async def _drive(
    kind: Any, spec: TrialSpec, caps: EnvironmentCapabilities, timeout_s: float
) -> None:
    name = f"environment {kind.id!r}"
    environment = await call_off_loop(kind.start, spec)
    try:
        with tempfile.TemporaryDirectory(prefix="profiler-env-contract-") as scratch:
            await _commands(name, environment, timeout_s)
            await _cancel(name, environment)
            await _files(name, environment, Path(scratch))
            if caps.persistent_processes:
                await _persistent(name, environment)
            if caps.network_switch and "none" in caps.networks:
                await call_off_loop(environment.set_network, "none")
                await call_off_loop(environment.set_network, "full")
    finally:
        await call_off_loop(environment.stop)


async def _exec(environment: Environment, argv: list[str], **kwargs: Any) -> ExecResult:
    result = await call_off_loop(environment.exec, argv, **kwargs)
    if not isinstance(result, ExecResult):
        raise ContractError(
            f"exec returned {type(result).__name__}, expected ExecResult"
        )
    return result


async def _commands(name: str, environment: Environment, timeout_s: float) -> None:
    chunks: list[bytes] = []
    done = await _exec(
        environment,
        ["sh", "-c", "echo streamed; exit 3"],
        timeout_s=30,
        on_output=chunks.append,
    )
    if done.exit_code != 3 or "streamed" not in done.output:
        raise ContractError(
            f"{name}: `sh -c 'echo streamed; exit 3'` gave exit "
            f"{done.exit_code} and output {done.output[-200:]!r}"
        )
    if b"streamed" not in b"".join(chunks):
        raise ContractError(
            f"{name}: exec did not pass the command's output to on_output"
        )
    env = await _exec(
        environment,
        ["sh", "-c", 'printf %s "$CONTRACT_VALUE"'],
        env={"CONTRACT_VALUE": "given"},
        timeout_s=30,
    )
    if env.output.strip() != "given":
        raise ContractError(
            f"{name}: exec's env did not reach the command (got {env.output[-200:]!r})"
        )
    slow = await _exec(environment, ["sh", "-c", "sleep 30"], timeout_s=timeout_s)
    if (
        not slow.timed_out
        or slow.exit_code is not None
        or slow.wall_ms > (timeout_s + 20) * 1000
    ):
        raise ContractError(
            f"{name}: a command past its timeout must be ended and reported "
            f"timed_out (got {slow!r})"
        )


async def _cancel(name: str, environment: Environment, bound_s: float = 20.0) -> None:
    """An ``exec`` that takes ``cancel``: setting it ends the command (and what it started)
    at once, its result without an exit status."""
    import threading

    from ..providers.in_trial_contract import accepts_cancel

    if not accepts_cancel(environment.exec):
        return
    cancel = threading.Event()

    async def later() -> None:
        await trio.sleep(0.5)
        cancel.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(later)
        done = await _exec(
            environment, ["sh", "-c", "sleep 60"], timeout_s=60, cancel=cancel
        )
    if done.exit_code is not None or done.wall_ms > bound_s * 1000:
        raise ContractError(
            f"{name}: exec takes `cancel`, but setting it did not end the command "
            f"(got {done!r})"
        )


async def _files(name: str, environment: Environment, scratch: Path) -> None:
    first, second = scratch / "first", scratch / "second"
    first.mkdir()
    (first / "old.txt").write_text("old")
    second.mkdir()
    (second / "new.txt").write_text("new")
    (second / "link").symlink_to("/etc/passwd")
    # A folder trial (``workdir`` of its own) maps only its folder; a container takes
    # any absolute path.
    own = getattr(environment, "workdir", None)
    remote = (
        f"{own.rstrip('/')}/profiler-contract"
        if isinstance(own, str)
        else "/tmp/profiler-contract"
    )
    try:
        await call_off_loop(environment.put, first, remote)
        await call_off_loop(environment.put, second, remote)
    except SandboxError as exc:
        raise ContractError(f"{name}: put failed: {exc}") from None
    back = scratch / "back"
    await call_off_loop(environment.get, remote, back)
    if (back / "old.txt").exists() or (back / "new.txt").read_text() != "new":
        raise ContractError(
            f"{name}: put must replace a folder, not merge into it (found "
            f"{sorted(p.name for p in back.iterdir())})"
        )
    if not (back / "link").is_symlink():
        raise ContractError(f"{name}: get must copy a link as a link, never follow it")


async def _persistent(name: str, environment: Environment) -> None:
    await _exec(
        environment, ["sh", "-c", "(sleep 300 > /dev/null 2>&1 &) ; true"], timeout_s=30
    )
    alive = await _exec(
        environment,
        [
            "sh",
            "-c",
            "for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done",
        ],
        timeout_s=30,
    )
    if "sleep 300" not in alive.output:
        raise ContractError(
            f"{name}: declares persistent_processes, but a process started by "
            "one exec was gone at the next"
        )
