"""The SessionTrace of an ACP session, built from its ``session/update`` notifications (a pure function).

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
    events: list[Any] = []
    tools: dict[str, _Tool] = {}
    last_kind, answer = "", ""
    for item in updates:
        update, kind = item.update, item.update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            text = _text(update.get("content"))
            if kind == last_kind and events:
                previous = events[-1]
                events[-1] = type(previous)(content=previous.content + text)
            else:
                events.append(
                    TextOutputEvent(content=text)
                    if kind == "agent_message_chunk"
                    else ReasoningEvent(content=text)
                )
            if kind == "agent_message_chunk":
                answer = answer + text if last_kind == kind else text
        elif kind in ("tool_call", "tool_call_update") and isinstance(
            update.get("toolCallId"), str
        ):
            call_id = update["toolCallId"]
            if call_id in tools:
                tools[call_id].merge(update, item.at)
            else:
                tools[call_id] = _Tool(update, item.at, shell)
                events.append(call_id)  # its place in the order; filled in below
        elif kind == "plan" and isinstance(update.get("entries"), list):
            lines = [
                f"- [{e.get('status', '')}] {e.get('content', '')}"
                for e in update["entries"]
                if isinstance(e, dict)
            ]
            events.append(ReasoningEvent(content="Plan:\n" + "\n".join(lines)))
        else:
            continue  # usage, commands, modes: not events of the trace
        last_kind = str(kind)
    built = [tools[e].event() if isinstance(e, str) else e for e in events]
    summary = TraceSummary(
        total_turns=1 if built else 0,
        total_tool_calls=len(tools),
        total_tokens=tokens,
        total_duration=wall_ms,
    )
    return SessionTrace(
        session_id=session_id, events=tuple(built), turns=(), summary=summary
    ), answer


__all__ = ["KIND_CATEGORIES", "build_trace", "tool_kinds", "tool_name"]
