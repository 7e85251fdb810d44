"""The data model: attrs classes only, importing nothing else of the project.

A name loads its own module on first use (``from profiler_core.model import Scenario``
does not define
the trace classes), so a command that needs a few records defines only those.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

#: module of this package -> the public names it defines, each imported on first use
_LAZY = {
    "analysis": (
        "FINDING_TAGS",
        "AnalysisFinding",
        "AnalysisResult",
        "ListFinding",
        "NumberFinding",
        "RatioFinding",
        "SessionAnalysisBundle",
        "StringFinding",
        "TableFinding",
    ),
    "environment": (
        "EnvironmentCapabilities",
        "ExecResult",
        "SandboxSettings",
        "TrialMount",
        "TrialSpec",
    ),
    "judge": ("JudgeCriterion", "JudgeRequest", "JudgeResponse", "JudgeRubric"),
    "metrics": (
        "CompletionReason",
        "CostBreakdown",
        "CostSource",
        "CustomMetric",
        "ModelUsage",
        "PromptMetrics",
        "TimingBreakdown",
        "TimingSegment",
        "TokenBreakdown",
        "ToolCallRecord",
    ),
    "recorded": ("RecordedSession", "RecordedVerification"),
    "row": ("CheckpointResult", "ProfileRow", "ToolCallSummary"),
    "run": (
        "AfterScenarioContext",
        "BeforeScenarioContext",
        "HookErrorRecord",
        "PluginRecord",
        "ProfileSuiteResult",
        "ProgressEvent",
        "RunContext",
        "RunCounts",
        "RunManifest",
        "StopRecord",
    ),
    "scenario": (
        "NetworkPolicy",
        "Scenario",
        "ScenarioSets",
        "SolutionSpec",
        "StepSpec",
        "TaskEnvironment",
        "VerifierSpec",
        "WorkspaceSpec",
    ),
    "scoring": ("ScorerCheckResult", "ScorerContext", "ScorerResult"),
    "session": (
        "CreateSessionParams",
        "ModeConfig",
        "PermissionConfig",
        "PromptResult",
        "ProviderConfig",
        "SessionHandle",
    ),
    "trace": (
        "TRACE_EVENT_TAGS",
        "ErrorEvent",
        "ModelCallEvent",
        "ReasoningEvent",
        "SessionTrace",
        "TextOutputEvent",
        "ToolCallEvent",
        "TraceEvent",
        "TraceSummary",
        "Turn",
        "TurnBoundaryEvent",
        "WorkspaceReport",
    ),
}

__getattr__ = lazy_exports(__name__, _LAZY)

# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand.
if TYPE_CHECKING:
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
    from .environment import (
        EnvironmentCapabilities,
        ExecResult,
        SandboxSettings,
        TrialMount,
        TrialSpec,
    )
    from .judge import (
        JudgeCriterion,
        JudgeRequest,
        JudgeResponse,
        JudgeRubric,
    )
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
    from .recorded import (
        RecordedSession,
        RecordedVerification,
    )
    from .row import (
        CheckpointResult,
        ProfileRow,
        ToolCallSummary,
    )
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
    from .scenario import (
        NetworkPolicy,
        Scenario,
        ScenarioSets,
        SolutionSpec,
        StepSpec,
        TaskEnvironment,
        VerifierSpec,
        WorkspaceSpec,
    )
    from .scoring import (
        ScorerCheckResult,
        ScorerContext,
        ScorerResult,
    )
    from .session import (
        CreateSessionParams,
        ModeConfig,
        PermissionConfig,
        PromptResult,
        ProviderConfig,
        SessionHandle,
    )
    from .trace import (
        TRACE_EVENT_TAGS,
        ErrorEvent,
        ModelCallEvent,
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
    "EnvironmentCapabilities",
    "ErrorEvent",
    "ExecResult",
    "HookErrorRecord",
    "JudgeCriterion",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeRubric",
    "ListFinding",
    "ModeConfig",
    "ModelCallEvent",
    "ModelUsage",
    "NetworkPolicy",
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
    "RecordedVerification",
    "RunContext",
    "RunCounts",
    "RunManifest",
    "SandboxSettings",
    "Scenario",
    "ScenarioSets",
    "ScorerCheckResult",
    "ScorerContext",
    "ScorerResult",
    "SessionAnalysisBundle",
    "SessionHandle",
    "SessionTrace",
    "SolutionSpec",
    "StepSpec",
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
    "TrialMount",
    "TrialSpec",
    "Turn",
    "TurnBoundaryEvent",
    "VerifierSpec",
    "WorkspaceReport",
    "WorkspaceSpec",
]
# End of the written names.
