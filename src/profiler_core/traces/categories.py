"""Tool names -> coarse categories (``tool_calls_category_<name>`` metrics)."""

from __future__ import annotations

_CATEGORIES = {
    "shell": {
        "bash",
        "sh",
        "shell",
        "terminal",
        "exec_command",
        "run_command",
        "execute_command",
        "run_shell_command",
        "run_terminal_cmd",
        "local_shell",
        "powershell",
        "bashoutput",
        "killshell",
        "killbash",
    },
    "file": {
        "read",
        "read_file",
        "write",
        "write_file",
        "edit",
        "multiedit",
        "notebookedit",
        "notebookread",
        "patch",
        "apply_patch",
        "str_replace_editor",
        "str_replace_based_edit_tool",
        "view",
        "list",
        "ls",
        "create_file",
    },
    "search": {"grep", "glob", "search", "find", "codesearch", "file_search", "lsp"},
    "web": {"webfetch", "web_fetch", "websearch", "web_search", "fetch"},
    "agent": {"task", "agent", "subagent", "dispatch_agent"},
}


_CATEGORY_OF = {
    name: category for category, names in _CATEGORIES.items() for name in names
}


def tool_category(name: str) -> str:
    """A coarse category for a tool name (``tool_calls_category_<name>`` metrics):
    shell, file, search, web, agent, mcp, other."""
    lowered = name.lower()
    if lowered.startswith("mcp_"):
        return "mcp"
    category = _CATEGORY_OF.get(lowered)
    if category is None:
        # an agent the registry added names its own shell tools (config/agents.toml)
        category = "shell" if lowered in _registry_shell_tools() else "other"
    return category


def _registry_shell_tools() -> set[str]:
    """The shell tools the agents' registry names, lower-cased (its table is read once per path)."""
    from ..config.agents import shell_tools

    return {tool.lower() for tool in shell_tools()}
