"""The ``claude-code`` provider: each session is one headless run of the real Claude Code.

``claude -p --output-format stream-json --verbose ... -- PROMPT`` runs in a
temporary home (so the user's settings, logins and history are neither read
nor touched) and a working directory of its own, with only the model
endpoint to talk to (``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``,
``DISABLE_TELEMETRY``, ``DISABLE_AUTOUPDATER``). Its printed lines give the
session id, the model retries it made (``api_retry``) and, on the final
``result`` line, the session's token totals, cost and answer - the only
totals that are right: the ``assistant`` lines repeat each response's first
usage (output 1). The transcript it writes under
``$HOME/.claude/projects/<cwd-slug>/<session>.jsonl`` is read with the
``claude-code`` importer's parser for the trace: turns with real timestamps,
thinking, tool inputs and outputs, tool durations, model and tool time.

Options: see :class:`ClaudeCodeOptions` and docs/providers/claude-code.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..config.agents import agent
from ..model import (
    CompletionReason,
    CostBreakdown,
    ErrorEvent,
    PromptMetrics,
    PromptResult,
    SessionHandle,
    SessionTrace,
    TimingBreakdown,
    TimingSegment,
    TokenBreakdown,
)
from ..model.record import Record
from ._agent_process import (
    BOOL,
    STRING,
    AgentOptions,
    AgentProvider,
    AgentRun,
    LiveSession,
    agent_key,
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
    "ClaudeCodeOptions",
    "ClaudeCodeProvider",
    "StreamSummary",
    "summarize_stream",
]

#: Claude Code's permission modes (``--permission-mode``).
PERMISSION_MODES = (
    "acceptEdits",
    "bypassPermissions",
    "default",
    "dontAsk",
    "plan",
    "auto",
)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ClaudeCodeOptions(AgentOptions):
    """Options of the ``claude-code`` provider (the shared ones, plus these)."""

    #: ``--permission-mode``; default: ``--dangerously-skip-permissions`` (a headless
    #: run cannot answer prompts)
    permission_mode: str | None = option(
        None, lambda v: v in PERMISSION_MODES, f"one of {', '.join(PERMISSION_MODES)}"
    )
    #: use the cost Claude Code reports (only for models it knows the price of); false:
    #: price the tokens
    agent_cost: bool = option(True, *BOOL)
    #: ``--fallback-model`` (used when the model is overloaded)
    fallback_model: str | None = option(None, *STRING)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class StreamSummary(Record):
    """What Claude Code's printed lines say about a session (the pure part of a live run)."""

    session_id: str | None
    model: str | None
    #: the final ``result`` line, when it printed one
    result: dict[str, Any] | None
    #: one message per model retry it made
    retries: tuple[str, ...]


def summarize_stream(lines: list[dict[str, Any]]) -> StreamSummary:
    """Session id, model, final result and retries from ``--output-format stream-json`` lines."""
    session_id = model = None
    result = None
    retries: list[str] = []
    for line in lines:
        kind, subtype = line.get("type"), line.get("subtype")
        session_id = session_id or (
            line.get("session_id") if isinstance(line.get("session_id"), str) else None
        )
        if kind == "system" and subtype == "init":
            model = line.get("model") if isinstance(line.get("model"), str) else model
        elif kind == "system" and subtype == "api_retry":
            status = line.get("error_status")
            what = f"HTTP {status}" if status else str(line.get("error") or "error")
            retries.append(
                f"attempt {line.get('attempt')}/{line.get('max_retries')}: {what}"
            )
        elif kind == "result":
            result = line
    return StreamSummary(
        session_id=session_id, model=model, result=result, retries=tuple(retries)
    )


class ClaudeCodeProvider(AgentProvider):
    """Runs each session as one headless Claude Code process against the profile's model."""

    id = "claude-code"
    program = agent(
        "claude-code"
    ).program  # the registry of agents (config/agents.toml)
    env_var = agent("claude-code").binary_env
    install_hint = hint_for("claude-code")
    default_endpoint = "https://api.anthropic.com"
    default_base_url = default_endpoint
    options_class = ClaudeCodeOptions
    #: its native program runs in any glibc image (providers/in_trial.py)
    runs_in_trial = True

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Run Claude Code on ``text`` to its end; its process group is ended however
        the run ends."""
        live = self.live(handle)
        command = self.command(live, text)
        env = self.environment(live)
        import trio  # here, not at import: listing the plugins does not load trio

        with trio.fail_after(timeout_ms / 1000 if timeout_ms else float("inf")):
            run = await self.run(live, command, env)
        return self.measure(live, run)

    # -- the command and its environment --------------------------------------

    def command(self, live: LiveSession, text: str) -> list[str]:
        """``claude -p`` with the mode's knobs; the prompt comes last, after ``--``."""
        options: ClaudeCodeOptions = live.setup.options
        command = [
            live.setup.binary,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            live.params.model,
        ]
        if options.permission_mode:
            command += ["--permission-mode", options.permission_mode]
        else:
            command.append("--dangerously-skip-permissions")
        appended = instructions(live.params, options)
        if appended:
            command += ["--append-system-prompt", appended]
        if options.allowed_tools:
            command += ["--allowedTools", ",".join(options.allowed_tools)]
        if options.disallowed_tools:
            command += ["--disallowedTools", ",".join(options.disallowed_tools)]
        if options.mcp_servers:
            # A file, not an argument: server settings may hold secrets that `ps` would show. In the
            # session's home, which a sandbox shows the agent too.
            path = live.dirs.home / ".profiler-mcp.json"
            path.write_text(
                json.dumps({"mcpServers": options.mcp_servers}), encoding="utf-8"
            )
            path.chmod(0o600)
            command += ["--mcp-config", str(path), "--strict-mcp-config"]
        if options.max_turns is not None:
            command += ["--max-turns", str(options.max_turns)]
        if options.fallback_model:
            command += ["--fallback-model", options.fallback_model]
        return [*command, *options.extra_args, "--", text]

    def environment(self, live: LiveSession) -> dict[str, str]:
        """Isolated home, the endpoint and key, offline switches, then the options' and
        the mode's variables."""
        options: ClaudeCodeOptions = live.setup.options
        home = live.dirs.home
        fixed = {
            "HOME": str(home),
            # Its own temporary files (task state, sockets) go with the session, not the
            # system's /tmp.
            "TMPDIR": str(live.dirs.tmp),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "ANTHROPIC_API_KEY": agent_key(live, options, "ANTHROPIC_API_KEY", self.id),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
        model_url = self.model_url(
            live
        )  # the wire recorder's path for the session, else option base_url
        if model_url:
            fixed["ANTHROPIC_BASE_URL"] = model_url
        if options.max_retries is not None:
            fixed["CLAUDE_CODE_MAX_RETRIES"] = str(options.max_retries)
        if (hasattr(os, "geteuid") and os.geteuid() == 0) or (
            live.params.environment is not None
        ):
            # Claude Code refuses --dangerously-skip-permissions as root outside a declared sandbox;
            # the session's temporary home and folder are that sandbox (a trial's
            # container is one too).
            fixed["IS_SANDBOX"] = "1"
        # The profiler's own ANTHROPIC_* / CLAUDE_* settings would point the agent elsewhere.
        return child_environment(
            drop_prefixes=("ANTHROPIC_", "CLAUDE_"),
            fixed=fixed,
            options_env=options.env,
            mode_env=live.setup.environment,
            confined=live.setup.confined,
        )

    # -- reading the run ------------------------------------------------------

    def measure(self, live: LiveSession, run: AgentRun) -> PromptResult:
        """The PromptResult of a finished run; a failed session raises AgentError (an error row)."""
        options: ClaudeCodeOptions = live.setup.options
        summary = summarize_stream(run.lines)
        live.agent_session_id = summary.session_id
        recorded = self.transcript(live, summary.session_id)
        retried = retried_note(summary.retries)
        result = summary.result
        if result is None:
            output = run.stderr_tail() or " | ".join(run.noise[-3:]) or "(no output)"
            raise self.failure(
                live,
                f"claude-code exited with status {run.exit_code} without a result{retried}: "
                f"{output}",
            )
        completion = self._completion(live, result, retried)
        tokens = _result_tokens(result, summary.session_id)
        segments: list[TimingSegment] = []
        tool_calls: tuple = ()
        raw_answer = result.get("result")
        answer: str = raw_answer if isinstance(raw_answer, str) else ""
        if recorded is not None:
            segments = with_startup(
                recorded.result.metrics.timing.segments, run.started_at
            )
            tool_calls = recorded.result.metrics.tool_calls
            answer = answer or recorded.text
        metrics = PromptMetrics(
            tokens=tokens,
            timing=TimingBreakdown(wall_ms=run.wall_ms, segments=tuple(segments)),
            tool_calls=tool_calls,
            cost=self.cost(result) if options.agent_cost else CostBreakdown(),
        )
        live.trace = self.trace(recorded, summary, tokens, run.wall_ms)
        return PromptResult(text=answer, metrics=metrics, completion_reason=completion)

    def _completion(
        self, live: LiveSession, result: dict[str, Any], retried: str
    ) -> CompletionReason:
        """``stop``, or ``tool_limit`` at the turn limit; any other error raises AgentError."""
        if not result.get("is_error") and result.get("subtype") == "success":
            return "stop"
        if (
            result.get("subtype") == "error_max_turns"
            or result.get("terminal_reason") == "max_turns"
        ):
            return "tool_limit"
        raw_errors = result.get("errors")
        errors: list[Any] = raw_errors if isinstance(raw_errors, list) else []
        message = (
            result.get("result")
            or "; ".join(map(str, errors))
            or result.get("subtype")
            or "error"
        )
        raise self.failure(live, f"claude-code: {str(message).rstrip('.')}{retried}")

    @staticmethod
    def cost(result: dict[str, Any]) -> CostBreakdown:
        """Claude Code's own cost, when it priced every model it used (``costBasis`` not
        ``unknown``)."""
        total = result.get("total_cost_usd")
        if isinstance(total, bool) or not isinstance(total, (int, float)) or total <= 0:
            return CostBreakdown()
        raw_models = result.get("modelUsage")
        per_model: dict[str, Any] = raw_models if isinstance(raw_models, dict) else {}
        if any(
            isinstance(u, dict) and u.get("costBasis") == "unknown"
            for u in per_model.values()
        ):
            # It priced a model it does not know with a guess; the cost collector prices it instead.
            return CostBreakdown()
        return CostBreakdown(total_usd=float(total))

    def transcript(
        self, live: LiveSession, session_id: str | None
    ) -> RecordedSession | None:
        """The session's transcript parsed by the ``claude-code`` importer (None when it
        wrote none)."""
        if not session_id:
            return None
        name = f"{Path(session_id).name}.jsonl"
        projects = live.dirs.home / ".claude" / "projects"
        found = sorted(
            p / name for p in _real_folders(projects) if os.path.lexists(p / name)
        )
        if not found:
            return None
        return load_transcript("claude-code", live.dirs.home, found[0])

    @staticmethod
    def trace(
        recorded: Any, summary: StreamSummary, tokens: TokenBreakdown, wall_ms: float
    ) -> SessionTrace:
        """The transcript's trace, with the model retries as recoverable errors and the
        run's own totals."""
        trace = (
            recorded.trace
            if recorded is not None
            else empty_trace(summary.session_id or "unknown")
        )
        retries = [
            ErrorEvent(
                message=f"model request retried by Claude Code: {r}", recoverable=True
            )
            for r in summary.retries
        ]
        summary_ = attrs.evolve(
            trace.summary, total_tokens=tokens, total_duration=wall_ms
        )
        return attrs.evolve(trace, events=(*retries, *trace.events), summary=summary_)


def _real_folders(folder: Path) -> list[Path]:
    """The folders directly in ``folder`` (none through a link)."""
    try:
        with os.scandir(folder) as entries:
            return [folder / e.name for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _result_tokens(result: dict[str, Any], session_id: str | None) -> TokenBreakdown:
    """The result line's usage (none recorded: zero tokens)."""
    from ..metrics.usage import normalize_usage

    usage = result.get("usage")
    if not usage:
        return TokenBreakdown()
    where = f"claude-code result line (session {session_id}): $.usage"
    return normalize_usage(usage, provider="anthropic", where=where)
