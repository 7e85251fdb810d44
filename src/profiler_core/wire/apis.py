"""The three model APIs as the wire recorder reads them: which API a request is, and
what a call asked and answered.

Pure functions over JSON: a request body, then a whole response body or the
response's server-sent events one at a time. Tokens are counted as the
profiler counts them (``TokenBreakdown``: each kind apart), from the
provider's own usage fields:

- OpenAI chat completions: ``prompt_tokens`` (cached ones inside:
  ``prompt_tokens_details.cached_tokens``), ``completion_tokens`` (reasoning
  inside: ``completion_tokens_details.reasoning_tokens``);
- OpenAI Responses: ``input_tokens`` / ``input_tokens_details.cached_tokens``,
  ``output_tokens`` / ``output_tokens_details.reasoning_tokens``;
- Anthropic Messages: ``input_tokens`` (cache apart), ``cache_read_input_tokens``,
  ``cache_creation_input_tokens``, ``output_tokens`` (``message_delta`` of a
  stream carries the final count).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

import attrs

from ..config.agents import API_PATHS
from ..model import TokenBreakdown

WireApi = Literal["openai-chat", "openai-responses", "anthropic"]

#: path ending -> API (the registry's, which the fake model reads too)
_PATHS: tuple[tuple[str, str], ...] = tuple(
    (ending, api) for api, ending in API_PATHS.items()
)


def api_of(path: str, configured: str | None = None) -> WireApi | None:
    """The API of a request: ``configured`` when given, else told from the path; None
    for anything else (a model list...)."""
    path = path.split("?", 1)[0].rstrip("/")
    for ending, api in _PATHS:
        if path.endswith(ending):
            return configured or api  # type: ignore[return-value]  # checked by the caller's option
    return None


@attrs.define
class WireToolCall:
    """A tool call the model asked for: its id, name and arguments (JSON text, as the
    API sends them)."""

    id: str
    name: str
    arguments: str = ""


@attrs.define
class RequestFacts:
    """What a request asked: the model, streaming or not, the tools it offered, the tool
    results it carries."""

    model: str = ""
    stream: bool = False
    tools: list[str] = attrs.field(factory=list)
    #: tool call id -> the result the agent sends back (text)
    tool_results: dict[str, str] = attrs.field(factory=dict)


@attrs.define
class ResponseFacts:
    """What the model answered: its name, its usage, its text and the tool calls it asked for."""

    model: str = ""
    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0
    text: str = ""
    tool_calls: list[WireToolCall] = attrs.field(factory=list)
    #: the model's error message, when the answer was one
    error: str | None = None

    def tokens(self) -> TokenBreakdown:
        """The usage as a TokenBreakdown."""
        return TokenBreakdown(
            input=self.input,
            output=self.output,
            reasoning=self.reasoning,
            cache_read=self.cache_read,
            cache_write=self.cache_write,
        )


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) and value else default


def _int(value: Any) -> int:
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and value > 0
        else 0
    )


def _text(content: Any) -> str:
    """Text of a message content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text") or p.get("output") or ""
            for p in content
            if isinstance(p, dict)
        ]
        return "".join(p for p in parts if isinstance(p, str))
    return "" if content is None else json.dumps(content)


# -- requests --------------------------------------------------------------------


def parse_request(api: WireApi, body: Any) -> RequestFacts:
    """The facts of a request body (an unreadable body gives empty facts: the call is
    still forwarded and timed)."""
    facts = RequestFacts()
    if not isinstance(body, dict):
        return facts
    facts.model = _str(body.get("model"))
    facts.stream = body.get("stream") is True
    facts.tools = _tool_names(body.get("tools") or ())
    facts.tool_results = _TOOL_RESULTS.get(api, _anthropic_results)(body)
    return facts


def _tool_names(tools: Any) -> list[str]:
    """The names of the tools a request offers (a chat tool nests them in ``function``)."""
    names = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        function = tool["function"] if isinstance(tool.get("function"), dict) else tool
        name = function.get("name") or tool.get("type")
        if isinstance(name, str):
            names.append(name)
    return names


def _chat_results(body: dict[str, Any]) -> dict[str, str]:
    """Chat Completions: the ``tool`` messages, by ``tool_call_id``."""
    results = {}
    for message in body.get("messages") or ():
        if not isinstance(message, dict) or message.get("role") != "tool":
            continue
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str):
            results[call_id] = _text(message.get("content"))
    return results


def _responses_results(body: dict[str, Any]) -> dict[str, str]:
    """Responses: the ``function_call_output`` items of the input, by ``call_id``."""
    items = body.get("input")
    results = {}
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            continue
        call_id = item.get("call_id")
        if isinstance(call_id, str):
            results[call_id] = _text(item.get("output"))
    return results


def _anthropic_results(body: dict[str, Any]) -> dict[str, str]:
    """Messages: the ``tool_result`` blocks of the messages' content, by ``tool_use_id``."""
    results = {}
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            use_id = block.get("tool_use_id")
            if isinstance(use_id, str):
                results[use_id] = _text(block.get("content"))
    return results


_TOOL_RESULTS: dict[str, Callable[[dict[str, Any]], dict[str, str]]] = {
    "openai-chat": _chat_results,
    "openai-responses": _responses_results,
}


# -- whole responses -------------------------------------------------------------


def parse_response(api: WireApi, body: Any) -> ResponseFacts:
    """The facts of a whole (not streamed) response body."""
    facts = ResponseFacts()
    if not isinstance(body, dict):
        return facts
    if isinstance(body.get("error"), dict):
        facts.error = str(body["error"].get("message") or body["error"])
    facts.model = _str(body.get("model"))
    if api == "openai-chat":
        _chat_output(facts, body)
    elif api == "openai-responses":
        _responses_output(facts, body)
    else:
        _anthropic_output(facts, body)
    return facts


def _chat_output(facts: ResponseFacts, body: dict[str, Any]) -> None:
    """Chat Completions: the usage, and each choice's text and tool calls."""
    _chat_usage(facts, body.get("usage"))
    for choice in body.get("choices") or ():
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        facts.text += _text(message.get("content"))
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            facts.tool_calls.append(
                WireToolCall(
                    str(call.get("id", "")),
                    str(function.get("name", "")),
                    str(function.get("arguments") or ""),
                )
            )


def _anthropic_output(facts: ResponseFacts, body: dict[str, Any]) -> None:
    """Messages: the usage, and the text and tool-use blocks of the content."""
    _anthropic_usage(facts, body.get("usage"))
    for block in body.get("content") or ():
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            facts.text += str(block.get("text", ""))
        elif kind == "tool_use":
            facts.tool_calls.append(
                WireToolCall(
                    str(block.get("id", "")),
                    str(block.get("name", "")),
                    json.dumps(block.get("input", {})),
                )
            )


def _chat_usage(facts: ResponseFacts, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    cached = _int((usage.get("prompt_tokens_details") or {}).get("cached_tokens"))
    reasoning = _int(
        (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
    )
    facts.cache_read, facts.reasoning = cached, reasoning
    facts.input = max(_int(usage.get("prompt_tokens")) - cached, 0)
    facts.output = max(_int(usage.get("completion_tokens")) - reasoning, 0)


def _responses_output(facts: ResponseFacts, response: dict[str, Any]) -> None:
    facts.model = _str(response.get("model"), facts.model)
    usage = response.get("usage")
    if isinstance(usage, dict):
        cached = _int((usage.get("input_tokens_details") or {}).get("cached_tokens"))
        reasoning = _int(
            (usage.get("output_tokens_details") or {}).get("reasoning_tokens")
        )
        facts.cache_read, facts.reasoning = cached, reasoning
        facts.input = max(_int(usage.get("input_tokens")) - cached, 0)
        facts.output = max(_int(usage.get("output_tokens")) - reasoning, 0)
    facts.text, facts.tool_calls = "", []
    for item in response.get("output") or ():
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            facts.text += _text(item.get("content"))
        elif item.get("type") == "function_call":
            facts.tool_calls.append(
                WireToolCall(
                    str(item.get("call_id", "")),
                    str(item.get("name", "")),
                    str(item.get("arguments") or ""),
                )
            )


def _anthropic_usage(facts: ResponseFacts, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    # A stream's message_delta repeats only what changed: keep what it does not carry.
    for field, key in (
        ("input", "input_tokens"),
        ("output", "output_tokens"),
        ("cache_read", "cache_read_input_tokens"),
        ("cache_write", "cache_creation_input_tokens"),
    ):
        if key in usage:
            setattr(facts, field, _int(usage[key]))


# -- streamed responses ------------------------------------------------------------


@attrs.define
class StreamReader:
    """Reads a streamed response one server-sent event at a time; :attr:`facts` grows as
    events arrive."""

    api: WireApi
    facts: ResponseFacts = attrs.field(factory=ResponseFacts)
    _calls: dict[int, WireToolCall] = attrs.field(factory=dict)

    def feed(self, data: str) -> bool:
        """Read one event's ``data``; True when it carries generated content (the first
        such is the first token)."""
        if data.strip() == "[DONE]":
            return False
        try:
            event = json.loads(data)
        except ValueError:
            return False
        if not isinstance(event, dict):
            return False
        if isinstance(event.get("error"), dict):
            self.facts.error = str(event["error"].get("message") or event["error"])
        if self.api == "openai-chat":
            return self._chat(event)
        if self.api == "openai-responses":
            return self._responses(event)
        return self._anthropic(event)

    def _chat(self, event: dict[str, Any]) -> bool:
        if isinstance(event.get("model"), str) and event["model"]:
            self.facts.model = event["model"]
        if isinstance(event.get("usage"), dict):
            _chat_usage(self.facts, event["usage"])
        content = False
        for choice in event.get("choices") or ():
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if isinstance(delta, dict) and self._chat_delta(delta):
                content = True
        return content

    def _chat_delta(self, delta: dict[str, Any]) -> bool:
        """One choice's delta: text, and pieces of tool calls; whether it carried content."""
        content = False
        if delta.get("content"):
            self.facts.text += str(delta["content"])
            content = True
        if delta.get("reasoning_content") or delta.get("reasoning"):
            content = True
        for piece in delta.get("tool_calls") or ():
            content = True
            self._chat_tool_piece(piece)
        return content

    def _chat_tool_piece(self, piece: Any) -> None:
        """A piece of a streamed tool call: its id first, then its name and arguments in parts."""
        index = len(self._calls)
        if isinstance(piece, dict):
            index = piece.get("index", index)
        if index not in self._calls:
            self._calls[index] = WireToolCall(str(piece.get("id") or ""), "")
            self.facts.tool_calls.append(self._calls[index])
        call = self._calls[index]
        function = piece.get("function") or {}
        call.name += str(function.get("name") or "")
        call.arguments += str(function.get("arguments") or "")

    def _responses(self, event: dict[str, Any]) -> bool:
        kind = str(event.get("type", ""))
        response = event.get("response")
        if isinstance(response, dict) and kind in (
            "response.created",
            "response.in_progress",
        ):
            self.facts.model = _str(response.get("model"), self.facts.model)
        if isinstance(response, dict) and kind in (
            "response.completed",
            "response.incomplete",
            "response.failed",
        ):
            _responses_output(self.facts, response)
            if kind == "response.failed" and isinstance(response.get("error"), dict):
                self.facts.error = str(response["error"].get("message"))
        return kind.endswith(".delta")

    def _anthropic(self, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            message = event["message"]
            self.facts.model = _str(message.get("model"), self.facts.model)
            _anthropic_usage(self.facts, message.get("usage"))
        elif kind == "message_delta":
            _anthropic_usage(self.facts, event.get("usage"))
        elif kind == "content_block_start" and isinstance(
            event.get("content_block"), dict
        ):
            block = event["content_block"]
            if block.get("type") == "tool_use":
                call = WireToolCall(
                    str(block.get("id", "")), str(block.get("name", ""))
                )
                self._calls[int(event.get("index", len(self._calls)))] = call
                self.facts.tool_calls.append(call)
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            delta = event["delta"]
            if delta.get("type") == "text_delta":
                self.facts.text += str(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                pending = self._calls.get(int(event.get("index", -1)))
                if pending is not None:
                    pending.arguments += str(delta.get("partial_json", ""))
            return True
        return False


__all__ = [
    "RequestFacts",
    "ResponseFacts",
    "StreamReader",
    "WireApi",
    "WireToolCall",
    "api_of",
    "parse_request",
    "parse_response",
]
