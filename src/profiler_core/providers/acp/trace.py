"""The SessionTrace of an ACP session, built from its ``session/update`` notifications
(a pure function).

Message chunks in a row become one text event, thought chunks one reasoning
event; a ``tool_call`` and its ``tool_call_update``s become one tool call
(named by :func:`tool_name`, its input the ``rawInput``, its output the
``rawOutput`` or the text of its content, failed when its last status is
``failed``, its duration from the first update to the last); a ``plan`` becomes
a reasoning event listing its entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from ...model import (
    ReasoningEvent,
    SessionTrace,
    TextOutputEvent,
    TokenBreakdown,
    ToolCallEvent,
    TraceSummary,
)
from .protocol import Update


def _text(content: Any) -> str:
    """The text of an ACP content block, or of a tool call's content list."""
    if isinstance(content, dict):
        if content.get("type") == "text":
            return str(content.get("text", ""))
        if content.get("type") == "content":
            return _text(content.get("content"))
        if content.get("type") == "diff":
            return f"diff {content.get('path', '')}"
        return ""
    if isinstance(content, list):
        return "".join(_text(c) for c in content)
    return ""


def tool_name(first: dict[str, Any], shell: str | None = None) -> str:
    """The name of a tool call, from its first update: the agent's own name for the tool when
    its ``_meta`` gives one (claude-code-acp: ``_meta.claudeCode.toolName``); else, for a
    command (``kind: execute``), ``shell``, the agent's shell tool from the registry of agents
    (codex-acp titles a command by its command line: ``echo hello``); else the first title
    (OpenCode's ``bash``; later titles describe the call)."""
    meta = first.get("_meta")
    for value in meta.values() if isinstance(meta, dict) else ():
        if isinstance(value, dict) and isinstance(value.get("toolName"), str):
            return str(value["toolName"])
    if shell and first.get("kind") == "execute":
        return shell
    return str(first.get("title") or first.get("kind") or "tool")


class _Tool:
    def __init__(self, first: dict[str, Any], at: float, shell: str | None) -> None:
        self.fields: dict[str, Any] = {}
        self.start = self.end = at
        self.name = tool_name(first, shell)
        self.merge(first, at)

    def merge(self, update: dict[str, Any], at: float) -> None:
        self.fields.update({k: v for k, v in update.items() if v is not None})
        self.end = at

    def event(self) -> ToolCallEvent:
        f = self.fields
        name = self.name
        output = (
            f.get("rawOutput")
            if f.get("rawOutput") is not None
            else _text(f.get("content"))
        )
        failed = f.get("status") == "failed"
        error = (_text(f.get("content")) or "failed") if failed else None
        return ToolCallEvent(
            name=name,
            input=f.get("rawInput")
            if f.get("rawInput") is not None
            else {"title": f.get("title")},
            output=output,
            duration_ms=round((self.end - self.start) * 1000, 3),
            success=not failed,
            error=error,
        )


#: ACP's tool kinds -> the profiler's tool categories (``tool_calls_category_<name>``)
KIND_CATEGORIES = {
    "execute": "shell",
    "read": "file",
    "edit": "file",
    "delete": "file",
    "move": "file",
    "search": "search",
    "fetch": "web",
}


def tool_kinds(updates: Sequence[Update], shell: str | None = None) -> dict[str, str]:
    """Tool name (:func:`tool_name`) -> the category its ACP ``kind`` gives (the first seen)."""
    kinds: dict[str, str] = {}
    names: dict[str, str] = {}
    for item in updates:
        update = item.update
        call_id = update.get("toolCallId")
        if update.get("sessionUpdate") == "tool_call" and isinstance(call_id, str):
            names[call_id] = tool_name(update, shell)
        if (
            isinstance(call_id, str)
            and call_id in names
            and update.get("kind") in KIND_CATEGORIES
        ):
            kinds.setdefault(names[call_id], KIND_CATEGORIES[update["kind"]])
    return kinds


def build_trace(
    session_id: str,
    updates: Sequence[Update],
    wall_ms: float,
    tokens: TokenBreakdown,
    shell: str | None = None,
) -> tuple[SessionTrace, str]:
    """The trace of the updates, and the agent's final answer (its last message);
    ``shell`` names its commands (:func:`tool_name`)."""
    order = _Order(shell)
    for item in updates:
        order.add(item)
    events, tools = order.events, order.tools
    built = [tools[e].event() if isinstance(e, str) else e for e in events]
    summary = TraceSummary(
        total_turns=1 if built else 0,
        total_tool_calls=len(tools),
        total_tokens=tokens,
        total_duration=wall_ms,
    )
    return SessionTrace(
        session_id=session_id, events=tuple(built), turns=(), summary=summary
    ), order.answer


@attrs.define
class _Order:
    """The trace's events in the order the updates gave them; a tool call holds its place
    by its id until the call is complete."""

    shell: str | None
    events: list[Any] = attrs.Factory(list)
    tools: dict[str, _Tool] = attrs.Factory(dict)
    last_kind: str = ""
    #: the agent's last message (consecutive chunks joined)
    answer: str = ""

    def add(self, item: Update) -> None:
        """One update; usage, commands and modes are not events of the trace."""
        update, kind = item.update, item.update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            self._chunk(kind, _text(update.get("content")))
        elif kind in ("tool_call", "tool_call_update") and isinstance(
            update.get("toolCallId"), str
        ):
            self._tool(update, item.at)
        elif kind == "plan" and isinstance(update.get("entries"), list):
            self.events.append(_plan(update["entries"]))
        else:
            return
        self.last_kind = str(kind)

    def _chunk(self, kind: str, text: str) -> None:
        """A piece of a message or thought: it continues the previous one of its kind."""
        continues = kind == self.last_kind
        if continues and self.events:
            previous = self.events[-1]
            self.events[-1] = type(previous)(content=previous.content + text)
        elif kind == "agent_message_chunk":
            self.events.append(TextOutputEvent(content=text))
        else:
            self.events.append(ReasoningEvent(content=text))
        if kind == "agent_message_chunk":
            self.answer = self.answer + text if continues else text

    def _tool(self, update: dict[str, Any], at: float) -> None:
        call_id = update["toolCallId"]
        if call_id in self.tools:
            self.tools[call_id].merge(update, at)
        else:
            self.tools[call_id] = _Tool(update, at, self.shell)
            self.events.append(call_id)  # its place in the order; filled in at the end


def _plan(entries: list[Any]) -> ReasoningEvent:
    """The agent's plan as a thought, one line per entry."""
    lines = [
        f"- [{e.get('status', '')}] {e.get('content', '')}"
        for e in entries
        if isinstance(e, dict)
    ]
    return ReasoningEvent(content="Plan:\n" + "\n".join(lines))


__all__ = ["KIND_CATEGORIES", "build_trace", "tool_kinds", "tool_name"]
