"""The ``opencode`` session provider: live profiling of OpenCode through ``opencode serve`` (docs/providers/opencode.md)."""

from ...plugins.markers import hookimpl
from .config import OpenCodeError, OpenCodeOptions
from .provider import OpenCodeProvider

__all__ = ["OpenCodeError", "OpenCodeOptions", "OpenCodeProvider", "profiler_register_providers"]


@hookimpl
def profiler_register_providers() -> list:
    """The built-in ``opencode`` provider."""
    return [OpenCodeProvider]
