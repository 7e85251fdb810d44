"""Provider payload normalization: token usage and messages in one shape.

Vendors count tokens differently: OpenAI's ``prompt_tokens`` *include* cached
tokens and ``completion_tokens`` *include* reasoning tokens, Anthropic's
``input_tokens`` *exclude* cache reads and writes, LangChain's
``usage_metadata`` includes both. :func:`normalize_usage` maps each onto a
:class:`TokenBreakdown` whose ``input`` is non-cached input and ``output`` is
non-reasoning output, so nothing is counted twice. :func:`normalize_messages`
turns OpenAI, Anthropic and LangChain messages into OpenAI-format
:class:`Message` objects (tool-call arguments as a JSON *string*).

See docs/normalization.md for every mapping, with examples.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from ..errors import ValidationError
from ..model import TokenBreakdown
from ..model._validators import MAX_COUNT
from ..util.textcut import shown

UsageProvider = Literal["openai", "openai-responses", "anthropic", "langchain", "plain"]
MessageProvider = Literal["openai", "anthropic", "langchain"]
Role = Literal["user", "assistant", "system", "tool"]

_EXPECTED_USAGE = "expected OpenAI, OpenAI Responses, Anthropic, LangChain, plain or TokenBreakdown usage"


# -- the seed's TokensUsage ---------------------------------------------------


def _count_field(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"{attribute.name}: expected an integer >= 0, got {value!r}")


@attrs.frozen(kw_only=True)
class TokensUsage:
    """The seed's simple usage view: input, output and total tokens.

    ``input_tokens`` counts every prompt-side token (non-cached input, cache
    reads and cache writes), ``output_tokens`` every generated token (output and
    reasoning), so ``total_tokens`` equals ``TokenBreakdown.total``.
    """

    input_tokens: int = attrs.field(default=0, validator=_count_field)
    output_tokens: int = attrs.field(default=0, validator=_count_field)
    total_tokens: int = attrs.field(default=None, validator=_count_field)

    def __attrs_post_init__(self) -> None:
        if self.total_tokens is None:
            object.__setattr__(self, "total_tokens", self.input_tokens + self.output_tokens)

    @classmethod
    def from_breakdown(cls, tokens: TokenBreakdown) -> TokensUsage:
        """The TokensUsage view of a TokenBreakdown."""
        return cls(
            input_tokens=tokens.input + tokens.cache_read + tokens.cache_write,
            output_tokens=tokens.output + tokens.reasoning,
            total_tokens=tokens.total,
        )

    def to_dict(self) -> dict[str, int]:
        """The seed's JSON form (snake_case keys)."""
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "total_tokens": self.total_tokens}


def tokens_usage(tokens: TokenBreakdown) -> TokensUsage:
    """The seed's ``TokensUsage`` view of a TokenBreakdown."""
    return TokensUsage.from_breakdown(tokens)


# -- usage ----------------------------------------------------------------------

_BREAKDOWN_KEYS = frozenset({"input", "output", "reasoning", "cacheRead", "cacheWrite", "total", "active"})
_PLAIN_KEYS = frozenset({"input_tokens", "output_tokens", "total_tokens"})
_OPENAI_CHAT_MARKERS = frozenset({"prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"})
_RESPONSES_MARKERS = frozenset({"input_tokens_details", "output_tokens_details"})
_LANGCHAIN_MARKERS = frozenset({"input_token_details", "output_token_details"})
_ANTHROPIC_MARKERS = frozenset(
    {"cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation", "server_tool_use", "service_tier"}
)


def normalize_usage(raw: Any, provider: str | None = None, *, where: str = "usage") -> TokenBreakdown:
    """Turn a provider's usage payload into a TokenBreakdown (shape auto-detected unless ``provider`` is given).

    ``provider`` is one of "openai", "openai-responses", "anthropic",
    "langchain" (or "langgraph") and "plain". ``where`` prefixes error messages
    (e.g. a file name). A whole response holding ``usage`` or
    ``usage_metadata`` is accepted too.
    """
    if isinstance(raw, TokenBreakdown):
        return raw
    if isinstance(raw, TokensUsage):
        return TokenBreakdown(input=raw.input_tokens, output=raw.output_tokens)
    data = _as_mapping(raw)
    if data is None:
        raise ValidationError(f"{where}: expected a usage object, got {type(raw).__name__}; {_EXPECTED_USAGE}")
    data, where = _unwrap_usage(data, where)
    if provider is None:
        kind = _detect_usage(data, where)
    else:
        alias = _USAGE_ALIASES.get(provider.lower())
        if alias is None:
            raise ValidationError(f"{where}: unknown usage provider {provider!r}; expected one of {sorted(_USAGE_ALIASES)}")
        kind = alias
    return _USAGE_PARSERS[kind](data, where)


def _unwrap_usage(data: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any], str]:
    # A full response (OpenAI/Anthropic: "usage"; LangChain AIMessage: "usage_metadata") carries usage inside.
    for key in ("usage", "usage_metadata"):
        inner = data.get(key)
        if isinstance(inner, Mapping) and not (set(data) & (_PLAIN_KEYS | _OPENAI_CHAT_MARKERS)):
            return inner, f"{where}.{key}"
    return data, where


def _detect_usage(data: Mapping[str, Any], where: str) -> str:
    keys = set(data)
    if keys & _OPENAI_CHAT_MARKERS:
        return "openai"
    if keys & _RESPONSES_MARKERS:
        return "openai-responses"
    if keys & _LANGCHAIN_MARKERS:
        return "langchain"
    if keys & _ANTHROPIC_MARKERS:
        return "anthropic"
    if keys and keys <= _BREAKDOWN_KEYS:
        return "breakdown"
    if keys & {"input_tokens", "output_tokens"}:
        unknown = keys - _PLAIN_KEYS
        if not unknown:
            return "plain"
        raise ValidationError(f"{where}: unrecognised keys {_fmt_keys(unknown)}; {_EXPECTED_USAGE}")
    if not keys:
        raise ValidationError(f"{where}: empty usage object; {_EXPECTED_USAGE}")
    raise ValidationError(f"{where}: unrecognised keys {_fmt_keys(keys)}; {_EXPECTED_USAGE}")


def _fmt_keys(keys: set[str]) -> str:
    return "{" + ", ".join(repr(k) for k in sorted(keys, key=str)) + "}"


def _count(data: Mapping[str, Any] | None, key: str, where: str, *, required: bool = False) -> int:
    """A token count: absent or null is 0 (unless required); anything but a whole number >= 0 is an error."""
    value = None if data is None else data.get(key)
    if value is None:
        if required:
            raise ValidationError(f"{where}.{key}: missing; expected a token count")
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise ValidationError(f"{where}.{key}: expected a token count (integer >= 0, at most 2^53), got {shown(value)}")
    return value


def _details(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    found = _as_mapping(value)
    if found is None:
        raise ValidationError(f"{where}.{key}: expected an object, got {type(value).__name__}")
    return found


def _part(whole: int, part: int, whole_name: str, part_name: str, where: str) -> int:
    """``whole - part``, refusing a part larger than the whole it is said to be included in."""
    if part > whole:
        raise ValidationError(f"{where}: {part_name} ({part}) exceeds {whole_name} ({whole}) that should include it")
    return whole - part


def _check_total(data: Mapping[str, Any], expected: int, parts: str, where: str) -> None:
    # A total that disagrees means the payload is not counted the way we assume: refuse to guess.
    if data.get("total_tokens") is None:
        return
    total = _count(data, "total_tokens", where)
    if total != expected:
        raise ValidationError(f"{where}.total_tokens: {total} != {parts} ({shown(expected)}); the usage is inconsistent")


def _openai_chat(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    prompt = _count(data, "prompt_tokens", where, required=True)
    completion = _count(data, "completion_tokens", where, required=True)
    _check_total(data, prompt + completion, "prompt_tokens + completion_tokens", where)
    cached = _count(_details(data, "prompt_tokens_details", where), "cached_tokens", f"{where}.prompt_tokens_details")
    reasoning = _count(
        _details(data, "completion_tokens_details", where), "reasoning_tokens", f"{where}.completion_tokens_details"
    )
    return TokenBreakdown(
        input=_part(prompt, cached, "prompt_tokens", "prompt_tokens_details.cached_tokens", where),
        cache_read=cached,
        output=_part(completion, reasoning, "completion_tokens", "completion_tokens_details.reasoning_tokens", where),
        reasoning=reasoning,
    )


def _openai_responses(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    input_ = _count(data, "input_tokens", where, required=True)
    output = _count(data, "output_tokens", where, required=True)
    _check_total(data, input_ + output, "input_tokens + output_tokens", where)
    cached = _count(_details(data, "input_tokens_details", where), "cached_tokens", f"{where}.input_tokens_details")
    reasoning = _count(
        _details(data, "output_tokens_details", where), "reasoning_tokens", f"{where}.output_tokens_details"
    )
    return TokenBreakdown(
        input=_part(input_, cached, "input_tokens", "input_tokens_details.cached_tokens", where),
        cache_read=cached,
        output=_part(output, reasoning, "output_tokens", "output_tokens_details.reasoning_tokens", where),
        reasoning=reasoning,
    )


def _anthropic(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    cache_write = _count(data, "cache_creation_input_tokens", where)
    if "cache_creation_input_tokens" not in data:
        # Newer payloads may only carry the per-TTL split.
        split = _details(data, "cache_creation", where)
        cache_write = sum(
            _count(split, k, f"{where}.cache_creation") for k in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
        )
    # Anthropic's input_tokens already exclude cache reads and writes; thinking is billed inside output_tokens.
    return TokenBreakdown(
        input=_count(data, "input_tokens", where, required=True),
        output=_count(data, "output_tokens", where, required=True),
        cache_read=_count(data, "cache_read_input_tokens", where),
        cache_write=cache_write,
    )


def _langchain(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    input_ = _count(data, "input_tokens", where, required=True)
    output = _count(data, "output_tokens", where, required=True)
    _check_total(data, input_ + output, "input_tokens + output_tokens", where)
    in_details = _details(data, "input_token_details", where)
    out_details = _details(data, "output_token_details", where)
    in_where, out_where = f"{where}.input_token_details", f"{where}.output_token_details"
    cache_read = _count(in_details, "cache_read", in_where)
    cache_write = _count(in_details, "cache_creation", in_where)
    if not cache_write:
        # langchain-anthropic may report cache writes only split by TTL.
        cache_write = sum(
            _count(in_details, k, in_where) for k in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
        )
    reasoning = _count(out_details, "reasoning", out_where)
    return TokenBreakdown(
        input=_part(input_, cache_read + cache_write, "input_tokens", "cache_read + cache_creation", where),
        cache_read=cache_read,
        cache_write=cache_write,
        output=_part(output, reasoning, "output_tokens", "output_token_details.reasoning", where),
        reasoning=reasoning,
    )


def _plain(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    input_ = _count(data, "input_tokens", where, required=True)
    output = _count(data, "output_tokens", where, required=True)
    _check_total(data, input_ + output, "input_tokens + output_tokens", where)
    return TokenBreakdown(input=input_, output=output)


def _breakdown(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    from ..storage.serde import structure

    given = structure(dict(data), TokenBreakdown, source=where)
    derived = TokenBreakdown(
        input=given.input,
        output=given.output,
        reasoning=given.reasoning,
        cache_read=given.cache_read,
        cache_write=given.cache_write,
    )
    for key in ("total", "active"):
        if getattr(given, key) != getattr(derived, key):
            raise ValidationError(
                f"{where}.{key}: {getattr(given, key)} != {getattr(derived, key)} derived from the other counts"
            )
    return given


_USAGE_PARSERS: dict[str, Callable[[Mapping[str, Any], str], TokenBreakdown]] = {
    "openai": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "langchain": _langchain,
    "plain": _plain,
    "breakdown": _breakdown,
}
_USAGE_ALIASES = {
    "openai": "openai",
    "openai-chat": "openai",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "langchain": "langchain",
    "langgraph": "langchain",
    "plain": "plain",
    "breakdown": "breakdown",
}


def _as_mapping(value: Any) -> Mapping[str, Any] | None:
    """A mapping view of a dict or an SDK object (pydantic ``model_dump``, ``to_dict``)."""
    if isinstance(value, Mapping):
        return value
    for method in ("model_dump", "to_dict", "dict"):
        fn = getattr(value, method, None)
        if callable(fn):
            try:
                dumped = fn()
            except TypeError:
                continue
            if isinstance(dumped, Mapping):
                return dumped
    return None


# -- messages -------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ToolCallFunction:
    """The function part of an OpenAI tool call: a name and JSON-string arguments."""

    name: str = attrs.field()
    arguments: str = attrs.field(default="{}")

    @name.validator
    def _check_name(self, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, str) or not value:
            raise ValueError(f"function.name: expected a non-empty string, got {value!r}")

    @arguments.validator
    def _check_arguments(self, attribute: attrs.Attribute, value: Any) -> None:
        if not isinstance(value, str):
            raise ValueError(f"function.arguments: expected a JSON string, got {type(value).__name__}")


@attrs.frozen(kw_only=True)
class ToolCall:
    """One tool call in OpenAI format."""

    id: str
    type: Literal["function"] = "function"
    function: ToolCallFunction

    def to_dict(self) -> dict[str, Any]:
        """OpenAI's JSON form."""
        return {"id": self.id, "type": self.type, "function": {"name": self.function.name, "arguments": self.function.arguments}}


_ROLES = ("user", "assistant", "system", "tool")


@attrs.frozen(kw_only=True)
class Message:
    """One chat message in OpenAI format; provider extras live in ``metadata``."""

    role: Role = attrs.field()
    content: str | tuple[dict[str, Any], ...] | None = attrs.field(default=None)
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=tuple)
    tool_call_id: str | None = None
    name: str | None = None
    id: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)

    @role.validator
    def _check_role(self, attribute: attrs.Attribute, value: Any) -> None:
        if value not in _ROLES:
            raise ValueError(f"role: expected one of {', '.join(_ROLES)}, got {value!r}")

    @content.validator
    def _check_content(self, attribute: attrs.Attribute, value: Any) -> None:
        ok = value is None or isinstance(value, str) or (
            isinstance(value, tuple) and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in value)
        )
        if not ok:
            raise ValueError(f"content: expected a string, a list of typed content parts or null, got {value!r:.80}")

    def to_dict(self) -> dict[str, Any]:
        """OpenAI's JSON form (snake_case; empty optional fields left out)."""
        out: dict[str, Any] = {"role": self.role, "content": list(self.content) if isinstance(self.content, tuple) else self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        for key in ("tool_call_id", "name", "id"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.metadata:
            out["metadata"] = self.metadata
        return out


def normalize_messages(raw: Any, provider: str | None = None, *, where: str = "messages") -> list[Message]:
    """Turn OpenAI, Anthropic or LangChain messages into OpenAI-format Messages.

    ``raw`` is a list of messages, or an object holding one (``{"system": ...,
    "messages": [...]}`` as in an Anthropic request, or a single Anthropic
    response). Each message's shape is detected unless ``provider`` ("openai",
    "anthropic", "langchain") forces one.
    """
    if provider is not None and provider.lower() not in _MESSAGE_PARSERS:
        raise ValidationError(f"{where}: unknown message provider {provider!r}; expected one of {sorted(_MESSAGE_PARSERS)}")
    prefix: list[Message] = []
    data = _as_mapping(raw) if not isinstance(raw, (list, tuple)) else None
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
                f"{where}: expected a list of messages (or an object with 'messages'), got keys {_fmt_keys(set(data))}"
            )
    if not isinstance(raw, (list, tuple)):
        raise ValidationError(f"{where}: expected a list of messages, got {type(raw).__name__}")
    out = prefix
    for i, item in enumerate(raw):
        here = f"{where}[{i}]"
        message = _as_mapping(item)
        if message is None:
            raise ValidationError(f"{here}: expected a message object, got {type(item).__name__}")
        kind = provider.lower() if provider is not None else _detect_message(message, here)
        out.extend(_MESSAGE_PARSERS[kind](message, here, i))
    return out


def normalize_message(raw: Any, provider: str | None = None, *, where: str = "message") -> list[Message]:
    """One message object (as :func:`normalize_messages` reads each item), with errors named from ``where`` itself.

    For a file that stores one message per record (``$.message`` of a Claude
    Code line): a problem reads ``$.message.content[0].is_error``, not as if
    the message were the first item of a list.
    """
    if provider is not None and provider.lower() not in _MESSAGE_PARSERS:
        raise ValidationError(f"{where}: unknown message provider {provider!r}; expected one of {sorted(_MESSAGE_PARSERS)}")
    message = _as_mapping(raw)
    if message is None:
        raise ValidationError(f"{where}: expected a message object, got {type(raw).__name__}")
    kind = provider.lower() if provider is not None else _detect_message(message, where)
    return list(_MESSAGE_PARSERS[kind](message, where, 0))


_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "document", "web_search_tool_result"}
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
    if message.get("type") in _LANGCHAIN_TYPES or ("data" in message and message.get("type") in _LANGCHAIN_TYPES):
        return "langchain"
    if "role" in message:
        content = message.get("content")
        if isinstance(content, (list, tuple)) and any(_block_type(b) in _ANTHROPIC_BLOCKS or _is_anthropic_image(b) for b in content):
            return "anthropic"
        calls = message.get("tool_calls")
        if isinstance(calls, (list, tuple)) and any(isinstance(c, Mapping) and "args" in c for c in calls):
            return "langchain"
        return "openai"
    if message.get("type") == "message":
        return "anthropic"
    raise ValidationError(
        f"{where}: unrecognised message keys {_fmt_keys(set(message))}; expected an OpenAI message (role, content), "
        "an Anthropic message (role, content blocks) or a LangChain message (type: human/ai/tool/system)"
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


def _arguments(value: Any, where: str) -> str:
    """Tool-call arguments as a JSON string; an already-parsed object is serialised."""
    if isinstance(value, str):
        return value  # kept as the model wrote it, even if it is not valid JSON
    if value is None:
        return "{}"
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        raise ValidationError(f"{where}: tool-call arguments are not JSON-serialisable ({type(value).__name__})") from None


def _system_message(system: Any, where: str) -> Message:
    if isinstance(system, str):
        return Message(role="system", content=system)
    if isinstance(system, (list, tuple)):
        return Message(role="system", content=_text_or_parts([_anthropic_part(b, f"{where}[{j}]") for j, b in enumerate(system)]))
    raise ValidationError(f"{where}: expected a string or a list of text blocks, got {type(system).__name__}")


def _text_or_parts(parts: list[dict[str, Any]]) -> str | tuple[dict[str, Any], ...] | None:
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
                part = {"type": "text", "text": part}  # LangChain allows bare strings in content lists
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                raise ValidationError(f"{where}[{j}]: expected a content part with a 'type', got {part!r:.80}")
            parts.append(dict(part))
        return tuple(parts)
    raise ValidationError(f"{where}: expected a string, a list of content parts or null, got {type(value).__name__}")


# OpenAI ----------------------------------------------------------------------

_OPENAI_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name", "id", "metadata"})


def _openai_message(message: Mapping[str, Any], where: str, index: int) -> list[Message]:
    role = message.get("role")
    metadata = dict(message.get("metadata") or {})
    if role == "developer":
        role, metadata["original_role"] = "system", "developer"
    if role not in _ROLES:
        raise ValidationError(f"{where}.role: expected one of {', '.join(_ROLES)} (or developer), got {role!r}")
    # Vendor extras (refusal, audio, reasoning_content...) are kept, not dropped.
    metadata.update({k: v for k, v in message.items() if k not in _OPENAI_KEYS})
    calls = []
    raw_calls = message.get("tool_calls") or ()
    if not isinstance(raw_calls, (list, tuple)):
        raise ValidationError(f"{where}.tool_calls: expected a list, got {type(raw_calls).__name__}")
    for j, call in enumerate(raw_calls):
        here = f"{where}.tool_calls[{j}]"
        call = _as_mapping(call)
        function = _as_mapping(call.get("function")) if call is not None else None
        if call is None or function is None:
            raise ValidationError(f"{here}: expected {{id, type: function, function: {{name, arguments}}}}")
        if call.get("type", "function") != "function":
            raise ValidationError(f"{here}.type: expected 'function', got {call.get('type')!r}")
        calls.append(
            ToolCall(
                id=_required_str(call.get("id"), f"{here}.id"),
                function=ToolCallFunction(
                    name=_required_str(function.get("name"), f"{here}.function.name"),
                    arguments=_arguments(function.get("arguments"), f"{here}.function.arguments"),
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
            tool_call_id=_str_or_none(message.get("tool_call_id"), f"{where}.tool_call_id"),
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
            raise ValidationError(f"{where}.text: expected a string, got {type(text).__name__}")
        return {"type": "text", "text": text}
    if kind == "image":
        source = block.get("source")
        if isinstance(source, Mapping) and source.get("type") == "base64":
            url = f"data:{source.get('media_type', 'application/octet-stream')};base64,{source.get('data', '')}"
            return {"type": "image_url", "image_url": {"url": url}}
        if isinstance(source, Mapping) and source.get("type") == "url":
            return {"type": "image_url", "image_url": {"url": source.get("url")}}
        raise ValidationError(f"{where}.source: expected a base64 or url image source, got {source!r:.80}")
    if kind == "document":
        return dict(block)  # no OpenAI equivalent worth guessing at; kept verbatim
    raise ValidationError(
        f"{where}.type: unrecognised content block {kind!r}; expected text, image, document, thinking, "
        "redacted_thinking, tool_use, server_tool_use or tool_result"
    )


def _tool_result_content(value: Any, where: str) -> str | tuple[dict[str, Any], ...] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        parts = [_anthropic_part(b, f"{where}[{j}]") for j, b in enumerate(value)]
        if parts and all(p["type"] == "text" for p in parts):
            return "\n".join(p["text"] for p in parts)
        return _text_or_parts(parts)
    raise ValidationError(f"{where}: expected a string or a list of content blocks, got {type(value).__name__}")


def _anthropic_message(message: Mapping[str, Any], where: str, index: int) -> list[Message]:
    role = message.get("role")
    if role not in ("user", "assistant", "system"):
        raise ValidationError(f"{where}.role: expected user, assistant or system, got {role!r}")
    metadata: dict[str, Any] = {
        k: message[k] for k in ("model", "stop_reason", "stop_sequence", "usage") if message.get(k) is not None
    }
    content = message.get("content")
    if content is None or isinstance(content, str):
        return [_build(where, role=role, content=content, id=_str_or_none(message.get("id"), f"{where}.id"), metadata=metadata)]
    if not isinstance(content, (list, tuple)):
        raise ValidationError(f"{where}.content: expected a string or a list of content blocks, got {type(content).__name__}")

    tool_messages: list[Message] = []
    parts: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    thinking: list[str] = []
    redacted = 0
    for j, block in enumerate(content):
        here = f"{where}.content[{j}]"
        kind = _block_type(block)
        if kind in ("tool_use", "server_tool_use"):
            calls.append(
                ToolCall(
                    id=_required_str(block.get("id"), f"{here}.id"),
                    function=ToolCallFunction(
                        name=_required_str(block.get("name"), f"{here}.name"),
                        arguments=_arguments(block.get("input", {}), f"{here}.input"),
                    ),
                )
            )
        elif kind == "tool_result":
            # null (written by tools that re-save a transcript) is an absent flag, like a missing one.
            is_error = False if block.get("is_error") is None else block["is_error"]
            if not isinstance(is_error, bool):
                raise ValidationError(f"{here}.is_error: expected true or false, got {is_error!r}")
            tool_messages.append(
                Message(
                    role="tool",
                    tool_call_id=_required_str(block.get("tool_use_id"), f"{here}.tool_use_id"),
                    content=_tool_result_content(block.get("content"), f"{here}.content"),
                    metadata={"is_error": is_error},
                )
            )
        elif kind == "thinking":
            text = block.get("thinking")
            if not isinstance(text, str):
                raise ValidationError(f"{here}.thinking: expected a string, got {type(text).__name__}")
            thinking.append(text)
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
    if calls and role != "assistant":
        raise ValidationError(f"{where}: tool_use blocks are only valid in assistant messages, found in a {role} message")
    out = list(tool_messages)  # tool results first: OpenAI wants them right after the assistant's calls
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


# LangChain -------------------------------------------------------------------


def _langchain_message(message: Mapping[str, Any], where: str, index: int) -> list[Message]:
    if "data" in message and isinstance(message.get("data"), Mapping):
        # messages_to_dict() form: {"type": ..., "data": {...}}
        kind = message.get("type")
        message = {**message["data"], "type": message["data"].get("type", kind)}
    kind = message.get("type")
    if kind in _LANGCHAIN_TYPES:
        role = _LANGCHAIN_TYPES[kind]
    elif message.get("role") is not None:
        role = {"human": "user", "ai": "assistant", "developer": "system"}.get(message["role"], message["role"])
    else:
        raise ValidationError(f"{where}.type: expected human, ai, tool or system, got {kind!r}")
    if role not in _ROLES:
        raise ValidationError(f"{where}: unsupported LangChain message type {kind or message.get('role')!r}")

    metadata: dict[str, Any] = {}
    for key in ("additional_kwargs", "response_metadata", "usage_metadata", "artifact"):
        value = message.get(key)
        if value:
            metadata[key] = value
    content = _content(message.get("content"), f"{where}.content")
    if isinstance(content, tuple):
        # langchain-anthropic keeps tool_use/thinking blocks in content as well as in tool_calls.
        kept = []
        for part in content:
            if part["type"] == "tool_use":
                continue
            if part["type"] == "thinking":
                metadata.setdefault("thinking", []).append(part.get("thinking", ""))
                continue
            kept.append(part)
        content = _text_or_parts(kept)
        if content is None and role != "assistant":
            content = ""

    calls: list[ToolCall] = []
    raw_calls = message.get("tool_calls") or ()
    if not raw_calls:
        # Older LangChain kept OpenAI-format calls only in additional_kwargs.
        raw_calls = (message.get("additional_kwargs") or {}).get("tool_calls") or ()
    for j, call in enumerate(raw_calls):
        here = f"{where}.tool_calls[{j}]"
        if not isinstance(call, Mapping):
            raise ValidationError(f"{here}: expected a tool call object, got {type(call).__name__}")
        function = call.get("function") if isinstance(call.get("function"), Mapping) else None
        name = function.get("name") if function else call.get("name")
        args = function.get("arguments") if function else call.get("args")
        call_id = call.get("id") or f"call_{index}_{j}"  # some integrations leave ids empty
        calls.append(
            ToolCall(
                id=call_id,
                function=ToolCallFunction(name=_required_str(name, f"{here}.name"), arguments=_arguments(args, f"{here}.args")),
            )
        )
    invalid = message.get("invalid_tool_calls")
    if invalid:
        metadata["invalid_tool_calls"] = list(invalid)
    if role == "tool":
        metadata["is_error"] = message.get("status") == "error"
        _required_str(message.get("tool_call_id"), f"{where}.tool_call_id")
    return [
        _build(
            where,
            role=role,
            content=content,
            tool_calls=calls,
            tool_call_id=_str_or_none(message.get("tool_call_id"), f"{where}.tool_call_id"),
            name=_str_or_none(message.get("name"), f"{where}.name"),
            id=_str_or_none(message.get("id"), f"{where}.id"),
            metadata=metadata,
        )
    ]


_MESSAGE_PARSERS: dict[str, Callable[[Mapping[str, Any], str, int], list[Message]]] = {
    "openai": _openai_message,
    "anthropic": _anthropic_message,
    "langchain": _langchain_message,
}

__all__ = [
    "Message",
    "MessageProvider",
    "TokensUsage",
    "ToolCall",
    "ToolCallFunction",
    "UsageProvider",
    "normalize_message",
    "normalize_messages",
    "normalize_usage",
    "tokens_usage",
]
