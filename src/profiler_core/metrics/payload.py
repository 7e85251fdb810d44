"""Reading vendor payloads: a mapping view of SDK objects, and key sets named in error messages.

Shared by :mod:`.usage` and :mod:`.messages`, which both accept plain dicts
and the objects of vendor SDKs alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["as_mapping", "format_keys"]


def as_mapping(value: Any) -> Mapping[str, Any] | None:
    """A mapping view of a dict or an SDK object (pydantic ``model_dump``, ``to_dict``);
    None for anything else."""
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


def format_keys(keys: Iterable[str]) -> str:
    """``{'a', 'b'}``: keys sorted, for an error message that names what was not understood."""
    return "{" + ", ".join(repr(k) for k in sorted(keys, key=str)) + "}"
