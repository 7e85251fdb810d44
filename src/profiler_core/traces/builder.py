"""The session builder: a stream of turns, reasoning, text, tool calls and usage -> a
consistent PromptResult + SessionTrace (a ``RecordedSession``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

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
from ..util.textclean import clean_value
from ..util.timestamps import iso
from .categories import tool_category

#: Prices one model response: (model, tokens) -> its cost, or None when no price is known.
Pricer = Callable[[str | None, TokenBreakdown], CostBreakdown | None]


#: Tool outputs longer than this are cut in the trace (real sessions read whole files;
#: traces must stay loadable).
MAX_OUTPUT_CHARS = 20_000


#: Error texts longer than this are cut on ToolCallRecord / ToolCallEvent.
MAX_ERROR_CHARS = 500


def _ms(later: datetime, earlier: datetime) -> float:
    return round(max(0.0, (later - earlier).total_seconds() * 1000), 3)


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
    """ceil(characters / 4): the usual estimate (the original's trace builder uses it)
    when a file has no per-event count."""
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

    def __init__(self, *, file: Path, source: str, format: str, price: Pricer) -> None:
        """A builder for one session of ``file``; ``price`` prices each model response."""
        self.file = file
        self.price = price
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
        """Note a timestamp of the session (extends the open turn unless a user prompt
        closed it)."""
        if moment is None:
            return
        self._extend_range(moment)
        if self.turns and self._next_start is None:
            turn = self.turns[-1]
            if turn.end is None or moment > turn.end:
                turn.end = moment

    def user_message(self, moment: datetime | None) -> None:
        """A user wrote (a prompt, not a tool result): the next turn starts here, the
        open one does not grow."""
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
        """The turn of ``key`` (e.g. a message id), opened now if new; ``None`` always
        opens a new turn."""
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
        """The agent thought (``token_count`` estimated from the text when the file does
        not record it)."""
        count = estimate_tokens(content) if token_count is None else token_count
        turn.items.append(
            ReasoningEvent(
                content=content, duration_ms=max(0, duration_ms), token_count=count
            )
        )

    def text(
        self, turn: _Turn, content: str, *, token_count: int | None = None
    ) -> None:
        """The agent wrote text (empty text is dropped; ``token_count`` estimated when
        not recorded)."""
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
        """A tool returned; an unknown call id is reported as a warning (the call was
        not recorded)."""
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
        if not model:
            model = self.models.most_common(1)[0][0] if self.models else None
        start, end, wall = self._span(latency_ms, started_at, completed_at)
        events, turns, records = self._turns(start)
        tokens = self._tokens(total_usage)
        # Each response is priced on its own when they were recorded, even beside the
        # file's own total.
        cost, cost_source = self._cost(model, tokens)
        model_calls = self._model_calls(model, tokens)
        final = _final_text(turns)
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

    def _span(
        self,
        latency_ms: float | None,
        started_at: datetime | None,
        completed_at: datetime | None,
    ) -> tuple[datetime | None, datetime | None, float]:
        """The session's start, end and wall time; a missing end is derived from the rest."""
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
        return start, end, wall

    def _turns(
        self, start: datetime | None
    ) -> tuple[list[Any], list[Turn], list[ToolCallRecord]]:
        """The trace's events and turns, and the tool records, in the session's order."""
        events: list[Any] = list(self.loose)
        turns: list[Turn] = []
        records: list[ToolCallRecord] = []
        for number, turn in enumerate(self.turns, start=1):
            done = self._turn(number, turn, start, records)
            turns.append(done)
            events.extend(done.events)
            boundary = TurnBoundaryEvent(
                turn_number=number, timestamp=done.end_timestamp
            )
            events.append(boundary)
        return events, turns, records

    def _turn(
        self,
        number: int,
        turn: _Turn,
        start: datetime | None,
        records: list[ToolCallRecord],
    ) -> Turn:
        """One turn; without its own times it takes the session's start."""
        turn_events = [self._event(item, records) for item in turn.items]
        t0 = turn.start or start
        t1 = turn.end or turn.start or start
        fallback = iso(start) if start else ""
        return Turn(
            number=number,
            events=turn_events,
            start_timestamp=iso(t0) if t0 else fallback,
            end_timestamp=iso(t1) if t1 else fallback,
            duration_ms=_ms(t1, t0) if t0 and t1 else 0.0,
            agent=turn.agent,
        )

    def _tokens(self, total_usage: TokenBreakdown | None) -> TokenBreakdown:
        """The file's own total, else the sum of the responses' usage."""
        if total_usage is not None:
            return total_usage
        if not self.usage:
            self.warnings.append(
                f"{self.source}: no token usage recorded; tokens are 0"
            )
        return sum((t for _, t in self.usage), TokenBreakdown())

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
        """The tokens of each model response with its model (a response without a model
        counts as the session's)."""
        if not self.usage:
            return (
                [ModelUsage(model=model, tokens=tokens)]
                if model and tokens.total
                else []
            )
        if model is None and any(m is None for m, _ in self.usage):
            return []  # some tokens belong to no named model: there is nothing per model to tell
        return [ModelUsage(model=m or model or "", tokens=t) for m, t in self.usage]

    def _cost(
        self, model: str | None, tokens: TokenBreakdown
    ) -> tuple[CostBreakdown, CostSource]:
        if self.provider_cost > 0:
            return CostBreakdown(total_usd=round(self.provider_cost, 10)), "provider"
        # Each response is priced with its own model; one unknown price makes the whole
        # cost unknown.
        parts = (
            [(model, tokens)]
            if not self.usage
            else [(m or model, t) for m, t in self.usage]
        )
        total = CostBreakdown()
        for part_model, part_tokens in parts:
            priced = self.price(part_model, part_tokens)
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


def _final_text(turns: list[Turn]) -> str:
    """The text outputs of the last turn that has any: the session's answer."""
    for turn in reversed(turns):
        texts = [e.content for e in turn.events if isinstance(e, TextOutputEvent)]
        if texts:
            return "\n".join(texts)
    return ""
