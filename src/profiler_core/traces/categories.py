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
    return _CATEGORY_OF.get(lowered, "other")
