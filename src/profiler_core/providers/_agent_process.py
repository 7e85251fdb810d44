"""What the subprocess agents (Claude Code, Codex CLI) share: options, an isolated home,
one run of the program.

A session is one run of the agent's program: started under trio in a session
(and process group) of its own, with an environment built here (never the
runner's own: the mode's variables go to the child only), a temporary home
directory so the user's configuration and history are neither read nor
touched, and a working directory of its own (a fresh copy of
``workdir_template`` when given). Its standard output is read as JSON lines
while it runs; its standard error goes to a file in the session directory.
However the run ends - exit, timeout, Ctrl-C - the process group is ended by
its PID in a ``finally``: SIGTERM, then SIGKILL after ``kill_grace_s``, so
tool processes the agent started die with it.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from ..errors import ConfigError, ProfilerError
from ..model import (
    CreateSessionParams,
    ProviderConfig,
    SessionHandle,
    SessionTrace,
    TokenBreakdown,
    TraceSummary,
)
from ..model.record import Record
from ..util.leftovers import remove_folder, temporary_folder
from ..util.processes import end_process_group, signal_group, track_group
from ..util.safefiles import read_beneath
from .agent_run import AgentRun, take_line

if TYPE_CHECKING:
    import trio

    from ..model.environment import SandboxSettings
    from ..model.recorded import RecordedSession
    from ..sandbox import Job, Mount

log = logging.getLogger("agent_profiler")


def check_api(api: str | None, where: str) -> None:
    """Option ``api``: unset, or one of the model APIs the wire recorder reads
    (config.agents.APIS)."""
    from ..config.agents import APIS

    if api is not None and api not in APIS:
        raise ConfigError(
            f"{where}: option 'api': expected one of {', '.join(APIS)}, got {api!r}"
        )


class AgentError(ProfilerError):
    """The agent program failed (could not start, exited with an error, or reported one)."""


# -- options --------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _str_list(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(
        isinstance(v, str) and v for v in value
    )


def check_option(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    """attrs validator: each option against the rule named in its metadata."""
    rule, expected = attribute.metadata["rule"]
    if value is not None and not rule(value):
        raise ValueError(
            f"option {attribute.name!r}: expected {expected}, got {value!r}"
        )


def option(default: Any, rule: Callable[[Any], bool], expected: str) -> Any:
    """An attrs field for a provider option, validated by ``rule`` (None always allowed)."""
    return attrs.field(
        default=default, validator=check_option, metadata=checked(rule, expected)
    )


def checked(rule: Callable[[Any], bool], expected: str) -> dict[str, Any]:
    """The metadata that makes :func:`check_option` validate a field with ``rule``."""
    return {"rule": (rule, expected)}


STRING = (lambda v: isinstance(v, str) and bool(v), "a non-empty string")
TEXT = (lambda v: isinstance(v, str), "a string")
BOOL = (lambda v: isinstance(v, bool), "true or false")
COUNT = (lambda v: _is_int(v) and v >= 0, "an integer >= 0")
POSITIVE = (lambda v: _is_int(v) and v >= 1, "an integer >= 1")
SECONDS = (
    lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0,
    "a number of seconds >= 0",
)
NAMES = (_str_list, "a list of names")
ENV = (
    lambda v: (
        isinstance(v, Mapping)
        and all(
            isinstance(k, str) and isinstance(x, (str, int, float))
            for k, x in v.items()
        )
    ),
    "a mapping of variable name -> value",
)
MCP = (
    lambda v: (
        isinstance(v, Mapping)
        and all(isinstance(k, str) and isinstance(x, Mapping) for k, x in v.items())
    ),
    "a mapping of server name -> server settings (command, args, env / url)",
)
MAPPING = (lambda v: isinstance(v, Mapping), "a mapping")
ARGS = (
    lambda v: isinstance(v, (list, tuple)) and all(isinstance(a, str) for a in v),
    "a list of strings",
)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AgentOptions(Record):
    """Options every subprocess agent takes (profile ``provider.options``; a mode
    changes them by ``provider_overrides``)."""

    #: the program; default: the agent's env var (CLAUDE_BIN / CODEX_BIN), then PATH
    binary: str | None = option(None, *STRING)
    #: the model endpoint (e.g. a gateway or a local server); default: the agent's own
    base_url: str | None = option(None, *STRING)
    #: the variable of the profiler's environment holding the API key
    api_key_env: str | None = option(None, *STRING)
    #: deprecated: give scenarios a ``workspace`` (the runner then uses this folder for
    #: scenarios without one)
    workdir_template: str | None = option(None, *STRING)
    #: keep each session's home and working directory after the session (their path is logged)
    keep_sessions: bool = option(False, *BOOL)
    #: model-request retries the agent itself may make (default: the agent's own setting)
    max_retries: int | None = option(None, *COUNT)
    #: seconds between SIGTERM and SIGKILL when a session is ended
    kill_grace_s: float = option(5.0, *SECONDS)
    #: extra environment variables for the agent (the mode's environment comes on top)
    env: dict[str, str] = attrs.field(
        factory=dict, validator=check_option, metadata=checked(*ENV)
    )
    #: extra command-line arguments, appended as given
    extra_args: list[str] = attrs.field(
        factory=list, validator=check_option, metadata=checked(*ARGS)
    )
    #: tools the agent may use (the others are off)
    allowed_tools: list[str] = attrs.field(
        factory=list, validator=check_option, metadata=checked(*NAMES)
    )
    #: tools the agent may not use
    disallowed_tools: list[str] = attrs.field(
        factory=list, validator=check_option, metadata=checked(*NAMES)
    )
    #: MCP servers the session gets, by name
    mcp_servers: dict[str, Any] = attrs.field(
        factory=dict, validator=check_option, metadata=checked(*MCP)
    )
    #: appended to the agent's system prompt (the mode's ``system_instructions`` come first)
    append_system_prompt: str = option("", *TEXT)
    #: the most model steps a session may take (then it ends with completion reason ``tool_limit``)
    max_turns: int | None = option(None, *POSITIVE)


def build_options(cls: type, layers: Iterable[Mapping[str, Any]], where: str) -> Any:
    """Merge option layers (later wins) into ``cls``; an unknown or wrong option is one
    ConfigError line."""
    names = [a.name for a in attrs.fields(cls)]
    merged: dict[str, Any] = {}
    for layer in layers:
        unknown = sorted(set(layer) - set(names))
        if unknown:
            raise ConfigError(
                f"{where}: unknown option(s) {', '.join(unknown)} (valid: "
                f"{', '.join(sorted(names))})"
            )
        merged.update(layer)
    try:
        return cls(**merged)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def find_binary(
    configured: str | None, env_var: str, name: str, install_hint: str
) -> str:
    """The program to run: the option, ``$env_var``, PATH, then the agent folders;
    missing is one line with a hint."""
    from .agents import find_installed

    # Then .agents/ of a checkout, or the cache `profiler agents install` fills.
    candidate = (
        configured
        or os.environ.get(env_var)
        or shutil.which(name)
        or find_installed(name)
    )
    if candidate:
        path = shutil.which(candidate) if os.sep not in candidate else candidate
        if path and os.access(path, os.X_OK) and Path(path).is_file():
            return path
        raise ConfigError(
            f"{name}: {candidate!r} is not an executable file (from option "
            f"'binary' or ${env_var}); {install_hint}"
        )
    raise ConfigError(
        f"{name} not found (set option 'binary' or ${env_var}, put it on PATH, "
        f"or run `profiler agents install`); {install_hint}"
    )


# -- the environment ----------------------------------------------------------


#: What a sandboxed agent keeps of the profiler's environment (nothing else: it may hold
#: other keys).
SANDBOX_KEPT = ("PATH", "LANG", "LC_ALL", "TZ", "TERM")


def child_environment(
    *,
    drop_prefixes: tuple[str, ...],
    fixed: Mapping[str, str],
    options_env: Mapping[str, Any],
    mode_env: Mapping[str, Any],
    confined: bool = False,
) -> dict[str, str]:
    """The agent's environment: the profiler's minus the agent's own settings (in a sandbox: only
    ``SANDBOX_KEPT``), then ours, the options', the mode's."""
    if confined:
        env = {k: os.environ[k] for k in SANDBOX_KEPT if k in os.environ}
    else:
        env = {k: v for k, v in os.environ.items() if not k.startswith(drop_prefixes)}
    env.update(fixed)
    env.update({k: str(v) for k, v in options_env.items()})
    env.update({k: str(v) for k, v in mode_env.items()})
    return env


def api_key(options: AgentOptions, default_env: str, agent: str) -> str:
    """The API key from ``$api_key_env``; a placeholder for a custom endpoint that needs
    none; else an error."""
    name = options.api_key_env or default_env
    value = os.environ.get(name)
    if value:
        return value
    if options.base_url:
        # Local and scripted endpoints take any key; the agent refuses to start without one.
        return "profiler-no-key"
    raise ConfigError(
        f"{agent}: ${name} is not set (the API key; or name another variable "
        "with option 'api_key_env')"
    )


#: The key an agent holds while the wire recorder holds the real one (some agents refuse
#: to start without a key).
WIRE_PLACEHOLDER_KEY = "sk-profiler-wire-placeholder"


def agent_key(
    live: LiveSession, options: AgentOptions, default_env: str, agent: str
) -> str:
    """The key the agent is given: a placeholder when its calls pass the wire recorder
    (which keeps the real
    one, from ``$api_key_env``, and puts it in each forwarded request); else the real key."""
    key = api_key(options, default_env, agent)
    if live.wire is None:
        return key
    live.wire.api_key = key
    return WIRE_PLACEHOLDER_KEY


def hide_key(live: LiveSession, env: dict[str, str]) -> dict[str, str]:
    """``env`` with the placeholder in every variable holding the key the wire recorder keeps
    (``$api_key_env`` itself, or a copy in ``env`` options): the agent's environment
    never holds it."""
    key = live.wire.api_key if live.wire is not None else None
    if not key:
        return env
    # A copy inside a longer value counts too, unless the key is so short it could be
    # any value's part.
    return {
        name: WIRE_PLACEHOLDER_KEY
        if value == key or (len(key) >= 16 and key in value)
        else value
        for name, value in env.items()
    }


# -- one session's directories ------------------------------------------------


@attrs.define
class SessionDirs:
    """A session's temporary folder: ``home/`` (HOME of the agent), ``work/`` (its
    working directory), ``tmp/`` (its TMPDIR)."""

    root: Path
    home: Path
    work: Path
    tmp: Path

    @classmethod
    def create(
        cls, agent: str, workdir_template: str | None, workspace: str | None = None
    ) -> SessionDirs:
        """Make the folders; ``work`` is the runner's ``workspace`` when given, else a fresh copy of
        ``workdir_template`` or an empty folder (a caller outside the runner)."""
        root = temporary_folder(f"profiler-{agent}-")
        home, work, tmp = root / "home", root / "work", root / "tmp"
        home.mkdir()
        tmp.mkdir()
        if workspace is not None:
            return cls(
                root=root, home=home, work=Path(workspace), tmp=tmp
            )  # the runner's: it removes it
        try:
            if workdir_template:
                shutil.copytree(workdir_template, work, symlinks=True)
            else:
                work.mkdir()
        except OSError as exc:
            remove_folder(root)
            raise ConfigError(
                f"{agent}: option 'workdir_template': cannot copy "
                f"{workdir_template!r}: {exc.strerror or exc}"
            ) from None
        return cls(root=root, home=home, work=work, tmp=tmp)

    def remove(self) -> None:
        """Delete everything the session left."""
        remove_folder(self.root)


# -- running the program --------------------------------------------------------


async def run_agent(
    command: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    log_dir: Path,
    grace_s: float,
    on_line: Callable[[dict[str, Any]], bool] | None = None,
    stdin: bytes | None = None,
    keep_output: bool = False,
) -> AgentRun:
    """Run ``command`` to its end, reading its standard output as JSON lines; the group
    is ended in any case.

    ``stdin``: bytes written to its standard input (then closed; None: no input);
    ``keep_output``: keep every output line as printed too (``AgentRun.output``).

    ``on_line`` sees each JSON line as it arrives; when it returns True the
    agent is asked to stop (SIGTERM to its group) and the run ends as usual.

    Cancel the calling scope to stop it (a timeout, Ctrl-C): the process group
    is then ended before the cancellation goes on.
    """
    import trio  # here, not at import: listing the plugins does not load trio

    stderr_path = log_dir / "stderr.log"
    stderr_fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    started_at = datetime.now(UTC)
    t0 = time.monotonic()
    try:
        # A session of its own: Ctrl-C in a terminal reaches the profiler only, which then ends the
        # agent in order; the group id (its PID) reaches the tools the agent started.
        process = await trio.lowlevel.open_process(
            command,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr_fd,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        raise AgentError(
            f"cannot start {command[0]!r}: {exc.strerror or exc}"
        ) from None
    finally:
        os.close(stderr_fd)
    track_group(process.pid)
    run = AgentRun(
        pid=process.pid,
        started_at=started_at,
        stderr_path=stderr_path,
        output=[] if keep_output else None,
    )
    try:
        async with trio.open_nursery() as nursery:
            reader = trio.CancelScope()
            nursery.start_soon(_read_lines, process, run, t0, on_line, reader)
            if stdin is not None:
                nursery.start_soon(_write_input, process, stdin)
            run.exit_code = await process.wait()
            # A tool the agent left running may hold the pipe open: read what is there, then stop.
            reader.deadline = trio.current_time() + _DRAIN_S
    finally:
        await end_process_group(process, grace_s)
        run.wall_ms = round((time.monotonic() - t0) * 1000, 3)
    return run


#: seconds to keep reading the agent's output after it exited
_DRAIN_S = 2.0


async def _write_input(process: trio.Process, data: bytes) -> None:
    """Write ``data`` to the program's standard input, then close it (a program that
    stops reading ends the write)."""
    import trio

    assert process.stdin is not None
    async with process.stdin:
        try:
            await process.stdin.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


async def _read_lines(
    process: trio.Process,
    run: AgentRun,
    t0: float,
    on_line: Callable[[dict[str, Any]], bool] | None,
    scope: trio.CancelScope,
) -> None:
    assert process.stdout is not None
    buffer = b""
    with scope:
        async with process.stdout:
            while True:
                chunk = await process.stdout.receive_some(65536)
                if not chunk:
                    break
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                for raw in complete:
                    if take_line(run, raw, time.monotonic() - t0, on_line):
                        signal_group(process.pid, signal.SIGTERM)
    if buffer.strip():
        take_line(run, buffer, time.monotonic() - t0, on_line)


# -- the provider base ----------------------------------------------------------


@attrs.define
class ModeSetup:
    """What ``init`` settled for one mode: options, model, environment, program."""

    options: Any
    model: str
    environment: dict[str, str]
    binary: str
    #: the run's sandbox; None: on the host
    sandbox: SandboxSettings | None = None

    @property
    def confined(self) -> bool:
        """Whether the agent runs in a sandbox."""
        return self.sandbox is not None and self.sandbox.confined


@attrs.define
class LiveSession:
    """A session between ``create_session`` and ``destroy_session``."""

    params: CreateSessionParams
    setup: ModeSetup
    dirs: SessionDirs
    trace: SessionTrace | None = None
    #: the agent's own id of the session (its transcript's name), once known
    agent_session_id: str | None = None
    #: this session's path on the wire recorder (a ``profiler_core.wire.WireSession``);
    #: None: no recorder
    wire: Any = None


def empty_trace(session_id: str) -> SessionTrace:
    """The trace of a session that produced nothing."""
    return SessionTrace(
        session_id=session_id,
        events=(),
        turns=(),
        summary=TraceSummary(
            total_turns=0,
            total_tool_calls=0,
            total_tokens=TokenBreakdown(),
            total_duration=0,
        ),
    )


class AgentProvider:
    """Base of the subprocess-agent providers: options per mode, a temporary home per
    session, cleanup.

    Subclasses set ``id``, ``program`` (the command name), ``env_var``,
    ``install_hint``, ``options_class`` and implement ``prompt``.
    """

    id: ClassVar[str] = ""
    program: ClassVar[str] = ""
    env_var: ClassVar[str] = ""
    install_hint: ClassVar[str] = ""
    #: the model endpoint a sandboxed agent may reach when ``base_url`` is not given
    default_endpoint: ClassVar[str] = ""
    #: ``base_url`` is the model endpoint: the runner opens it once before the first
    #: session (runner.endpoint)
    endpoint_check: ClassVar[bool] = True
    #: the base URL the agent calls when ``base_url`` is not given (where the wire
    #: recorder forwards its calls)
    default_base_url: ClassVar[str] = ""
    options_class: ClassVar[type] = AgentOptions
    #: the runner may start it inside a trial's environment (docs/environments.md,
    #: "Agents inside the trial")
    runs_in_trial: ClassVar[bool] = False
    #: keep the program's standard output as printed (``AgentRun.output``): for a
    #: provider whose answer is that output
    keep_output: ClassVar[bool] = False
    init_scope = "mode"

    def __init__(self, **options: Any) -> None:
        """Check the profile's options now, so ``profiler validate`` reports a bad one
        or a missing program."""
        self._base = dict(options)
        defaults = build_options(
            self.options_class, [self._base], f"provider {self.id!r}"
        )
        find_binary(defaults.binary, self.env_var, self.program, self.install_hint)
        self._modes: dict[str, ModeSetup] = {}
        self._sessions: dict[str, LiveSession] = {}
        #: the wire recorders, one per model endpoint (docs/wire.md)
        self._recorders: dict[str, Any] = {}

    def init(self, config: ProviderConfig) -> None:
        """Settle the options of ``config.mode`` (the profile's, changed by the mode's
        overrides)."""
        where = f"provider {self.id!r} (mode {config.mode!r})"
        options = build_options(
            self.options_class, [self._base, dict(config.options)], where
        )
        self.check_options(options, where)
        binary = find_binary(
            options.binary, self.env_var, self.program, self.install_hint
        )
        self._modes[config.mode] = ModeSetup(
            options=options,
            model=config.model,
            environment=dict(config.environment),
            binary=binary,
            sandbox=config.sandbox,
        )

    def check_options(self, options: Any, where: str) -> None:
        """Refuse option combinations the agent cannot honour (subclasses override)."""

    def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """Make the session's temporary home and working directory."""
        setup = self._modes.get(params.mode)
        if setup is None:
            raise ProfilerError(
                f"provider {self.id!r}: mode {params.mode!r} was not initialised (init() first)"
            )
        dirs = SessionDirs.create(
            self.id, setup.options.workdir_template, params.workspace
        )
        session_id = f"{self.id}-{uuid.uuid4().hex[:12]}"
        recorder = self.recorder(setup)
        self._sessions[session_id] = LiveSession(
            params=params,
            setup=setup,
            dirs=dirs,
            wire=recorder.open() if recorder else None,
        )
        return SessionHandle(
            session_id=session_id,
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )

    def export_session(self, handle: SessionHandle) -> SessionTrace:
        """The session's trace, read from the agent's own transcript after the prompt
        (empty before)."""
        live = self.live(handle)
        trace = (
            live.trace
            if live.trace is not None
            else empty_trace(live.agent_session_id or handle.session_id)
        )
        if live.wire is not None:
            # One event per model call, as the recorder saw it (the ``wire`` collector reads them).
            trace = attrs.evolve(trace, events=(*trace.events, *live.wire.snapshot()))
        return trace

    def destroy_session(self, handle: SessionHandle) -> None:
        """Remove the session's folders (kept with ``keep_sessions``); unknown handles
        are ignored."""
        live = self._sessions.pop(handle.session_id, None)
        if live is None:
            return
        for recorder in self._recorders.values():
            recorder.release(live.wire)
        if live.setup.options.keep_sessions:
            log.info(
                "%s: session %s kept in %s", self.id, handle.session_id, live.dirs.root
            )
        else:
            live.dirs.remove()

    def shutdown(self) -> None:
        """Destroy the sessions still open (the programs are already ended by then)."""
        for session_id in list(self._sessions):
            self.destroy_session(
                SessionHandle(session_id=session_id, provider=self.id, created_at="")
            )
        recorders, self._recorders = list(self._recorders.values()), {}
        for recorder in recorders:
            recorder.close()

    def recorder(self, setup: ModeSetup) -> Any:
        """The wire recorder in front of the mode's model endpoint (started on first
        use); None with ``execution.wire: off``."""
        endpoint = setup.options.base_url or self.default_base_url
        if not endpoint or not getattr(setup.sandbox, "wire", True):
            return None
        recorder = self._recorders.get(endpoint)
        if recorder is None:
            from ..wire import WireRecorder

            recorder = self._recorders[endpoint] = WireRecorder(endpoint).start()
        api = getattr(setup.options, "api", None)
        if api:
            # the mode's option ``api`` names the endpoint's API where its path cannot
            # tell
            recorder.api = api
        return recorder

    def model_url(self, live: LiveSession) -> str | None:
        """The base URL the agent is given: its session's path on the wire recorder,
        else option ``base_url``."""
        return (
            live.wire.base_url if live.wire is not None else live.setup.options.base_url
        )

    async def run(
        self,
        live: LiveSession,
        command: list[str],
        env: dict[str, str],
        *,
        on_line: Callable[[dict[str, Any]], bool] | None = None,
        stdin: bytes | None = None,
    ) -> AgentRun:
        """Run the agent's command for one session: on the host, or in the run's sandbox
        (docs/sandbox.md).

        ``stdin``: the program's standard input (None: none); a provider that passes it
        also keeps the output as printed.
        """
        options = live.setup.options
        keep = stdin is not None or self.keep_output
        env = hide_key(live, env)
        if live.params.environment is not None:
            from .in_trial import run_in_trial

            return await run_in_trial(
                self,
                live,
                command,
                env,
                start=run_agent,
                on_line=on_line,
                stdin=stdin,
                keep=keep,
            )
        if not live.setup.confined:
            return await run_agent(
                command,
                env=env,
                cwd=live.dirs.work,
                log_dir=live.dirs.root,
                grace_s=options.kill_grace_s,
                on_line=on_line,
                stdin=stdin,
                keep_output=keep,
            )
        from ..sandbox import confine

        settings, job = self.sandbox_job(live, command, env)
        async with confine(settings, job) as box:
            return await run_agent(
                box.argv,
                env=box.env,
                cwd=box.cwd,
                log_dir=live.dirs.root,
                grace_s=options.kill_grace_s,
                on_line=on_line,
                stdin=stdin,
                keep_output=keep,
            )

    def trial_needs(self, mode: str) -> tuple[tuple[Any, ...], tuple[str, ...]]:
        """What a trial gives this agent: its program's folder mounted read-only
        (``TrialMount``s) and the
        model endpoint it calls (the wire recorder's, which holds the real key), relayed
        by ``network: model``."""
        from .in_trial import program_mounts

        setup = self._modes.get(mode)
        if setup is None:
            return (), ()
        recorder = self.recorder(setup)
        endpoint = (
            f"http://127.0.0.1:{recorder.port}"
            if recorder is not None
            else setup.options.base_url or self.default_endpoint
        )
        program = self.trial_program(setup.binary)
        return program_mounts(program), (endpoint,) if endpoint else ()

    def trial_program(self, binary: str) -> str:
        """The program started inside a trial: ``binary`` by its real path (an npm link
        resolved)."""
        return str(Path(binary).resolve())

    def sandbox_job(
        self, live: LiveSession, command: list[str], env: dict[str, str]
    ) -> tuple[SandboxSettings, Job]:
        """The sandbox settings and the job of one confined run of ``command``
        (``profiler_core.sandbox``)."""
        from ..sandbox import Job

        # The task's own sandbox (its image, its working folder) when it brings one, else the run's.
        settings = live.params.sandbox or live.setup.sandbox
        assert (
            settings is not None
        )  # a confined run: the caller checked ``setup.confined``
        job = Job(
            argv=tuple(command),
            env=env,
            workspace=live.dirs.work,
            home=live.dirs.home,
            tmp=live.dirs.tmp,
            endpoints=(self.model_url(live) or self.default_endpoint,),
            mounts=tuple(
                program_folders(
                    live.setup.binary,
                    container=settings.container,
                    hidden=settings.hide_paths,
                )
            ),
            name=self.id,
        )
        return settings, job

    def failure(self, live: LiveSession, message: str) -> AgentError:
        """A failed session's error, naming the model endpoint (a dead endpoint is then
        recognisable)."""
        endpoint = live.setup.options.base_url or "the agent's default"
        return AgentError(f"{message} (model endpoint: {endpoint})")

    def live(self, handle: SessionHandle) -> LiveSession:
        """The open session of ``handle``."""
        try:
            return self._sessions[handle.session_id]
        except KeyError:
            raise ProfilerError(
                f"provider {self.id!r}: unknown session {handle.session_id!r} "
                "(destroyed, or never created)"
            ) from None


def program_folders(
    binary: str, *, container: bool = False, hidden: tuple[str, ...] = ()
) -> list[Mount]:
    """The agent program's folder, shown read-only in a sandbox that would not show it:
    an install under
    the user's home, ``/tmp``, ``/run`` or another ``hidden`` path, or, in a container,
    anywhere outside the host toolchain's folders
    (there also at the path the program is started by, when a symbolic link leads to it:
    a container has no such link)."""
    from ..sandbox import Mount
    from ..sandbox.containers import HOST_DIRS

    given = Path(binary).absolute()
    resolved = given.resolve()
    # bwrap gives the sandbox a fresh /tmp and /run: a program installed there (a
    # checkout in /tmp) is not seen either.
    fresh = () if container else ("/tmp", "/run")
    covered = any(
        Path(folder).resolve() in resolved.parents
        for folder in (str(Path.home()), *hidden, *fresh)
    )
    outside = container and not any(
        Path(folder) in resolved.parents for folder in HOST_DIRS
    )
    if not covered and not outside:
        return []
    folder, started_from = _package_folder(resolved), _package_folder(given)
    mounts = [Mount(source=folder)]
    if container and started_from != folder and started_from.resolve() == folder:
        mounts.append(Mount(source=folder, target=started_from))
    return mounts


def _package_folder(program: Path) -> Path:
    """The ``node_modules`` folder holding an npm-installed program, else the program's folder."""
    return next(
        (parent for parent in program.parents if parent.name == "node_modules"),
        program.parent,
    )


def instructions(params: CreateSessionParams, options: AgentOptions) -> str:
    """The mode's system instructions, then the ``append_system_prompt`` option."""
    return "\n\n".join(
        p
        for p in (
            params.system_instructions.strip(),
            options.append_system_prompt.strip(),
        )
        if p
    )


__all__ = [
    "MAX_TRANSCRIPT_BYTES",
    "WIRE_PLACEHOLDER_KEY",
    "AgentError",
    "AgentOptions",
    "AgentProvider",
    "AgentRun",
    "LiveSession",
    "ModeSetup",
    "SessionDirs",
    "agent_key",
    "api_key",
    "build_options",
    "check_api",
    "child_environment",
    "empty_trace",
    "find_binary",
    "hide_key",
    "instructions",
    "load_transcript",
    "program_folders",
    "run_agent",
    "take_line",
]


#: The largest transcript a provider reads back from the agent's home.
MAX_TRANSCRIPT_BYTES = 256 << 20


def load_transcript(format: str, home: Path, path: Path) -> RecordedSession:
    """The recorded session of the transcript ``path`` the agent's CLI wrote in ``home``
    (the agent's to change).

    No link is followed at any component below ``home``, the file must be a regular one of at most
    ``MAX_TRANSCRIPT_BYTES``, and it is parsed from a private copy: a link to
    ``/dev/zero`` or a FIFO put
    there cannot stall or grow the profiler. ``AgentError`` when it cannot be read.
    """
    import tempfile

    from ..importers import load_sessions

    try:
        data = read_beneath(home, path.relative_to(home), MAX_TRANSCRIPT_BYTES)
    except (OSError, ValueError) as exc:
        raise AgentError(f"{format}: cannot read its transcript: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="transcript-") as private:
        copy = Path(private) / path.name
        copy.write_bytes(data)
        try:
            return load_sessions(format, copy)[0]
        except ProfilerError as exc:
            raise AgentError(
                f"{format}: cannot read its transcript: {str(exc).replace(str(copy), str(path))}"
            ) from None
