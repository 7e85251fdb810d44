"""``ghx`` collector: how the agent reached GitHub — ghx, the MCP server, the gh CLI, bash, file tools or other tools."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from profiler_core import CustomMetric

#: metric name per category, in the order they are reported (all six always)
METRICS = {
    "ghx": "ghx.capabilities_used",
    "mcp": "ghx.mcp_tools_invoked",
    "gh_cli": "ghx.gh_cli_commands",
    "bash": "ghx.bash_commands",
    "file_ops": "ghx.file_ops",
    "other": "ghx.other_tools",
}

FILE_TOOLS = frozenset(
    {
        "read_file", "write_file", "edit_file", "list_files", "list_directory", "create_file", "delete_file",
        "view_file", "Read", "Write", "Edit", "Glob",
        # OpenCode's own lower-case names (the original missed these).
        "read", "write", "edit", "glob", "list",
    }
)
SHELL_TOOLS = frozenset({"bash", "shell", "terminal", "Bash", "run_terminal_cmd"})
_GH = re.compile(r"^\s*(?:\S*/)?gh(?:\s|$)")
_GHX = re.compile(r"^\s*(?:\S*/)?ghx(?:\s|$)")


def _command(tool_input: Any) -> str:
    if isinstance(tool_input, Mapping):
        for key in ("command", "cmd", "input"):
            value = tool_input.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return " ".join(value)
    return tool_input if isinstance(tool_input, str) else ""


def classify(name: str, tool_input: Any = None) -> str:
    """The category of one tool call, by the original's rules in order (plus ghx run through a shell)."""
    if name == "ghx" or name.startswith(("ghx.", "ghx_")):
        return "ghx"
    if name.startswith(("github_", "mcp_")):  # "mcp__" starts with "mcp_" too
        return "mcp"
    if name in FILE_TOOLS:
        return "file_ops"
    if name in SHELL_TOOLS:
        command = _command(tool_input)
        if _GHX.match(command):
            return "ghx"  # `ghx run ...` through the shell is the very thing measured
        if _GH.match(command):
            return "gh_cli"
        return "bash"
    return "other"


def count(calls: Iterable[tuple[str, Any]]) -> dict[str, int]:
    """Calls per category (every category present)."""
    counts = dict.fromkeys(METRICS, 0)
    for name, tool_input in calls:
        counts[classify(name, tool_input)] += 1
    return counts


class GhxCollector:
    """Six ``ghx.*`` counts per session, from the trace's tool events, else the prompt result's tool calls."""

    id = "ghx"

    def __init__(self, **options: Any) -> None:
        self.options = options

    def collect(self, result: Any, scenario: Any, mode: str, trace: Any = None) -> list[CustomMetric]:
        """The six metrics (unit ``count``)."""
        if trace is not None:
            calls = [(e.name, e.input) for e in trace.events if type(e).__name__ == "ToolCallEvent"]
        else:
            # Without a trace there are no inputs: shell calls count as bash.
            calls = [(r.name, None) for r in result.metrics.tool_calls]
        counts = count(calls)
        return [CustomMetric(name=METRICS[k], value=counts[k], unit="count") for k in METRICS]
