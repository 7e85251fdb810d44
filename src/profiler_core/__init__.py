"""agent-profiler: profile AI agent sessions and tell which set-up is better.

This module re-exports the public API for plugin authors. Importing it is cheap:
each name is imported from its own module when first used (no model, no numpy,
no matplotlib, no plugins until then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports
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

if TYPE_CHECKING:
    __version__: str

#: the public names this module imports itself (the exceptions) or works out (the version)
_EAGER = (
    "ConfigError",
    "DuplicateComponentError",
    "HookError",
    "PluginLoadError",
    "ProfilerError",
    "RateLimitedError",
    "SandboxError",
    "StoreError",
    "UnknownComponentError",
    "UnknownModeError",
    "ValidationError",
    "__version__",
)

#: Module -> the public names it defines, imported on first use (PEP 562): ``import profiler_core``
#: costs next to nothing, and ``from profiler_core import hookimpl`` does not build the data model.
#: The runner pulls in trio; ``dataset.frames`` pandas or polars, only when asked for;
#: ``metrics`` normalizes vendor payloads (docs/normalization.md).
_LAZY = {
    "plugins.markers": ("hookimpl",),
    "model.report": ("ReportSection",),
    "dataset.frames": ("RunTables", "load_run"),
    "metrics.messages": (
        "Message",
        "ToolCall",
        "ToolCallFunction",
        "normalize_message",
        "normalize_messages",
    ),
    "metrics.usage": ("TokensUsage", "normalize_usage", "tokens_usage"),
    "model": (
        "AfterScenarioContext",
        "AnalysisFinding",
        "AnalysisResult",
        "BeforeScenarioContext",
        "CheckpointResult",
        "CostBreakdown",
        "CreateSessionParams",
        "CustomMetric",
        "EnvironmentCapabilities",
        "ErrorEvent",
        "ExecResult",
        "JudgeCriterion",
        "JudgeRequest",
        "JudgeResponse",
        "JudgeRubric",
        "ListFinding",
        "ModeConfig",
        "ModelCallEvent",
        "ModelUsage",
        "NumberFinding",
        "PermissionConfig",
        "ProfileRow",
        "ProfileSuiteResult",
        "ProgressEvent",
        "PromptMetrics",
        "PromptResult",
        "ProviderConfig",
        "RatioFinding",
        "ReasoningEvent",
        "RunContext",
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
        "TrialMount",
        "TrialSpec",
        "Turn",
        "TurnBoundaryEvent",
    ),
    "runner": ("RunOptions", "run_profile_suite", "run_profile_suite_sync"),
    "storage.paths": ("atomic_write_text",),
    "storage.serde": ("from_json", "structure", "to_json", "unstructure"),
}

_load = lazy_exports(__name__, _LAZY)

# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand.
if TYPE_CHECKING:
    from .dataset.frames import (
        RunTables,
        load_run,
    )
    from .metrics.messages import (
        Message,
        ToolCall,
        ToolCallFunction,
        normalize_message,
        normalize_messages,
    )
    from .metrics.usage import (
        TokensUsage,
        normalize_usage,
        tokens_usage,
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
        EnvironmentCapabilities,
        ErrorEvent,
        ExecResult,
        JudgeCriterion,
        JudgeRequest,
        JudgeResponse,
        JudgeRubric,
        ListFinding,
        ModeConfig,
        ModelCallEvent,
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
        SandboxSettings,
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
        TrialMount,
        TrialSpec,
        Turn,
        TurnBoundaryEvent,
    )
    from .model.report import (
        ReportSection,
    )
    from .plugins.markers import (
        hookimpl,
    )
    from .runner import (
        RunOptions,
        run_profile_suite,
        run_profile_suite_sync,
    )
    from .storage.paths import (
        atomic_write_text,
    )
    from .storage.serde import (
        from_json,
        structure,
        to_json,
        unstructure,
    )

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
    "EnvironmentCapabilities",
    "ErrorEvent",
    "ExecResult",
    "HookError",
    "JudgeCriterion",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeRubric",
    "ListFinding",
    "Message",
    "ModeConfig",
    "ModelCallEvent",
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
    "ReportSection",
    "RunContext",
    "RunManifest",
    "RunOptions",
    "RunTables",
    "SandboxError",
    "SandboxSettings",
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
    "TokensUsage",
    "ToolCall",
    "ToolCallEvent",
    "ToolCallFunction",
    "ToolCallRecord",
    "ToolCallSummary",
    "TraceEvent",
    "TraceSummary",
    "TrialMount",
    "TrialSpec",
    "Turn",
    "TurnBoundaryEvent",
    "UnknownComponentError",
    "UnknownModeError",
    "ValidationError",
    "__version__",
    "atomic_write_text",
    "from_json",
    "hookimpl",
    "load_run",
    "normalize_message",
    "normalize_messages",
    "normalize_usage",
    "run_profile_suite",
    "run_profile_suite_sync",
    "structure",
    "to_json",
    "tokens_usage",
    "unstructure",
]
# End of the written names.


def __getattr__(name: str) -> object:
    if name == "__version__":
        from .util.version import version

        return version()
    return _load(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
