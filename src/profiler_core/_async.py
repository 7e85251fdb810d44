"""Await-me-maybe: plugins may implement any method sync or async."""

from __future__ import annotations

import inspect
from typing import Any


async def await_me_maybe(value: Any) -> Any:
    """Return ``value``, awaiting it first if it is awaitable (datasette's idiom)."""
    if inspect.isawaitable(value):
        return await value
    return value
