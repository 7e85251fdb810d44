"""The data model: attrs classes only, importing nothing else of the project.

A name loads its own module on first use (``from profiler_core.model import Scenario`` does not define
the trace classes), so a command that needs a few records defines only those.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .analysis import (
        FINDING_TAGS,
        AnalysisFinding,
        AnalysisResult,
        ListFinding,
        NumberFinding,
        RatioFinding,
        SessionAnalysisBundle,
        StringFinding,
        TableFinding,
    )
    from .judge import JudgeCriterion, JudgeRequest, JudgeResponse, JudgeRubric
    from .metrics import (
        CompletionReason,
        CostBreakdown,
        CostSource,
        CustomMetric,
        ModelUsage,
        PromptMetrics,
        TimingBreakdown,
        TimingSegment,
        TokenBreakdown,
        ToolCallRecord,
    )
    from .recorded import RecordedSession
    from .row import CheckpointResult, ProfileRow, ToolCallSummary
    from .run import (
        AfterScenarioContext,
        BeforeScenarioContext,
        HookErrorRecord,
        PluginRecord,
        ProfileSuiteResult,
        ProgressEvent,
        RunContext,
        RunCounts,
        RunManifest,
        StopRecord,
    )
    from .scenario import Scenario, ScenarioSets, SolutionSpec, TaskEnvironment, VerifierSpec, WorkspaceSpec
    from .scoring import ScorerCheckResult, ScorerContext, ScorerResult
    from .session import CreateSessionParams, ModeConfig, PermissionConfig, PromptResult, ProviderConfig, SessionHandle
    from .trace import (
        TRACE_EVENT_TAGS,
        ErrorEvent,
        ReasoningEvent,
        SessionTrace,
        TextOutputEvent,
        ToolCallEvent,
        TraceEvent,
        TraceSummary,
        Turn,
        TurnBoundaryEvent,
        WorkspaceReport,
    )

#: public name -> the module of this package defining it
_EXPORTS = {
    "AfterScenarioContext": "run",
    "AnalysisFinding": "analysis",
    "AnalysisResult": "analysis",
    "BeforeScenarioContext": "run",
    "CheckpointResult": "row",
    "CompletionReason": "metrics",
    "CostBreakdown": "metrics",
    "CostSource": "metrics",
    "CreateSessionParams": "session",
    "CustomMetric": "metrics",
    "ErrorEvent": "trace",
    "FINDING_TAGS": "analysis",
    "HookErrorRecord": "run",
    "JudgeCriterion": "judge",
    "JudgeRequest": "judge",
    "JudgeResponse": "judge",
    "JudgeRubric": "judge",
    "ListFinding": "analysis",
    "ModeConfig": "session",
    "ModelUsage": "metrics",
    "NumberFinding": "analysis",
    "PermissionConfig": "session",
    "PluginRecord": "run",
    "ProfileRow": "row",
    "ProfileSuiteResult": "run",
    "ProgressEvent": "run",
    "PromptMetrics": "metrics",
    "PromptResult": "session",
    "ProviderConfig": "session",
    "RatioFinding": "analysis",
    "ReasoningEvent": "trace",
    "RecordedSession": "recorded",
    "RunContext": "run",
    "RunCounts": "run",
    "RunManifest": "run",
    "Scenario": "scenario",
    "ScenarioSets": "scenario",
    "ScorerCheckResult": "scoring",
    "ScorerContext": "scoring",
    "ScorerResult": "scoring",
    "SessionAnalysisBundle": "analysis",
    "SessionHandle": "session",
    "SessionTrace": "trace",
    "SolutionSpec": "scenario",
    "StopRecord": "run",
    "StringFinding": "analysis",
    "TRACE_EVENT_TAGS": "trace",
    "TableFinding": "analysis",
    "TaskEnvironment": "scenario",
    "TextOutputEvent": "trace",
    "TimingBreakdown": "metrics",
    "TimingSegment": "metrics",
    "TokenBreakdown": "metrics",
    "ToolCallEvent": "trace",
    "ToolCallRecord": "metrics",
    "ToolCallSummary": "row",
    "TraceEvent": "trace",
    "TraceSummary": "trace",
    "Turn": "trace",
    "TurnBoundaryEvent": "trace",
    "VerifierSpec": "scenario",
    "WorkspaceReport": "trace",
    "WorkspaceSpec": "scenario",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


__all__ = [
    "FINDING_TAGS",
    "TRACE_EVENT_TAGS",
    "AfterScenarioContext",
    "AnalysisFinding",
    "AnalysisResult",
    "BeforeScenarioContext",
    "CheckpointResult",
    "CompletionReason",
    "CostBreakdown",
    "CostSource",
    "CreateSessionParams",
    "CustomMetric",
    "ErrorEvent",
    "HookErrorRecord",
    "JudgeCriterion",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeRubric",
    "ListFinding",
    "ModeConfig",
    "ModelUsage",
    "NumberFinding",
    "PermissionConfig",
    "PluginRecord",
    "ProfileRow",
    "ProfileSuiteResult",
    "ProgressEvent",
    "PromptMetrics",
    "PromptResult",
    "ProviderConfig",
    "RatioFinding",
    "ReasoningEvent",
    "RecordedSession",
    "RunContext",
    "RunCounts",
    "RunManifest",
    "Scenario",
    "ScenarioSets",
    "ScorerCheckResult",
    "ScorerContext",
    "ScorerResult",
    "SessionAnalysisBundle",
    "SessionHandle",
    "SessionTrace",
    "SolutionSpec",
    "StopRecord",
    "StringFinding",
    "TableFinding",
    "TaskEnvironment",
    "TextOutputEvent",
    "TimingBreakdown",
    "TimingSegment",
    "TokenBreakdown",
    "ToolCallEvent",
    "ToolCallRecord",
    "ToolCallSummary",
    "TraceEvent",
    "TraceSummary",
    "Turn",
    "TurnBoundaryEvent",
    "VerifierSpec",
    "WorkspaceReport",
    "WorkspaceSpec",
]
