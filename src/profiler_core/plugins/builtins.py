"""Core's built-in plugins, by name: listed and registered without importing their modules.

``profiler list-plugins`` and ``profiler validate`` need every built-in
component's id, not its code: importing all fifteen modules (the providers'
HTTP and process machinery, the scorers' condition language) cost more than
the rest of start-up together. So each built-in plugin is a small object whose
registration hook names its components (``register("module:Class", id=...)``);
a component's module is imported, and its class checked against the contract,
when the component is first used. A test holds this table to the classes' own
ids and contracts.
"""

from __future__ import annotations

import types
from typing import Any

from .contracts import CONTRACTS
from .markers import hookimpl

#: plugin module -> (contract, ((component id, class in that module), ...))
BUILTIN_COMPONENTS: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "profiler_core.config.modes": (
        "mode_resolvers",
        (("config", "ConfigModeResolver"),),
    ),
    "profiler_core.metrics.collectors": (
        "collectors",
        (
            ("token", "TokenCollector"),
            ("latency", "LatencyCollector"),
            ("cost", "CostCollector"),
            ("tool_calls", "ToolCallCollector"),
        ),
    ),
    "profiler_core.metrics.wire": ("collectors", (("wire", "WireCollector"),)),
    "profiler_core.scorers.checks": ("scorers", (("checks", "ChecksScorer"),)),
    "profiler_core.providers.simulated": (
        "providers",
        (("simulated", "SimulatedProvider"),),
    ),
    "profiler_core.providers.transcripts": (
        "providers",
        (("transcripts", "TranscriptsProvider"),),
    ),
    "profiler_core.providers.claude_code": (
        "providers",
        (("claude-code", "ClaudeCodeProvider"),),
    ),
    "profiler_core.providers.codex": ("providers", (("codex", "CodexProvider"),)),
    "profiler_core.providers.opencode": (
        "providers",
        (("opencode", "OpenCodeProvider"),),
    ),
    "profiler_core.providers.acp": ("providers", (("acp", "AcpProvider"),)),
    "profiler_core.providers.command": ("providers", (("command", "CommandProvider"),)),
    "profiler_core.providers.oracle": ("providers", (("oracle", "OracleProvider"),)),
    "profiler_core.providers.harbor": ("providers", (("harbor", "HarborProvider"),)),
    "profiler_core.judges.openai": ("judge_providers", (("openai", "OpenAIJudge"),)),
    "profiler_core.judges.opencode": (
        "judge_providers",
        (("opencode", "OpenCodeJudge"),),
    ),
    "profiler_core.scorers.llm_judge": ("scorers", (("llm-judge", "LlmJudgeScorer"),)),
    "profiler_core.scorers.composite": ("scorers", (("composite", "CompositeScorer"),)),
    "profiler_core.scorers.verify": ("scorers", (("verify", "VerifyScorer"),)),
    "profiler_core.environments.local": (
        "environments",
        (("none", "HostEnvironment"),),
    ),
    "profiler_core.environments.bwrap": (
        "environments",
        (("bwrap", "BwrapEnvironment"),),
    ),
    "profiler_core.environments.containers": (
        "environments",
        (("docker", "DockerEnvironment"), ("podman", "PodmanEnvironment")),
    ),
}


def builtin_plugin(module_name: str) -> Any:
    """The plugin object of a built-in module in :data:`BUILTIN_COMPONENTS`: one
    registration hook, naming its components."""
    contract, components = BUILTIN_COMPONENTS[module_name]
    hook = CONTRACTS[contract].hook

    def register_components(register: Any) -> None:
        for component_id, attribute in components:
            register(f"{module_name}:{attribute}", id=component_id)

    register_components.__qualname__ = f"{module_name}.{hook}"
    return types.SimpleNamespace(**{hook: hookimpl(register_components)})


__all__ = ["BUILTIN_COMPONENTS", "builtin_plugin"]
