"""Profiles: the YAML schema, loading and checking a profile and its scenarios,
overrides, task formats.

The loader's API is re-exported here (``from profiler_core.config import load_profile``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

#: module of this package -> the public names it defines, each imported on first use:
#: importing a sibling module stays cheap
_LAZY = {
    "loader": (
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
    ),
}

__getattr__ = lazy_exports(__name__, _LAZY)

# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand.
if TYPE_CHECKING:
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
# End of the written names.


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
