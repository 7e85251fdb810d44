"""``opencode``: the JSON of ``opencode export <session>``.

``{"info": {session: id, title, time...}, "messages": [{"info", "parts"}], "todos"?}``.
A message ``info`` has ``role``, ``time.created`` / ``time.completed`` (epoch
ms) and, for the assistant, ``modelID``, ``providerID``, ``cost``, ``tokens``
``{input, output, reasoning, cache: {read, write}}`` and ``error``. Parts are
``text``, ``reasoning``, ``tool`` (``state.status`` completed / error /
pending / running, with ``input``, ``output``, ``error``, ``time.start/end``),
``step-start`` and ``step-finish`` (one per model request, with that request's
``tokens`` and ``cost``); other part types are skipped.

An assistant message may hold several steps: each step is one turn, and the
tokens are the sum of its ``step-finish`` parts (opencode overwrites the
message's ``tokens`` with the last step's, but adds up its ``cost``). A
message without steps is one turn with the message's ``tokens``. A
``step-finish`` without ``tokens`` (written by some releases when a step was
cut short) is skipped; the message's ``tokens`` stand in when no step has any.

:func:`session_from_messages` is the one parser of OpenCode's messages JSON:
``profiler import opencode`` calls it on an export's ``messages`` and the
live ``opencode`` provider on ``GET /session/{id}/message``. Besides what
every importer measures it adds timing segments: ``tool`` (each tool's run,
from ``state.time``) and ``model`` (the rest of each assistant message).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ..errors import ValidationError
from ..metrics.pricing import price_tokens
from ..model import RecordedSession, TimingSegment, TokenBreakdown
from ..model.record import Record
from ..traces.builder import SessionBuilder, complete_tool
from ..traces.readers import (
    expect_list,
    expect_mapping,
    keys_of,
    number,
    optional_str,
    parse_time,
    read_json_records,
)

_TOOL_STATES = ("completed", "error", "pending", "running")


def load(path: Path) -> list[RecordedSession]:
    """The session(s) of an ``opencode export`` file (one export, or one per line)."""
    return [_session(path, where, value) for where, value in read_json_records(path)]


def _session(path: Path, where: str, value: Any) -> RecordedSession:
    export = expect_mapping(value, where, "the JSON of `opencode export <session>`")
    if "info" not in export or "messages" not in export:
        raise ValidationError(
            f"{where}: expected the JSON of `opencode export <session>` with "
            f"'info' and 'messages', got {keys_of(export)}"
        )
    info = expect_mapping(export["info"], f"{where}: $.info", "the session info object")
    session_id = optional_str(info.get("id"), f"{where}: $.info.id") or path.stem
    version = optional_str(info.get("version"), f"{where}: $.info.version")
    return session_from_messages(
        export["messages"],
        session_id=session_id,
        file=path,
        where=f"{where}: $.messages",
        version=version,
    )


def session_from_messages(
    messages: Any,
    *,
    session_id: str,
    file: Path | str = "",
    where: str = "messages",
    version: str | None = None,
) -> RecordedSession:
    """Measure one OpenCode session from its messages JSON (``[{info, parts}]``):
    result, trace, cost, error.

    Pure: the same JSON always gives the same RecordedSession. ``where`` names
    the JSON in error messages (``file: $.messages``); ``version`` is the
    OpenCode release that wrote it (``info.version`` of an export), which says
    how it counted reasoning tokens when the tokens carry no ``total``.
    """
    messages = expect_list(messages, where)
    builder = SessionBuilder(
        price=price_tokens,
        file=Path(file),
        source=str(file) or where,
        format="opencode",
    )
    segments: list[TimingSegment] = []
    last_error: str | None = None
    counting = _Counting(reasoning_in_output=_reasoning_in_output(version))
    for i, entry in _in_order(messages, where, "a message {info, parts}"):
        here = f"{where}[{i}]"
        minfo = expect_mapping(
            entry.get("info"), f"{here}.info", "a message info object"
        )
        ordered = _in_order(
            expect_list(entry.get("parts", []), f"{here}.parts"),
            f"{here}.parts",
            "a message part",
        )
        parts = [part for _, part in ordered]
        times = expect_mapping(minfo.get("time") or {}, f"{here}.info.time")
        created = _time(times.get("created"), f"{here}.info.time.created")
        completed = _time(times.get("completed"), f"{here}.info.time.completed")
        role = minfo.get("role")
        if role == "user":
            builder.user_message(created)
            if builder.prompt is None:
                builder.prompt = "\n".join(
                    p["text"]
                    for p in parts
                    if isinstance(p, Mapping)
                    and p.get("type") == "text"
                    and isinstance(p.get("text"), str)
                    and not p.get("synthetic")
                    and not p.get("ignored")
                )
        elif role == "assistant":
            last_error = _assistant(
                builder, minfo, ordered, here, created, completed, counting
            )
            segments.extend(_segments(times, parts))
        else:
            raise ValidationError(
                f"{here}.info.role: expected 'user' or 'assistant', got {role!r}"
            )
    session = builder.build(session_id=session_id, error=last_error)
    segments.sort(key=lambda segment: (segment.start_ms, segment.end_ms))
    timing = attrs.evolve(session.result.metrics.timing, segments=segments)
    result = attrs.evolve(
        session.result, metrics=attrs.evolve(session.result.metrics, timing=timing)
    )
    return attrs.evolve(session, result=result)


def _segments(times: Mapping[str, Any], parts: list[Any]) -> list[TimingSegment]:
    """``tools`` spans of one assistant message and ``model`` spans for the rest of it (epoch ms).

    ``tools`` (``latency_tools_ms``), as the Claude Code and Codex providers name theirs.

    Only spans with both ends are counted; an unfinished message has no model span.
    """
    tools: list[tuple[float, float]] = []
    for part in parts:
        if not (
            isinstance(part, Mapping)
            and part.get("type") == "tool"
            and isinstance(part.get("state"), Mapping)
        ):
            continue
        span = part["state"].get("time")
        if (
            isinstance(span, Mapping)
            and _is_ms(span.get("start"))
            and _is_ms(span.get("end"))
        ):
            tools.append((span["start"], max(span["start"], span["end"])))
    tools.sort()
    segments = [TimingSegment(label="tools", start_ms=a, end_ms=b) for a, b in tools]
    created, completed = _ms(times.get("created")), _ms(times.get("completed"))
    if created is None or completed is None or completed < created:
        return segments
    cursor = created
    # Tools may overlap (parallel calls): the model's share is what no tool covers.
    for start, end in tools:
        if start > cursor:
            segments.append(
                TimingSegment(
                    label="model", start_ms=cursor, end_ms=min(start, completed)
                )
            )
        cursor = max(cursor, end)
    if completed > cursor:
        segments.append(TimingSegment(label="model", start_ms=cursor, end_ms=completed))
    return segments


def _is_ms(value: Any) -> bool:
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    )


def _ms(value: Any) -> float | None:
    """``value`` when it is a usable epoch-ms time, else None."""
    return value if _is_ms(value) else None


@attrs.frozen(repr=False, eq=False)
class _Counting(Record):
    """How the file counts reasoning tokens when a tokens object does not say (it says
    when it has a ``total``)."""

    reasoning_in_output: bool


def _reasoning_in_output(version: str | None) -> bool:
    """Whether OpenCode ``version`` recorded reasoning tokens inside ``output`` too
    (releases before 1.0.62 did)."""
    if not version:
        return False
    numbers = []
    for piece in version.lstrip("v").split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        numbers.append(int(digits) if digits else 0)
    return tuple(numbers) < (1, 0, 62)


def _in_order(items: list[Any], where: str, what: str) -> list[tuple[int, Any]]:
    """(index, item) in the order OpenCode created them: by id when every item has an OpenCode id.

    OpenCode's ids (``msg_...``, ``prt_...``) grow with creation time; a tool
    that re-saves a session may store parts out of order (a ``step-finish``
    before its ``step-start``), which would split one step into two turns. The
    index kept is the item's place in the file, for error messages.
    """
    for i, item in enumerate(items):
        expect_mapping(item, f"{where}[{i}]", what)
    keys = [_id_of(item) for item in items]
    ids = [key for key in keys if key is not None]
    if len(ids) < len(keys):
        return list(enumerate(items))
    return sorted(enumerate(items), key=lambda pair: ids[pair[0]])


def _id_of(item: Mapping[str, Any]) -> str | None:
    value = item.get("id")
    if value is None and isinstance(item.get("info"), Mapping):
        value = item["info"].get("id")
    return value if isinstance(value, str) and value[:4] in ("msg_", "prt_") else None


def _assistant(
    builder: SessionBuilder,
    minfo,
    parts: list[tuple[int, Any]],
    here: str,
    created,
    completed,
    counting: _Counting,
) -> str | None:
    """One assistant message: its turns (one per step), their parts, usage and cost;
    returns its error, if any."""
    model = optional_str(minfo.get("modelID"), f"{here}.info.modelID")
    cost = _message_cost(minfo, parts, here)
    if cost:
        builder.add_cost(cost)
    stepped = any(p.get("type") == "step-start" for _, p in parts)
    turn = None if stepped else _turn(builder, model, created)
    steps: list[TokenBreakdown] = []
    for j, part in parts:
        if part.get("type") == "step-start":
            turn = _turn(builder, model, None)
            continue
        if turn is None:
            # Parts before the first step-start still belong to this message's first turn.
            turn = _turn(builder, model, created)
        tokens = _assistant_part(builder, turn, part, f"{here}.parts[{j}]", counting)
        if tokens is not None:
            steps.append(tokens)
    builder.see(created)
    builder.see(completed)
    if steps:
        for tokens in steps:
            builder.add_usage(tokens, model)
    elif minfo.get("tokens") is not None:
        builder.add_usage(
            _tokens(minfo["tokens"], f"{here}.info.tokens", counting), model
        )
    if minfo.get("error") is not None:
        message = error_text(minfo["error"])
        builder.error(message, recoverable=False)
        return message
    return None


def _turn(builder: SessionBuilder, model: str | None, started):
    turn = builder.turn(None, started)
    builder.note_model(model)
    return turn


def _assistant_part(
    builder: SessionBuilder,
    turn,
    part: Mapping[str, Any],
    where: str,
    counting: _Counting,
) -> TokenBreakdown | None:
    """Record one part of an assistant message in ``turn``; a ``step-finish`` returns
    its step's tokens."""
    kind = part.get("type")
    start, end = _span(part.get("time"), where)
    builder.see(start)
    builder.see(end)
    if kind == "reasoning":
        text = part.get("text")
        if isinstance(text, str) and text.strip():
            duration = (end - start).total_seconds() * 1000 if start and end else 0
            builder.reasoning(turn, text, duration_ms=duration)
    elif kind == "text":
        if not part.get("synthetic") and not part.get("ignored"):
            builder.text(turn, _str(part.get("text"), f"{where}.text"))
    elif kind == "tool":
        _tool(builder, turn, part, where)
    elif kind == "step-finish":
        if part.get("tokens") is not None:
            return _tokens(part["tokens"], f"{where}.tokens", counting)
    elif kind == "retry":
        builder.error(
            f"retry {part.get('attempt', '?')}: {error_text(part.get('error'))}"
        )
    return None


def _message_cost(
    minfo: Mapping[str, Any], parts: list[tuple[int, Any]], here: str
) -> float:
    """OpenCode's cost of one message: its ``cost``, else the sum of its steps' (a file
    may keep only those)."""
    cost = number(minfo.get("cost"), f"{here}.info.cost")
    if cost:
        return float(cost)
    return float(
        sum(
            number(p.get("cost"), f"{here}.parts[{j}].cost") or 0
            for j, p in parts
            if p.get("type") == "step-finish"
        )
    )


def _tool(builder: SessionBuilder, turn, part: Mapping[str, Any], where: str) -> None:
    name = part.get("tool")
    if not isinstance(name, str) or not name:
        raise ValidationError(f"{where}.tool: expected the tool name, got {name!r}")
    state = expect_mapping(part.get("state"), f"{where}.state", "a tool state object")
    status = state.get("status")
    if status not in _TOOL_STATES:
        raise ValidationError(
            f"{where}.state.status: expected one of {', '.join(_TOOL_STATES)}, got {status!r}"
        )
    start, end = _span(state.get("time"), f"{where}.state")
    call = builder.tool_call(
        turn,
        optional_str(part.get("callID"), f"{where}.callID"),
        name,
        state.get("input", {}),
        start,
    )
    duration = (end - start).total_seconds() * 1000 if start and end else None
    if status == "completed":
        complete_tool(call, state.get("output"), is_error=False, duration_ms=duration)
    elif status == "error":
        error = _str(state.get("error"), f"{where}.state.error")
        complete_tool(
            call,
            state.get("output", error),
            is_error=True,
            error=error,
            duration_ms=duration,
        )
    else:
        complete_tool(
            call,
            None,
            is_error=True,
            error=f"tool did not finish (status {status!r} when exported)",
        )
    builder.see(end)


def _tokens(raw: Any, where: str, counting: _Counting) -> TokenBreakdown:
    tokens = expect_mapping(
        raw, where, "a tokens object {input, output, reasoning, cache: {read, write}}"
    )
    cache = expect_mapping(tokens.get("cache") or {}, f"{where}.cache")
    # opencode's input already excludes cache reads and writes (it subtracts them when
    # it records usage).
    counts = {
        "input": _count(tokens.get("input"), f"{where}.input"),
        "output": _count(tokens.get("output"), f"{where}.output"),
        "reasoning": _count(tokens.get("reasoning"), f"{where}.reasoning"),
        "cache_read": _count(cache.get("read"), f"{where}.cache.read"),
        "cache_write": _count(cache.get("write"), f"{where}.cache.write"),
    }
    if _output_holds_reasoning(counts, tokens.get("total"), counting):
        # Counted inside output already: taken out of it, so reasoning is not counted
        # (or billed) twice.
        counts["output"] -= counts["reasoning"]
    return TokenBreakdown(**counts)


def _output_holds_reasoning(
    counts: Mapping[str, int], total: Any, counting: _Counting
) -> bool:
    """Whether ``output`` already includes ``reasoning``: the ``total`` says so, else
    the release that wrote the file."""
    reasoning, output = counts["reasoning"], counts["output"]
    if not reasoning or reasoning > output:
        return False
    if _is_ms(total):  # a count >= 0; _is_ms only checks that
        without = (
            counts["input"] + output + counts["cache_read"] + counts["cache_write"]
        )
        return bool(total == without)
    return counting.reasoning_in_output


def _count(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(
            f"{where}: expected a token count (integer >= 0), got {value!r}"
        )
    return value


def _span(raw: Any, where: str):
    if raw is None:
        return None, None
    times = expect_mapping(raw, f"{where}.time", "a time object {start, end}")
    return _time(times.get("start"), f"{where}.time.start"), _time(
        times.get("end"), f"{where}.time.end"
    )


def _time(value: Any, where: str):
    return None if value is None else parse_time(value, where)


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{where}: expected a string, got {type(value).__name__}")
    return value


def error_text(error: Any) -> str:
    """``{"name": "APIError", "data": {"message": "..."}}`` -> ``APIError: ...``."""
    if isinstance(error, str):
        return error
    if isinstance(error, Mapping):
        name = error.get("name")
        data = error.get("data")
        message = (
            data.get("message") if isinstance(data, Mapping) else error.get("message")
        )
        parts = [p for p in (name, message) if isinstance(p, str) and p]
        if parts:
            return ": ".join(parts)
    return "unknown error"
