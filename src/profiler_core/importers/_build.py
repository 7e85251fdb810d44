"""What every importer shares: the RecordedSession type, a builder that turns a
stream of turns / reasoning / text / tool calls / usage into a consistent
PromptResult + SessionTrace, and strict readers for JSON and JSONL files.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from ..errors import ValidationError
from ..model import (
    CompletionReason,
    CostBreakdown,
    CostSource,
    ErrorEvent,
    ModelUsage,
    PromptMetrics,
    PromptResult,
    ReasoningEvent,
    RecordedSession,
    SessionTrace,
    TextOutputEvent,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    TraceSummary,
    Turn,
    TurnBoundaryEvent,
)
from ..storage.serde import json_message
from ..util.numbers import is_number
from ..util.textclean import clean_value, may_need_cleaning, warn_replaced
from ..util.timestamps import iso

#: Tool outputs longer than this are cut in the trace (real sessions read whole files; traces must stay loadable).
MAX_OUTPUT_CHARS = 20_000
#: Error texts longer than this are cut on ToolCallRecord / ToolCallEvent.
MAX_ERROR_CHARS = 500


# -- time -----------------------------------------------------------------------


def parse_time(value: Any, where: str) -> datetime:
    """An ISO 8601 string or an epoch number (ms when > 1e11, else s) as an aware datetime."""
    if isinstance(value, bool):
        raise ValidationError(f"{where}: expected a timestamp, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise ValidationError(
                f"{where}: timestamp {value!r} is out of range"
            ) from None
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValidationError(
                f"{where}: expected an ISO 8601 timestamp, got {value!r}"
            ) from None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    raise ValidationError(
        f"{where}: expected a timestamp (ISO 8601 string or epoch number), got {type(value).__name__}"
    )


def _ms(later: datetime, earlier: datetime) -> float:
    return round(max(0.0, (later - earlier).total_seconds() * 1000), 3)


# -- small helpers --------------------------------------------------------------


def expect_mapping(
    value: Any, where: str, what: str = "an object"
) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else a ValidationError naming ``where``."""
    if not isinstance(value, Mapping):
        raise ValidationError(f"{where}: expected {what}, got {_kind(value)}")
    return value


def expect_list(value: Any, where: str, what: str = "a list") -> list[Any]:
    """``value`` if it is a JSON array, else a ValidationError naming ``where``."""
    if not isinstance(value, list):
        raise ValidationError(f"{where}: expected {what}, got {_kind(value)}")
    return value


def optional_str(value: Any, where: str) -> str | None:
    """A string or None; anything else is an error."""
    if value is None or isinstance(value, str):
        return value
    raise ValidationError(f"{where}: expected a string, got {_kind(value)}")


def number(value: Any, where: str) -> float | int | None:
    """A number >= 0 or None; anything else is an error."""
    if value is None:
        return None
    if not is_number(value) or value < 0:
        raise ValidationError(f"{where}: expected a number >= 0, got {value!r}")
    return value


def _kind(value: Any) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def keys_of(value: Any) -> str:
    """``{'a', 'b'}`` for error messages about foreign objects."""
    if isinstance(value, Mapping):
        return (
            "keys {"
            + ", ".join(repr(k) for k in sorted(value, key=str)[:8])
            + (", ..." if len(value) > 8 else "")
            + "}"
        )
    return _kind(value)


def text_of(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a list, joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "\n".join(texts)
    return json.dumps(content, ensure_ascii=False, default=str)


def estimate_tokens(text: str) -> int:
    """ceil(characters / 4): the usual estimate (the original's trace builder uses it) when a file has no per-event count."""
    return -(-len(text) // 4)


def parse_arguments(arguments: str) -> Any:
    """Tool-call arguments (a JSON string) as a value; kept as the string when it is not JSON."""
    try:
        value = json.loads(arguments)
    except (TypeError, ValueError):
        return arguments
    return clean_value(value)[
        0
    ]  # arguments escaped inside a JSON string: a lone surrogate only shows now


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [{len(text) - limit} more characters cut on import]"


_CATEGORIES = {
    "shell": {
        "bash",
        "sh",
        "shell",
        "terminal",
        "exec_command",
        "run_command",
        "execute_command",
        "run_shell_command",
        "run_terminal_cmd",
        "local_shell",
        "powershell",
        "bashoutput",
        "killshell",
        "killbash",
    },
    "file": {
        "read",
        "read_file",
        "write",
        "write_file",
        "edit",
        "multiedit",
        "notebookedit",
        "notebookread",
        "patch",
        "apply_patch",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "view",
        "list",
        "ls",
        "create_file",
    },
    "search": {"grep", "glob", "search", "find", "codesearch", "file_search", "lsp"},
    "web": {"webfetch", "web_fetch", "websearch", "web_search", "fetch"},
    "agent": {"task", "agent", "subagent", "dispatch_agent"},
}
_CATEGORY_OF = {
    name: category for category, names in _CATEGORIES.items() for name in names
}


def tool_category(name: str) -> str:
    """A coarse category for a tool name (``tool_calls_category_<name>`` metrics): shell, file, search, web, agent, mcp, other."""
    lowered = name.lower()
    if lowered.startswith("mcp_"):
        return "mcp"
    return _CATEGORY_OF.get(lowered, "other")


# -- file readers ---------------------------------------------------------------


#: the largest file ``profiler import`` reads (a trace of that size is already far beyond any real session's)
MAX_IMPORT_BYTES = 1 << 30


def read_text(path: Path) -> str:
    """A file's text; a missing, unreadable, binary, special or oversized file is a ValidationError naming it.

    Only a regular file is read: a FIFO would wait for a writer forever and ``/dev/zero`` never ends.
    """
    try:
        fd = os.open(
            path,
            os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0),
        )
    except FileNotFoundError:
        raise ValidationError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise ValidationError(f"{path}: is a directory, expected a file") from None
    except OSError as exc:
        raise ValidationError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ValidationError(f"{path}: is a directory, expected a file")
        if not stat.S_ISREG(info.st_mode):
            raise ValidationError(
                f"{path}: is not a regular file (a FIFO, socket or device); expected a file"
            )
        try:
            data = f.read(MAX_IMPORT_BYTES + 1)
        except OSError as exc:
            raise ValidationError(
                f"{path}: cannot read ({exc.strerror or exc})"
            ) from None
    if len(data) > MAX_IMPORT_BYTES:
        raise ValidationError(
            f"{path}: larger than {MAX_IMPORT_BYTES >> 20} MiB; refusing to import it"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"{path}: not a UTF-8 text file") from None
    return text.replace("\r\n", "\n").replace(
        "\r", "\n"
    )  # universal newlines, as a text-mode read gives


def iter_jsonl(path: Path, text: str | None = None) -> Iterator[tuple[int, Any]]:
    """Yield (line number, value) for each non-empty line; a bad line names its number (truncated last line included)."""
    text = read_text(path) if text is None else text
    lines = text.split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            value = load_json(line, f"{path}:{index + 1}")
        except json.JSONDecodeError as exc:
            if index == last and not text.endswith("\n"):
                raise ValidationError(
                    f"{path}:{index + 1}: truncated last line (not valid JSON: {json_problem(exc)}); "
                    "was the file copied while the session was still being written?"
                ) from None
            raise ValidationError(
                f"{path}:{index + 1}: not valid JSON ({json_problem(exc)})"
            ) from None
        yield index + 1, absent_nulls(value)


def read_json_records(path: Path) -> list[tuple[str, Any]]:
    """The JSON values of a file holding one JSON document, or one JSON value per line (JSONL).

    Returns (where, value) pairs; a top-level JSON array gives one pair per item.
    """
    text = read_text(path)
    stripped = text.strip()
    if not stripped:
        raise ValidationError(f"{path}: empty file")
    first_line = stripped.split("\n", 1)[0]
    if "\n" in stripped and _parses(first_line):
        return [(f"{path}:{n}", value) for n, value in iter_jsonl(path, text)]
    try:
        value = load_json(text, str(path))
    except json.JSONDecodeError as exc:
        hint = truncation_hint(exc, text)
        raise ValidationError(
            f"{path}: not valid JSON ({json_problem(exc, line=True)}){hint}"
        ) from None
    value = absent_nulls(value)
    if isinstance(value, list):
        return [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    return [(str(path), value)]


def load_json(text: str, where: str) -> Any:
    """``json.loads``, with lone surrogates and NUL characters replaced by U+FFFD and a warning naming ``where``."""
    value = json.loads(text)
    if may_need_cleaning(text):
        value, replaced = clean_value(value)
        if replaced:
            warn_replaced(where, replaced)
    return value


#: Keys whose values are the agent's own data (tool inputs and outputs): kept exactly as recorded, nulls included.
_VERBATIM = frozenset({"input", "arguments", "output", "toolUseResult", "metadata"})


def absent_nulls(value: Any) -> Any:
    """``value`` with every ``null`` member of a JSON object left out: a null optional field is an absent one.

    Tools that re-save a session write ``null`` where the agent wrote ``false``
    or nothing (``"is_error": null``); reading null as absent lets one reader
    take both. The agent's own data (tool inputs and outputs) is kept as it is.
    """
    if isinstance(value, dict):
        return {
            k: (v if k in _VERBATIM else absent_nulls(v))
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        return [absent_nulls(item) for item in value]
    return value


def json_problem(exc: json.JSONDecodeError, *, line: bool = False) -> str:
    """``Unterminated string at line 3 column 12`` (json's own wording ends in a dangling "starting at")."""
    message = json_message(exc)
    where = f"line {exc.lineno} column {exc.colno}" if line else f"column {exc.colno}"
    return f"{message} at {where}"


def truncation_hint(exc: json.JSONDecodeError, text: str) -> str:
    """`` - the file looks truncated`` when the JSON stops mid-way (the document ends inside a value)."""
    ended = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
    return " - the file looks truncated" if ended else ""


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


# -- the builder ----------------------------------------------------------------


@attrs.define
class _Tool:
    """A tool call waiting for (or holding) its result."""

    call_id: str
    name: str
    input: Any
    started: datetime | None
    output: Any = None
    success: bool = True
    error: str | None = None
    duration_ms: float | None = None
    done: bool = False


@attrs.define
class _Turn:
    """One assistant turn (one model response) being assembled."""

    key: Any
    items: list[Any] = attrs.Factory(list)
    start: datetime | None = None
    end: datetime | None = None
    #: the subagent that took the turn (None: the session's own agent)
    agent: str | None = None


class SessionBuilder:
    """Collects a session's turns, events, tool results and usage, then builds a RecordedSession.

    Turns tile the session: a turn starts at the user's prompt or where the
    previous turn ended, and ends at the last timestamp seen before the next
    turn (or prompt), so tool execution counts in the turn that asked for it
    and, in a one-prompt session, the turn durations add up to the wall time
    from the prompt on.
    """

    def __init__(self, *, file: Path, source: str, format: str) -> None:
        self.file = file
        self.source = source
        self.format = format
        self.turns: list[_Turn] = []
        self._by_key: dict[Any, _Turn] = {}
        self.loose: list[
            Any
        ] = []  # events outside any turn (errors before the first answer)
        self.tools: dict[str, _Tool] = {}
        self.first: datetime | None = None
        self.last: datetime | None = None
        self.usage: list[tuple[str | None, TokenBreakdown]] = []
        self.provider_cost = 0.0
        self.models: Counter[str] = Counter()
        self.warnings: list[str] = []
        self.prompt: str | None = None
        self._next_start: datetime | None = None

    # time ----------------------------------------------------------------------

    def see(self, moment: datetime | None) -> None:
        """Note a timestamp of the session (extends the open turn unless a user prompt closed it)."""
        if moment is None:
            return
        self._extend_range(moment)
        if self.turns and self._next_start is None:
            turn = self.turns[-1]
            if turn.end is None or moment > turn.end:
                turn.end = moment

    def user_message(self, moment: datetime | None) -> None:
        """A user wrote (a prompt, not a tool result): the next turn starts here, the open one does not grow."""
        if moment is None:
            return
        self._extend_range(moment)
        self._next_start = moment

    def _extend_range(self, moment: datetime) -> None:
        if self.first is None or moment < self.first:
            self.first = moment
        if self.last is None or moment > self.last:
            self.last = moment

    # structure -----------------------------------------------------------------

    def turn(
        self,
        key: Any = None,
        moment: datetime | None = None,
        *,
        agent: str | None = None,
    ) -> _Turn:
        """The turn of ``key`` (e.g. a message id), opened now if new; ``None`` always opens a new turn."""
        if key is not None and key in self._by_key:
            found = self._by_key[key]
            self.see(moment)
            return found
        start = self._next_start or (
            self.turns[-1].end if self.turns and self.turns[-1].end else self.last
        )
        self._next_start = None
        new = _Turn(key=key, start=start or moment, end=None, agent=agent)
        self.turns.append(new)
        if key is not None:
            self._by_key[key] = new
        self.see(moment)
        if new.end is None:
            new.end = new.start
        return new

    def has_turn(self, key: Any) -> bool:
        """Whether a turn was opened for ``key`` already."""
        return key in self._by_key

    def note_model(self, model: str | None) -> None:
        """Count a model that answered one turn (the session's model is the most used one)."""
        if model:
            self.models[model] += 1

    # events --------------------------------------------------------------------

    def reasoning(
        self,
        turn: _Turn,
        content: str,
        *,
        duration_ms: float = 0,
        token_count: int | None = None,
    ) -> None:
        """The agent thought (``token_count`` estimated from the text when the file does not record it)."""
        count = estimate_tokens(content) if token_count is None else token_count
        turn.items.append(
            ReasoningEvent(
                content=content, duration_ms=max(0, duration_ms), token_count=count
            )
        )

    def text(
        self, turn: _Turn, content: str, *, token_count: int | None = None
    ) -> None:
        """The agent wrote text (empty text is dropped; ``token_count`` estimated when not recorded)."""
        if content.strip():
            count = estimate_tokens(content) if token_count is None else token_count
            turn.items.append(TextOutputEvent(content=content, token_count=count))

    def tool_call(
        self,
        turn: _Turn,
        call_id: str | None,
        name: str,
        input: Any,
        moment: datetime | None = None,
    ) -> _Tool:
        """The agent called a tool; its result is filled in by :meth:`tool_result`."""
        tool = _Tool(
            call_id=call_id or f"call-{len(self.tools)}",
            name=name,
            input=input,
            started=moment,
        )
        if call_id:
            self.tools[call_id] = tool
        turn.items.append(tool)
        return tool

    def tool_result(
        self,
        call_id: str | None,
        output: Any,
        *,
        is_error: bool,
        error: str | None = None,
        moment: datetime | None = None,
        duration_ms: float | None = None,
        where: str = "",
    ) -> None:
        """A tool returned; an unknown call id is reported as a warning (the call was not recorded)."""
        tool = self.tools.get(call_id) if call_id else None
        if tool is None:
            self.warnings.append(
                f"{where}: tool result for unknown call id {call_id!r} ignored"
            )
            return
        complete_tool(
            tool,
            output,
            is_error=is_error,
            error=error,
            moment=moment,
            duration_ms=duration_ms,
        )

    def error(self, message: str, *, recoverable: bool = True) -> None:
        """Something went wrong in the session (an API error, an abort)."""
        target = self.turns[-1].items if self.turns else self.loose
        target.append(ErrorEvent(message=message, recoverable=recoverable))

    # usage ---------------------------------------------------------------------

    def add_usage(self, tokens: TokenBreakdown, model: str | None) -> None:
        """Tokens of one model response (priced with ``model``)."""
        self.usage.append((model, tokens))

    def add_cost(self, usd: float) -> None:
        """Cost the file itself reports (wins over computed prices, as in the cost collector)."""
        self.provider_cost += usd

    # result --------------------------------------------------------------------

    def build(
        self,
        *,
        session_id: str,
        model: str | None = None,
        latency_ms: float | None = None,
        started_at: datetime | None = None,
        completed_at: datetime | None = None,
        total_usage: TokenBreakdown | None = None,
        completion_reason: CompletionReason = "stop",
        error: str | None = None,
        scenario_hint: str | None = None,
    ) -> RecordedSession:
        """Assemble PromptResult and SessionTrace from the same turns, so they always agree."""
        from ..metrics.pricing import price_tokens

        model = model or (self.models.most_common(1)[0][0] if self.models else None)
        start = started_at or self.first
        end = completed_at or self.last
        if latency_ms is not None:
            wall = float(latency_ms)
        elif start is not None and end is not None:
            wall = _ms(end, start)
        else:
            wall = 0.0
        if start is not None and end is None:
            end = start + timedelta(milliseconds=wall)
        if end is not None and start is None:
            start = end - timedelta(milliseconds=wall)

        events: list[Any] = list(self.loose)
        turns: list[Turn] = []
        records: list[ToolCallRecord] = []
        fallback = iso(start) if start else ""
        for number, turn in enumerate(self.turns, start=1):
            turn_events = [self._event(item, records) for item in turn.items]
            t0, t1 = turn.start or start, turn.end or turn.start or start
            duration = _ms(t1, t0) if t0 and t1 else 0.0
            begin, finish = (iso(t0) if t0 else fallback), (iso(t1) if t1 else fallback)
            turns.append(
                Turn(
                    number=number,
                    events=turn_events,
                    start_timestamp=begin,
                    end_timestamp=finish,
                    duration_ms=duration,
                    agent=turn.agent,
                )
            )
            events.extend(turn_events)
            events.append(TurnBoundaryEvent(turn_number=number, timestamp=finish))

        tokens = (
            total_usage
            if total_usage is not None
            else sum((t for _, t in self.usage), TokenBreakdown())
        )
        if total_usage is None and not self.usage:
            self.warnings.append(
                f"{self.source}: no token usage recorded; tokens are 0"
            )
        # Each response is priced on its own when they were recorded, even beside the file's own total.
        cost, cost_source = self._cost(model, tokens, price_tokens)
        model_calls = self._model_calls(model, tokens)

        texts = next(
            (
                t
                for t in reversed(turns)
                if any(isinstance(e, TextOutputEvent) for e in t.events)
            ),
            None,
        )
        final = (
            "\n".join(e.content for e in texts.events if isinstance(e, TextOutputEvent))
            if texts
            else ""
        )
        if error and completion_reason == "stop":
            completion_reason = "error"
        result = PromptResult(
            text=final,
            metrics=PromptMetrics(
                tokens=tokens,
                timing=TimingBreakdown(wall_ms=wall),
                tool_calls=records,
                cost=cost,
                model_calls=model_calls,
            ),
            completion_reason=completion_reason,
        )
        trace = SessionTrace(
            session_id=session_id,
            events=events,
            turns=turns,
            summary=TraceSummary(
                total_turns=len(turns),
                total_tool_calls=len(records),
                total_tokens=tokens,
                total_duration=wall,
            ),
        )
        return RecordedSession(
            session_id=session_id,
            model=model,
            started_at=iso(start) if start else None,
            completed_at=iso(end) if end else None,
            prompt=self.prompt or "",
            text=final,
            result=result,
            trace=trace,
            file=str(self.file),
            source=self.source,
            format=self.format,
            cost_source=cost_source,
            scenario_hint=scenario_hint,
            error=error,
            warnings=self.warnings,
        )

    def _event(self, item: Any, records: list[ToolCallRecord]) -> Any:
        if not isinstance(item, _Tool):
            return item
        if not item.done:
            # The session ended (or was cut) before the tool answered: that call did not succeed.
            item.success, item.error = (
                False,
                "no tool result recorded (the session ended before the tool returned)",
            )
        records.append(
            ToolCallRecord(
                name=item.name,
                category=tool_category(item.name),
                success=item.success,
                duration_ms=item.duration_ms,
                error=item.error,
            )
        )
        return ToolCallEvent(
            name=item.name,
            input=item.input,
            output=item.output,
            duration_ms=item.duration_ms or 0,
            success=item.success,
            error=item.error,
        )

    def _model_calls(
        self, model: str | None, tokens: TokenBreakdown
    ) -> list[ModelUsage]:
        """The tokens of each model response with its model (a response without a model counts as the session's)."""
        if not self.usage:
            return (
                [ModelUsage(model=model, tokens=tokens)]
                if model and tokens.total
                else []
            )
        if model is None and any(m is None for m, _ in self.usage):
            return []  # some tokens belong to no named model: there is nothing per model to tell
        return [ModelUsage(model=m or model or "", tokens=t) for m, t in self.usage]

    def _cost(self, model, tokens, price_tokens) -> tuple[CostBreakdown, CostSource]:
        if self.provider_cost > 0:
            return CostBreakdown(total_usd=round(self.provider_cost, 10)), "provider"
        # Each response is priced with its own model; one unknown price makes the whole cost unknown.
        parts = (
            [(model, tokens)]
            if not self.usage
            else [(m or model, t) for m, t in self.usage]
        )
        total = CostBreakdown()
        for part_model, part_tokens in parts:
            priced = price_tokens(part_model, part_tokens)
            if priced is None:
                return CostBreakdown(), "unknown"
            total = add_costs(total, priced)
        return total, "computed"


def complete_tool(
    tool: _Tool,
    output: Any,
    *,
    is_error: bool,
    error: str | None = None,
    moment: datetime | None = None,
    duration_ms: float | None = None,
) -> None:
    """Fill in a tool call's result (output, success, error, duration)."""
    if isinstance(output, str):
        output = clip(output, MAX_OUTPUT_CHARS)
    tool.output = output
    tool.success = not is_error
    if is_error:
        message = error if error else text_of(output)
        tool.error = clip(message.strip() or "tool reported an error", MAX_ERROR_CHARS)
    if duration_ms is not None:
        tool.duration_ms = round(max(0.0, duration_ms), 3)
    elif moment is not None and tool.started is not None:
        tool.duration_ms = _ms(moment, tool.started)
    tool.done = True


def add_costs(a: CostBreakdown, b: CostBreakdown) -> CostBreakdown:
    """Field-by-field sum of two costs."""
    return CostBreakdown(
        total_usd=round(a.total_usd + b.total_usd, 10),
        input_usd=round(a.input_usd + b.input_usd, 10),
        output_usd=round(a.output_usd + b.output_usd, 10),
        reasoning_usd=round(a.reasoning_usd + b.reasoning_usd, 10),
    )
