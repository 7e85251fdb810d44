"""Entry-point module (``builtin_analyzers``): registers the five analyzers."""

from __future__ import annotations

from typing import Any

from profiler_core import hookimpl

#: analyzer name -> its class, imported when the analyzer is first used (listing the
#: plugins imports none)
ANALYZERS_BY_NAME = {
    "reasoning": f"{__package__}.reasoning:ReasoningAnalyzer",
    "strategy": f"{__package__}.strategy:StrategyAnalyzer",
    "efficiency": f"{__package__}.efficiency:EfficiencyAnalyzer",
    "tool-pattern": f"{__package__}.tool_pattern:ToolPatternAnalyzer",
    "error": f"{__package__}.error:ErrorAnalyzer",
}


@hookimpl
def profiler_register_analyzers(register: Any) -> None:
    """Register the analyzers: reasoning, strategy, efficiency, tool-pattern, error."""
    for name, target in ANALYZERS_BY_NAME.items():
        register(target, id=name)
