"""The ``ghx`` collector: how the agent reached GitHub (ghx, MCP, the gh CLI, plain
shell, files, other).

Every tool call falls into one category, by the first rule that matches:

1. ``ghx``, ``ghx.*``, ``ghx_*``                       -> ghx (``ghxfoo`` is not)
2. ``github_*``, ``mcp_*``, ``mcp__*``                 -> mcp
3. file tools (``read_file`` ... ``Read`` ... ``read``) -> file_ops
4. shell tools (``bash``, ``shell``, ``terminal``, ``Bash``, ``run_terminal_cmd``;
   also Codex's ``exec_command``) by their command (``command``, ``cmd`` or ``input``):
   ``ghx ...`` -> ghx, ``gh ...`` (or ``/path/to/gh ...``) -> gh_cli, anything else -> bash
5. everything else                                      -> other

The calls come from the session trace when there is one (it carries the tool
inputs, so shell commands can be told apart), else from the prompt result's
tool calls (names only: a shell call then counts as bash).

The counts are emitted for the eval's own scenarios (``scenarios.format: ghx``)
only, so runs that never used the eval plugin get no ``ghx.*`` metrics even with
``collectors: all``; the option ``always: true`` counts every scenario.
"""

from __future__ import annotations

import os
import re
import shlex
from collections import Counter
from collections.abc import Iterable
from typing import Any

from profiler_core import (
    CustomMetric,
    PromptResult,
    Scenario,
    SessionTrace,
    ToolCallEvent,
)
from profiler_core.errors import ConfigError

__all__ = [
    "CATEGORIES",
    "FILE_TOOLS",
    "METRICS",
    "SHELL_TOOLS",
    "GhxCollector",
    "classify",
    "shell_command",
]

CATEGORIES = ("ghx", "mcp", "gh_cli", "bash", "file_ops", "other")

#: Metric name of each category (unit ``count``; all six are always emitted).
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
        "read_file", "write_file", "edit_file", "list_files", "list_directory", "create_file", "delete_file", "view_file",
        "Read", "Write", "Edit", "Glob",
        # OpenCode's own tool names (the original missed these).
        "read", "write", "edit", "glob", "list",
    }
)  # fmt: skip

SHELL_TOOLS = frozenset(
    {"bash", "shell", "terminal", "Bash", "run_terminal_cmd", "exec_command"}
)

_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def shell_command(tool_input: Any) -> str | None:
    """The command line of a shell tool call (``command``, ``cmd`` or ``input``),
    unwrapped from ``bash -lc '...'``."""
    if isinstance(tool_input, str):
        command: Any = tool_input
    elif isinstance(tool_input, dict):
        command = next(
            (tool_input[k] for k in ("command", "cmd", "input") if tool_input.get(k)),
            None,
        )
    else:
        return None
    if isinstance(command, (list, tuple)):
        # Codex passes argv: ["/bin/bash", "-lc", "gh pr view 3"].
        argv = [str(part) for part in command]
    elif isinstance(command, str):
        try:
            argv = shlex.split(command)
        except (
            ValueError
        ):  # unbalanced quotes: the text as it is still names the program
            return command.strip()
        if not _wrapped(argv):
            return command.strip()
    else:
        return None
    return (argv[2] if _wrapped(argv) else " ".join(argv)).strip()


def _wrapped(argv: list[str]) -> bool:
    """``bash -lc 'script'``: the script is the command that matters."""
    return (
        len(argv) >= 3
        and os.path.basename(argv[0]) in _SHELLS
        and argv[1] in ("-c", "-lc", "-ic")
    )


def _program(command: str) -> str:
    """The program a command line starts with (after ``VAR=value`` prefixes), as its base name."""
    for word in command.split():
        if not _ENV_ASSIGNMENT.match(word):
            return word.rsplit("/", 1)[-1]
    return ""


def classify(name: str, tool_input: Any = None) -> str:
    """The category of one tool call (see the module docstring for the rules and their order)."""
    if name == "ghx" or name.startswith(("ghx.", "ghx_")):
        return "ghx"
    if name.startswith(("github_", "mcp_", "mcp__")):
        return "mcp"
    if name in FILE_TOOLS:
        return "file_ops"
    if name in SHELL_TOOLS:
        command = shell_command(tool_input)
        program = _program(command) if command else ""
        if program == "ghx":
            return "ghx"
        if program == "gh":
            return "gh_cli"
        return "bash"
    return "other"


def _calls(
    result: PromptResult, trace: SessionTrace | None
) -> Iterable[tuple[str, Any]]:
    if trace is not None:
        return [(e.name, e.input) for e in trace.events if isinstance(e, ToolCallEvent)]
    return [(call.name, None) for call in result.metrics.tool_calls]


#: The extensions every eval scenario carries (see ``scenario.to_core_scenario``).
EVAL_KEYS = ("category", "difficulty", "assertions")


class GhxCollector:
    """Counts the iteration's tool calls by how they reached GitHub: ``ghx.*`` metrics."""

    id = "ghx"

    def __init__(self, *, always: bool = False) -> None:
        if not isinstance(always, bool):
            raise ConfigError(
                f"collector 'ghx': option always: expected true or false, got {always!r}"
            )
        self.always = always

    def collect(
        self,
        result: PromptResult,
        scenario: Scenario,
        mode: str,
        trace: SessionTrace | None,
    ) -> list[CustomMetric]:
        """Emit the six ``ghx.*`` counts (zero included) of an eval scenario (of any,
        with ``always``)."""
        if not self.always and not all(
            key in (scenario.extensions or {}) for key in EVAL_KEYS
        ):
            return []
        counts = Counter(
            classify(name, tool_input) for name, tool_input in _calls(result, trace)
        )
        return [
            CustomMetric(name=METRICS[c], value=counts.get(c, 0), unit="count")
            for c in CATEGORIES
        ]
