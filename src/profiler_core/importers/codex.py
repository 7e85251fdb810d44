"""``codex``: a Codex CLI rollout file (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``).

One JSON object per line, ``{"timestamp", "type", "payload"}``. The lines read:

- ``session_meta`` (the session id), ``turn_context`` (the model);
- ``response_item``: what went to and came from the model - ``message``
  (role ``user``: the prompt, unless it is context Codex injects such as
  ``<environment_context>``; role ``assistant``: the answer; role
  ``developer``: instructions, skipped), ``reasoning`` (its summary),
  ``function_call`` / ``custom_tool_call`` (a tool call, e.g. ``exec_command``
  with ``{"cmd": ...}``) and ``function_call_output`` / ``custom_tool_call_output``
  (its result);
- ``token_usage_record``: one per model response, with that response's
  ``usage``; the output items before it form one turn;
- ``event_msg``: ``item_completed`` of a ``CommandExecution`` (its exit code:
  non-zero is a failed call), ``token_count`` (``info.last_token_usage``, the
  last model response's usage, and ``info.total_token_usage``, the session's
  running totals - the last one is the session's usage),
  ``error`` / ``stream_error`` (errors and retries), ``task_complete``
  (``duration_ms``, the final message, or an ``error``). Other lines are skipped.

Codex counts usage as the Responses API does: ``input_tokens`` include
``cached_input_tokens`` (and ``cache_write_input_tokens``), ``output_tokens``
include ``reasoning_output_tokens``; they are normalised so nothing counts
twice (docs/normalization.md). Codex records no cost: it is computed from
prices, or unknown. Each model response is priced on its own, at the model of
the ``turn_context`` in effect when it answered: from its
``token_usage_record`` when the file has them (newer Codex writes both), else
from each ``token_count``'s ``last_token_usage`` (or, without one, the growth
of the running total since the previous count).

Timing segments: one ``model`` segment per response (from the prompt or the
previous tool result to the response's usage record) and one ``tools``
segment per call (call to result). The same parser reads the rollout the
``codex`` provider finds in the session's ``CODEX_HOME`` after a live run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeGuard

import attrs

from ..errors import ValidationError
from ..metrics.pricing import price_tokens
from ..metrics.usage import normalize_usage
from ..model import RecordedSession, TimingSegment, TokenBreakdown
from ..traces.builder import SessionBuilder, complete_tool, parse_arguments, text_of
from ..traces.readers import (
    expect_mapping,
    iter_jsonl,
    keys_of,
    number,
    optional_str,
    parse_time,
)
from .claude_code import with_segments

_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_EXIT = re.compile(r"(?:Process exited with code|Exit code:?)\s*(-?\d+)")


def load(path: Path) -> list[RecordedSession]:
    """The one session of a Codex rollout file."""
    return [_Reader(path).read()]


def codex_usage(raw: Any, where: str) -> TokenBreakdown:
    """Codex's usage object (``input_tokens``, ``cached_input_tokens``, ...) as a TokenBreakdown."""
    data = expect_mapping(
        raw,
        where,
        "a Codex usage object (input_tokens, cached_input_tokens, output_tokens...)",
    )
    counts = {}
    for key in (
        "input_tokens",
        "cached_input_tokens",
        "cache_write_input_tokens",
        "output_tokens",
        "reasoning_output_tokens",
    ):
        value = number(data.get(key), f"{where}.{key}")
        if value is not None and value != int(value):
            raise ValidationError(
                f"{where}.{key}: expected a token count (integer >= 0), got {value!r}"
            )
        counts[key] = int(value or 0)
    if "input_tokens" not in data or "output_tokens" not in data:
        raise ValidationError(
            f"{where}: expected input_tokens and output_tokens, got {keys_of(data)}"
        )
    written = counts["cache_write_input_tokens"]
    if written > counts["input_tokens"]:
        raise ValidationError(
            f"{where}: cache_write_input_tokens ({written}) exceeds "
            f"input_tokens ({counts['input_tokens']}) that should include it"
        )
    # The Responses API's counting, with the cache writes Codex reports taken out of the
    # input first.
    tokens = normalize_usage(
        {
            "input_tokens": counts["input_tokens"] - written,
            "input_tokens_details": {"cached_tokens": counts["cached_input_tokens"]},
            "output_tokens": counts["output_tokens"],
            "output_tokens_details": {
                "reasoning_tokens": counts["reasoning_output_tokens"]
            },
        },
        provider="openai-responses",
        where=where,
    )
    # A new breakdown, not attrs.evolve: evolve would carry the old derived total over.
    return TokenBreakdown(
        input=tokens.input,
        output=tokens.output,
        reasoning=tokens.reasoning,
        cache_read=tokens.cache_read,
        cache_write=written,
    )


class _Reader:
    """One pass over a rollout file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.builder = SessionBuilder(
            price=price_tokens, file=path, source=str(path), format="codex"
        )
        self.session_id: str | None = None
        self.model: str | None = None
        self.turn: Any = None  # the turn the model is answering, until its usage record
        self.mark: datetime | None = (
            None  # when the current model request was sent (about)
        )
        self.step_start: datetime | None = None
        self.steps: list[tuple[datetime, datetime]] = []
        self.exit_codes: dict[str, int] = {}
        self.total: TokenBreakdown | None = None
        self.recorded: list[
            tuple[str | None, TokenBreakdown]
        ] = []  # token_usage_record: (model, usage)
        self.counted: list[
            tuple[str | None, TokenBreakdown]
        ] = []  # token_count: (model, usage)
        self.latency_ms: float | None = None
        self.error: str | None = None
        self.final: str | None = None
        self.seen_items = False
        self.fork = _Fork()

    def read(self) -> RecordedSession:
        for lineno, line in iter_jsonl(self.path):
            self._line(line, f"{self.path}:{lineno}")
        total = self.fork.own(self.total)
        if not self.seen_items:
            self._tokens_only(total)
        self._close_turn(None)
        self._model_calls(total)
        session = self.builder.build(
            session_id=self.session_id or self.path.stem,
            total_usage=total,
            latency_ms=self.latency_ms,
            error=self.error,
        )
        if self.final and not session.text:
            session = attrs.evolve(
                session,
                text=self.final,
                result=attrs.evolve(session.result, text=self.final),
            )
        return with_segments(session, self._segments())

    def _line(self, line: Any, where: str) -> None:
        """One rollout line ``{timestamp, type, payload}``, by its type."""
        line = expect_mapping(line, where, "a JSON object (one Codex rollout line)")
        kind = line.get("type")
        if not isinstance(kind, str) or "payload" not in line:
            raise ValidationError(
                f"{where}: expected a Codex rollout line {{timestamp, type, "
                f"payload}}, got {keys_of(line)}"
            )
        moment = None
        if line.get("timestamp") is not None:
            moment = parse_time(line["timestamp"], f"{where}: $.timestamp")
        payload = expect_mapping(line["payload"], f"{where}: $.payload", "an object")
        if kind == "session_meta":
            self._session_meta(payload, moment, where)
        elif self.fork.copied(moment):
            self._copied(kind, payload, where)
        elif kind == "turn_context":
            self._turn_context(payload, where)
        elif kind == "response_item":
            self.seen_items = True
            self._item(payload, moment, where)
        elif kind == "token_usage_record":
            self._usage_record(payload, moment, where)
        elif kind == "event_msg":
            self._event(payload, moment, where)

    def _session_meta(
        self, payload: Mapping[str, Any], moment: datetime | None, where: str
    ) -> None:
        """The session's id; a forked rollout's next meta line starts its own part."""
        thread = optional_str(
            payload.get("id") or payload.get("session_id"), f"{where}: $.payload.id"
        )
        self.session_id = self.session_id or thread
        self.fork.meta(thread, self.session_id, moment)
        if not self.fork.copying:
            self.builder.see(moment)

    def _turn_context(self, payload: Mapping[str, Any], where: str) -> None:
        """The model in use from here on (kept when the line does not say)."""
        model = optional_str(payload.get("model"), f"{where}: $.payload.model")
        self.model = model or self.model

    def _tokens_only(self, total: TokenBreakdown | None) -> None:
        """A file without response items: its tokens alone, or not a rollout at all."""
        if total is None and not self.builder.usage:
            raise ValidationError(
                f"{self.path}: no response_item and no token_count lines; "
                "expected a Codex rollout file "
                "($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl)"
            )
        self.builder.warnings.append(
            f"{self.path}: no response_item lines, only token counts: the tokens are imported, "
            "but there are no turns, tool calls or text to analyse"
        )

    def _copied(self, kind: str, payload: Mapping[str, Any], where: str) -> None:
        """A line of the history a forked rollout copied from its parent: only its model
        and running token total matter."""
        if kind == "turn_context":
            self._turn_context(payload, where)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if isinstance(info, Mapping) and info.get("total_token_usage") is not None:
                self.fork.baseline = codex_usage(
                    info["total_token_usage"],
                    f"{where}: $.payload.info.total_token_usage",
                )

    # -- response items ---------------------------------------------------------

    def _item(
        self, payload: Mapping[str, Any], moment: datetime | None, where: str
    ) -> None:
        kind = payload.get("type")
        here = f"{where}: $.payload"
        if kind == "message":
            self._message(payload, moment)
        elif kind == "reasoning":
            self._reasoning(payload, moment)
        elif kind in _CALLS:
            self._tool_call(payload, kind, moment, here)
        elif kind == "web_search_call":
            self._web_search(payload, moment, here)
        elif kind in _OUTPUTS:
            self._tool_output(payload, moment, where)

    def _message(self, payload: Mapping[str, Any], moment: datetime | None) -> None:
        """A user message opens a new turn (unless Codex injected it); an assistant's is text."""
        role = payload.get("role")
        content = text_of(payload.get("content"))
        stripped = content.strip()
        # <environment_context>...</...>
        injected = stripped.startswith("<") and stripped.endswith(">")
        if role == "user" and not injected:
            self._close_turn(moment)
            self.builder.user_message(moment)
            self.mark = moment
            if self.builder.prompt is None:
                self.builder.prompt = content
        elif role == "assistant":
            self.builder.text(self._open_turn(moment), content)

    def _reasoning(self, payload: Mapping[str, Any], moment: datetime | None) -> None:
        raw_summary = payload.get("summary")
        summary: list[Any] = raw_summary if isinstance(raw_summary, list) else []
        parts = [p for p in summary if isinstance(p, Mapping)]
        text = "\n".join(text_of(part.get("text")) for part in parts)
        if text.strip():
            self.builder.reasoning(self._open_turn(moment), text)

    def _tool_call(
        self, payload: Mapping[str, Any], kind: str, moment: datetime | None, here: str
    ) -> None:
        name = optional_str(payload.get("name"), f"{here}.name")
        if not name:
            name = "local_shell" if kind == "local_shell_call" else "tool"
        if kind == "function_call":
            raw = payload.get("arguments")
        else:
            raw = payload.get("input", payload.get("action"))
        call_id = optional_str(
            payload.get("call_id") or payload.get("id"), f"{here}.call_id"
        )
        arguments = parse_arguments(raw) if isinstance(raw, str) else raw
        self.builder.tool_call(
            self._open_turn(moment), call_id, name, arguments, moment
        )

    def _web_search(
        self, payload: Mapping[str, Any], moment: datetime | None, here: str
    ) -> None:
        """The model's own web search: a tool call whose result went straight back to it."""
        action = payload.get("action")
        call = self.builder.tool_call(
            self._open_turn(moment),
            optional_str(payload.get("id"), f"{here}.id"),
            "web_search",
            action or {},
            moment,
        )
        status = optional_str(payload.get("status"), f"{here}.status")
        failed = status not in (None, "completed")
        error = f"web search {status}" if failed else None
        complete_tool(call, None, is_error=failed, error=error)

    def _tool_output(
        self, payload: Mapping[str, Any], moment: datetime | None, where: str
    ) -> None:
        """A tool's result; it failed when its exit code (recorded or in the text) is not 0."""
        self._close_turn(moment)
        call_id = optional_str(payload.get("call_id"), f"{where}: $.payload.call_id")
        text = _output_text(payload.get("output"))
        code = self.exit_codes.get(call_id or "")
        if code is None:
            found = _EXIT.search(text)
            code = int(found.group(1)) if found else 0
        self.builder.see(moment)
        self.builder.tool_result(
            call_id, text, is_error=code != 0, moment=moment, where=where
        )
        self.mark = moment

    def _open_turn(self, moment: datetime | None) -> Any:
        if self.turn is None:
            self.turn = self.builder.turn(None, moment)
            self.step_start = self.mark or moment
        else:
            self.builder.see(moment)
        return self.turn

    def _close_turn(self, moment: datetime | None) -> None:
        """The model's response is complete (its usage was recorded, or Codex moved on)."""
        if self.turn is not None and self.step_start is not None:
            end = moment or self.turn.end or self.step_start
            self.steps.append((self.step_start, max(self.step_start, end)))
        self.turn = None
        self.step_start = None

    # -- usage and events -------------------------------------------------------

    def _usage_record(
        self, payload: Mapping[str, Any], moment: datetime | None, where: str
    ) -> None:
        if payload.get("usage") is not None:
            self.recorded.append(
                (self.model, codex_usage(payload["usage"], f"{where}: $.payload.usage"))
            )
        if self.turn is None and moment is not None and self.mark is not None:
            # A response without output items (rare): still model time.
            self.steps.append((self.mark, max(self.mark, moment)))
        self._close_turn(moment)
        self.builder.see(moment)
        self.mark = moment

    def _event(
        self, payload: Mapping[str, Any], moment: datetime | None, where: str
    ) -> None:
        kind = payload.get("type")
        here = f"{where}: $.payload"
        if kind == "item_completed":
            self._exit_code(payload.get("item"))
        elif kind == "token_count":
            info = payload.get("info")
            if isinstance(
                info, Mapping
            ):  # null before the first response (only rate limits)
                self._token_count(info, f"{here}.info")
        elif kind in ("error", "stream_error"):
            message = optional_str(payload.get("message"), f"{here}.message") or kind
            self.builder.see(moment)
            self.builder.error(message, recoverable=kind == "stream_error")
        elif kind == "task_complete":
            self.builder.see(moment)
            self._task_complete(payload, here)
        elif kind == "turn_aborted":
            self.builder.see(moment)
            self.error = f"turn aborted: {payload.get('reason') or 'unknown reason'}"

    def _exit_code(self, item: Any) -> None:
        """A finished command's exit code, for its tool result to say whether it failed."""
        if not isinstance(item, Mapping) or item.get("type") != "CommandExecution":
            return
        code = item.get("exit_code")
        if isinstance(item.get("id"), str) and _is_int(code):
            self.exit_codes[item["id"]] = code

    def _task_complete(self, payload: Mapping[str, Any], here: str) -> None:
        """The task's duration, its last message, and its error (when it failed)."""
        duration = number(payload.get("duration_ms"), f"{here}.duration_ms")
        if duration is not None:
            self.latency_ms = float(duration)
        last = optional_str(
            payload.get("last_agent_message"), f"{here}.last_agent_message"
        )
        self.final = last or self.final
        error = payload.get("error")
        if isinstance(error, Mapping):
            message = optional_str(error.get("message"), f"{here}.error.message")
            self.error = message or "task failed"

    def _token_count(self, info: Mapping[str, Any], where: str) -> None:
        """One ``token_count``: the running total, and the usage of the response it follows."""
        total = (
            codex_usage(info["total_token_usage"], f"{where}.total_token_usage")
            if info.get("total_token_usage") is not None
            else None
        )
        last = (
            codex_usage(info["last_token_usage"], f"{where}.last_token_usage")
            if info.get("last_token_usage") is not None
            else None
        )
        previous = self.total if self.total is not None else self.fork.baseline
        if total is not None:
            if total == previous:
                # Codex sends the count again when only the rate limits changed: no new
                # response
                return
            self.total = total
        call = (
            last
            if last is not None
            else (None if total is None else _since(total, previous))
        )
        if call is not None and call.total:
            self.counted.append((self.model, call))

    def _model_calls(self, total: TokenBreakdown | None) -> None:
        """Give the builder each model response's usage and model, checked against the
        session's total."""
        calls = (
            self.recorded or self.counted
        )  # the same responses, when a file has both
        for model, tokens in calls:
            self.builder.add_usage(tokens, model)
            self.builder.note_model(model)
        if not calls:
            self.builder.note_model(self.model)
        if total is None or not calls:
            # no total: the calls' sum is the session's; no calls: the total is priced
            # as one
            return
        summed = sum((tokens for _, tokens in calls), TokenBreakdown())
        if summed == total:
            return
        if any(getattr(summed, f) > getattr(total, f) for f in _FIELDS):
            self.builder.warnings.append(
                f"{self.path}: the model responses' usage ({summed.total} "
                "tokens) exceeds the last running total "
                f"({total.total} tokens); the total is reported, the responses are priced"
            )
            return
        rest = _since(total, summed)
        self.builder.warnings.append(
            f"{self.path}: {rest.total} tokens of the running total belong to "
            "no recorded model response; "
            f"they are priced as one more response of {self.model or 'the session model'}"
        )
        self.builder.add_usage(rest, self.model)

    def _segments(self) -> list[TimingSegment]:
        segments = [
            TimingSegment(label="model", start_ms=_epoch_ms(a), end_ms=_epoch_ms(b))
            for a, b in self.steps
        ]
        for tool in self.builder.tools.values():
            if tool.started is not None and tool.duration_ms is not None:
                start = _epoch_ms(tool.started)
                segments.append(
                    TimingSegment(
                        label="tools",
                        start_ms=start,
                        end_ms=round(start + tool.duration_ms, 3),
                    )
                )
        return sorted(segments, key=lambda s: (s.start_ms, s.label))


def _epoch_ms(moment: datetime) -> float:
    return round(moment.timestamp() * 1000, 3)


#: How long after a fork Codex may still be writing the parent's copied history (it
#: copies at the moment of the fork).
_COPY_WINDOW = timedelta(seconds=1)


@attrs.define
class _Fork:
    """The history a forked rollout copied from its parent, which must not count as this session's.

    A rollout that Codex forked (``codex fork``, or a spawned subagent) opens
    with its own ``session_meta`` (``forked_from_id``), then copies the
    parent's lines - the parent's ``session_meta`` first, then its items and
    its ``token_count`` events with the parent's running totals - and goes on
    counting from the parent's total. The copy runs from a ``session_meta`` of
    another thread until this thread's ``session_meta`` comes again, or until a
    line dated after the copy (Codex writes it at the moment of the fork).
    """

    own_id: str | None = None
    forked_at: datetime | None = None
    copying: bool = False
    #: the parent's running total where the copy ended
    baseline: TokenBreakdown | None = None

    def meta(
        self, thread: str | None, own: str | None, moment: datetime | None
    ) -> None:
        """A ``session_meta`` line: the file's own (first) one, a copied one, or this
        thread's again."""
        if self.own_id is None:
            self.own_id, self.forked_at = own, moment
            return
        self.copying = thread is not None and thread != self.own_id

    def copied(self, moment: datetime | None) -> bool:
        """Whether the line dated ``moment`` belongs to the copied history."""
        if (
            self.copying
            and moment is not None
            and self.forked_at is not None
            and moment > self.forked_at + _COPY_WINDOW
        ):
            self.copying = False
        return self.copying

    def own(self, total: TokenBreakdown | None) -> TokenBreakdown | None:
        """This thread's own usage: its last running total less the parent's, when the
        totals went on from it."""
        if self.baseline is None:
            return total
        if total is None:
            return TokenBreakdown()  # a fork that did nothing of its own yet
        return _since(total, self.baseline)


_FIELDS = ("input", "output", "reasoning", "cache_read", "cache_write")


def _since(total: TokenBreakdown, before: TokenBreakdown | None) -> TokenBreakdown:
    """What a running total grew by since ``before``; all of ``total`` (itself) when the
    counter started again."""
    if before is None or any(getattr(total, f) < getattr(before, f) for f in _FIELDS):
        return total
    return TokenBreakdown(
        **{f: getattr(total, f) - getattr(before, f) for f in _FIELDS}
    )


def _output_text(output: Any) -> str:
    """A tool output's text: a string, or the text of its content."""
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping):
        return text_of(output.get("content"))
    return text_of(output)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
