"""Profiles: the YAML schema, loading and checking a profile and its scenarios, overrides, task formats.

The loader's API is re-exported here (``from profiler_core.config import load_profile``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if (
    TYPE_CHECKING
):  # the names below load on first use, so importing a sibling module stays cheap
    from .loader import (
        DEFAULT_REPETITIONS,
        DEFAULT_TIMEOUT_MS,
        LOG_LEVELS,
        ComponentSpec,
        ExecutionConfig,
        OutputConfig,
        ProfileErrors,
        ProfilerConfig,
        load_profile,
        load_scenarios,
        parse_profile,
        select_scenarios,
    )

__all__ = [
    "DEFAULT_REPETITIONS",
    "DEFAULT_TIMEOUT_MS",
    "LOG_LEVELS",
    "ComponentSpec",
    "ExecutionConfig",
    "OutputConfig",
    "ProfileErrors",
    "ProfilerConfig",
    "load_profile",
    "load_scenarios",
    "parse_profile",
    "select_scenarios",
]


__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "loader"))


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
