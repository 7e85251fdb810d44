"""The ``command`` provider: any CLI agent that takes a prompt, measured from the wire.

Each session runs the ``command`` option once in the session's workspace:
``{prompt}`` in it becomes the prompt as one argument, ``{prompt_file}`` the
path of a file holding it; with neither, the prompt goes to standard input.
The agent is pointed at the wire recorder through the conventional variables
(``OPENAI_BASE_URL``, ``OPENAI_API_BASE``, ``ANTHROPIC_BASE_URL``) and
``{base_url}`` in the command or the ``env`` option; the recorder forwards to
``base_url``, the real endpoint. The final text is what the program prints
(or the file ``output_file`` names); tokens, cost and model latency come from
the wire; tool calls from ``trace_file`` when the agent writes one in a
format of ``profiler import``, else from the wire: the tool calls the model
asked for, with the results the agent sent back in its next request.

Options: see :class:`CommandOptions` and docs/providers/command.md.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import ConfigError
from ..model import (
    ModelCallEvent,
    PromptResult,
    SessionHandle,
    SessionTrace,
    TextOutputEvent,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    TraceSummary,
)
from ._agent_process import (
    STRING,
    AgentError,
    AgentOptions,
    AgentProvider,
    AgentRun,
    LiveSession,
    ModeSetup,
    agent_key,
    build_options,
    check_api,
    check_option,
    checked,
    child_environment,
    instructions,
    option,
)
from ._wire import wire_metrics

if TYPE_CHECKING:  # pragma: no cover
    from ..model.session import ProviderConfig

#: the placeholders of ``command`` (and of ``env`` values)
PLACEHOLDERS = (
    "{prompt}",
    "{prompt_file}",
    "{base_url}",
    "{model}",
    "{workspace}",
    "{system}",
)


def _command(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(v, str) for v in value)
    )


COMMAND = (_command, "a command line (a string or a list of strings)")


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CommandOptions(AgentOptions):
    """Options of the ``command`` provider (the shared ones, plus these)."""

    #: the agent's command line: a string (split as a shell would, never run by one) or a list
    command: str | list[str] | None = attrs.field(
        default=None, validator=check_option, metadata=checked(*COMMAND)
    )
    #: the model API of its calls when the paths do not tell: openai-chat |
    #: openai-responses | anthropic
    api: str | None = option(None, *STRING)
    #: a file (relative to the workspace) holding the final answer instead of standard output
    output_file: str | None = option(None, *STRING)
    #: a file (relative to the workspace) the agent writes its trace to, in a format of
    #: ``profiler import``
    trace_file: str | None = option(None, *STRING)
    #: the format of ``trace_file``: ``auto`` (ATIF when its ``schema_version`` says so,
    #: else ``trace``), or a
    #: format of ``profiler import`` (trace, atif, openai, anthropic, claude-code, codex, opencode)
    trace_format: str = option("auto", *STRING)


class CommandProvider(AgentProvider):
    """Runs each session as one run of ``options.command``; numbers from the wire recorder."""

    id = "command"
    program = ""
    env_var = "AGENT_COMMAND_BIN"
    install_hint = "give the program's path in the command, or put it on PATH"
    options_class = CommandOptions
    keep_output = True

    def __init__(self, **options: Any) -> None:
        """Check the options and that the command's program exists (one line otherwise)."""
        self._base = dict(options)
        self._check(
            build_options(CommandOptions, [self._base], "provider 'command'"),
            "provider 'command'",
        )
        self._modes: dict[str, ModeSetup] = {}
        self._sessions: dict[str, LiveSession] = {}
        self._recorders: dict[str, Any] = {}

    def init(self, config: ProviderConfig) -> None:
        """Settle the options of ``config.mode``."""
        where = f"provider 'command' (mode {config.mode!r})"
        options = build_options(
            CommandOptions, [self._base, dict(config.options)], where
        )
        program = self._check(options, where)
        self._modes[config.mode] = ModeSetup(
            options=options,
            model=config.model,
            environment=dict(config.environment),
            binary=program,
            sandbox=config.sandbox,
        )

    @staticmethod
    def _check(options: CommandOptions, where: str) -> str:
        """The command's program, found; a missing command, a bad ``api`` or a missing
        program is one ConfigError."""
        if options.command is None:
            raise ConfigError(
                f"{where}: option 'command' is required (e.g. \"my-agent "
                f'--prompt-file {{prompt_file}}")'
            )
        check_api(options.api, where)
        if options.trace_format != "auto":
            from ..importers import formats

            if options.trace_format not in formats():
                known = ", ".join(("auto", *formats()))
                raise ConfigError(
                    f"{where}: option 'trace_format': expected one of {known}, "
                    f"got {options.trace_format!r}"
                )
        argv = _split(options.command, where)
        program = argv[0]
        found = (
            shutil.which(program)
            if "/" not in program
            else (program if Path(program).is_file() else None)
        )
        if found is None:
            raise ConfigError(
                f"{where}: option 'command': program {program!r} not found "
                "(give its path, or put it on PATH)"
            )
        return found

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Run the command on ``text`` to its end; its process group is ended however
        the run ends."""
        import trio

        live = self.live(handle)
        prompt_file = live.dirs.tmp / "prompt.txt"
        prompt_file.write_text(text, encoding="utf-8")
        values = self._values(live, text, prompt_file)
        argv = [
            _fill(part, values)
            for part in _split(live.setup.options.command, "provider 'command'")
        ]
        stdin = (
            None
            if any(
                p in str(live.setup.options.command)
                for p in ("{prompt}", "{prompt_file}")
            )
            else text.encode()
        )
        with trio.fail_after(timeout_ms / 1000 if timeout_ms else float("inf")):
            run = await self.run(
                live, argv, self.environment(live, values), stdin=stdin
            )
        return self.measure(live, run)

    def _values(
        self, live: LiveSession, text: str, prompt_file: Path
    ) -> dict[str, str]:
        return {
            "{prompt}": text,
            "{prompt_file}": str(prompt_file),
            "{base_url}": self.model_url(live) or "",
            "{model}": live.params.model,
            "{workspace}": str(live.dirs.work),
            "{system}": instructions(live.params, live.setup.options),
        }

    def environment(self, live: LiveSession, values: dict[str, str]) -> dict[str, str]:
        """The conventional endpoint and key variables, pointing at the recorder; then
        the options' and the mode's."""
        options: CommandOptions = live.setup.options
        fixed = {
            "HOME": str(live.dirs.home),
            "TMPDIR": str(live.dirs.tmp),
            "PROFILER_MODEL": live.params.model,
        }
        url = values["{base_url}"]
        if url:
            fixed |= {
                "OPENAI_BASE_URL": url,
                "OPENAI_API_BASE": url,
                "ANTHROPIC_BASE_URL": url,
            }
            key = agent_key(live, options, "OPENAI_API_KEY", self.id)
            fixed |= {"OPENAI_API_KEY": key, "ANTHROPIC_API_KEY": key}
        if values["{system}"]:
            fixed["PROFILER_SYSTEM_PROMPT"] = values["{system}"]
        env = {k: _fill(str(v), values) for k, v in options.env.items()}
        return child_environment(
            drop_prefixes=("OPENAI_", "ANTHROPIC_"),
            fixed=fixed,
            options_env=env,
            mode_env=live.setup.environment,
            confined=live.setup.confined,
        )

    # -- reading the run ------------------------------------------------------

    def measure(self, live: LiveSession, run: AgentRun) -> PromptResult:
        """The PromptResult of a finished run; a failed one raises AgentError naming its
        exit status and output."""
        options: CommandOptions = live.setup.options
        output = run.output_text()
        if run.exit_code != 0:
            raise self.failure(
                live,
                f"command exited with status {run.exit_code}: "
                f"{run.stderr_tail() or output[-300:] or '(no output)'}",
            )
        answer = self._answer(live, output)
        calls = list(live.wire.snapshot()) if live.wire is not None else []
        recorded = self._trace_file(live) if options.trace_file else None
        trace = recorded or self._wire_trace(live, answer, calls, run.wall_ms)
        tool_calls = tool_records(trace)
        live.trace = trace
        return PromptResult(
            text=answer,
            metrics=wire_metrics(calls, live.params.model, run.wall_ms, tool_calls),
        )

    def _answer(self, live: LiveSession, output: str) -> str:
        name = live.setup.options.output_file
        if not name:
            return output.strip()
        path = _inside(live.dirs.work, name, "output_file")
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise self.failure(
                live,
                f"command: option 'output_file': cannot read {name!r} in the "
                f"workspace: {exc.strerror or exc}",
            ) from None

    def _trace_file(self, live: LiveSession) -> SessionTrace | None:
        """The trace the agent wrote (None when it wrote none)."""
        options: CommandOptions = live.setup.options
        assert options.trace_file is not None
        path = _inside(live.dirs.work, options.trace_file, "trace_file")
        if not path.is_file():
            return None
        from ..importers import load_sessions

        format = (
            options.trace_format
            if options.trace_format != "auto"
            else detect_format(path)
        )
        sessions = load_sessions(format, path)
        return sessions[-1].trace if sessions else None

    def _wire_trace(
        self,
        live: LiveSession,
        answer: str,
        calls: list[ModelCallEvent],
        wall_ms: float,
    ) -> SessionTrace:
        """The trace the wire saw: each tool call the model asked for, with the result
        the agent sent back; the answer."""
        events: list[Any] = []
        wire = live.wire
        for call in wire.tool_calls if wire is not None else ():
            try:
                arguments: Any = json.loads(call.arguments) if call.arguments else {}
            except ValueError:
                arguments = call.arguments
            result = wire.tool_results.get(call.id) if wire is not None else None
            events.append(
                ToolCallEvent(
                    name=call.name or "tool",
                    input=arguments,
                    output=result,
                    success=result is not None,
                )
            )
        if answer:
            events.append(TextOutputEvent(content=answer))
        tokens = sum((c.tokens for c in calls), TokenBreakdown())
        summary = TraceSummary(
            total_turns=len([c for c in calls if c.status and c.status < 400]),
            total_tool_calls=sum(1 for e in events if isinstance(e, ToolCallEvent)),
            total_tokens=tokens,
            total_duration=wall_ms,
        )
        return SessionTrace(
            session_id=live.params.scenario_id,
            events=tuple(events),
            turns=(),
            summary=summary,
        )


def _split(command: Any, where: str) -> list[str]:
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"{where}: option 'command': {exc}") from None
    else:
        argv = list(command)
    if not argv:
        raise ConfigError(f"{where}: option 'command' is empty")
    return argv


def detect_format(path: Path) -> str:
    """``atif`` for a JSON object whose ``schema_version`` names ATIF, else ``trace``
    (its importer names any fault)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError:
        return "trace"
    version = data.get("schema_version") if isinstance(data, dict) else None
    return (
        "atif" if isinstance(version, str) and version.startswith("ATIF-") else "trace"
    )


def _fill(text: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        text = text.replace(name, value)
    return text


def _inside(root: Path, name: str, option_name: str) -> Path:
    """``name`` under ``root``; a path leaving it is refused (the file names a place in
    the workspace only)."""
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise AgentError(
            f"command: option {option_name!r}: {name!r} is outside the workspace"
        )
    return path


def tool_records(
    trace: SessionTrace, categories: dict[str, str] | None = None
) -> tuple[ToolCallRecord, ...]:
    """The trace's tool calls as the row's records (``categories``: known categories by
    tool name)."""
    known = categories or {}
    return tuple(
        ToolCallRecord(
            name=e.name,
            category=known.get(e.name) or _category(e.name),
            success=e.success,
            duration_ms=e.duration_ms or None,
            error=e.error,
        )
        for e in trace.events
        if isinstance(e, ToolCallEvent)
    )


def _category(name: str) -> str:
    from ..traces.categories import tool_category

    return tool_category(name)


__all__ = [
    "PLACEHOLDERS",
    "CommandOptions",
    "CommandProvider",
    "detect_format",
    "tool_records",
]
