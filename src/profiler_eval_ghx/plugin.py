"""Entry-point module of the GitHub evaluation plugin: registers its components with agent-profiler."""

from __future__ import annotations

from profiler_core import hookimpl


@hookimpl
def profiler_register_scorers():
    """The ``checkpoint`` scorer (capability calls against GitHub after the session)."""
    from .scorer import CheckpointScorer

    return [CheckpointScorer]


@hookimpl
def profiler_register_collectors():
    """The ``ghx`` collector (tool calls by how they reached GitHub)."""
    from .collector import GhxCollector

    return [GhxCollector]


@hookimpl
def profiler_register_mode_resolvers():
    """The ``eval`` mode resolver (ghx, mcp, baseline)."""
    from .modes import EvalModeResolver

    return [EvalModeResolver]
