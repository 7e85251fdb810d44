"""The ghx collector's rules and the eval mode resolver's sources (issue 14)."""

from __future__ import annotations

import os

import pytest

from profiler_core import (
    PromptMetrics,
    PromptResult,
    SessionTrace,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    TraceSummary,
    UnknownModeError,
)
from profiler_eval_ghx.collector import METRICS, GhxCollector, classify
from profiler_eval_ghx.modes import BASELINE_INSTRUCTIONS, GHX_FALLBACK, EvalModeResolver, find_skill


@pytest.mark.parametrize(
    ("name", "tool_input", "category"),
    [
        ("ghx", None, "ghx"), ("ghx.issue.view", None, "ghx"), ("ghx_run", None, "ghx"), ("ghxfoo", None, "other"),
        ("github_get_issue", None, "mcp"), ("mcp_github_list", None, "mcp"), ("mcp__github__pr", None, "mcp"),
        ("read_file", None, "file_ops"), ("Edit", None, "file_ops"), ("read", None, "file_ops"), ("glob", None, "file_ops"),
        ("list", None, "file_ops"),
        ("bash", {"command": "gh issue close 7"}, "gh_cli"), ("shell", {"cmd": "/usr/bin/gh pr view 3"}, "gh_cli"),
        ("Bash", {"command": "ghx run issue.view --input -"}, "ghx"), ("terminal", {"input": "ls -la"}, "bash"),
        ("run_terminal_cmd", {"command": "ghost"}, "bash"), ("bash", None, "bash"), ("webfetch", None, "other"),
    ],
)
def test_classification_rules(name, tool_input, category):
    assert classify(name, tool_input) == category


def _trace(*calls):
    events = tuple(ToolCallEvent(name=n, input=i, output=None) for n, i in calls)
    return SessionTrace(session_id="s", events=events, turns=(), summary=TraceSummary(
        total_turns=1, total_tool_calls=len(events), total_tokens=TokenBreakdown(), total_duration=0))


def _result(*names):
    return PromptResult(text="", metrics=PromptMetrics(
        tokens=TokenBreakdown(), timing=TimingBreakdown(wall_ms=1), tool_calls=tuple(ToolCallRecord(name=n) for n in names)))


def test_collector_counts_from_the_trace_else_the_tool_calls():
    trace = _trace(("bash", {"command": "gh pr list"}), ("bash", {"command": "ghx run pr.view"}), ("read", {}), ("github_x", {}))
    metrics = {m.name: m.value for m in GhxCollector().collect(_result(), None, "ghx", trace)}
    assert list(metrics) == list(METRICS.values())
    assert metrics == {"ghx.capabilities_used": 1, "ghx.mcp_tools_invoked": 1, "ghx.gh_cli_commands": 1,
                       "ghx.bash_commands": 0, "ghx.file_ops": 1, "ghx.other_tools": 0}
    without = {m.name: m.value for m in GhxCollector().collect(_result("bash", "ghx.issue.view", "x"), None, "ghx", None)}
    assert without["ghx.bash_commands"] == 1 and without["ghx.capabilities_used"] == 1 and without["ghx.other_tools"] == 1
    assert all(m.unit == "count" for m in GhxCollector().collect(_result(), None, "m", None))


def test_ghx_mode_path_from_ghx_bin_dir_else_node_modules(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", "/usr/bin")
    monkeypatch.setenv("GHX_BIN_DIR", "/opt/ghx/bin")
    assert EvalModeResolver().resolve("ghx").environment["PATH"] == f"/opt/ghx/bin{os.pathsep}/usr/bin"
    monkeypatch.delenv("GHX_BIN_DIR")
    monkeypatch.chdir(tmp_path)
    assert EvalModeResolver().resolve("ghx").environment["PATH"].startswith(str(tmp_path / "node_modules" / ".bin"))
    assert os.environ["PATH"] == "/usr/bin"  # resolving changes nothing in the process


def test_skill_md_search_order(monkeypatch, tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    for name in ("ghx", "using-ghx"):
        (home / ".agents" / "skills" / name).mkdir(parents=True)
        (home / ".agents" / "skills" / name / "SKILL.md").write_text(name)
    assert find_skill({}, cwd, home).parent.name == "using-ghx"  # before plain "ghx"
    (cwd / "SKILL.md").write_text("local")
    assert find_skill({}, cwd, home) == cwd / "SKILL.md"
    explicit = tmp_path / "mine.md"
    explicit.write_text("explicit skill")
    assert find_skill({"GHX_SKILL_MD": str(explicit)}, cwd, home) == explicit
    monkeypatch.setenv("GHX_SKILL_MD", str(explicit))
    assert EvalModeResolver().resolve("ghx").system_instructions == "explicit skill"
    monkeypatch.delenv("GHX_SKILL_MD")
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    monkeypatch.chdir(tmp_path)
    assert EvalModeResolver().resolve("ghx").system_instructions == GHX_FALLBACK


def test_mcp_server_reaches_the_provider_by_reference_to_the_token(monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "ghp_secretvalue1234567890")
    monkeypatch.delenv("GITHUB_MCP_COMMAND", raising=False)
    remote = EvalModeResolver().resolve("mcp").provider_overrides["mcp"]["github"]
    assert remote == {"type": "remote", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer {env:GH_TOKEN}"}}
    local = EvalModeResolver(mcp_command="github-mcp-server").resolve("mcp").provider_overrides["mcp"]["github"]
    assert local["command"] == ["github-mcp-server", "stdio"] and local["environment"] == {"GITHUB_PERSONAL_ACCESS_TOKEN": "{env:GH_TOKEN}"}
    assert "ghp_secretvalue" not in repr(EvalModeResolver().resolve("mcp"))


def test_mcp_overrides_reach_the_opencode_config(monkeypatch):
    from profiler_core import PermissionConfig
    from profiler_eval_ghx.opencode.config import OpenCodeOptions, opencode_config

    overrides = EvalModeResolver().resolve("mcp").provider_overrides
    config = opencode_config(OpenCodeOptions.parse({"base_url": "http://127.0.0.1:9", **overrides}), "local/m", PermissionConfig())
    assert config["mcp"]["github"]["type"] == "remote"


def test_baseline_and_unknown_modes():
    assert EvalModeResolver().resolve("baseline").system_instructions == BASELINE_INSTRUCTIONS
    assert "--json" in BASELINE_INSTRUCTIONS
    with pytest.raises(UnknownModeError, match="ghx, mcp, baseline"):
        EvalModeResolver().resolve("ghxx")
