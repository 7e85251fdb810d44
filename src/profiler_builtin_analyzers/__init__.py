"""The five built-in behavioural analyzers of agent-profiler.

Installed with agent-profiler but loaded only through the ``agent_profiler``
entry point ``builtin_analyzers`` (core never imports this package), so they
are plugins like any other: ``PROFILER_LOAD_PLUGINS=`` switches them off.
Each name below is imported from its module when first used, so loading the
entry point (``profiler --help``) does not build the data model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .efficiency import EfficiencyAnalyzer
    from .error import ErrorAnalyzer, classify_error
    from .reasoning import ReasoningAnalyzer
    from .strategy import StrategyAnalyzer
    from .tool_names import is_shell_tool, resolve_tool_display_name
    from .tool_pattern import ToolPatternAnalyzer, make_tool_pattern_analyzer

    ANALYZERS: tuple[type, ...]

#: public name -> its module
_LAZY = {
    "EfficiencyAnalyzer": ".efficiency",
    "ErrorAnalyzer": ".error",
    "classify_error": ".error",
    "ReasoningAnalyzer": ".reasoning",
    "StrategyAnalyzer": ".strategy",
    "is_shell_tool": ".tool_names",
    "resolve_tool_display_name": ".tool_names",
    "ToolPatternAnalyzer": ".tool_pattern",
    "make_tool_pattern_analyzer": ".tool_pattern",
}


def analyzer_classes() -> tuple[type, ...]:
    """The analyzer classes in the order ``profiler analyze`` shows them."""
    from .efficiency import EfficiencyAnalyzer
    from .error import ErrorAnalyzer
    from .reasoning import ReasoningAnalyzer
    from .strategy import StrategyAnalyzer
    from .tool_pattern import ToolPatternAnalyzer

    return (
        ReasoningAnalyzer,
        StrategyAnalyzer,
        EfficiencyAnalyzer,
        ToolPatternAnalyzer,
        ErrorAnalyzer,
    )


def __getattr__(name: str) -> object:
    if name == "ANALYZERS":
        value: object = analyzer_classes()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = [
    "ANALYZERS",
    "EfficiencyAnalyzer",
    "ErrorAnalyzer",
    "ReasoningAnalyzer",
    "StrategyAnalyzer",
    "ToolPatternAnalyzer",
    "analyzer_classes",
    "classify_error",
    "is_shell_tool",
    "make_tool_pattern_analyzer",
    "resolve_tool_display_name",
]
