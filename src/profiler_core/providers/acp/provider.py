"""The ``acp`` provider: any agent that speaks the Agent Client Protocol, one session
per program run.

Each session starts the agent's ACP command (option ``command``, or the ``acp``
column of the registry row named by option ``agent``) in the session's
workspace, opens an ACP session there (``initialize``, ``session/new``), sends
the mode's instructions and the scenario's prompt (``session/prompt``), answers
permission requests by the ``permission`` option, and builds the trace from
the session updates. Tokens, cost and model latency come from the wire
recorder between the agent and ``base_url``. See docs/providers/acp.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ...config.agents import registry
from ...errors import ConfigError
from ...model import CompletionReason, PromptResult, SessionHandle
from .._agent_process import (
    SECONDS,
    STRING,
    AgentOptions,
    AgentProvider,
    LiveSession,
    ModeSetup,
    agent_key,
    build_options,
    check_api,
    check_option,
    checked,
    child_environment,
    hide_key,
    instructions,
    option,
)
from .._wire import wire_metrics
from ..command import COMMAND, tool_records
from .protocol import PROTOCOL_VERSION, AcpClient, AcpError, check_version
from .trace import build_trace, tool_kinds

if TYPE_CHECKING:  # pragma: no cover
    from ...model.session import ProviderConfig

#: the policies answering ``session/request_permission``
POLICIES = ("allow", "reject")
#: ACP's stopReason -> the row's completion reason
_COMPLETION: dict[str, CompletionReason] = {
    "end_turn": "stop",
    "max_tokens": "stop",
    "max_turn_requests": "tool_limit",
    "refusal": "stop",
    "cancelled": "error",
}


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AcpOptions(AgentOptions):
    """Options of the ``acp`` provider (the shared ones, plus these)."""

    #: the ACP command (a string, split as a shell would, or a list); default: the
    #: ``agent``'s from the registry
    command: str | list[str] | None = attrs.field(
        default=None, validator=check_option, metadata=checked(*COMMAND)
    )
    #: an agent of the registry (``profiler agents list``): its ACP command, and how it
    #: is pointed at the model
    agent: str | None = option(None, *STRING)
    #: how permission requests are answered: ``allow`` or ``reject``
    permission: str = option("allow", lambda v: v in POLICIES, "allow or reject")
    #: seconds the agent has to answer ``initialize`` and ``session/new``
    handshake_timeout_s: float = option(30.0, *SECONDS)
    #: the model API of its calls when the paths do not tell: openai-chat |
    #: openai-responses | anthropic
    api: str | None = option(None, *STRING)


def _argv(options: AcpOptions, where: str) -> list[str]:
    """The ACP command line of the options (one ConfigError line when there is none)."""
    import shlex

    if options.agent is not None:
        row = registry().get(options.agent)
        if row is None or not row.acp:
            speaking = ", ".join(n for n, r in registry().items() if r.acp)
            raise ConfigError(
                f"{where}: option 'agent': {options.agent!r} is not an ACP "
                f"agent of the registry (known: {speaking})"
            )
    command = options.command or (
        list(registry()[options.agent].acp) if options.agent else None
    )
    if not command:
        raise ConfigError(
            f"{where}: option 'command' (the agent's ACP command) or 'agent' (a "
            "registry name) is required"
        )
    try:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
    except ValueError as exc:
        raise ConfigError(f"{where}: option 'command': {exc}") from None
    if not argv:
        raise ConfigError(f"{where}: option 'command' is empty")
    return argv


#: registry agents that ask for no permission, so a ``reject`` policy would be ignored
_NEVER_ASK = {
    "codex-acp": "it runs with approval_policy never; Codex's only refusal aborts the turn",
}


def _check_permission(options: AcpOptions, where: str) -> None:
    """Say so, rather than ignore it, when the agent will never ask what the policy rejects."""
    why = _NEVER_ASK.get(options.agent or "")
    if why and options.permission == "reject":
        raise ConfigError(
            f"{where}: option 'permission': {options.agent} asks for no permission "
            f"({why}); use allow"
        )


def _program(argv: list[str], options: AcpOptions, where: str) -> str:
    """The program of ``argv``: as given, on PATH, or in the agent folders (``profiler
    agents install``)."""
    from ..agents import find_installed

    program = argv[0]
    if "/" in program:
        found: str | None = program if Path(program).is_file() else None
    else:
        row = registry().get(options.agent or "")
        found = (
            (
                os.environ.get(row.binary_env)
                if row is not None and row.program == program
                else None
            )
            or shutil.which(program)
            or find_installed(program)
        )
    if found is None:
        hint = (
            f"`profiler agents install {options.agent}`"
            if options.agent
            else "give its path, or put it on PATH"
        )
        raise ConfigError(
            f"{where}: the ACP agent's program {program!r} was not found ({hint})"
        )
    return found


class AcpProvider(AgentProvider):
    """Runs each session as one ACP conversation with the agent's program."""

    id = "acp"
    options_class = AcpOptions

    def __init__(self, **options: Any) -> None:
        """Check the options and that the agent's program exists (one line otherwise)."""
        self._base = dict(options)
        parsed = build_options(AcpOptions, [self._base], "provider 'acp'")
        _check_permission(parsed, "provider 'acp'")
        _program(_argv(parsed, "provider 'acp'"), parsed, "provider 'acp'")
        self._modes: dict[str, ModeSetup] = {}
        self._sessions: dict[str, LiveSession] = {}
        self._recorders: dict[str, Any] = {}

    def init(self, config: ProviderConfig) -> None:
        """Settle the options of ``config.mode``."""
        where = f"provider 'acp' (mode {config.mode!r})"
        options = build_options(AcpOptions, [self._base, dict(config.options)], where)
        check_api(options.api, where)
        _check_permission(options, where)
        program = _program(_argv(options, where), options, where)
        self._modes[config.mode] = ModeSetup(
            options=options,
            model=config.model,
            environment=dict(config.environment),
            binary=program,
            sandbox=config.sandbox,
        )

    # -- one session -------------------------------------------------------------

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """One ACP conversation: handshake, session, prompt until its ``stopReason``;
        the program is ended after."""
        import trio

        live = self.live(handle)
        argv = [live.setup.binary, *_argv(live.setup.options, "provider 'acp'")[1:]]
        env = self.environment(live)
        started = time.monotonic()
        with trio.fail_after(timeout_ms / 1000 if timeout_ms else float("inf")):
            client, stop_reason = await self._converse(live, argv, env, text)
        wall_ms = round((time.monotonic() - started) * 1000, 3)
        calls = list(live.wire.snapshot()) if live.wire is not None else []
        tokens = wire_metrics(calls, live.params.model, wall_ms, ()).tokens
        shell = _shell_tool(live.setup.options)
        trace, answer = build_trace(
            live.agent_session_id or live.params.scenario_id,
            client.updates,
            wall_ms,
            tokens,
            shell,
        )
        live.trace = trace
        metrics = wire_metrics(
            calls,
            live.params.model,
            wall_ms,
            tool_records(trace, tool_kinds(client.updates, shell)),
        )
        completion: CompletionReason = _COMPLETION.get(stop_reason, "stop")
        error = (
            f"acp: the turn ended with stopReason {stop_reason!r}"
            if stop_reason in ("cancelled", "refusal")
            else None
        )
        return PromptResult(
            text=answer, metrics=metrics, completion_reason=completion, error=error
        )

    async def _converse(
        self, live: LiveSession, argv: list[str], env: dict[str, str], text: str
    ) -> tuple[AcpClient, str]:
        """Start the program (confined when the run is), speak ACP with it, end its
        process group."""
        if not live.setup.confined:
            return await self._speak(live, argv, env, live.dirs.work, text)
        from ...sandbox import confine

        settings, job = self.sandbox_job(live, argv, env)
        async with confine(settings, job) as box:
            return await self._speak(
                live,
                list(box.argv),
                dict(box.env),
                Path(box.cwd),
                text,
                workspace=str(box.cwd),
            )

    async def _speak(
        self,
        live: LiveSession,
        argv: list[str],
        env: dict[str, str],
        cwd: Path,
        text: str,
        workspace: str | None = None,
    ) -> tuple[AcpClient, str]:
        import trio

        from ...util.processes import end_process_group, track_group

        options: AcpOptions = live.setup.options
        stderr_path = live.dirs.root / "stderr.log"
        with stderr_path.open("ab") as stderr:
            try:
                process = await trio.lowlevel.open_process(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    env=env,
                    cwd=cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                raise AcpError(
                    f"acp: cannot start {argv[0]!r}: {exc.strerror or exc}"
                ) from None
        track_group(process.pid)
        client = AcpClient(
            stdin=process.stdin, stdout=process.stdout, policy=options.permission
        )
        try:
            stop_reason = await self._session(
                live,
                process,
                client,
                text,
                workspace or str(live.dirs.work),
                stderr_path,
            )
        finally:
            await end_process_group(process, options.kill_grace_s)
        return client, stop_reason

    async def _session(
        self,
        live: LiveSession,
        process: Any,
        client: AcpClient,
        text: str,
        workspace: str,
        stderr_path: Path,
    ) -> str:
        import trio

        options: AcpOptions = live.setup.options
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(client.serve)
                try:
                    with trio.fail_after(options.handshake_timeout_s):
                        check_version(await client.request("initialize", _initialize()))
                        session = await client.request(
                            "session/new",
                            {"cwd": workspace, "mcpServers": _mcp(options)},
                        )
                    session_id = session.get("sessionId")
                    if not isinstance(session_id, str) or not session_id:
                        raise AcpError(
                            "acp: session/new answered without a sessionId: "
                            f"{json.dumps(session)[:200]}"
                        )
                    live.agent_session_id = session_id
                    prompt = [
                        {"type": "text", "text": block}
                        for block in (instructions(live.params, options), text)
                        if block
                    ]
                    result = await client.request(
                        "session/prompt", {"sessionId": session_id, "prompt": prompt}
                    )
                except trio.TooSlowError:
                    raise AcpError(
                        "acp: the agent never answered the handshake within "
                        f"{options.handshake_timeout_s:g} s"
                    ) from None
                except AcpError as exc:
                    if client.closed:
                        raise await _exited(process, stderr_path, exc) from None
                    raise
                nursery.cancel_scope.cancel()
        except* AcpError as group:
            raise group.exceptions[0] from None
        stop_reason = result.get("stopReason")
        if not isinstance(stop_reason, str):
            raise AcpError(
                f"acp: session/prompt answered without a stopReason: {json.dumps(result)[:200]}"
            )
        return stop_reason

    # -- the agent's environment ---------------------------------------------------

    def environment(self, live: LiveSession) -> dict[str, str]:
        """Isolated home, the conventional endpoint variables (the recorder), the
        agent's own settings, then the options' and the mode's."""
        options: AcpOptions = live.setup.options
        home = live.dirs.home
        fixed = {
            "HOME": str(home),
            "TMPDIR": str(live.dirs.tmp),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
        }
        url = self.model_url(live)
        if url:
            key = agent_key(live, options, "OPENAI_API_KEY", self.id)
            fixed |= {
                "OPENAI_BASE_URL": url,
                "OPENAI_API_BASE": url,
                "ANTHROPIC_BASE_URL": url,
                "OPENAI_API_KEY": key,
                "ANTHROPIC_API_KEY": key,
            }
        pointer = _POINTERS.get(options.agent or "")
        if pointer is not None:
            fixed |= pointer(live, url)
        return hide_key(
            live,
            child_environment(
                drop_prefixes=(
                    "OPENAI_",
                    "ANTHROPIC_",
                    "OPENCODE_",
                    "CLAUDE_",
                    "CODEX_",
                ),
                fixed=fixed,
                options_env=options.env,
                mode_env=live.setup.environment,
                confined=live.setup.confined,
            ),
        )


def _shell_tool(options: AcpOptions) -> str | None:
    """The registry agent's shell tool (its newest), which names its commands in the trace."""
    row = registry().get(options.agent or "")
    return row.shell[0].tool if row is not None and row.shell else None


async def _exited(process: Any, stderr_path: Path, cause: AcpError) -> AcpError:
    """The error of an agent that went away: its exit status (waited for a moment) and
    the end of its stderr."""
    import trio

    with trio.move_on_after(2):
        await process.wait()
    try:
        lines = [
            line.strip()
            for line in stderr_path.read_text(errors="replace").splitlines()
            if line.strip()
        ]
    except OSError:
        lines = []
    tail = " | ".join(lines)[-300:]
    status = (
        f"exited with status {process.returncode}"
        if process.returncode is not None
        else "closed its output"
    )
    why = str(cause).removeprefix("acp: ")
    return AcpError(f"acp: the agent {status} ({why}){': ' + tail if tail else ''}")


def _initialize() -> dict[str, Any]:
    return {
        "protocolVersion": PROTOCOL_VERSION,
        # No file system or terminal of the client's: the agent uses its own tools in the workspace.
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
        },
        "clientInfo": {"name": "agent-profiler", "version": "1"},
    }


def _mcp(options: AcpOptions) -> list[dict[str, Any]]:
    """The option ``mcp_servers`` as ACP's ``mcpServers`` (stdio servers: command, args, env)."""
    servers = []
    for name, server in options.mcp_servers.items():
        env = [
            {"name": k, "value": str(v)} for k, v in (server.get("env") or {}).items()
        ]
        servers.append(
            {
                "name": name,
                "command": server.get("command", ""),
                "args": list(server.get("args") or []),
                "env": env,
            }
        )
    return servers


def _opencode(live: LiveSession, url: str | None) -> dict[str, str]:
    """OpenCode reads its model from ``OPENCODE_CONFIG_CONTENT``: an OpenAI-compatible
    provider at the recorder."""
    from ..opencode.server import settle_plugin_sdk

    settle_plugin_sdk(live.dirs.home / ".config" / "opencode")
    model = live.params.model
    config: dict[str, Any] = {"autoupdate": False, "share": "disabled"}
    if url:
        provider_id, _, model_id = (
            model.rpartition("/") if "/" in model else ("profiler", "", model)
        )
        config |= {
            "model": f"{provider_id}/{model_id}",
            "provider": {
                provider_id: {
                    "npm": "@ai-sdk/openai-compatible",
                    "options": {"baseURL": url, "apiKey": "{env:OPENAI_API_KEY}"},
                    "models": {
                        model_id: {"limit": {"context": 200000, "output": 8192}}
                    },
                }
            },
        }
    else:
        config["model"] = model
    return {
        "OPENCODE_CONFIG_CONTENT": json.dumps(config),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
    }


def _claude_code(live: LiveSession, url: str | None) -> dict[str, str]:
    """Claude Code's adapter reads the Anthropic variables; these keep it offline but
    for the model."""
    env = {
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "ANTHROPIC_MODEL": live.params.model,
    }
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["IS_SANDBOX"] = (
            "1"  # as the claude-code provider: the session's folders are the sandbox
        )
    return env


def _codex(live: LiveSession, url: str | None) -> dict[str, str]:
    """Codex's adapter reads ``$CODEX_HOME/config.toml``: the model provider at the
    recorder, no sandbox.

    No approvals and no sandbox of Codex's own, as the ``codex`` provider runs it: under
    codex-acp's default preset (read-only) a command runs inside Codex's sandbox, whose helper
    it will not install under a temporary ``CODEX_HOME``; the command then fails before Codex
    announces it, and no ``tool_call`` update is ever sent (docs/providers/acp.md).
    ``execution.sandbox`` confines the program instead.
    """
    from ..codex import config_toml

    codex_home = live.dirs.home / ".codex"
    codex_home.mkdir(exist_ok=True)
    settings: dict[str, Any] = {
        "model": live.params.model,
        "approval_policy": "never",
        "sandbox_mode": "danger-full-access",
        "check_for_update_on_startup": False,
        "analytics": {"enabled": False},
    }
    if url:
        provider = {
            "name": "profiler",
            "base_url": url,
            "wire_api": "responses",
            "env_key": "OPENAI_API_KEY",  # the placeholder; the recorder holds the real key
        }
        settings |= {
            "model_provider": "profiler",
            "model_providers": {"profiler": provider},
        }
    path = codex_home / "config.toml"
    path.write_text(config_toml(settings, where="codex-acp config"), encoding="utf-8")
    path.chmod(0o600)
    return {"CODEX_HOME": str(codex_home)}


#: registry agent -> how it is pointed at the model (the registry's ``endpoint`` column
#: says it in prose)
_POINTERS = {
    "opencode": _opencode,
    "opencode-acp": _opencode,
    "claude-code-acp": _claude_code,
    "codex-acp": _codex,
}


__all__ = ["POLICIES", "AcpOptions", "AcpProvider"]
