"""Boundary validators shared by the model classes (messages name the JSON key)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def non_empty(instance, attribute: attrs.Attribute, value) -> None:
    """Reject empty strings (ids, names)."""
    if not isinstance(value, str) or not value:
        raise ValueError(
            f"{_camel(attribute.name)}: expected a non-empty string, got {value!r}"
        )


def non_negative(instance, attribute: attrs.Attribute, value) -> None:
    """Reject negative counts and durations (None passes: it means unknown)."""
    if value is not None and value < 0:
        raise ValueError(
            f"{_camel(attribute.name)}: expected a value >= 0, got {value!r}"
        )


#: Counts (tokens) above this are refused: beyond it a float (JSON readers, numpy) loses units.
MAX_COUNT = 2**53


def _digits(value: int | float) -> int:
    """Digits of a number too big to print (a 400-digit integer overflows float formatting)."""
    if not isinstance(value, int):
        return len(f"{value:.0f}")
    digits = (
        int(value.bit_length() * 0.30103) + 1
    )  # one too many, at most: checked exactly below
    return digits - 1 if 10 ** (digits - 1) > value else digits


def count(instance, attribute: attrs.Attribute, value) -> None:
    """Reject negative counts and counts no column can hold exactly (None passes: unknown)."""
    non_negative(instance, attribute, value)
    if value is not None and value > MAX_COUNT:
        raise ValueError(
            f"{_camel(attribute.name)}: expected a count <= 2^53, got a number "
            f"of {_digits(value)} digits"
        )


def amount(instance, attribute: attrs.Attribute, value) -> None:
    """Reject negative amounts (durations, dollars, counts) and ones no float column
    holds exactly (> 2^53)."""
    non_negative(instance, attribute, value)
    if value is not None and value > MAX_COUNT:
        raise ValueError(
            f"{_camel(attribute.name)}: expected a value <= 2^53, got a number "
            f"of {_digits(value)} digits"
        )


def counts(instance, attribute: attrs.Attribute, value) -> None:
    """Reject a mapping whose values are not counts (integers from 0 to 2^53), e.g. tool
    calls by category."""
    for key, item in value.items():
        if item.__class__ is not int or not 0 <= item <= MAX_COUNT:
            raise ValueError(
                f"{_camel(attribute.name)}: expected counts (integers from 0 to "
                f"2^53), got {key!r}: {item!r}"[:300]
            )


def iteration_number(instance, attribute: attrs.Attribute, value) -> None:
    """Reject iteration numbers below -1 (the warm-up) or beyond 2^53."""
    if not -1 <= value <= MAX_COUNT:
        raise ValueError(
            f"{_camel(attribute.name)}: expected an integer from -1 (the "
            f"warm-up) to 2^53, got {value!r}"[:300]
        )


def unit_interval(instance, attribute: attrs.Attribute, value) -> None:
    """Reject values outside 0..1 (rewards; None passes: none was given)."""
    if value is not None and not 0 <= value <= 1:
        raise ValueError(
            f"{_camel(attribute.name)}: expected a value from 0 to 1, got {value!r}"
        )


def positive(instance, attribute: attrs.Attribute, value) -> None:
    """Reject zero and negative values (timeouts)."""
    if value is not None and value <= 0:
        raise ValueError(
            f"{_camel(attribute.name)}: expected a value > 0, got {value!r}"
        )


def as_tuple(items: Iterable[Any]) -> tuple[Any, ...]:
    """Converter of sequence fields: any iterable in, a tuple out (typed so mypy's attrs
    plugin accepts lists)."""
    return tuple(items)
