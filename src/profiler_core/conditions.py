"""Checkpoint conditions, where plugins (the eval plugin among them) import them: they
live in :mod:`profiler_core.scorers.conditions`."""

from .scorers import conditions as _conditions

# the same names, whatever the conditions module adds
from .scorers.conditions import *  # noqa: F403

__all__: list[str] = []
__all__ += _conditions.__all__
