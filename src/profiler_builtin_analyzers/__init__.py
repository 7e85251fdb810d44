"""The five built-in behavioural analyzers of agent-profiler.

Installed with agent-profiler but loaded only through the ``agent_profiler``
entry point ``builtin_analyzers`` (core never imports this package), so they
are plugins like any other: ``PROFILER_LOAD_PLUGINS=`` switches them off.
"""

from __future__ import annotations

from .efficiency import EfficiencyAnalyzer
from .error import ErrorAnalyzer, classify_error
from .reasoning import ReasoningAnalyzer
from .strategy import StrategyAnalyzer
from .tool_names import is_shell_tool, resolve_tool_display_name
from .tool_pattern import ToolPatternAnalyzer, make_tool_pattern_analyzer

#: The analyzer classes in the order ``profiler analyze`` shows them.
ANALYZERS = (ReasoningAnalyzer, StrategyAnalyzer, EfficiencyAnalyzer, ToolPatternAnalyzer, ErrorAnalyzer)

__all__ = [
    "ANALYZERS",
    "EfficiencyAnalyzer",
    "ErrorAnalyzer",
    "ReasoningAnalyzer",
    "StrategyAnalyzer",
    "ToolPatternAnalyzer",
    "classify_error",
    "is_shell_tool",
    "make_tool_pattern_analyzer",
    "resolve_tool_display_name",
]
