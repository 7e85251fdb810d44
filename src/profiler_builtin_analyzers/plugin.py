"""Entry-point module (``builtin_analyzers``): registers the five analyzers."""

from __future__ import annotations

from typing import Any

from profiler_core import hookimpl


@hookimpl
def profiler_register_analyzers() -> list[Any]:
    """Return the analyzer factories: reasoning, strategy, efficiency, tool-pattern, error."""
    # Imported here, when the registry is built: loading the entry point stays cheap.
    from . import analyzer_classes

    return list(analyzer_classes())
