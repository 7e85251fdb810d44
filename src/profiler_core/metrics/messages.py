"""Messages in one shape: OpenAI, Anthropic and LangChain messages -> OpenAI-format ``Message``.

:func:`normalize_messages` turns a conversation into OpenAI-format
:class:`Message` objects (tool-call arguments as a JSON *string*); vendor
extras (thinking, usage, server tool results) go to each message's
``metadata``. The shape of each message is detected unless forced.

See docs/normalization.md for every mapping, with examples.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from ..errors import ValidationError
from ..model.record import Record
from .payload import as_mapping, format_keys

__all__ = [
    "Message",
    "MessageProvider",
    "ToolCall",
    "ToolCallFunction",
    "normalize_message",
    "normalize_messages",
]

MessageProvider = Literal["openai", "anthropic", "langchain"]
Role = Literal["user", "assistant", "system", "tool"]


def _check_name(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"function.name: expected a non-empty string, got {value!r}")


def _check_arguments(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str):
        raise ValueError(
            f"function.arguments: expected a JSON string, got {type(value).__name__}"
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolCallFunction(Record):
    """The function part of an OpenAI tool call: a name and JSON-string arguments."""

    name: str = attrs.field(validator=_check_name)
    arguments: str = attrs.field(default="{}", validator=_check_arguments)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ToolCall(Record):
    """One tool call in OpenAI format."""

    id: str
    type: Literal["function"] = "function"
    function: ToolCallFunction

    def to_dict(self) -> dict[str, Any]:
        """OpenAI's JSON form."""
        return {
            "id": self.id,
            "type": self.type,
            "function": {
                "name": self.function.name,
                "arguments": self.function.arguments,
            },
        }


_ROLES = ("user", "assistant", "system", "tool")


def _check_role(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value not in _ROLES:
        raise ValueError(f"role: expected one of {', '.join(_ROLES)}, got {value!r}")


def _check_content(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    ok = (
        value is None
        or isinstance(value, str)
        or (
            isinstance(value, tuple)
            and all(
                isinstance(p, dict) and isinstance(p.get("type"), str) for p in value
            )
        )
    )
    if not ok:
        raise ValueError(
            f"content: expected a string, a list of typed content parts or null, got {value!r:.80}"
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Message(Record):
    """One chat message in OpenAI format; provider extras live in ``metadata``."""

    role: Role = attrs.field(validator=_check_role)
    content: str | tuple[dict[str, Any], ...] | None = attrs.field(
        default=None, validator=_check_content
    )
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=tuple)
    tool_call_id: str | None = None
    name: str | None = None
    id: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """OpenAI's JSON form (snake_case; empty optional fields left out)."""
        out: dict[str, Any] = {
            "role": self.role,
            "content": list(self.content)
            if isinstance(self.content, tuple)
            else self.content,
        }
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        for key in ("tool_call_id", "name", "id"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.metadata:
            out["metadata"] = self.metadata
        return out


def normalize_messages(
    raw: Any, provider: str | None = None, *, where: str = "messages"
) -> list[Message]:
    """Turn OpenAI, Anthropic or LangChain messages into OpenAI-format Messages.

    ``raw`` is a list of messages, or an object holding one (``{"system": ...,
    "messages": [...]}`` as in an Anthropic request, or a single Anthropic
    response). Each message's shape is detected unless ``provider`` ("openai",
    "anthropic", "langchain") forces one.
    """
    if provider is not None and provider.lower() not in _MESSAGE_PARSERS:
        raise ValidationError(
            f"{where}: unknown message provider {provider!r}; expected one of "
            f"{sorted(_MESSAGE_PARSERS)}"
        )
    prefix: list[Message] = []
    data = as_mapping(raw) if not isinstance(raw, (list, tuple)) else None
    if data is not None:
        if data.get("type") == "message" and "content" in data:
            raw = [data]  # one Anthropic response
        elif isinstance(data.get("messages"), (list, tuple)):
            system = data.get("system")
            if system is not None:
                prefix.append(_system_message(system, f"{where}.system"))
            where = f"{where}.messages"
            raw = data["messages"]
        else:
            raise ValidationError(
                f"{where}: expected a list of messages (or an object with "
                f"'messages'), got keys {format_keys(set(data))}"
            )
    if not isinstance(raw, (list, tuple)):
        raise ValidationError(
            f"{where}: expected a list of messages, got {type(raw).__name__}"
        )
    out = prefix
    for i, item in enumerate(raw):
        here = f"{where}[{i}]"
        message = as_mapping(item)
        if message is None:
            raise ValidationError(
                f"{here}: expected a message object, got {type(item).__name__}"
            )
        kind = (
            provider.lower() if provider is not None else _detect_message(message, here)
        )
        out.extend(_MESSAGE_PARSERS[kind](message, here, i))
    return out


def normalize_message(
    raw: Any, provider: str | None = None, *, where: str = "message"
) -> list[Message]:
    """One message object (as :func:`normalize_messages` reads each item), with errors
    named from ``where`` itself.

    For a file that stores one message per record (``$.message`` of a Claude
    Code line): a problem reads ``$.message.content[0].is_error``, not as if
    the message were the first item of a list.
    """
    if provider is not None and provider.lower() not in _MESSAGE_PARSERS:
        raise ValidationError(
            f"{where}: unknown message provider {provider!r}; expected one of "
            f"{sorted(_MESSAGE_PARSERS)}"
        )
    message = as_mapping(raw)
    if message is None:
        raise ValidationError(
            f"{where}: expected a message object, got {type(raw).__name__}"
        )
    kind = provider.lower() if provider is not None else _detect_message(message, where)
    return list(_MESSAGE_PARSERS[kind](message, where, 0))


_ANTHROPIC_BLOCKS = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "document",
        "web_search_tool_result",
    }
)
_LANGCHAIN_TYPES = {
    "human": "user",
    "HumanMessageChunk": "user",
    "ai": "assistant",
    "AIMessageChunk": "assistant",
    "tool": "tool",
    "ToolMessageChunk": "tool",
    "system": "system",
    "SystemMessageChunk": "system",
}


def _detect_message(message: Mapping[str, Any], where: str) -> str:
    if message.get("type") in _LANGCHAIN_TYPES or (
        "data" in message and message.get("type") in _LANGCHAIN_TYPES
    ):
        return "langchain"
    if "role" in message:
        content = message.get("content")
        if isinstance(content, (list, tuple)) and any(
            _block_type(b) in _ANTHROPIC_BLOCKS or _is_anthropic_image(b)
            for b in content
        ):
            return "anthropic"
        calls = message.get("tool_calls")
        if isinstance(calls, (list, tuple)) and any(
            isinstance(c, Mapping) and "args" in c for c in calls
        ):
            return "langchain"
        return "openai"
    if message.get("type") == "message":
        return "anthropic"
    raise ValidationError(
        f"{where}: unrecognised message keys {format_keys(set(message))}; "
        "expected an OpenAI message (role, content), "
        "an Anthropic message (role, content blocks) or a LangChain message "
        "(type: human/ai/tool/system)"
    )


def _block_type(block: Any) -> Any:
    return block.get("type") if isinstance(block, Mapping) else None


def _is_anthropic_image(block: Any) -> bool:
    return _block_type(block) == "image" and isinstance(block.get("source"), Mapping)


def _build(where: str, **fields: Any) -> Message:
    try:
        return Message(**fields)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{where}.{exc}") from None


def _str_or_none(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValidationError(f"{where}: expected a string, got {type(value).__name__}")


def _required_str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValidationError(f"{where}: expected a non-empty string, got {value!r}")
    return value


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValidationError(
            f"{where}: expected an object, got {type(value).__name__}"
        )
    return value


def _list(value: Any, where: str) -> list[Any] | tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise ValidationError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _arguments(value: Any, where: str) -> str:
    """Tool-call arguments as a JSON string; an already-parsed object is serialised."""
    if isinstance(value, str):
        return value  # kept as the model wrote it, even if it is not valid JSON
    if value is None:
        return "{}"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        raise ValidationError(
            f"{where}: tool-call arguments are not JSON-serialisable ({type(value).__name__})"
        ) from None


def _system_message(system: Any, where: str) -> Message:
    if isinstance(system, str):
        return Message(role="system", content=system)
    if isinstance(system, (list, tuple)):
        return Message(
            role="system",
            content=_text_or_parts(
                [_anthropic_part(b, f"{where}[{j}]") for j, b in enumerate(system)]
            ),
        )
    raise ValidationError(
        f"{where}: expected a string or a list of text blocks, got {type(system).__name__}"
    )


def _text_or_parts(
    parts: list[dict[str, Any]],
) -> str | tuple[dict[str, Any], ...] | None:
    """One text part collapses to a string; none is null; several stay a list of parts."""
    if not parts:
        return None
    if len(parts) == 1 and parts[0].get("type") == "text":
        return parts[0]["text"]
    return tuple(parts)


def _content(value: Any, where: str) -> str | tuple[dict[str, Any], ...] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        parts = []
        for j, part in enumerate(value):
            if isinstance(part, str):
                part = {
                    "type": "text",
                    "text": part,
                }  # LangChain allows bare strings in content lists
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                raise ValidationError(
                    f"{where}[{j}]: expected a content part with a 'type', got {part!r:.80}"
                )
            parts.append(dict(part))
        return tuple(parts)
    raise ValidationError(
        f"{where}: expected a string, a list of content parts or null, got {type(value).__name__}"
    )


# OpenAI ----------------------------------------------------------------------

_OPENAI_KEYS = frozenset(
    {"role", "content", "tool_calls", "tool_call_id", "name", "id", "metadata"}
)


def _openai_message(
    message: Mapping[str, Any], where: str, index: int
) -> list[Message]:
    role = message.get("role")
    metadata = dict(_object(message.get("metadata") or {}, f"{where}.metadata"))
    if role == "developer":
        role, metadata["original_role"] = "system", "developer"
    if role not in _ROLES:
        raise ValidationError(
            f"{where}.role: expected one of {', '.join(_ROLES)} (or developer), got {role!r}"
        )
    # Vendor extras (refusal, audio, reasoning_content...) are kept, not dropped.
    metadata.update({k: v for k, v in message.items() if k not in _OPENAI_KEYS})
    calls = []
    raw_calls = _list(message.get("tool_calls") or (), f"{where}.tool_calls")
    for j, call in enumerate(raw_calls):
        here = f"{where}.tool_calls[{j}]"
        call = as_mapping(call)
        function = as_mapping(call.get("function")) if call is not None else None
        if call is None or function is None:
            raise ValidationError(
                f"{here}: expected {{id, type: function, function: {{name, arguments}}}}"
            )
        if call.get("type", "function") != "function":
            raise ValidationError(
                f"{here}.type: expected 'function', got {call.get('type')!r}"
            )
        calls.append(
            ToolCall(
                id=_required_str(call.get("id"), f"{here}.id"),
                function=ToolCallFunction(
                    name=_required_str(function.get("name"), f"{here}.function.name"),
                    arguments=_arguments(
                        function.get("arguments"), f"{here}.function.arguments"
                    ),
                ),
            )
        )
    if role == "tool":
        _required_str(message.get("tool_call_id"), f"{where}.tool_call_id")
    return [
        _build(
            where,
            role=role,
            content=_content(message.get("content"), f"{where}.content"),
            tool_calls=calls,
            tool_call_id=_str_or_none(
                message.get("tool_call_id"), f"{where}.tool_call_id"
            ),
            name=_str_or_none(message.get("name"), f"{where}.name"),
            id=_str_or_none(message.get("id"), f"{where}.id"),
            metadata=metadata,
        )
    ]


# Anthropic -------------------------------------------------------------------


def _anthropic_part(block: Any, where: str) -> dict[str, Any]:
    """A non-tool Anthropic content block as an OpenAI content part."""
    kind = _block_type(block)
    if kind == "text":
        text = block.get("text")
        if not isinstance(text, str):
            raise ValidationError(
                f"{where}.text: expected a string, got {type(text).__name__}"
            )
        return {"type": "text", "text": text}
    if kind == "image":
        source = block.get("source")
        if isinstance(source, Mapping) and source.get("type") == "base64":
            url = f"data:{source.get('media_type', 'application/octet-stream')};base64,{source.get('data', '')}"
            return {"type": "image_url", "image_url": {"url": url}}
        if isinstance(source, Mapping) and source.get("type") == "url":
            return {"type": "image_url", "image_url": {"url": source.get("url")}}
        raise ValidationError(
            f"{where}.source: expected a base64 or url image source, got {source!r:.80}"
        )
    if kind == "document":
        return dict(block)  # no OpenAI equivalent worth guessing at; kept verbatim
    raise ValidationError(
        f"{where}.type: unrecognised content block {kind!r}; expected text, "
        "image, document, thinking, "
        "redacted_thinking, tool_use, server_tool_use or tool_result"
    )


def _tool_result_content(
    value: Any, where: str
) -> str | tuple[dict[str, Any], ...] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        parts = [_anthropic_part(b, f"{where}[{j}]") for j, b in enumerate(value)]
        if parts and all(p["type"] == "text" for p in parts):
            return "\n".join(p["text"] for p in parts)
        return _text_or_parts(parts)
    raise ValidationError(
        f"{where}: expected a string or a list of content blocks, got {type(value).__name__}"
    )


def _anthropic_message(
    message: Mapping[str, Any], where: str, index: int
) -> list[Message]:
    role = message.get("role")
    if role not in ("user", "assistant", "system"):
        raise ValidationError(
            f"{where}.role: expected user, assistant or system, got {role!r}"
        )
    metadata: dict[str, Any] = {
        k: message[k]
        for k in ("model", "stop_reason", "stop_sequence", "usage")
        if message.get(k) is not None
    }
    content = message.get("content")
    if content is None or isinstance(content, str):
        return [
            _build(
                where,
                role=role,
                content=content,
                id=_str_or_none(message.get("id"), f"{where}.id"),
                metadata=metadata,
            )
        ]
    if not isinstance(content, (list, tuple)):
        raise ValidationError(
            f"{where}.content: expected a string or a list of content blocks, "
            f"got {type(content).__name__}"
        )
    tool_messages, parts, calls = _anthropic_blocks(
        content, f"{where}.content", metadata
    )
    if calls and role != "assistant":
        raise ValidationError(
            f"{where}: tool_use blocks are only valid in assistant messages, "
            f"found in a {role} message"
        )
    out = tool_messages  # tool results first: OpenAI wants them right after the assistant's calls
    if parts or calls or not tool_messages:
        out.append(
            _build(
                where,
                role=role,
                content=_text_or_parts(parts),
                tool_calls=calls,
                id=_str_or_none(message.get("id"), f"{where}.id"),
                metadata=metadata,
            )
        )
    return out


def _anthropic_blocks(
    content: list[Any] | tuple[Any, ...], where: str, metadata: dict[str, Any]
) -> tuple[list[Message], list[dict[str, Any]], list[ToolCall]]:
    """Split content blocks into tool-result messages, content parts and tool calls; the
    rest goes to ``metadata``."""
    tool_messages: list[Message] = []
    parts: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    thinking: list[str] = []
    redacted = 0
    for j, block in enumerate(content):
        here = f"{where}[{j}]"
        kind = _block_type(block)
        if kind in ("tool_use", "server_tool_use"):
            calls.append(_anthropic_call(block, here))
        elif kind == "tool_result":
            tool_messages.append(_anthropic_tool_result(block, here))
        elif kind == "thinking":
            thinking.append(_thinking_text(block, here))
        elif kind == "redacted_thinking":
            redacted += 1
        elif kind == "web_search_tool_result":
            metadata.setdefault("server_tool_results", []).append(dict(block))
        else:
            parts.append(_anthropic_part(block, here))
    if thinking:
        metadata["thinking"] = thinking
    if redacted:
        metadata["redacted_thinking"] = redacted
    return tool_messages, parts, calls


def _anthropic_call(block: Mapping[str, Any], where: str) -> ToolCall:
    """A ``tool_use`` (or ``server_tool_use``) block as an OpenAI tool call."""
    return ToolCall(
        id=_required_str(block.get("id"), f"{where}.id"),
        function=ToolCallFunction(
            name=_required_str(block.get("name"), f"{where}.name"),
            arguments=_arguments(block.get("input", {}), f"{where}.input"),
        ),
    )


def _anthropic_tool_result(block: Mapping[str, Any], where: str) -> Message:
    """A ``tool_result`` block as a ``role: "tool"`` message."""
    # null (written by tools that re-save a transcript) is an absent flag, like a missing one.
    is_error = False if block.get("is_error") is None else block["is_error"]
    if not isinstance(is_error, bool):
        raise ValidationError(
            f"{where}.is_error: expected true or false, got {is_error!r}"
        )
    return Message(
        role="tool",
        tool_call_id=_required_str(block.get("tool_use_id"), f"{where}.tool_use_id"),
        content=_tool_result_content(block.get("content"), f"{where}.content"),
        metadata={"is_error": is_error},
    )


def _thinking_text(block: Mapping[str, Any], where: str) -> str:
    text = block.get("thinking")
    if not isinstance(text, str):
        raise ValidationError(
            f"{where}.thinking: expected a string, got {type(text).__name__}"
        )
    return text


# LangChain -------------------------------------------------------------------

#: Roles of LangChain's role dicts that OpenAI spells differently.
_LANGCHAIN_ROLES = {"human": "user", "ai": "assistant", "developer": "system"}
#: Message fields kept in ``metadata`` under their own names when not empty.
_LANGCHAIN_METADATA = (
    "additional_kwargs",
    "response_metadata",
    "usage_metadata",
    "artifact",
)


def _langchain_message(
    message: Mapping[str, Any], where: str, index: int
) -> list[Message]:
    if "data" in message and isinstance(message.get("data"), Mapping):
        # messages_to_dict() form: {"type": ..., "data": {...}}
        message = {
            **message["data"],
            "type": message["data"].get("type", message.get("type")),
        }
    role = _langchain_role(message, where)
    metadata: dict[str, Any] = {
        key: message[key] for key in _LANGCHAIN_METADATA if message.get(key)
    }
    content = _langchain_content(
        message.get("content"), role, metadata, f"{where}.content"
    )
    calls = _langchain_calls(message, where, index)
    invalid = message.get("invalid_tool_calls")
    if invalid:
        metadata["invalid_tool_calls"] = list(
            _list(invalid, f"{where}.invalid_tool_calls")
        )
    if role == "tool":
        metadata["is_error"] = message.get("status") == "error"
        _required_str(message.get("tool_call_id"), f"{where}.tool_call_id")
    return [
        _build(
            where,
            role=role,
            content=content,
            tool_calls=calls,
            tool_call_id=_str_or_none(
                message.get("tool_call_id"), f"{where}.tool_call_id"
            ),
            name=_str_or_none(message.get("name"), f"{where}.name"),
            id=_str_or_none(message.get("id"), f"{where}.id"),
            metadata=metadata,
        )
    ]


def _langchain_role(message: Mapping[str, Any], where: str) -> str:
    """The OpenAI role of a LangChain message: from its ``type``, else from a role
    dict's ``role``."""
    kind = message.get("type")
    if kind in _LANGCHAIN_TYPES:
        role = _LANGCHAIN_TYPES[kind]
    elif message.get("role") is not None:
        role = _LANGCHAIN_ROLES.get(message["role"], message["role"])
    else:
        raise ValidationError(
            f"{where}.type: expected human, ai, tool or system, got {kind!r}"
        )
    if role not in _ROLES:
        raise ValidationError(
            f"{where}: unsupported LangChain message type {kind or message.get('role')!r}"
        )
    return role


def _langchain_content(
    value: Any, role: str, metadata: dict[str, Any], where: str
) -> str | tuple[dict[str, Any], ...] | None:
    """The content, without the blocks langchain-anthropic repeats elsewhere (thinking
    goes to ``metadata``)."""
    content = _content(value, where)
    if not isinstance(content, tuple):
        return content
    # langchain-anthropic keeps tool_use/thinking blocks in content as well as in tool_calls.
    kept = []
    for part in content:
        if part["type"] == "tool_use":
            continue
        if part["type"] == "thinking":
            metadata.setdefault("thinking", []).append(part.get("thinking", ""))
            continue
        kept.append(part)
    joined = _text_or_parts(kept)
    if joined is None and role != "assistant":
        return ""
    return joined


def _langchain_calls(
    message: Mapping[str, Any], where: str, index: int
) -> list[ToolCall]:
    here = f"{where}.tool_calls"
    raw_calls = message.get("tool_calls") or ()
    if not raw_calls:
        # Older LangChain kept OpenAI-format calls only in additional_kwargs.
        extra = _object(
            message.get("additional_kwargs") or {}, f"{where}.additional_kwargs"
        )
        here = f"{where}.additional_kwargs.tool_calls"
        raw_calls = extra.get("tool_calls") or ()
    raw_calls = _list(raw_calls, here)
    return [
        _langchain_call(call, f"{here}[{j}]", f"call_{index}_{j}")
        for j, call in enumerate(raw_calls)
    ]


def _langchain_call(call: Any, where: str, fallback_id: str) -> ToolCall:
    """One LangChain call (``{name, args, id}``) or OpenAI-format call (``{id, function}``)."""
    if not isinstance(call, Mapping):
        raise ValidationError(
            f"{where}: expected a tool call object, got {type(call).__name__}"
        )
    function = (
        call.get("function") if isinstance(call.get("function"), Mapping) else None
    )
    name = function.get("name") if function else call.get("name")
    args = function.get("arguments") if function else call.get("args")
    return ToolCall(
        id=call.get("id") or fallback_id,  # some integrations leave ids empty
        function=ToolCallFunction(
            name=_required_str(name, f"{where}.name"),
            arguments=_arguments(args, f"{where}.args"),
        ),
    )


_MESSAGE_PARSERS: dict[str, Callable[[Mapping[str, Any], str, int], list[Message]]] = {
    "openai": _openai_message,
    "anthropic": _anthropic_message,
    "langchain": _langchain_message,
}
