"""The model's JSON, as one API: the one cattrs converter (``converter``) and, for
result rows, the one row decoder.

``from_json(text, ProfileRow)`` decodes through ``rowcodec`` (msgspec structs generated from
the model, checked as the model checks), the decoder the report and the results store use;
every other class is structured by the converter.
"""

from __future__ import annotations

from typing import TypeVar

from ..model import ProfileRow
from .converter import (
    Expect,
    camel,
    converter,
    describe_error,
    dumps,
    iter_errors,
    json_error,
    json_kind,
    json_message,
    parse_json,
    register_plain_keys,
    register_tagged_union,
    structure,
    structure_detailed,
    to_json,
    unstructure,
)
from .rowcodec import decode_row

T = TypeVar("T")


def from_json(text: str | bytes, cls: type[T], *, source: str | None = None) -> T:
    """Parse JSON into ``cls``; bad JSON or a wrong field raises ``ValidationError``."""
    if (
        cls is ProfileRow
    ):  # result rows have one decoder, shared with the report (rowcodec)
        return decode_row(text, source)  # type: ignore[return-value]
    return structure(parse_json(text, source=source), cls, source=source)


__all__ = [
    "Expect",
    "camel",
    "converter",
    "describe_error",
    "dumps",
    "from_json",
    "iter_errors",
    "json_error",
    "json_kind",
    "json_message",
    "parse_json",
    "register_plain_keys",
    "register_tagged_union",
    "structure",
    "structure_detailed",
    "to_json",
    "unstructure",
]
