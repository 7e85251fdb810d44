"""agent-profiler: profile AI agent sessions and tell which set-up is better.

This module re-exports the public API for plugin authors. Importing it is cheap
(no numpy, no matplotlib, no plugins).
"""

from __future__ import annotations

from ._hookmarkers import hookimpl
from .errors import (
    ConfigError,
    DuplicateComponentError,
    HookError,
    PluginLoadError,
    ProfilerError,
    RateLimitedError,
    SandboxError,
    StoreError,
    UnknownComponentError,
    UnknownModeError,
    ValidationError,
)
from .model import (
    AfterScenarioContext,
    AnalysisFinding,
    AnalysisResult,
    BeforeScenarioContext,
    CheckpointResult,
    CostBreakdown,
    CreateSessionParams,
    CustomMetric,
    ErrorEvent,
    JudgeCriterion,
    JudgeRequest,
    JudgeResponse,
    JudgeRubric,
    ListFinding,
    ModeConfig,
    ModelUsage,
    NumberFinding,
    PermissionConfig,
    ProfileRow,
    ProfileSuiteResult,
    ProgressEvent,
    PromptMetrics,
    PromptResult,
    ProviderConfig,
    RatioFinding,
    ReasoningEvent,
    RunContext,
    RunManifest,
    Scenario,
    ScenarioSets,
    ScorerCheckResult,
    ScorerContext,
    ScorerResult,
    SessionAnalysisBundle,
    SessionHandle,
    SessionTrace,
    StringFinding,
    TableFinding,
    TextOutputEvent,
    TimingBreakdown,
    TimingSegment,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    ToolCallSummary,
    TraceEvent,
    TraceSummary,
    Turn,
    TurnBoundaryEvent,
)
from .serde import from_json, to_json

#: The distribution whose metadata holds the version (pyproject.toml is its one source).
DISTRIBUTION = "agent-profiler"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        return _version()
    # The runner pulls in trio; load it only when asked for.
    if name in ("run_profile_suite", "run_profile_suite_sync", "RunOptions"):
        from . import runner

        return getattr(runner, name)
    if name in ("load_run", "RunTables"):  # pandas or polars only when asked for
        from .dataset import frames

        return getattr(frames, name)
    raise AttributeError(f"module 'profiler_core' has no attribute {name!r}")


__all__ = [
    "AfterScenarioContext",
    "AnalysisFinding",
    "AnalysisResult",
    "BeforeScenarioContext",
    "CheckpointResult",
    "ConfigError",
    "CostBreakdown",
    "CreateSessionParams",
    "CustomMetric",
    "DuplicateComponentError",
    "ErrorEvent",
    "HookError",
    "JudgeCriterion",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeRubric",
    "ListFinding",
    "ModeConfig",
    "ModelUsage",
    "NumberFinding",
    "PermissionConfig",
    "PluginLoadError",
    "ProfileRow",
    "ProfileSuiteResult",
    "ProfilerError",
    "ProgressEvent",
    "PromptMetrics",
    "PromptResult",
    "ProviderConfig",
    "RateLimitedError",
    "RatioFinding",
    "ReasoningEvent",
    "RunContext",
    "RunManifest",
    "RunOptions",
    "RunTables",
    "SandboxError",
    "Scenario",
    "ScenarioSets",
    "ScorerCheckResult",
    "ScorerContext",
    "ScorerResult",
    "SessionAnalysisBundle",
    "SessionHandle",
    "SessionTrace",
    "StoreError",
    "StringFinding",
    "TableFinding",
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
    "UnknownComponentError",
    "UnknownModeError",
    "ValidationError",
    "__version__",
    "from_json",
    "hookimpl",
    "load_run",
    "run_profile_suite",
    "run_profile_suite_sync",
    "to_json",
]
