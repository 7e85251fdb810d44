"""Entry-point module (``builtin_analyzers``): registers the five analyzers."""

from __future__ import annotations

from typing import Any

from profiler_core import hookimpl

from . import ANALYZERS


@hookimpl
def profiler_register_analyzers() -> list[Any]:
    """Return the analyzer factories: reasoning, strategy, efficiency, tool-pattern, error."""
    return list(ANALYZERS)
