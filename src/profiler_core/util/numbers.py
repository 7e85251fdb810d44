"""What counts as a number in JSON data: one definition for the converter, validators and parsers.

JSON's ``true`` is not ``1`` here (Python's ``bool`` is an ``int`` subclass), so
every check excludes booleans. ``finite`` also refuses NaN and infinities, which
JSON cannot carry.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard


def is_int(value: Any) -> TypeGuard[int]:
    """True for an integer that is not a boolean."""
    return value.__class__ is int or (
        isinstance(value, int) and not isinstance(value, bool)
    )


def is_number(value: Any) -> TypeGuard[int | float]:
    """True for an int or float that is not a boolean."""
    cls = value.__class__
    return (
        cls is float
        or cls is int
        or (isinstance(value, (int, float)) and not isinstance(value, bool))
    )


def is_finite_number(value: Any) -> TypeGuard[int | float]:
    """True for a number that is neither NaN nor infinite."""
    return is_number(value) and math.isfinite(value)
