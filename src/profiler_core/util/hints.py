"""A class's type hints, resolved once per process.

``typing.get_type_hints`` compiles and evaluates every string annotation of the
class and its bases on each call (``from __future__ import annotations`` makes
them all strings). The row's columns, the converter's hook factories and the
row decoder ask it of the same few classes again and again: ~50 calls for
``ProfileRow`` alone when the report's column table is built.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping
from typing import Any


@functools.cache
def type_hints(cls: type) -> Mapping[str, Any]:
    """``typing.get_type_hints(cls)``, read-only and worked out on first use.

    A class whose hints cannot be resolved yet raises as ``get_type_hints`` does,
    and is asked again next time (a failure is not kept).
    """
    return types.MappingProxyType(typing.get_type_hints(cls))
