"""Entry-point module of the GitHub evaluation plugin (components arrive in a later issue)."""

from profiler_core import hookimpl


@hookimpl
def profiler_register_providers() -> list:
    """The ``opencode`` provider: live OpenCode sessions through ``opencode serve``."""
    # Imported here, when the registry is built, so `profiler --help` does not load httpx.
    from .opencode import OpenCodeProvider

    return [OpenCodeProvider]
