"""A ghx capability run through the shell is a tool of its own for the analyzers
(``ghx:pr.review.submit``)."""

from __future__ import annotations

import pytest

from profiler_builtin_analyzers import ToolPatternAnalyzer, resolve_tool_display_name
from profiler_core import (
    SessionTrace,
    TokenBreakdown,
    ToolCallEvent,
    TraceSummary,
    Turn,
)


@pytest.mark.parametrize(
    ("tool", "tool_input", "shown"),
    [
        (
            "bash",
            {"command": "ghx run pr.review.submit --input - <<'EOF'\n{}\nEOF"},
            "ghx:pr.review.submit",
        ),
        (
            "bash",
            {"command": "cd repo && GH_TOKEN=x ghx run issue.view --input -"},
            "ghx:issue.view",
        ),
        (
            "exec_command",
            {"cmd": ["bash", "-lc", "./node_modules/.bin/ghx run pr.thread.reply"]},
            "ghx:pr.thread.reply",
        ),
        (
            "bash",
            {"command": "ghx run pr-review-submit --input -"},
            "ghx:pr-review-submit",
        ),  # any capability name
        ("bash", {"command": "ghx run repo_view"}, "ghx:repo_view"),
        (
            "bash",
            {"command": "ghx capabilities list"},
            "ghx capabilities",
        ),  # not a capability run
        (
            "bash",
            {"command": 'ghx run "$TASK" --input -'},
            "ghx run",
        ),  # a variable names no capability
        ("bash", {"command": "ghx run --help"}, "ghx run"),
        ("bash", {"command": "gh pr view 42"}, "gh pr"),
    ],
)
def test_a_capability_run_is_named_by_its_capability(tool, tool_input, shown):
    assert resolve_tool_display_name(tool, tool_input) == shown


def ghx(capability: str, ok: bool = True) -> ToolCallEvent:
    command = f"ghx run {capability} --input -"
    return ToolCallEvent(
        name="bash",
        input={"command": command},
        output={},
        success=ok,
        error=None if ok else "failed",
    )


def test_tool_patterns_tell_capabilities_apart():
    events = [
        ghx("pr.review.submit", ok=False),
        ghx("issue.view"),
        ghx("pr.review.submit"),
        ghx("issue.view"),
    ]
    turn = Turn(
        number=1, events=events, start_timestamp="", end_timestamp="", duration_ms=0
    )
    trace = SessionTrace(
        session_id="s",
        events=events,
        turns=[turn],
        summary=TraceSummary(
            total_turns=1,
            total_tool_calls=4,
            total_tokens=TokenBreakdown(),
            total_duration=0,
        ),
    )
    findings = ToolPatternAnalyzer().analyze(trace).findings
    assert findings["tool_sequence"].values == (
        "ghx:pr.review.submit",
        "ghx:issue.view",
        "ghx:pr.review.submit",
        "ghx:issue.view",
    )
    assert findings["unique_tools_used"].value == 2
    patterns = dict(findings["tool_call_patterns"].rows)
    assert patterns["ghx:pr.review.submit -> ghx:issue.view"] == "2"
    # A failed submit followed by a view is not a retry of the same capability.
    assert findings["failed_then_retried"].rows == ()
