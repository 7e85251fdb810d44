"""The ``codex`` provider: each session is one ``codex exec --json`` run of the real Codex CLI.

Codex runs with ``CODEX_HOME`` (and ``HOME``) in a temporary folder holding a
``config.toml`` written for the session: the model, one model provider
``profiler`` (``base_url``, ``wire_api = "responses"``, the key read from a
variable, the retry limits), the mode's instructions as
``developer_instructions``, MCP servers, and every switch that keeps it
offline (no update check, no analytics, no plugins or apps). Its printed
lines give the thread id, the commands it ran, retries (``Reconnecting...``)
and failures (``turn.failed``); usage, timings and the trace come from the
rollout file it writes under ``$CODEX_HOME/sessions/``, read with the
``codex`` importer's parser. Codex reports no cost: the cost collector prices
each model response's tokens on its own (``computed``) or reports ``unknown``.

Options: see :class:`CodexOptions` and docs/providers/codex.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from ..config.agents import agent
from ..errors import ConfigError
from ..model import (
    ErrorEvent,
    PromptMetrics,
    PromptResult,
    SessionHandle,
    TimingBreakdown,
    TimingSegment,
    TokenBreakdown,
)
from ..model.record import Record
from ._agent_process import (
    MAPPING,
    STRING,
    AgentError,
    AgentOptions,
    AgentProvider,
    AgentRun,
    LiveSession,
    agent_key,
    check_option,
    checked,
    child_environment,
    empty_trace,
    instructions,
    load_transcript,
    option,
)
from ._run_notes import retried_note, with_startup
from .agents import install_hint as hint_for

if TYPE_CHECKING:  # pragma: no cover
    from ..model.recorded import RecordedSession

__all__ = [
    "CodexOptions",
    "CodexProvider",
    "ExecSummary",
    "config_toml",
    "summarize_exec",
]

#: The variable the generated config tells Codex to read the key from (so no key is
#: written to a file).
KEY_VAR = "PROFILER_CODEX_API_KEY"
#: What Codex prints as an ``error`` line that is not an error (it lacks metadata for a
#: model it does not know).
_HARMLESS = re.compile(r"^Model metadata for .* not found")
_RETRY = re.compile(r"^Reconnecting\.\.\.\s*(\d+)/(\d+)")
#: Items of ``codex exec --json`` that are the agent acting (one model step each, at least).
_ACTIONS = ("command_execution", "mcp_tool_call", "file_change", "web_search")


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CodexOptions(AgentOptions):
    """Options of the ``codex`` provider (the shared ones, plus these)."""

    #: more ``config.toml`` settings, merged over the generated ones (e.g.
    #: ``model_reasoning_effort: high``)
    config: dict[str, Any] = attrs.field(
        factory=dict, validator=check_option, metadata=checked(*MAPPING)
    )
    #: the ``name`` of the generated model provider (shown by Codex in its logs)
    provider_name: str = option("profiler", *STRING)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ExecSummary(Record):
    """What ``codex exec --json`` printed about a session (the pure part of a live run)."""

    thread_id: str | None
    #: the ``turn.failed`` message, when the turn failed
    failure: str | None
    #: one message per model-request retry it made
    retries: tuple[str, ...]
    #: other errors it printed (not the harmless model-metadata notice)
    errors: tuple[str, ...]
    #: the last ``agent_message``
    text: str
    #: tool-using items it started (commands, MCP calls, file changes, web searches)
    actions: int


def summarize_exec(lines: list[dict[str, Any]]) -> ExecSummary:
    """Thread id, failure, retries, errors, answer and actions from ``codex exec --json`` lines."""
    seen = _ExecLines()
    for line in lines:
        seen.read(line)
    return ExecSummary(
        thread_id=seen.thread_id,
        failure=seen.failure,
        retries=tuple(seen.retries),
        errors=tuple(seen.errors),
        text=seen.text,
        actions=seen.actions,
    )


@attrs.define
class _ExecLines:
    """What the ``codex exec --json`` lines said so far."""

    thread_id: str | None = None
    failure: str | None = None
    retries: list[str] = attrs.Factory(list)
    errors: list[str] = attrs.Factory(list)
    text: str = ""
    actions: int = 0

    def read(self, line: dict[str, Any]) -> None:
        """One line, by its type."""
        kind = line.get("type")
        item = line.get("item")
        if kind == "thread.started" and isinstance(line.get("thread_id"), str):
            self.thread_id = line["thread_id"]
        elif kind == "error":
            message = str(line.get("message") or "error")
            if _RETRY.match(message):
                self.retries.append(message)
            else:
                self.errors.append(message)
        elif kind == "turn.failed":
            self.failure = _failure(line.get("error"))
        elif kind == "item.started" and isinstance(item, Mapping):
            if item.get("type") in _ACTIONS:
                self.actions += 1
        elif kind == "item.completed" and isinstance(item, Mapping):
            self._completed(item)

    def _completed(self, item: Mapping[str, Any]) -> None:
        """A finished item: the agent's message, or an error worth reporting."""
        kind = item.get("type")
        if kind == "agent_message" and isinstance(item.get("text"), str):
            self.text = item["text"]
        elif kind == "error" and not _HARMLESS.match(str(item.get("message"))):
            self.errors.append(str(item.get("message")))


def _failure(error: Any) -> str:
    """A ``turn.failed`` line's message."""
    if isinstance(error, Mapping):
        return str(error.get("message"))
    return str(error or "turn failed")


# -- config.toml ------------------------------------------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(name: str) -> str:
    return name if _BARE_KEY.match(name) else json.dumps(name)


def _value(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v, where) for v in value) + "]"
    if isinstance(value, Mapping):
        return (
            "{"
            + ", ".join(
                f"{_key(str(k))} = {_value(v, where)}" for k, v in value.items()
            )
            + "}"
        )
    raise ConfigError(
        f"{where}: cannot write {type(value).__name__} {value!r} to config.toml"
    )


def config_toml(
    settings: Mapping[str, Any], *, where: str = "codex config", _prefix: str = ""
) -> str:
    """``settings`` as TOML: plain keys first, then one ``[table]`` per nested mapping."""
    lines = [
        f"{_key(k)} = {_value(v, f'{where}.{k}')}"
        for k, v in settings.items()
        if not isinstance(v, Mapping)
    ]
    for k, v in settings.items():
        if isinstance(v, Mapping):
            name = f"{_prefix}{_key(str(k))}"
            lines += [
                "",
                f"[{name}]",
                config_toml(v, where=f"{where}.{k}", _prefix=name + "."),
            ]
    return "\n".join(line for line in lines if line is not None).strip("\n") + "\n"


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(dict(merged[key]), value)
        else:
            merged[key] = value
    return merged


#: where the npm launcher finds Codex's program: ``<platform package>/vendor/<target>/bin/codex``
_CODEX_NATIVE = {
    "x86_64": ("@openai/codex-linux-x64", "x86_64-unknown-linux-musl"),
    "aarch64": ("@openai/codex-linux-arm64", "aarch64-unknown-linux-musl"),
}


class CodexProvider(AgentProvider):
    """Runs each session as one ``codex exec --json`` process against the profile's model."""

    id = "codex"
    program = agent("codex").program  # the registry of agents (config/agents.toml)
    env_var = agent("codex").binary_env
    install_hint = hint_for("codex")
    default_endpoint = "https://api.openai.com"
    default_base_url = "https://api.openai.com/v1"
    options_class = CodexOptions

    #: its native program is static (musl): it runs in any Linux image of the host's machine
    runs_in_trial = True

    def trial_program(self, binary: str) -> str:
        """Codex's native program, not the npm launcher (``codex.js`` needs Node, which
        an image may lack)."""
        from .in_trial import native_program

        return native_program(binary, "codex", _CODEX_NATIVE)

    def check_options(self, options: CodexOptions, where: str) -> None:
        """Codex has no switch for allowed or disallowed tools: say so rather than ignore them."""
        for name in ("allowed_tools", "disallowed_tools"):
            if getattr(options, name):
                raise ConfigError(
                    f"{where}: option {name!r} is not supported by Codex (limit MCP tools with "
                    "mcp_servers.<name>.enabled_tools / disabled_tools)"
                )

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Run Codex on ``text`` to its end; its process group is ended however the run ends."""
        live = self.live(handle)
        options: CodexOptions = live.setup.options
        self.write_config(live)
        command = [
            live.setup.binary,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
        ]
        command += [*options.extra_args, "--", text]
        limit = options.max_turns
        actions = 0
        stopped = False

        def watch(line: dict[str, Any]) -> bool:
            # Codex has no turn limit of its own: end the session when it starts one
            # action too many.
            nonlocal actions, stopped
            item = line.get("item")
            if (
                line.get("type") == "item.started"
                and isinstance(item, Mapping)
                and item.get("type") in _ACTIONS
            ):
                actions += 1
                if limit is not None and actions > limit:
                    stopped = True
            return stopped

        import trio  # here, not at import: listing the plugins does not load trio

        with trio.fail_after(timeout_ms / 1000 if timeout_ms else float("inf")):
            run = await self.run(live, command, self.environment(live), on_line=watch)
        return self.measure(live, run, stopped)

    # -- configuration ----------------------------------------------------------

    def settings(self, live: LiveSession) -> dict[str, Any]:
        """The session's ``config.toml`` as a mapping (the ``config`` option merged over it)."""
        options: CodexOptions = live.setup.options
        provider: dict[str, Any] = {
            "name": options.provider_name,
            # The session's path on the wire recorder, else option base_url, else OpenAI's.
            "base_url": self.model_url(live) or self.default_base_url,
            "wire_api": "responses",
            "env_key": KEY_VAR,
        }
        if options.max_retries is not None:
            provider["request_max_retries"] = options.max_retries
            provider["stream_max_retries"] = options.max_retries
        settings: dict[str, Any] = {
            "model": live.params.model,
            "model_provider": "profiler",
            "check_for_update_on_startup": False,
            "model_providers": {"profiler": provider},
            "analytics": {"enabled": False},
            "features": {"plugins": False, "apps": False, "remote_plugin": False},
        }
        appended = instructions(live.params, options)
        if appended:
            settings["developer_instructions"] = appended
        if options.mcp_servers:
            settings["mcp_servers"] = {
                name: dict(server) for name, server in options.mcp_servers.items()
            }
        return _merge(settings, options.config)

    def write_config(self, live: LiveSession) -> None:
        """Write ``$CODEX_HOME/config.toml`` (0600: MCP server settings may hold secrets)."""
        codex_home = live.dirs.home / ".codex"
        codex_home.mkdir(exist_ok=True)
        path = codex_home / "config.toml"
        path.write_text(
            config_toml(
                self.settings(live),
                where=f"provider 'codex' (mode {live.params.mode!r})",
            ),
            encoding="utf-8",
        )
        path.chmod(0o600)

    def environment(self, live: LiveSession) -> dict[str, str]:
        """Isolated HOME and CODEX_HOME, the key, then the options' and the mode's variables."""
        options: CodexOptions = live.setup.options
        home = live.dirs.home
        fixed = {
            "HOME": str(home),
            "CODEX_HOME": str(home / ".codex"),
            "TMPDIR": str(live.dirs.tmp),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            KEY_VAR: agent_key(live, options, "OPENAI_API_KEY", self.id),
        }
        # The profiler's own CODEX_* / OPENAI_* settings would point the agent elsewhere.
        return child_environment(
            drop_prefixes=("CODEX_", "OPENAI_"),
            fixed=fixed,
            options_env=options.env,
            mode_env=live.setup.environment,
            confined=live.setup.confined,
        )

    # -- reading the run --------------------------------------------------------

    def measure(self, live: LiveSession, run: AgentRun, stopped: bool) -> PromptResult:
        """The PromptResult of a finished run; a failed session raises AgentError (an error row)."""
        summary = summarize_exec(run.lines)
        live.agent_session_id = summary.thread_id
        retried = retried_note(summary.retries)
        if summary.failure and not stopped:
            raise self.failure(live, f"codex: {summary.failure.rstrip('.')}{retried}")
        if run.exit_code != 0 and not stopped:
            detail = (
                "; ".join(summary.errors[-2:]) or run.stderr_tail() or "(no output)"
            )
            raise self.failure(
                live, f"codex exited with status {run.exit_code}{retried}: {detail}"
            )
        recorded = self.rollout(live, summary.thread_id)
        if recorded is None and not stopped:
            raise AgentError(
                f"codex: no rollout file for thread {summary.thread_id!r} in its CODEX_HOME"
            )
        segments: list[TimingSegment] = []
        if recorded is not None:
            metrics = recorded.result.metrics
            segments = with_startup(metrics.timing.segments, run.started_at)
            tokens, tool_calls, trace = (
                metrics.tokens,
                metrics.tool_calls,
                recorded.trace,
            )
            # each response priced on its own, at its own model
            model_calls = metrics.model_calls
            answer = summary.text or recorded.text
        else:
            tokens, tool_calls = TokenBreakdown(), ()
            trace = empty_trace(summary.thread_id or "unknown")
            answer, model_calls = summary.text, ()
        retries = [
            ErrorEvent(message=f"model request retried by Codex: {r}", recoverable=True)
            for r in summary.retries
        ]
        live.trace = attrs.evolve(
            trace,
            events=(*retries, *trace.events),
            summary=attrs.evolve(
                trace.summary, total_tokens=tokens, total_duration=run.wall_ms
            ),
        )
        return PromptResult(
            text=answer,
            metrics=PromptMetrics(
                tokens=tokens,
                timing=TimingBreakdown(wall_ms=run.wall_ms, segments=tuple(segments)),
                tool_calls=tool_calls,
                model_calls=model_calls,
            ),
            completion_reason="tool_limit" if stopped else "stop",
        )

    @staticmethod
    def rollout(live: LiveSession, thread_id: str | None) -> RecordedSession | None:
        """The session's rollout parsed by the ``codex`` importer (None when there is none)."""
        if not thread_id:
            return None
        sessions = live.dirs.home / ".codex" / "sessions"
        found = sorted(
            sessions.glob(
                f"*/*/*/rollout-*{re.sub(r'[^A-Za-z0-9-]', '', thread_id)}.jsonl"
            )
        )
        if not found:
            return None
        # Read from the agent's home: no link followed below it, bounded, parsed from a
        # private copy.
        return load_transcript("codex", live.dirs.home, found[-1])
