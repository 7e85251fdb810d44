"""agent-profiler: profile AI agent sessions and tell which set-up is better.

This module re-exports the public API for plugin authors. Importing it is cheap:
each name is imported from its own module when first used (no model, no numpy,
no matplotlib, no plugins until then).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # what the names below resolve to, for type checkers
    from .dataset.frames import RunTables, load_run
    from .metrics.messages import (
        Message,
        ToolCall,
        ToolCallFunction,
        normalize_message,
        normalize_messages,
    )
    from .metrics.usage import TokensUsage, normalize_usage, tokens_usage
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
    from .plugins.markers import hookimpl
    from .runner import RunOptions, run_profile_suite, run_profile_suite_sync
    from .storage.paths import atomic_write_text
    from .storage.serde import from_json, structure, to_json, unstructure

    __version__: str

#: Public name -> the module that defines it, imported on first use (PEP 562): ``import profiler_core``
#: costs next to nothing, and ``from profiler_core import hookimpl`` does not build the data model.
_LAZY: dict[str, str] = {
    "hookimpl": ".plugins.markers",
    **dict.fromkeys(
        (
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
            "TrialMount",
            "TrialSpec",
            "TokenBreakdown",
            "ToolCallEvent",
            "ToolCallRecord",
            "ToolCallSummary",
            "TraceEvent",
            "TraceSummary",
            "Turn",
            "TurnBoundaryEvent",
        ),
        ".model",
    ),
    "from_json": ".storage.serde",
    "atomic_write_text": ".storage.paths",
    "to_json": ".storage.serde",
    "structure": ".storage.serde",
    "unstructure": ".storage.serde",
    # The runner pulls in trio.
    "RunOptions": ".runner",
    "run_profile_suite": ".runner",
    "run_profile_suite_sync": ".runner",
    # Normalizing vendor payloads (docs/normalization.md)
    "normalize_usage": ".metrics.usage",
    "TokensUsage": ".metrics.usage",
    "tokens_usage": ".metrics.usage",
    "normalize_messages": ".metrics.messages",
    "normalize_message": ".metrics.messages",
    "Message": ".metrics.messages",
    "ToolCall": ".metrics.messages",
    "ToolCallFunction": ".metrics.messages",
    # pandas or polars only when asked for
    "load_run": ".dataset.frames",
    "RunTables": ".dataset.frames",
}

#: The distribution whose metadata holds the version (pyproject.toml is its one source).
DISTRIBUTION = "agent-profiler"


def _version() -> str:
    from .plugins.discovery import installed_version

    found = installed_version(DISTRIBUTION)  # the folder's name: no importlib.metadata
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> object:
    if name == "__version__":
        return _version()
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'profiler_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
