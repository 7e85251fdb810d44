"""Does a plugin's callable take a given keyword? (Grow contracts without breaking old plugins.)"""

from __future__ import annotations

import functools
import inspect
from typing import Any


@functools.cache
def _accepts(func: Any, name: str) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
    )


def accepts_keyword(func: Any, name: str) -> bool:
    """Whether ``func`` (a function, class or bound method) can be called with keyword ``name``."""
    # Bound methods are new objects on each access; cache on the function underneath.
    return _accepts(getattr(func, "__func__", func), name)
