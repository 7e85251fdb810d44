"""The profile loader's public names, where they have always been imported from.

The code lives by concern: ``profile`` (a profile -> ``ProfilerConfig``),
``scenarios`` (scenario files and datasets, selecting what runs) and
``problems`` (collecting a profile's problems one line each).
"""

from __future__ import annotations

from .problems import ProfileErrors
from .profile import ProfilerConfig, load_profile, parse_profile
from .scenarios import load_scenarios, select_scenarios
from .schema import (
    DEFAULT_REPETITIONS,
    DEFAULT_TIMEOUT_MS,
    LOG_LEVELS,
    ComponentSpec,
    ExecutionConfig,
    OutputConfig,
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
