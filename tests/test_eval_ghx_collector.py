"""The ghx collector: every classification rule, in order, from traces and from prompt results."""

from __future__ import annotations

import pytest

from profiler_core import (
    PromptMetrics,
    PromptResult,
    Scenario,
    SessionTrace,
    TextOutputEvent,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    TraceSummary,
)
from profiler_eval_ghx.collector import METRICS, GhxCollector, classify, shell_command

#: An eval scenario (the collector counts only those): the extensions the ghx format
#: gives every scenario.
SCENARIO = Scenario(
    id="issue-close-001",
    name="x",
    prompt="p",
    extensions={
        "category": "issue",
        "difficulty": "basic",
        "assertions": {"checkpoints": []},
    },
)


@pytest.mark.parametrize(
    ("name", "tool_input", "category"),
    [
        # 1. ghx by name
        ("ghx", None, "ghx"),
        ("ghx.run", None, "ghx"),
        ("ghx_issue_view", None, "ghx"),
        ("ghxfoo", None, "other"),
        ("ghx-run", None, "other"),
        # 2. MCP
        ("github_create_issue", None, "mcp"),
        ("mcp_github_search", None, "mcp"),
        ("mcp__github__get_issue", None, "mcp"),
        ("githubx", None, "other"),
        # 3. file tools, including OpenCode's lowercase names
        *[
            (n, {"filePath": "a"}, "file_ops")
            for n in (
                "read_file",
                "write_file",
                "edit_file",
                "list_files",
                "list_directory",
                "create_file",
                "delete_file",
                "view_file",
                "Read",
                "Write",
                "Edit",
                "Glob",
                "read",
                "write",
                "edit",
                "glob",
                "list",
            )
        ],
        ("READ", None, "other"),
        # 4. shell tools by their command
        ("bash", {"command": "gh issue close 12 --repo acme/s"}, "gh_cli"),
        ("bash", {"command": "  gh"}, "gh_cli"),
        ("Bash", {"command": "/usr/local/bin/gh pr view 3 --json state"}, "gh_cli"),
        ("shell", {"cmd": "GH_TOKEN=x GH_HOST=h gh api /user"}, "gh_cli"),
        ("terminal", {"input": "gh label list"}, "gh_cli"),
        ("run_terminal_cmd", {"command": "ghx run issue.view --input -"}, "ghx"),
        ("bash", {"command": "./node_modules/.bin/ghx run pr.view"}, "ghx"),
        ("bash", {"command": "/bin/bash -lc 'gh issue list'"}, "gh_cli"),
        ("exec_command", {"cmd": ["/bin/bash", "-lc", "ghx run issue.view"]}, "ghx"),
        ("exec_command", {"cmd": ["gh", "pr", "list"]}, "gh_cli"),
        ("bash", {"command": "ghost --version"}, "bash"),
        (
            "bash",
            {"command": "git push && gh pr create"},
            "bash",
        ),  # the command starts with git
        ("bash", {"command": "echo 'unbalanced"}, "bash"),
        ("bash", {"description": "no command"}, "bash"),
        ("bash", None, "bash"),
        ("bash", "gh issue view 1", "gh_cli"),
        # 5. anything else
        ("webfetch", {"url": "https://github.com"}, "other"),
        ("todowrite", {}, "other"),
    ],
)
def test_classification_rules(name, tool_input, category):
    assert classify(name, tool_input) == category


def test_rules_apply_in_order():
    # a ghx_ name wins over everything, an MCP name over file and shell names
    assert classify("ghx_bash", {"command": "gh issue list"}) == "ghx"
    assert classify("mcp__files__read", None) == "mcp"


def test_shell_command_unwraps_shells():
    assert shell_command({"command": "/bin/bash -lc 'gh pr view 3'"}) == "gh pr view 3"
    assert shell_command({"cmd": ["sh", "-c", "ghx run x"]}) == "ghx run x"
    assert shell_command({"command": ["ls", "-la"]}) == "ls -la"
    assert shell_command(42) is None


def result_with(*names: str) -> PromptResult:
    return PromptResult(
        text="done",
        metrics=PromptMetrics(
            tokens=TokenBreakdown(input=1, output=1),
            timing=TimingBreakdown(wall_ms=10),
            tool_calls=tuple(ToolCallRecord(name=n) for n in names),
        ),
    )


def trace_with(*calls: tuple[str, object]) -> SessionTrace:
    events = [ToolCallEvent(name=n, input=i, output="") for n, i in calls] + [
        TextOutputEvent(content="done")
    ]
    return SessionTrace(
        session_id="s",
        events=events,
        turns=(),
        summary=TraceSummary(
            total_turns=1,
            total_tool_calls=len(calls),
            total_tokens=TokenBreakdown(),
            total_duration=10,
        ),
    )


def metrics(result, trace) -> dict:
    out = GhxCollector().collect(result, SCENARIO, "ghx", trace)
    assert all(m.unit == "count" for m in out)
    return {m.name: m.value for m in out}


def test_from_the_trace_with_inputs():
    trace = trace_with(
        ("bash", {"command": "ghx run issue.view --input -"}),
        ("bash", {"command": "ghx run issue.close --input -"}),
        ("ghx", {}),
        ("github_get_issue", {}),
        ("bash", {"command": "gh issue view 1"}),
        ("bash", {"command": "ls"}),
        ("read", {"filePath": "README.md"}),
        ("todowrite", {}),
    )
    # the prompt result lists other calls: the trace wins when there is one
    assert metrics(result_with("Bash"), trace) == {
        "ghx.capabilities_used": 3,
        "ghx.mcp_tools_invoked": 1,
        "ghx.gh_cli_commands": 1,
        "ghx.bash_commands": 1,
        "ghx.file_ops": 1,
        "ghx.other_tools": 1,
    }


def test_from_the_prompt_result_without_a_trace():
    # names only: a shell call cannot be told apart and counts as bash
    assert metrics(
        result_with("bash", "bash", "ghx.run", "mcp__github__list", "Edit", "webfetch"),
        None,
    ) == {
        "ghx.capabilities_used": 1,
        "ghx.mcp_tools_invoked": 1,
        "ghx.gh_cli_commands": 0,
        "ghx.bash_commands": 2,
        "ghx.file_ops": 1,
        "ghx.other_tools": 1,
    }


def test_all_six_metrics_always_present_in_a_fixed_order():
    out = GhxCollector().collect(result_with(), SCENARIO, "baseline", None)
    assert [m.name for m in out] == list(METRICS.values())
    assert [m.value for m in out] == [0] * 6
    assert [
        m.name
        for m in GhxCollector().collect(result_with(), SCENARIO, "ghx", trace_with())
    ] == list(METRICS.values())


def test_the_plugin_registers_the_collector():
    from profiler_core.plugins.manager import get_plugin_manager

    assert (
        get_plugin_manager().registry.get("collectors", "ghx").factory is GhxCollector
    )
