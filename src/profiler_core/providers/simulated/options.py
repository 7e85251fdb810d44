"""The simulated agent's options: their fields, checks and merging per mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from ...errors import ConfigError
from ...model.record import Record
from ...util.numbers import is_finite_number, is_int
from ...util.timestamps import parse_iso

#: Tool name -> category (``tool_calls_category_<name>`` metrics); extend with the
#: ``tool_categories`` option.
DEFAULT_TOOL_CATEGORIES: dict[str, str] = {
    "bash": "shell",
    "read_file": "file",
    "edit": "file",
    "write_file": "file",
    "grep": "search",
    "glob": "search",
    "web_fetch": "other",
}


def _expect(
    description: str, accept: Callable[[Any], bool]
) -> Callable[[Any, attrs.Attribute, Any], None]:
    """An attrs validator: ``accept(value)`` must hold, else ``option 'name': expected
    <description>, got <value>``."""

    def validate(_inst: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not accept(value):
            raise ValueError(
                f"option {attribute.name!r}: expected {description}, got {value!r}"
            )

    return validate


def _tool_categories(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
    )


_PROBABILITY = "a number between 0 and 1"


def _is_probability(value: Any) -> bool:
    return is_finite_number(value) and 0 <= value <= 1


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SimulatedOptions(Record):
    """The behaviour of the simulated agent (all fields optional)."""

    #: Base seed; sessions are also keyed by model, mode, scenario, iteration and attempt.
    seed: int = attrs.field(default=0, validator=_expect("an integer", is_int))
    #: Average number of turns of a session (unfinished sessions run ~2 turns longer).
    mean_turns: float = attrs.field(
        default=6,
        validator=_expect("a number >= 1", lambda v: is_finite_number(v) and v >= 1),
    )
    #: Hard limit: a longer session stops with completion reason ``tool_limit``.
    max_turns: int = attrs.field(
        default=40, validator=_expect("an integer >= 1", lambda v: is_int(v) and v >= 1)
    )
    #: Average number of planned tool calls per turn (retries after failures come on top).
    tools_per_turn: float = attrs.field(
        default=1.6,
        validator=_expect("a number >= 1", lambda v: is_finite_number(v) and v >= 1),
    )
    #: Probability that a tool call fails (not found, timeout, 401, JSON parse...).
    tool_error_rate: float = attrs.field(
        default=0.1, validator=_expect(_PROBABILITY, _is_probability)
    )
    #: Probability that the agent finishes its task.
    success_rate: float = attrs.field(
        default=0.8, validator=_expect(_PROBABILITY, _is_probability)
    )
    #: Scales the agent's text and reasoning tokens (and so its latency and cost).
    verbosity: float = attrs.field(
        default=1.0,
        validator=_expect("a number > 0", lambda v: is_finite_number(v) and v > 0),
    )
    #: 0: no real sleeping; otherwise each prompt really sleeps simulated seconds x time_scale.
    time_scale: float = attrs.field(
        default=0.0,
        validator=_expect(
            "a number >= 0 (0: no real sleeping)",
            lambda v: is_finite_number(v) and v >= 0,
        ),
    )
    #: ``auto``: a JSON answer (in a ```json block) when the prompt mentions JSON; or
    #: always ``text`` / ``json``.
    output_format: str = attrs.field(
        default="auto",
        validator=_expect(
            "one of auto, text, json", lambda v: v in ("auto", "text", "json")
        ),
    )
    #: Extra or changed tool name -> category entries.
    tool_categories: dict[str, str] = attrs.field(
        factory=dict,
        validator=_expect("a mapping of tool name -> category", _tool_categories),
    )
    #: Output speed; None: from the model name (``sim-small`` fast ... ``sim-large`` slow).
    tokens_per_second: float | None = attrs.field(
        default=None,
        validator=_expect(
            "a number > 0 (or null: from the model)",
            lambda v: v is None or (is_finite_number(v) and v > 0),
        ),
    )
    #: Simulated clock of every session (timestamps are deterministic, not the real time).
    start_time: str = attrs.field(
        default="2025-01-01T00:00:00Z",
        validator=_expect(
            "an ISO 8601 timestamp",
            lambda v: isinstance(v, str) and parse_iso(v) is not None,
        ),
    )
    #: Multiplies every session's cost: a known effect for a mode (0.8: 20% cheaper, all
    #: else equal).
    cost_factor: float = attrs.field(
        default=1.0,
        validator=_expect("a number > 0", lambda v: is_finite_number(v) and v > 0),
    )
    #: Multiplies every duration (model and tool time, so the wall time): a known effect
    #: (0.8: 20% faster).
    time_factor: float = attrs.field(
        default=1.0,
        validator=_expect("a number > 0", lambda v: is_finite_number(v) and v > 0),
    )
    #: Price overrides passed to ``profiler_core.metrics.pricing.price_tokens`` (same
    #: format as the profile's ``prices``).
    prices: dict[str, Any] | None = attrs.field(
        default=None,
        validator=_expect(
            "a mapping of model -> prices (or null)",
            lambda v: v is None or isinstance(v, dict),
        ),
    )
    #: Files the agent writes into its session's workspace (relative path -> content),
    #: as its "edits".
    writes: dict[str, str] = attrs.field(
        factory=dict,
        validator=_expect("a mapping of relative path -> text", lambda v: _writes(v)),
    )


def _writes(value: Any) -> bool:
    """Relative paths inside the workspace mapped to text."""
    return isinstance(value, dict) and all(
        isinstance(k, str)
        and isinstance(v, str)
        and k
        and not Path(k).is_absolute()
        and ".." not in Path(k).parts
        for k, v in value.items()
    )


_OPTION_NAMES = tuple(a.name for a in attrs.fields(SimulatedOptions))


def build_options(layers: list[dict[str, Any]], where: str) -> SimulatedOptions:
    merged: dict[str, Any] = {}
    for layer in layers:
        unknown = sorted(set(layer) - set(_OPTION_NAMES))
        if unknown:
            raise ConfigError(
                f"{where}: unknown option(s) {', '.join(unknown)} (valid: "
                f"{', '.join(sorted(_OPTION_NAMES))})"
            )
        merged.update(layer)
    try:
        options = SimulatedOptions(**merged)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if options.prices:
        # Checked now, not at the first prompt (pricing is imported lazily: it may load
        # genai-prices).
        from ...metrics.pricing import parse_price_overrides

        parse_price_overrides(options.prices, where=f"{where}: option 'prices'")
    return options
