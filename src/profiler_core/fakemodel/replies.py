"""What the fake model answers: replies (text, a tool call, a shell command, an HTTP
error, a hang) and scripts.

One vocabulary for the three APIs the server speaks; each API module renders a
reply in its vendor's wire format. A *script* is one reply (always given), a
list (given in order, the last one repeats) or a callable ``request body ->
reply``. :func:`steps` makes the usual kind of callable: reply ``n`` answers a
conversation that already holds ``n`` tool results, so any number of
concurrent sessions each follow the script from its start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError


@dataclass(frozen=True)
class Usage:
    """Token usage of one answer, counted as the profiler counts it (each kind apart).

    ``input`` excludes the cache reads and writes and ``output`` excludes
    ``reasoning``; the APIs that count them inside (OpenAI's) get the sums.
    """

    input: int = 100
    output: int = 20
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


@dataclass(frozen=True)
class Text:
    """A final answer; ``thinking`` is sent first as reasoning where the API has it
    (Anthropic, Responses)."""

    text: str
    thinking: str = ""
    #: None: the API's typical usage (see each API module's ``DEFAULT_USAGE``)
    usage: Usage | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool the agent offers, by its name, with its arguments."""

    name: str
    arguments: dict[str, Any]
    thinking: str = ""
    call_id: str | None = None
    usage: Usage | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class Shell:
    """One call of the agent's shell tool, whatever the agent calls it (see :func:`shell_call`)."""

    command: str
    thinking: str = ""
    usage: Usage | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class Fail:
    """Answer with an HTTP error, shaped as the vendor's own errors (agents decide from
    them whether to retry)."""

    status: int = 500
    message: str = "fake model: scripted failure"
    delay_s: float = 0.0


@dataclass(frozen=True)
class Hang:
    """Never answer: hold the request until the server's ``release()`` or ``close()``."""


Reply = Text | ToolCall | Shell | Fail | Hang
Script = Reply | Sequence[Reply] | Callable[[dict[str, Any]], Reply]


def offered_tools(body: dict[str, Any]) -> list[str]:
    """Names of the tools a request offers (OpenAI chat nests them under ``function``)."""
    names = []
    for tool in body.get("tools") or ():
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if isinstance(name, str):
                names.append(name)
    return names


def shell_call(reply: Shell, body: dict[str, Any], api: str) -> ToolCall:
    """The tool call of a :class:`Shell` reply: the first agent's shell tool the request offers.

    The agents' shell tools and their arguments are the registry's (config/agents.toml, column
    ``shell``); a request that offers none of them gets the shell tool of the first agent
    calling ``api``.
    """
    from ..config.agents import shell_tool_of, shell_tools

    known = shell_tools()
    offered = next((known[n] for n in offered_tools(body) if n in known), None)
    tool = offered or shell_tool_of(api)
    if tool is None:
        raise ConfigError(
            f"fake model: no agent of the registry that calls {api} has a shell tool"
        )
    return ToolCall(
        tool.tool,
        tool.call(reply.command),
        thinking=reply.thinking,
        usage=reply.usage,
        delay_s=reply.delay_s,
    )


def tool_results(body: dict[str, Any]) -> int:
    """How many tool results the conversation of a request holds, in any of the three
    APIs' shapes."""
    count = 0
    items = (
        body.get("messages")
        if isinstance(body.get("messages"), list)
        else body.get("input")
    )
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        if (
            item.get("role") == "tool" or item.get("type") == "function_call_output"
        ):  # OpenAI chat, Responses
            count += 1
        elif isinstance(
            item.get("content"), list
        ):  # Anthropic: tool_result blocks in a user message
            count += sum(
                1
                for block in item["content"]
                if isinstance(block, dict) and block.get("type") == "tool_result"
            )
    return count


def has_tool_result(body: dict[str, Any]) -> bool:
    """Whether the conversation of a request already holds a tool result."""
    return tool_results(body) > 0


def steps(replies: Sequence[Reply]) -> Callable[[dict[str, Any]], Reply]:
    """A script for concurrent sessions: reply ``n`` answers a conversation holding
    ``n`` tool results."""
    if not replies:
        raise ValueError("steps: expected at least one reply")
    chosen = tuple(replies)

    def reply(body: dict[str, Any]) -> Reply:
        return chosen[min(tool_results(body), len(chosen) - 1)]

    return reply


def tool_then_text(
    command: str = "echo hello",
    text: str = "Done: the command printed hello.",
    usage: Usage | None = None,
    delay_s: float = 0.0,
    thinking: str = "",
) -> Callable[[dict[str, Any]], Reply]:
    """A shell call of ``command``, then ``text``: the script of most tests and of
    ``profiler init --agent``."""
    return steps(
        [
            Shell(command, thinking=thinking, usage=usage, delay_s=delay_s),
            Text(text, usage=usage, delay_s=delay_s),
        ]
    )
