"""Token prices: turn a TokenBreakdown and a model name into a CostBreakdown.

Prices come from, in order: the profile's per-model overrides, the built-in
table of simulator models (``sim-*``), and the ``genai-prices`` package's
bundled price data (imported lazily, on the first model it is asked about,
and never updated over the network). A model none of them knows has no price:
callers get ``None`` and must report the cost as unknown, never as $0.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import attrs

from ..errors import ConfigError
from ..model import CostBreakdown, CostSource, ModelUsage, TokenBreakdown
from ..model.record import Record

_PER = Decimal(1_000_000)

#: Keys of one model's entry in a profile's ``prices`` option.
PRICE_KEYS = (
    "input_per_mtok",
    "output_per_mtok",
    "reasoning_per_mtok",
    "cache_read_per_mtok",
    "cache_write_per_mtok",
)
_REQUIRED_KEYS = ("input_per_mtok", "output_per_mtok")


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModelPrices(Record):
    """USD per million tokens for one model; unset optional rates fall back as documented."""

    input_per_mtok: Decimal
    output_per_mtok: Decimal
    #: None: reasoning tokens are billed as output tokens (what every vendor does today).
    reasoning_per_mtok: Decimal | None = None
    #: None: cache reads are billed as ordinary input.
    cache_read_per_mtok: Decimal | None = None
    #: None: cache writes are billed as ordinary input.
    cache_write_per_mtok: Decimal | None = None
    #: Where the rates came from: "override", "builtin" or "genai-prices".
    source: str = "override"

    def cost(self, tokens: TokenBreakdown) -> CostBreakdown:
        """Price a token breakdown; cache reads and writes count towards ``input_usd``."""
        input_usd = (
            tokens.input * self.input_per_mtok
            + tokens.cache_read * _or(self.cache_read_per_mtok, self.input_per_mtok)
            + tokens.cache_write * _or(self.cache_write_per_mtok, self.input_per_mtok)
        ) / _PER
        output_usd = tokens.output * self.output_per_mtok / _PER
        reasoning_usd = (
            tokens.reasoning * _or(self.reasoning_per_mtok, self.output_per_mtok) / _PER
        )
        # Summed in Decimal so the total is exact before the one conversion to float.
        return CostBreakdown(
            total_usd=float(input_usd + output_usd + reasoning_usd),
            input_usd=float(input_usd),
            output_usd=float(output_usd),
            reasoning_usd=float(reasoning_usd),
        )


def _or(value: Decimal | None, fallback: Decimal) -> Decimal:
    return fallback if value is None else value


def _builtin(
    input_: str, output: str, cache_read: str, cache_write: str
) -> ModelPrices:
    return ModelPrices(
        input_per_mtok=Decimal(input_),
        output_per_mtok=Decimal(output),
        cache_read_per_mtok=Decimal(cache_read),
        cache_write_per_mtok=Decimal(cache_write),
        source="builtin",
    )


#: Prices of the simulated provider's models (made up, shaped like real tiers:
#: cache reads at 10% of input, cache writes at 125%, reasoning billed as output).
SIM_PRICES: Mapping[str, ModelPrices] = {
    "sim-small": _builtin("0.50", "1.50", "0.05", "0.625"),
    "sim-medium": _builtin("1.00", "4.00", "0.10", "1.25"),
    "sim-large": _builtin("3.00", "15.00", "0.30", "3.75"),
}


def parse_price_overrides(
    prices: Any, *, where: str = "prices"
) -> dict[str, ModelPrices]:
    """Validate a profile's ``prices: {model: {input_per_mtok, ...}}`` into ModelPrices."""
    if prices is None:
        return {}
    if not isinstance(prices, Mapping):
        raise ConfigError(
            f"{where}: expected a mapping of model name -> prices, got {type(prices).__name__}"
        )
    parsed: dict[str, ModelPrices] = {}
    for model, entry in prices.items():
        here = f"{where}.{model}"
        if not isinstance(model, str) or not model:
            raise ConfigError(
                f"{where}: model names must be non-empty strings, got {model!r}"
            )
        if isinstance(entry, ModelPrices):
            parsed[model] = entry
            continue
        if not isinstance(entry, Mapping):
            raise ConfigError(
                f"{here}: expected a mapping with {', '.join(PRICE_KEYS)}, got "
                f"{type(entry).__name__}"
            )
        unknown = sorted(set(entry) - set(PRICE_KEYS))
        if unknown:
            raise ConfigError(
                f"{here}: unknown keys {unknown}; expected "
                f"{', '.join(PRICE_KEYS)} (USD per million tokens)"
            )
        missing = [k for k in _REQUIRED_KEYS if k not in entry]
        if missing:
            raise ConfigError(
                f"{here}: missing {', '.join(missing)} (USD per million tokens)"
            )
        rates = {
            key: _rate(entry[key], f"{here}.{key}")
            for key in PRICE_KEYS
            if entry.get(key) is not None
        }
        parsed[model] = ModelPrices(**rates, source="override")
    return parsed


def _rate(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise ConfigError(
            f"{where}: expected a number (USD per million tokens), got {value!r}"
        )
    try:
        # Through str so 2.5 from YAML becomes exactly Decimal("2.5").
        rate = Decimal(str(value))
    except ArithmeticError:
        raise ConfigError(
            f"{where}: expected a number (USD per million tokens), got {value!r}"
        ) from None
    if not rate.is_finite() or rate < 0:
        raise ConfigError(f"{where}: expected a finite number >= 0, got {value!r}")
    return rate


def find_prices(
    model: str | None,
    overrides: Mapping[str, Any] | None = None,
    *,
    prompt_tokens: int = 0,
) -> ModelPrices | None:
    """The rates for ``model`` (overrides, then ``sim-*``, then genai-prices), or None when unknown.

    ``prompt_tokens`` (all input-side tokens) picks the tier of tiered prices
    such as long-context surcharges.
    """
    if not model:
        return None
    table = _as_overrides(overrides)
    found = table.get(model) or _casefolded(table).get(model.casefold())
    if found is not None:
        return found
    builtin = SIM_PRICES.get(model.casefold())
    if builtin is not None:
        return builtin
    if model.casefold().startswith("sim-"):
        # Simulator names are ours; genai-prices cannot know them, so spare its import.
        return None
    return _genai_prices(model.casefold(), prompt_tokens)


def price_tokens(
    model: str | None,
    tokens: TokenBreakdown,
    overrides: Mapping[str, Any] | None = None,
) -> CostBreakdown | None:
    """Price ``tokens`` for ``model``; None when no price is known (never a fake $0)."""
    prompt_tokens = tokens.input + tokens.cache_read + tokens.cache_write
    prices = find_prices(model, overrides, prompt_tokens=prompt_tokens)
    return None if prices is None else prices.cost(tokens)


def price_usage(
    calls: Sequence[ModelUsage],
    overrides: Mapping[str, Any] | None = None,
    *,
    model: str | None = None,
) -> CostBreakdown | None:
    """Each model call's tokens at its price, summed; None when any call has no price.

    Each call is priced on its own, so a tier (a long-context surcharge) applies
    to the calls that reach it, not to a session whose calls add up past it.
    ``model`` prices every call as that model instead of the one it names.
    """
    total_usd = input_usd = output_usd = reasoning_usd = 0.0
    for call in calls:
        priced = price_tokens(model or call.model, call.tokens, overrides)
        if priced is None:
            return None
        total_usd += priced.total_usd
        input_usd += priced.input_usd
        output_usd += priced.output_usd
        reasoning_usd += priced.reasoning_usd
    return CostBreakdown(
        total_usd=total_usd,
        input_usd=input_usd,
        output_usd=output_usd,
        reasoning_usd=reasoning_usd,
    )


def resolve_cost(
    cost: CostBreakdown,
    tokens: TokenBreakdown,
    model: str | None,
    overrides: Mapping[str, Any] | None = None,
    model_calls: Sequence[ModelUsage] = (),
) -> tuple[CostBreakdown | None, CostSource]:
    """The cost to report and where it came from: the provider's, computed, or unknown.

    With ``model_calls`` each call is priced on its own: at its own model's
    price when the calls name more than one model (a session that switched from
    an expensive model to a cheap one is not priced as if the cheap one did
    everything), else as ``model``, the name the profile's prices use.
    Without them ``tokens`` are priced as ``model``.
    """
    if any(
        v for v in (cost.total_usd, cost.input_usd, cost.output_usd, cost.reasoning_usd)
    ):
        return cost, "provider"
    if model_calls:
        several = len({call.model for call in model_calls}) > 1
        computed = price_usage(model_calls, overrides, model=None if several else model)
    else:
        computed = price_tokens(model, tokens, overrides)
    if computed is None:
        return None, "unknown"
    return computed, "computed"


def _as_overrides(overrides: Mapping[str, Any] | None) -> Mapping[str, ModelPrices]:
    if not overrides:
        return {}
    if all(isinstance(v, ModelPrices) for v in overrides.values()):
        return overrides
    return parse_price_overrides(overrides)


def _casefolded(table: Mapping[str, ModelPrices]) -> dict[str, ModelPrices]:
    return {k.casefold(): v for k, v in table.items()}


# -- genai-prices -------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _genai_model_price(model: str) -> Any:
    """genai-prices' ModelPrice for a model name (None when it does not know it); cached."""
    # Imported here: the price data is a 1.5 MB module that costs ~0.3 s to load.
    from genai_prices import Usage, calc_price

    attempts: list[tuple[str, str | None]] = [(model, None)]
    for sep in ("/", ":"):
        # "openai/gpt-4o", "anthropic:claude-sonnet-4": try the prefix as the provider,
        # then without it.
        if sep in model:
            prefix, _, rest = model.partition(sep)
            attempts += [(rest, prefix), (rest, None)]
    bedrock = _BEDROCK.match(model)
    if bedrock:
        # Claude Code on Bedrock records ids such as
        # "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0":
        # a routing prefix, a cross-region prefix, then the Bedrock model id that
        # genai-prices lists under "aws".
        attempts.append((bedrock.group("id"), "aws"))
    for ref, provider in attempts:
        try:
            return calc_price(Usage(), ref, provider_id=provider).model_price
        except LookupError:
            continue
    return None


#: A Bedrock model id, after an optional routing prefix ("converse/", "bedrock/") and
#: cross-region prefix ("us.", "jp.").
_BEDROCK = re.compile(
    r"^(?:[a-z_-]+/)?(?:(?:us|eu|apac|ap|jp|au|ca|global|us-gov)\.)?"
    r"(?P<id>(?:anthropic|amazon|meta|mistral|cohere|ai21|deepseek|openai|qwen|writer)\.[^/]+)$"
)


def _genai_prices(model: str, prompt_tokens: int) -> ModelPrices | None:
    price = _genai_model_price(model)
    if price is None:
        return None
    # getattr: older genai-prices releases lack some keys (output_reasoning_mtok) altogether.
    input_rate = _tiered(getattr(price, "input_mtok", None), prompt_tokens)
    output_rate = _tiered(getattr(price, "output_mtok", None), prompt_tokens)
    if input_rate is None or output_rate is None:
        # Not priced per token (images, audio, per request): we cannot price a TokenBreakdown.
        return None
    return ModelPrices(
        input_per_mtok=input_rate,
        output_per_mtok=output_rate,
        reasoning_per_mtok=_tiered(
            getattr(price, "output_reasoning_mtok", None), prompt_tokens
        ),
        cache_read_per_mtok=_tiered(
            getattr(price, "cache_read_mtok", None), prompt_tokens
        ),
        cache_write_per_mtok=_tiered(
            getattr(price, "cache_write_mtok", None), prompt_tokens
        ),
        source="genai-prices",
    )


def _tiered(price: Any, prompt_tokens: int) -> Decimal | None:
    """A flat rate, or the tier of a TieredPrices that applies to this many prompt tokens."""
    if price is None or isinstance(price, Decimal):
        return price
    # genai-prices' rule: the highest tier whose start the prompt size exceeds.
    rate = price.base
    for tier in price.tiers:
        if prompt_tokens > tier.start:
            rate = tier.price
    return rate
