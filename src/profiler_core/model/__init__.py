"""The data model: attrs classes only, importing nothing else of the project."""

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
    CustomMetric,
    PromptMetrics,
    TimingBreakdown,
    TimingSegment,
    TokenBreakdown,
    ToolCallRecord,
)
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
)
from .scenario import Scenario, ScenarioSets
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
)

import types as _types

__all__ = [n for n, v in dict(globals()).items() if not n.startswith("_") and not isinstance(v, _types.ModuleType)]
