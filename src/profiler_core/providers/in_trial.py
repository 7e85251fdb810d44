"""A subprocess agent (Claude Code, Codex, OpenCode) run inside the trial's environment,
as Harbor runs its agents.

The runner starts the trial's environment (a container, the one bwrap sandbox
of a trial, a plugin's) with the agent's installed package
folder mounted read-only at its host path (:func:`program_mounts`): the npm
packages of Claude Code and OpenCode ship a native program that needs only
the C library (glibc), Codex a static (musl) one, so no Node runtime is needed
inside and any glibc image runs them; a musl image (Alpine) cannot run Claude
Code or OpenCode. The session's home and temporary folder are copied in at
their host paths (so every path in the agent's environment and arguments holds
inside), given to the agent's user, and copied back out as plain files after
the run (links stay links), where the provider reads the agent's transcript as
usual. The program runs in the task's working folder as the trial's agent user,
its output streamed through the environment's ``command_line`` (``docker exec``,
``nsenter`` into a bwrap trial) or, for a kind that has only the contract, its
``exec`` (in_trial_contract.py). A program that ends by itself leaves what it
started running for the verifier (a server), as Harbor's agents do; one ended
early (its timeout, Ctrl-C, asked to stop) is killed inside with everything it
started, by its mark.
"""

from __future__ import annotations

import logging
import os
import platform
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ProfilerError, SandboxError
from ..model.environment import TrialMount
from ..util.asyncs import call_off_loop
from .in_trial_contract import STDIN_NAME, run_by_contract

log = logging.getLogger("agent_profiler")

__all__ = [
    "give_folders",
    "native_program",
    "program_mounts",
    "run_in_trial",
    "take_home",
]

#: seconds the set-up commands of an agent's session in a trial (folders, owners) may take
QUICK_S = 60.0
#: the largest agent home copied back out of a trial (its transcript is in it)
MAX_HOME_BYTES = 512 << 20
#: whether the program's loader is in the image, then who the agent's user is (``uid:gid``)
_WHO = '[ -z "$1" ] || [ -e "$1" ] || echo MISSING-LOADER; echo "$(id -u):$(id -g)"'
#: variables of the profiler's own that a sandboxed agent keeps; inside a trial the
#: image's stand instead
_HOST_ONLY = ("PATH", "LANG", "LC_ALL", "TZ", "TERM")


def program_mounts(program: str) -> tuple[TrialMount, ...]:
    """The folder holding ``program`` shown read-only inside at its host path: the
    ``node_modules`` of an npm
    install (the platform package beside it included), else the program's own folder."""
    path = Path(program)
    folder = next(
        (parent for parent in path.parents if parent.name == "node_modules"),
        path.parent,
    )
    return (TrialMount(source=str(folder), target=str(folder), read_only=True),)


def native_program(
    binary: str, name: str, platforms: dict[str, tuple[str, str]]
) -> str:
    """The native program an npm launcher (a ``.js`` file run by Node) would start:
    found beside it in its
    ``node_modules``, in the platform package for this machine (``platforms``: machine
    -> package, target)."""
    resolved = Path(binary).resolve()
    if resolved.suffix != ".js":
        return str(resolved)
    modules = next((p for p in resolved.parents if p.name == "node_modules"), None)
    package, target = platforms.get(platform.machine(), ("", ""))
    found = (
        modules / package / "vendor" / target / "bin" / name
        if modules is not None and package
        else None
    )
    if found is None or not os.access(found, os.X_OK):
        raise ConfigError(
            f"{name}: {binary} is a Node launcher and its native program for {platform.machine()} "
            f"was not found beside it ({package or 'no platform package'}): it "
            "cannot run inside a trial"
        )
    return str(found)


async def run_in_trial(
    provider: Any,
    live: Any,
    command: list[str],
    env: dict[str, str],
    *,
    start: Callable[..., Any],
    on_line: Callable[[dict[str, Any]], bool] | None,
    stdin: bytes | None,
    keep: bool,
) -> Any:
    """Run the agent's ``command`` inside the session's trial (``start``: ``run_agent``
    of the agent-process base,
    given the host command); its home comes back to the host afterwards.

    By the environment's ``command_line`` where it has one (docker, podman, bwrap),
    else by the contract's ``exec`` (in_trial_contract.py). A program that ended by
    itself leaves what it started running for the verifier (a server), as Harbor's
    agents do; one ended early (a timeout, Ctrl-C, asked to stop) is ended inside
    with everything it started."""
    import trio

    params = live.params
    environment = params.environment
    user = params.environment_user
    program = provider.trial_program(live.setup.binary)
    stdin_file = None
    if stdin is not None and getattr(environment, "command_line", None) is None:
        # the contract's exec has no input: the bytes go in as a file with the folders
        path = live.dirs.root / STDIN_NAME
        path.write_bytes(stdin)
        stdin_file = str(path)
    await give_folders(environment, live, user, program)
    inside = {
        name: value
        for name, value in env.items()
        if not (name in _HOST_ONLY and os.environ.get(name) == value)
    }
    inside.update(getattr(environment, "relay_environment", {}) or {})
    argv = [program, *command[1:]]
    stopped = False

    def watch(line: dict[str, Any]) -> bool:
        nonlocal stopped
        asked = bool(on_line(line)) if on_line is not None else False
        stopped = stopped or asked  # once asked to stop, the session was ended early
        return asked

    command_line = getattr(environment, "command_line", None)
    try:
        if command_line is None:
            return await run_by_contract(
                environment,
                argv,
                inside,
                cwd=params.environment_workdir,
                user=user,
                stdin_file=stdin_file,
                on_line=watch,
                keep=keep,
            )
        host_argv, host_env, marker = command_line(
            argv,
            env=inside,
            cwd=params.environment_workdir,
            user=user,
            stdin=stdin is not None,
        )
        ended = True
        try:
            run = await start(
                host_argv,
                env=host_env,
                cwd=live.dirs.root,
                log_dir=live.dirs.root,
                grace_s=live.setup.options.kill_grace_s,
                on_line=watch,
                stdin=stdin,
                keep_output=keep,
            )
            ended = stopped
            return run
        finally:
            if ended:
                with trio.CancelScope(shield=True):
                    # the client is gone; what it started inside (the agent, its
                    # tools) is ended by its mark
                    await call_off_loop(environment.end, marker)
    finally:
        with trio.CancelScope(shield=True):
            await take_home(environment, live)


def elf_interpreter(program: str) -> str | None:
    """The dynamic loader a 64-bit ELF program names (``PT_INTERP``, e.g. glibc's
    ``/lib64/ld-linux-x86-64.so.2``); None for a static program, a script or what cannot be read."""
    try:
        with open(program, "rb") as handle:
            head = handle.read(64)
            if len(head) < 64 or head[:5] != b"\x7fELF\x02" or head[5] != 1:
                return None  # not a little-endian 64-bit ELF
            phoff = int.from_bytes(head[0x20:0x28], "little")
            size = int.from_bytes(head[0x36:0x38], "little")
            count = int.from_bytes(head[0x38:0x3A], "little")
            handle.seek(phoff)
            table = handle.read(size * count)
            for i in range(count):
                entry = table[i * size : (i + 1) * size]
                if int.from_bytes(entry[0:4], "little") == 3:  # PT_INTERP
                    offset = int.from_bytes(entry[8:16], "little")
                    length = int.from_bytes(entry[32:40], "little")
                    handle.seek(offset)
                    return handle.read(min(length, 4096)).rstrip(b"\0").decode()
    except (OSError, UnicodeDecodeError):
        return None
    return None


async def give_folders(
    environment: Any, live: Any, user: str | None, program: str | None = None
) -> None:
    """Copy the session's folder (its home and temporary folder) in at its host path,
    the agent user's;
    a ``program`` whose dynamic loader the image lacks (a glibc program in a musl image)
    is one line."""
    dirs = live.dirs
    try:
        # one copy: the session's folder holds both (and nothing of the profiler's own yet)
        await call_off_loop(environment.put, dirs.root, str(dirs.root))
    except SandboxError as exc:
        raise ProfilerError(
            f"cannot prepare the agent's folders in the trial: {exc}"
        ) from None
    loader = elf_interpreter(program) if program else None
    who = await call_off_loop(
        environment.exec,
        ["sh", "-c", _WHO, "sh", loader or ""],
        user=user,
        timeout_s=QUICK_S,
    )
    if who.ok and "MISSING-LOADER" in who.output:
        raise ProfilerError(
            f"{Path(program or '?').name} cannot run in this image: it needs "
            f"{loader}, which the image lacks "
            "(a glibc program; a musl image such as Alpine cannot run it; docs/environments.md)"
        )
    owner = who.output.strip().splitlines()[-1:] if who.ok else []
    if not owner:
        raise ProfilerError(
            f"cannot tell who the agent's user {user or '(the image’s)'} is in the trial: "
            f"{who.error or who.output.strip()[-200:]}"
        )
    done = await call_off_loop(
        environment.exec,
        [
            "sh",
            "-c",
            'chown -R -- "$1" "$2" && chmod 700 "$2"',
            "sh",
            owner[0],
            str(dirs.root),
        ],
        user="0",
        timeout_s=QUICK_S,
    )
    if not done.ok:
        raise ProfilerError(
            f"cannot give the agent's folders to {owner[0]} in the trial: "
            f"{done.error or done.output.strip()[-200:]}"
        )


async def take_home(environment: Any, live: Any) -> None:
    """The agent's home copied back over the host's (its transcript is read there; links
    stay links), unless
    it grew past ``MAX_HOME_BYTES`` (measured inside first: the agent cannot fill the
    host's disk)."""
    home = live.dirs.home
    shutil.rmtree(home, ignore_errors=True)
    try:
        size = await call_off_loop(
            environment.exec,
            ["du", "-sk", "--", str(home)],
            user="0",
            timeout_s=QUICK_S,
        )
        kib = size.output.split()[0] if size.ok and size.output.split() else ""
        if not kib.isdigit() or int(kib) * 1024 > MAX_HOME_BYTES:
            raise ProfilerError(
                f"its size ({kib or '?'} KiB) is not known or over {MAX_HOME_BYTES >> 20} MiB"
            )
        await call_off_loop(environment.get, str(home), home)
    except (SandboxError, ProfilerError, OSError) as exc:
        log.warning(
            "%s: the agent's home was not copied out of the trial: %s",
            live.params.scenario_id,
            exc,
        )
    home.mkdir(exist_ok=True)
