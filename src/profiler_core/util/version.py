"""The installed version of agent-profiler, read from its distribution's metadata on first use."""

from __future__ import annotations

import functools

#: The distribution whose metadata holds the version (pyproject.toml is its one source).
DISTRIBUTION = "agent-profiler"


@functools.cache
def version() -> str:
    """agent-profiler's version (``0+unknown`` from a source tree that was never installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"
