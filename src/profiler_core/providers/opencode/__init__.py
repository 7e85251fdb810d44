"""The ``opencode`` session provider: live profiling of OpenCode through ``opencode
serve`` (docs/providers/opencode.md)."""

from .config import OpenCodeError, OpenCodeOptions
from .provider import OpenCodeProvider

__all__ = ["OpenCodeError", "OpenCodeOptions", "OpenCodeProvider"]
