"""Token usage in one shape: OpenAI, Anthropic, LangChain and plain payloads -> ``TokenBreakdown``.

Vendors count tokens differently: OpenAI's ``prompt_tokens`` *include* cached
tokens and ``completion_tokens`` *include* reasoning tokens, Anthropic's
``input_tokens`` *exclude* cache reads and writes, LangChain's
``usage_metadata`` includes both. :func:`normalize_usage` maps each onto a
:class:`TokenBreakdown` whose ``input`` is non-cached input and ``output`` is
non-reasoning output, so nothing is counted twice. :class:`TokensUsage` is the
simple three-number view (input, output, total) that connector results carry.

See docs/normalization.md for every mapping, with examples.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from ..errors import ValidationError
from ..model import TokenBreakdown
from ..model._validators import MAX_COUNT
from ..model.record import Record
from ..util.textcut import shown
from .payload import as_mapping, format_keys

__all__ = ["TokensUsage", "UsageProvider", "normalize_usage", "tokens_usage"]

UsageProvider = Literal["openai", "openai-responses", "anthropic", "langchain", "plain"]

_EXPECTED_USAGE = (
    "expected OpenAI, OpenAI Responses, Anthropic, LangChain, plain or "
    "TokenBreakdown usage"
)


# -- TokensUsage: input, output and total ----------------------------------------


def _count_field(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if value is not None and (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 0 <= value <= MAX_COUNT
    ):
        raise ValueError(
            f"{attribute.name}: expected an integer >= 0 (at most 2^53), got {shown(value)}"
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TokensUsage(Record):
    """Input, output and total tokens: the usage a connector result or a stored run carries.

    ``input_tokens`` counts every prompt-side token (non-cached input, cache
    reads and cache writes), ``output_tokens`` every generated token (output and
    reasoning), and ``total_tokens`` is their sum (derived when not given; a
    different one is refused).
    """

    input_tokens: int = attrs.field(default=0, validator=_count_field)
    output_tokens: int = attrs.field(default=0, validator=_count_field)
    total_tokens: int = attrs.field(default=None, validator=_count_field)

    def __attrs_post_init__(self) -> None:
        expected = self.input_tokens + self.output_tokens
        if self.total_tokens is None:
            object.__setattr__(self, "total_tokens", expected)
        elif self.total_tokens != expected:
            # A total that disagrees means the counts are not what they say: refuse
            # rather than pick one.
            raise ValueError(
                f"total_tokens: {self.total_tokens} != input_tokens + output_tokens ({expected})"
            )

    @classmethod
    def from_breakdown(cls, tokens: TokenBreakdown) -> TokensUsage:
        """The TokensUsage view of a TokenBreakdown (the cache and reasoning split is
        summed away)."""
        return cls(
            input_tokens=tokens.input + tokens.cache_read + tokens.cache_write,
            output_tokens=tokens.output + tokens.reasoning,
            total_tokens=tokens.total,
        )

    def to_breakdown(self) -> TokenBreakdown:
        """A TokenBreakdown with these counts as ``input`` and ``output`` (nothing says
        which were cached or reasoning)."""
        return TokenBreakdown(input=self.input_tokens, output=self.output_tokens)

    def to_dict(self) -> dict[str, int]:
        """The JSON form: ``{"input_tokens", "output_tokens", "total_tokens"}`` (read
        back as the plain usage shape)."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }


def tokens_usage(tokens: TokenBreakdown) -> TokensUsage:
    """The ``TokensUsage`` view of a TokenBreakdown:
    ``tokens_usage(row.tokens).to_dict()`` for a connector's JSON."""
    return TokensUsage.from_breakdown(tokens)


# -- normalize_usage ----------------------------------------------------------------

_BREAKDOWN_KEYS = frozenset(
    {"input", "output", "reasoning", "cacheRead", "cacheWrite", "total", "active"}
)
_PLAIN_KEYS = frozenset({"input_tokens", "output_tokens", "total_tokens"})
_OPENAI_CHAT_MARKERS = frozenset(
    {
        "prompt_tokens",
        "completion_tokens",
        "prompt_tokens_details",
        "completion_tokens_details",
    }
)
_RESPONSES_MARKERS = frozenset({"input_tokens_details", "output_tokens_details"})
_LANGCHAIN_MARKERS = frozenset({"input_token_details", "output_token_details"})
_ANTHROPIC_MARKERS = frozenset(
    {
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "cache_creation",
        "server_tool_use",
        "service_tier",
    }
)


def normalize_usage(
    raw: Any, provider: str | None = None, *, where: str = "usage"
) -> TokenBreakdown:
    """Turn a provider's usage payload into a TokenBreakdown (shape auto-detected unless
    ``provider`` is given).

    ``provider`` is one of "openai", "openai-responses", "anthropic",
    "langchain" (or "langgraph") and "plain". ``where`` prefixes error messages
    (e.g. a file name). A whole response holding ``usage`` or
    ``usage_metadata`` is accepted too.
    """
    if isinstance(raw, TokenBreakdown):
        return raw
    if isinstance(raw, TokensUsage):
        return raw.to_breakdown()
    data = as_mapping(raw)
    if data is None:
        raise ValidationError(
            f"{where}: expected a usage object, got {type(raw).__name__}; {_EXPECTED_USAGE}"
        )
    data, where = _unwrap_usage(data, where)
    if provider is None:
        kind = _detect_usage(data, where)
    else:
        alias = _USAGE_ALIASES.get(provider.lower())
        if alias is None:
            raise ValidationError(
                f"{where}: unknown usage provider {provider!r}; expected one of "
                f"{sorted(_USAGE_ALIASES)}"
            )
        kind = alias
    return _USAGE_PARSERS[kind](data, where)


def _unwrap_usage(data: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any], str]:
    # A full response (OpenAI/Anthropic: "usage"; LangChain AIMessage: "usage_metadata")
    # carries usage inside.
    for key in ("usage", "usage_metadata"):
        inner = data.get(key)
        if isinstance(inner, Mapping) and not (
            set(data) & (_PLAIN_KEYS | _OPENAI_CHAT_MARKERS)
        ):
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
        raise ValidationError(
            f"{where}: unrecognised keys {format_keys(unknown)}; {_EXPECTED_USAGE}"
        )
    if not keys:
        raise ValidationError(f"{where}: empty usage object; {_EXPECTED_USAGE}")
    raise ValidationError(
        f"{where}: unrecognised keys {format_keys(keys)}; {_EXPECTED_USAGE}"
    )


def _count(
    data: Mapping[str, Any] | None, key: str, where: str, *, required: bool = False
) -> int:
    """A token count: absent or null is 0 (unless required); anything but a whole number
    >= 0 is an error."""
    value = None if data is None else data.get(key)
    if value is None:
        if required:
            raise ValidationError(f"{where}.{key}: missing; expected a token count")
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 0 <= value <= MAX_COUNT
    ):
        raise ValidationError(
            f"{where}.{key}: expected a token count (integer >= 0, at most "
            f"2^53), got {shown(value)}"
        )
    return value


def _details(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    found = as_mapping(value)
    if found is None:
        raise ValidationError(
            f"{where}.{key}: expected an object, got {type(value).__name__}"
        )
    return found


def _part(whole: int, part: int, whole_name: str, part_name: str, where: str) -> int:
    """``whole - part``, refusing a part larger than the whole it is said to be included in."""
    if part > whole:
        raise ValidationError(
            f"{where}: {part_name} ({part}) exceeds {whole_name} ({whole}) that should include it"
        )
    return whole - part


def _check_total(
    data: Mapping[str, Any], expected: int, parts: str, where: str
) -> None:
    # A total that disagrees means the payload is not counted the way we assume: refuse to guess.
    if data.get("total_tokens") is None:
        return
    total = _count(data, "total_tokens", where)
    if total != expected:
        raise ValidationError(
            f"{where}.total_tokens: {total} != {parts} ({shown(expected)}); the "
            "usage is inconsistent"
        )


def _openai_chat(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    prompt = _count(data, "prompt_tokens", where, required=True)
    completion = _count(data, "completion_tokens", where, required=True)
    _check_total(data, prompt + completion, "prompt_tokens + completion_tokens", where)
    cached = _count(
        _details(data, "prompt_tokens_details", where),
        "cached_tokens",
        f"{where}.prompt_tokens_details",
    )
    reasoning = _count(
        _details(data, "completion_tokens_details", where),
        "reasoning_tokens",
        f"{where}.completion_tokens_details",
    )
    return TokenBreakdown(
        input=_part(
            prompt,
            cached,
            "prompt_tokens",
            "prompt_tokens_details.cached_tokens",
            where,
        ),
        cache_read=cached,
        output=_part(
            completion,
            reasoning,
            "completion_tokens",
            "completion_tokens_details.reasoning_tokens",
            where,
        ),
        reasoning=reasoning,
    )


def _openai_responses(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    input_ = _count(data, "input_tokens", where, required=True)
    output = _count(data, "output_tokens", where, required=True)
    _check_total(data, input_ + output, "input_tokens + output_tokens", where)
    cached = _count(
        _details(data, "input_tokens_details", where),
        "cached_tokens",
        f"{where}.input_tokens_details",
    )
    reasoning = _count(
        _details(data, "output_tokens_details", where),
        "reasoning_tokens",
        f"{where}.output_tokens_details",
    )
    return TokenBreakdown(
        input=_part(
            input_, cached, "input_tokens", "input_tokens_details.cached_tokens", where
        ),
        cache_read=cached,
        output=_part(
            output,
            reasoning,
            "output_tokens",
            "output_tokens_details.reasoning_tokens",
            where,
        ),
        reasoning=reasoning,
    )


def _anthropic(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    cache_write = _count(data, "cache_creation_input_tokens", where)
    if "cache_creation_input_tokens" not in data:
        # Newer payloads may only carry the per-TTL split.
        split = _details(data, "cache_creation", where)
        cache_write = sum(
            _count(split, k, f"{where}.cache_creation")
            for k in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
        )
    # Anthropic's input_tokens already exclude cache reads and writes; thinking is
    # billed inside output_tokens.
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
    in_where, out_where = (
        f"{where}.input_token_details",
        f"{where}.output_token_details",
    )
    cache_read = _count(in_details, "cache_read", in_where)
    cache_write = _count(in_details, "cache_creation", in_where)
    if not cache_write:
        # langchain-anthropic may report cache writes only split by TTL.
        cache_write = sum(
            _count(in_details, k, in_where)
            for k in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
        )
    reasoning = _count(out_details, "reasoning", out_where)
    return TokenBreakdown(
        input=_part(
            input_,
            cache_read + cache_write,
            "input_tokens",
            "cache_read + cache_creation",
            where,
        ),
        cache_read=cache_read,
        cache_write=cache_write,
        output=_part(
            output, reasoning, "output_tokens", "output_token_details.reasoning", where
        ),
        reasoning=reasoning,
    )


def _plain(data: Mapping[str, Any], where: str) -> TokenBreakdown:
    input_ = _count(data, "input_tokens", where, required=True)
    output = _count(data, "output_tokens", where, required=True)
    _check_total(data, input_ + output, "input_tokens + output_tokens", where)
    # The plain shape is TokensUsage's JSON: read as one, its total checked above.
    return TokensUsage(input_tokens=input_, output_tokens=output).to_breakdown()


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
                f"{where}.{key}: {getattr(given, key)} != "
                f"{getattr(derived, key)} derived from the other counts"
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
