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
        raise ValueError(f"{_camel(attribute.name)}: expected a non-empty string, got {value!r}")


def non_negative(instance, attribute: attrs.Attribute, value) -> None:
    """Reject negative counts and durations (None passes: it means unknown)."""
    if value is not None and value < 0:
        raise ValueError(f"{_camel(attribute.name)}: expected a value >= 0, got {value!r}")


def positive(instance, attribute: attrs.Attribute, value) -> None:
    """Reject zero and negative values (timeouts)."""
    if value is not None and value <= 0:
        raise ValueError(f"{_camel(attribute.name)}: expected a value > 0, got {value!r}")


def as_tuple(items: Iterable[Any]) -> tuple[Any, ...]:
    """Converter of sequence fields: any iterable in, a tuple out (typed so mypy's attrs plugin accepts lists)."""
    return tuple(items)
