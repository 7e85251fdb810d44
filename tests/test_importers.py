"""Importing recorded sessions: each format on hand-written files, bad files, and
`profiler import`."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from profiler_core import (
    ErrorEvent,
    ProfileRow,
    ReasoningEvent,
    ScorerResult,
    SessionAnalysisBundle,
    SessionTrace,
    TokenBreakdown,
    ToolCallEvent,
    TurnBoundaryEvent,
    ValidationError,
    from_json,
    hookimpl,
)
from profiler_core.importers import FORMATS, load_sessions, with_model
from profiler_core.metrics.pricing import price_tokens
from profiler_core.storage.store import RunLock, RunPaths, read_jsonl, read_manifest

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
CC_DST = FIXTURES / "claude-code" / "fix-dst-test.jsonl"
CC_API_ERROR = FIXTURES / "claude-code" / "api-error.jsonl"
OPENCODE = FIXTURES / "opencode" / "add-retry.json"
OPENAI_RUNS = FIXTURES / "openai" / "refund-001.jsonl"
OPENAI_RESULT = FIXTURES / "openai" / "overdue-invoice.json"
ANTHROPIC = FIXTURES / "anthropic" / "lisbon-weather.json"
TRACE = FIXTURES / "trace" / "pr-review.json"

#: one good fixture per format
GOOD = {
    "claude-code": CC_DST,
    "opencode": OPENCODE,
    "openai": OPENAI_RESULT,
    "anthropic": ANTHROPIC,
    "trace": TRACE,
    "codex": FIXTURES / "codex" / "notes.jsonl",
    "atif": FIXTURES.parent
    / "harbor_jobs"
    / "job-a"
    / "hello-world__Kq3vT9a"
    / "agent"
    / "trajectory.json",
}


def only(format: str, path: Path):
    sessions = load_sessions(format, path)
    assert len(sessions) == 1
    return sessions[0]


def assert_consistent(session) -> None:
    """PromptResult and SessionTrace of an imported session tell the same story."""
    result, trace = session.result, session.trace
    calls = [e for e in trace.events if isinstance(e, ToolCallEvent)]
    records = result.metrics.tool_calls
    assert [(c.name, c.success, c.error) for c in calls] == [
        (r.name, r.success, r.error) for r in records
    ]
    assert trace.summary.total_tool_calls == len(records)
    assert trace.summary.total_tokens == result.metrics.tokens
    assert trace.summary.total_duration == result.metrics.timing.wall_ms
    assert trace.summary.total_turns == len(trace.turns)
    boundaries = [e for e in trace.events if isinstance(e, TurnBoundaryEvent)]
    assert [b.turn_number for b in boundaries] == [t.number for t in trace.turns]
    assert sum(len(t.events) for t in trace.turns) + len(boundaries) <= len(
        trace.events
    )
    assert session.trace.session_id == session.session_id


# -- claude-code ----------------------------------------------------------------


def test_claude_code_counts_a_split_message_once():
    s = only("claude-code", CC_DST)
    # Hand-computed: one usage per message.id (6 responses), the largest output_tokens of its lines.
    assert s.result.metrics.tokens == TokenBreakdown(
        input=24, output=1058, cache_read=108_129, cache_write=6838
    )
    lines = [json.loads(line) for line in CC_DST.read_text().splitlines()]
    per_line = sum(
        e["message"]["usage"]["cache_read_input_tokens"]
        for e in lines
        if e.get("type") == "assistant"
    )
    assert per_line > 108_129  # the file really repeats usage over split lines
    assert s.trace.summary.total_turns == 6  # 10 assistant lines, 6 responses
    assert s.session_id == "5f0c2b9e-7d4a-4c1e-9a3b-2e8f6d1c4a70"
    assert s.model == "claude-sonnet-4-5-20250929"
    assert_consistent(s)


def test_claude_code_tools_thinking_text_and_time():
    s = only("claude-code", CC_DST)
    records = s.result.metrics.tool_calls
    assert [(r.name, r.category, r.success) for r in records] == [
        ("Read", "file", True),
        ("Bash", "shell", False),
        ("Grep", "search", True),
        ("Read", "file", False),
        ("Edit", "file", True),
        ("Bash", "shell", True),
    ]
    assert "AssertionError: assert 3 == 2" in records[1].error
    assert "File does not exist" in records[3].error
    assert records[1].duration_ms == pytest.approx(
        2365.0
    )  # tool_use line -> tool_result line
    thoughts = [e for e in s.trace.events if isinstance(e, ReasoningEvent)]
    assert len(thoughts) == 2 and "Europe/Berlin" in thoughts[1].content
    assert all(t.token_count > 0 for t in thoughts)
    # The meta "Caveat" message is not the prompt.
    assert s.prompt.startswith("tests/test_dates.py::test_parse_date fails on CI")
    assert s.text.startswith("Fixed. `parse_date` converted naive times")
    assert s.result.metrics.timing.wall_ms == pytest.approx(34_213.0)
    assert (s.started_at, s.completed_at) == (
        "2025-10-02T09:14:01.005Z",
        "2025-10-02T09:14:35.218Z",
    )
    assert s.result.completion_reason == "stop" and s.error is None
    # Turns tile the session from the prompt on: each starts where the previous ended.
    turns = s.trace.turns
    assert turns[0].start_timestamp == "2025-10-02T09:14:03.120Z"
    assert all(
        a.end_timestamp == b.start_timestamp for a, b in itertools.pairwise(turns)
    )
    assert sum(t.duration_ms for t in turns) == pytest.approx(35_218 - 3_120)
    assert s.cost_source == "computed"
    assert s.result.metrics.cost == price_tokens(s.model, s.result.metrics.tokens)


def test_claude_code_api_error_ends_the_session_in_error():
    s = only("claude-code", CC_API_ERROR)
    assert s.result.completion_reason == "error"
    assert "529" in s.error and "Overloaded" in s.error
    errors = [e for e in s.trace.events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and "overloaded_error" in errors[0].message
    assert s.model == "claude-sonnet-4-5-20250929"  # <synthetic> is not a model
    assert s.result.metrics.tokens.cache_write == 5210
    assert_consistent(s)


# -- opencode -------------------------------------------------------------------


def test_opencode_sums_steps_not_the_last_step_on_the_message():
    s = only("opencode", OPENCODE)
    # The message's own "tokens" holds only the last step (input 2, output 309): the
    # steps are summed instead.
    assert s.result.metrics.tokens == TokenBreakdown(
        input=9, output=1021, reasoning=120, cache_read=31_020, cache_write=6120
    )
    assert s.trace.summary.total_turns == 3  # three step-start parts
    assert s.cost_source == "provider"
    assert s.result.metrics.cost.total_usd == pytest.approx(0.051102)
    assert s.model == "claude-sonnet-4-5"
    assert s.prompt.startswith(
        "fetch_json in src/httpkit/client.py gives up"
    )  # synthetic part skipped
    assert s.text.startswith("Done: fetch_json now retries a 503")
    assert_consistent(s)


def test_opencode_tools_reasoning_and_time():
    s = only("opencode", OPENCODE)
    records = s.result.metrics.tool_calls
    assert [(r.name, r.success, r.duration_ms) for r in records] == [
        ("read", True, 48.0),
        ("grep", False, 41.0),
        ("edit", True, 53.0),
        ("bash", True, 1794.0),
    ]
    assert records[1].error.startswith("Error: ripgrep failed: regex parse error")
    (thought,) = [e for e in s.trace.events if isinstance(e, ReasoningEvent)]
    assert thought.duration_ms == pytest.approx(1330.0)
    assert s.result.metrics.timing.wall_ms == pytest.approx(40_966.0)
    assert s.started_at == "2025-10-02T09:20:00.000Z"


def test_opencode_unfinished_tool_and_message_error(tmp_path):
    data = json.loads(OPENCODE.read_text())
    parts = data["messages"][1]["parts"]
    parts[10]["state"] = {
        "status": "running",
        "input": {"command": "pytest"},
        "time": {"start": 1759396833210},
    }
    data["messages"][1]["info"]["error"] = {
        "name": "MessageAbortedError",
        "data": {"message": "The operation was aborted."},
    }
    path = tmp_path / "aborted.json"
    path.write_text(json.dumps(data))
    s = only("opencode", path)
    bash = s.result.metrics.tool_calls[-1]
    assert not bash.success and "running" in bash.error
    assert s.result.completion_reason == "error"
    assert s.error == "MessageAbortedError: The operation was aborted."


# -- openai ---------------------------------------------------------------------


def test_openai_jsonl_runs_with_cached_tokens_and_failed_tools():
    first, second = load_sessions("openai", OPENAI_RUNS)
    # prompt_tokens include the cached ones: 6840 = 2232 fresh + 4608 cached.
    assert first.result.metrics.tokens == TokenBreakdown(
        input=2232, output=512, cache_read=4608
    )
    assert first.session_id == "thread_7f3e2a" and first.scenario_hint == "refund-001"
    assert first.result.metrics.timing.wall_ms == 8421  # latencyMs wins
    assert [(r.name, r.success) for r in first.result.metrics.tool_calls] == [
        ("lookup_order", True),
        ("get_refund_policy", False),
        ("get_refund_policy", True),
    ]
    assert "HTTP 503" in first.result.metrics.tool_calls[1].error
    assert first.trace.summary.total_turns == 4
    assert first.prompt.startswith("My order A-10482") and first.text.startswith(
        "Sorry about the broken pole"
    )
    # tokensUsage (the seed's shape), a failed status, and a tool call that never got its result.
    assert second.result.metrics.tokens == TokenBreakdown(input=2210, output=96)
    assert (
        second.result.completion_reason == "error"
        and second.error == "connector timeout after 30000 ms"
    )
    (lookup,) = second.result.metrics.tool_calls
    assert not lookup.success and "no tool result" in lookup.error
    assert second.completed_at == "2025-09-18T10:03:32.010Z"  # startedAt + latencyMs
    for s in (first, second):
        assert_consistent(s)


def test_openai_result_sums_message_usage_and_keeps_reasoning():
    s = only("openai", OPENAI_RESULT)
    assert s.result.metrics.tokens == TokenBreakdown(
        input=514, output=148, reasoning=128, cache_read=2304
    )
    (thought,) = [e for e in s.trace.events if isinstance(e, ReasoningEvent)]
    assert thought.content.startswith("The user has two open invoices")
    assert s.model == "o4-mini" and s.session_id == "thread_c02d9e"
    assert s.started_at is None and s.result.metrics.timing.wall_ms == 5180
    assert_consistent(s)


def test_openai_without_usage_warns(tmp_path):
    path = tmp_path / "bare.json"
    path.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hello"},
                ]
            }
        )
    )
    s = only("openai", path)
    assert s.result.metrics.tokens == TokenBreakdown()
    assert any("no token usage" in w for w in s.warnings)
    assert s.model is None and s.cost_source == "unknown"


# -- anthropic ------------------------------------------------------------------


def test_anthropic_thinking_failed_tool_and_per_response_usage():
    s = only("anthropic", ANTHROPIC)
    assert s.result.metrics.tokens == TokenBreakdown(
        input=579, output=327, cache_read=3260, cache_write=1630
    )
    thoughts = [e for e in s.trace.events if isinstance(e, ReasoningEvent)]
    assert (
        len(thoughts) == 3
        and thoughts[2].content == "[redacted thinking]"
        and thoughts[2].token_count == 0
    )
    failed, ok = s.result.metrics.tool_calls
    assert (
        not failed.success
        and failed.error.startswith("HTTP 401 Unauthorized")
        and ok.success
    )
    assert s.trace.summary.total_turns == 3
    assert s.result.metrics.timing.wall_ms == pytest.approx(19_786.0)
    assert s.result.metrics.cost == price_tokens(
        "claude-sonnet-4-5-20250929", s.result.metrics.tokens
    )
    assert_consistent(s)


def test_anthropic_total_usage_wins(tmp_path):
    data = json.loads(ANTHROPIC.read_text())
    data["usage"] = {
        "input_tokens": 600,
        "output_tokens": 340,
        "cache_read_input_tokens": 3260,
        "cache_creation_input_tokens": 1630,
    }
    path = tmp_path / "total.json"
    path.write_text(json.dumps(data))
    assert only("anthropic", path).result.metrics.tokens == TokenBreakdown(
        input=600, output=340, cache_read=3260, cache_write=1630
    )


# -- trace ----------------------------------------------------------------------


def test_trace_derives_the_prompt_result():
    s = only("trace", TRACE)
    assert (
        s.result.metrics.tokens.total == 13_448
        and s.result.metrics.timing.wall_ms == 14_600
    )
    assert [(r.name, r.category, r.success) for r in s.result.metrics.tool_calls] == [
        ("bash", "shell", True),
        ("read_file", "file", False),
        ("bash", "shell", True),
    ]
    assert (
        s.text.startswith("PR #412 looks good")
        and s.model is None
        and s.cost_source == "unknown"
    )
    priced = with_model(s, "claude-sonnet-4-5")
    assert priced.cost_source == "computed" and priced.result.metrics.cost.total_usd > 0
    assert_consistent(s)


def test_trace_round_trips_a_runner_export(tmp_path):
    from profiler_core.storage.serde import to_json

    exported = tmp_path / "exported.json"
    exported.write_text(to_json(only("claude-code", CC_DST).trace, indent=2))
    again = only("trace", exported)
    assert again.result.metrics.tokens == TokenBreakdown(
        input=24, output=1058, cache_read=108_129, cache_write=6838
    )
    assert len(again.result.metrics.tool_calls) == 6


# -- bad files ------------------------------------------------------------------


@pytest.mark.parametrize("format", FORMATS)
def test_truncated_file_names_the_file(tmp_path, format):
    source = GOOD[format]
    text = source.read_text()
    path = tmp_path / source.name
    path.write_text(text[: int(len(text) * 0.6)])
    with pytest.raises(ValidationError) as info:
        load_sessions(format, path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    if format in ("claude-code", "codex"):
        assert f"{path}:" in message and "truncated last line" in message
    else:
        assert "not valid JSON" in message and "truncated" in message


FOREIGN = {
    "claude-code": (OPENCODE, "not valid JSON"),
    "opencode": (CC_DST, "expected the JSON of `opencode export <session>`"),
    "openai": (OPENCODE, "$.messages[0]: unrecognised message keys"),
    "anthropic": (
        OPENAI_RUNS,
        "$.messages[3].role: expected user, assistant or system",
    ),
    "trace": (ANTHROPIC, "expected a SessionTrace"),
    "codex": (CC_DST, "expected a Codex rollout line {timestamp, type, payload}"),
    "atif": (OPENCODE, "$.info: not a field of ATIF"),
}


@pytest.mark.parametrize("format", FORMATS)
def test_foreign_file_names_the_file_and_key(format):
    source, expected = FOREIGN[format]
    with pytest.raises(ValidationError) as info:
        load_sessions(format, source)
    message = str(info.value)
    assert str(source) in message and expected in message and "\n" not in message


def test_jsonl_bad_middle_line_names_the_line(tmp_path):
    lines = CC_DST.read_text().splitlines(keepends=True)
    lines[5] = lines[5][:40] + "\n"
    path = tmp_path / "broken.jsonl"
    path.write_text("".join(lines))
    with pytest.raises(ValidationError, match=r"broken.jsonl:6: not valid JSON"):
        load_sessions("claude-code", path)


def test_missing_file_and_empty_log(tmp_path):
    with pytest.raises(ValidationError, match="file not found"):
        load_sessions("opencode", tmp_path / "nope.json")
    summary_only = tmp_path / "summary.jsonl"
    summary_only.write_text(
        '{"type":"summary","summary":"Nothing happened","leafUuid":"x"}\n'
    )
    with pytest.raises(ValidationError, match="no user or assistant events"):
        load_sessions("claude-code", summary_only)


# -- the CLI ----------------------------------------------------------------------


class StrictScorer:
    """Passes when the agent's text mentions the word it was built with."""

    id = "mentions"

    def evaluate(self, scenario, context):
        passed = "pass" in context.agent_output
        return ScorerResult(success=passed, passed=int(passed), total=1)


class ScorerPlugin:
    @hookimpl
    def profiler_register_scorers(self):
        return [StrictScorer]


@pytest.fixture
def cli_manager(profiler_plugin_manager):
    """The CLI's plugin manager (its ctx.obj): built-ins plus the installed analyzers
    and a test scorer."""
    from profiler_builtin_analyzers import plugin as analyzers_plugin

    manager = profiler_plugin_manager
    if not manager.registry.ids("analyzers"):
        manager.register(analyzers_plugin, "builtin_analyzers")
    manager.register(ScorerPlugin(), "test-scorer")
    return manager


def invoke(manager, *args):
    from profiler_core.cli import cli

    return CliRunner().invoke(cli, ["import", *(str(a) for a in args)], obj=manager)


def test_cli_imports_claude_code_sessions(tmp_path, cli_manager):
    out = tmp_path / "results" / "claude.jsonl"
    result = invoke(cli_manager, "claude-code", CC_DST, CC_API_ERROR, "--out", out)
    assert result.exit_code == 0, result.stderr
    read = read_jsonl(out)
    assert read.problems == [] and len(read.rows) == 2
    dst, api = read.rows
    assert (
        isinstance(dst, ProfileRow)
        and dst.run_id == "claude"
        and dst.mode == "imported"
    )
    assert (dst.scenario_id, dst.iteration) == ("fix-dst-test", 0)
    assert dst.success and dst.checkpoints_total == 0 and dst.provider == "transcripts"
    assert (
        dst.tokens.cache_read == 108_129
        and dst.tool_calls.failed == 2
        and dst.agent_turns == 6
    )
    assert (
        dst.extensions["tokens_total"] == dst.tokens.total
        and dst.extensions["cost_source"] == "computed"
    )
    assert (
        not api.success
        and api.completion_reason == "error"
        and api.error_code == "session_error"
    )
    trace_path = (
        tmp_path / "results" / "sessions" / "fix-dst-test" / "imported-iter-0.json"
    )
    assert from_json(trace_path.read_text(), SessionTrace).summary.total_turns == 6
    bundles = read_jsonl(
        tmp_path / "results" / "claude.analysis.jsonl", SessionAnalysisBundle
    )
    assert bundles.problems == [] and {"error", "efficiency"} <= set(
        bundles.rows[0].results
    )
    manifest = read_manifest(tmp_path / "results" / "claude.manifest.json")
    assert (
        manifest.counts.completed == 2
        and manifest.counts.succeeded == 1
        and manifest.status == "completed"
    )
    assert manifest.metric_units["tokens_total"] == "tokens" and manifest.scenarios == (
        "fix-dst-test",
        "api-error",
    )
    assert "Results:" in result.stdout and str(out) in result.stdout


def test_cli_numbers_iterations_per_scenario_and_scores(tmp_path, cli_manager):
    out = tmp_path / "runs.jsonl"
    result = invoke(
        cli_manager,
        "openai",
        OPENAI_RUNS,
        OPENAI_RESULT,
        "--out",
        out,
        "--scenario",
        "support",
        "--mode",
        "langgraph",
        "--scorer",
        "mentions",
        "--run-id",
        "imp-1",
    )
    assert result.exit_code == 0, result.stderr
    rows = read_jsonl(out).rows
    assert [(r.scenario_id, r.iteration, r.mode, r.run_id) for r in rows] == [
        ("support", 0, "langgraph", "imp-1"),
        ("support", 1, "langgraph", "imp-1"),
        ("support", 2, "langgraph", "imp-1"),
    ]
    assert [r.checkpoints_total for r in rows] == [1, 1, 1]
    assert [r.success for r in rows] == [
        False,
        False,
        False,
    ]  # no "pass" in the answers; run 2 failed anyway
    assert rows[1].error == "connector timeout after 30000 ms"


def test_cli_default_scenario_is_the_runs_scenario_id(tmp_path, cli_manager):
    out = tmp_path / "runs.jsonl"
    assert invoke(cli_manager, "openai", OPENAI_RUNS, "--out", out).exit_code == 0
    assert [(r.scenario_id, r.iteration) for r in read_jsonl(out).rows] == [
        ("refund-001", 0),
        ("refund-001", 1),
    ]


def test_cli_bad_files_write_nothing(tmp_path, cli_manager):
    truncated = tmp_path / "in" / "truncated.jsonl"
    truncated.parent.mkdir()
    truncated.write_text(CC_DST.read_text()[:-200])
    foreign = tmp_path / "in" / "foreign.jsonl"
    shutil.copy(OPENCODE, foreign)
    out = tmp_path / "out" / "r.jsonl"
    result = invoke(
        cli_manager, "claude-code", CC_DST, truncated, foreign, "--out", out
    )
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 2
    assert str(truncated) in errors[0] and "truncated last line" in errors[0]
    assert str(foreign) in errors[1] and ":1: not valid JSON" in errors[1]
    assert "2 of 3 file(s) could not be imported; nothing written" in result.stderr
    assert not (tmp_path / "out").exists()


def test_cli_writes_nothing_when_the_scorer_is_unknown_or_the_run_fails(
    tmp_path, cli_manager
):
    out = tmp_path / "out" / "deeper" / "r.jsonl"
    result = invoke(
        cli_manager, "claude-code", CC_DST, "--out", out, "--scorer", "mentiosn"
    )
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "Error: unknown scorer 'mentiosn'; did you mean 'mentions'?"
    )

    class Refuse:
        @hookimpl
        def profiler_before_run(self, ctx):
            raise RuntimeError("fixtures missing")

    cli_manager.register(Refuse(), "refuse")
    result = invoke(cli_manager, "claude-code", CC_DST, "--out", out)
    assert result.exit_code == 1 and "fixtures missing" in result.stderr
    assert not (tmp_path / "out").exists()  # not even the folders --out asked for


def test_cli_sessions_of_several_models_and_uneven_scenarios_are_one_cell_each(
    tmp_path, cli_manager
):
    # refund-001 (2 sessions, gpt-4.1-mini) and overdue-invoice (1 session, o4-mini): a
    # sparse matrix.
    out = tmp_path / "r.jsonl"
    result = invoke(cli_manager, "openai", OPENAI_RUNS, OPENAI_RESULT, "--out", out)
    assert result.exit_code == 0, result.stderr
    rows = read_jsonl(out).rows
    assert [(r.model, r.scenario_id, r.iteration) for r in rows] == [
        ("gpt-4.1-mini", "refund-001", 0),
        ("gpt-4.1-mini", "refund-001", 1),
        ("o4-mini", "overdue-invoice", 0),
    ]
    assert (
        rows[0].started_at == "2025-09-18T10:02:11.204Z"
    )  # the recorded time, not the replay's
    assert rows[1].error_code == "session_error" and not rows[1].success
    manifest = read_manifest(tmp_path / "r.manifest.json")
    assert manifest.counts.expected == 3 and manifest.counts.errored == 1
    assert sorted(p.name for p in (tmp_path / "sessions" / "refund-001").iterdir()) == [
        "imported+gpt-4.1-mini-iter-0.json",
        "imported+gpt-4.1-mini-iter-1.json",
    ]
    assert not [
        p for p in tmp_path.iterdir() if p.name.startswith(".")
    ]  # the staging folder is gone


def test_cli_redacts_secrets_and_fills_the_model(tmp_path, cli_manager):
    data = json.loads(TRACE.read_text())
    secret = "sk-ant-api03-" + "Zx9" * 12
    data["events"][1]["output"] = f"export ANTHROPIC_API_KEY={secret}"
    data["turns"][0]["events"][1]["output"] = f"export ANTHROPIC_API_KEY={secret}"
    path = tmp_path / "leaky.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "r.jsonl"
    result = invoke(
        cli_manager, "trace", path, "--out", out, "--model", "claude-sonnet-4-5"
    )
    assert result.exit_code == 0, result.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != path]
    assert written and all(secret not in p.read_text() for p in written)
    assert (
        "[REDACTED]"
        in (tmp_path / "sessions" / "leaky" / "imported-iter-0.json").read_text()
    )
    (row,) = read_jsonl(out).rows
    assert (
        row.model == "claude-sonnet-4-5"
        and row.cost.total_usd > 0
        and row.extensions["cost_source"] == "computed"
    )


def test_cli_directory_input_and_unknown_format(tmp_path, cli_manager):
    out = tmp_path / "r.jsonl"
    assert (
        invoke(
            cli_manager, "claude-code", FIXTURES / "claude-code", "--out", out
        ).exit_code
        == 0
    )
    assert len(read_jsonl(out).rows) == 2
    assert invoke(cli_manager, "csv", CC_DST, "--out", out).exit_code == 2


def test_anthropic_server_tools_are_answered_in_the_same_message(tmp_path):
    blocks = [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "lisbon rain october"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": [
                {"type": "web_search_result", "url": "https://ipma.pt", "title": "IPMA"}
            ],
        },
        {
            "type": "server_tool_use",
            "id": "srvtoolu_2",
            "name": "web_search",
            "input": {"query": "lisbon forecast"},
        },
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_2",
            "content": {
                "type": "web_search_tool_result_error",
                "error_code": "max_uses_exceeded",
            },
        },
        {"type": "text", "text": "October is rainy-ish."},
    ]
    conversation = [
        {"role": "user", "content": "Rain in Lisbon in October?"},
        {
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": blocks,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    ]
    path = tmp_path / "search.json"
    path.write_text(
        json.dumps(conversation)
    )  # a bare list of messages is one conversation
    s = only("anthropic", path)
    assert [
        (r.name, r.category, r.success, r.error) for r in s.result.metrics.tool_calls
    ] == [
        ("web_search", "web", True, None),
        ("web_search", "web", False, "max_uses_exceeded"),
    ]
    assert s.model == "claude-sonnet-4-5" and s.text == "October is rainy-ish."


# -- `--out` onto an existing or live run: refused, appended or replaced, never a lost run --


def test_import_onto_a_run_being_written_is_refused_and_its_file_untouched(
    tmp_path, cli_manager
):
    out = tmp_path / "results" / "live.jsonl"
    out.parent.mkdir()
    out.write_text("a row of the live run\n")
    lock = RunLock(RunPaths(out.parent, "live"))
    lock.acquire()  # `profiler run --run-id live` writes it right now
    try:
        result = invoke(cli_manager, "claude-code", CC_DST, "--out", out, "--replace")
    finally:
        lock.release()
    assert result.exit_code == 1 and "is being written by process" in result.stderr
    assert out.read_text() == "a row of the live run\n"


def test_an_existing_out_is_refused_unless_append_or_replace(tmp_path, cli_manager):
    out = tmp_path / "results" / "claude.jsonl"
    assert invoke(cli_manager, "claude-code", CC_DST, "--out", out).exit_code == 0
    again = invoke(cli_manager, "claude-code", CC_API_ERROR, "--out", out)
    assert again.exit_code == 1 and "already exists; use --append" in again.stderr
    assert len(read_jsonl(out).rows) == 1

    appended = invoke(
        cli_manager, "claude-code", CC_DST, CC_API_ERROR, "--out", out, "--append"
    )
    assert appended.exit_code == 0, appended.stderr
    rows = read_jsonl(out).rows
    assert [(r.scenario_id, r.iteration) for r in rows] == [
        ("fix-dst-test", 0),
        ("fix-dst-test", 1),
        ("api-error", 0),
    ]
    analysis = read_jsonl(
        out.with_name("claude.analysis.jsonl"), cls=SessionAnalysisBundle
    ).rows
    assert {(b.scenario_id, b.iteration) for b in analysis} == {
        ("fix-dst-test", 0),
        ("fix-dst-test", 1),
        ("api-error", 0),
    }
    assert (
        tmp_path / "results" / "sessions" / "fix-dst-test" / "imported-iter-1.json"
    ).is_file()

    replaced = invoke(
        cli_manager, "claude-code", CC_API_ERROR, "--out", out, "--replace"
    )
    assert replaced.exit_code == 0, replaced.stderr
    assert [(r.scenario_id, r.iteration) for r in read_jsonl(out).rows] == [
        ("api-error", 0)
    ]


def test_a_killed_imports_staging_folder_is_removed_by_the_next(tmp_path, cli_manager):
    out = tmp_path / "results" / "claude.jsonl"
    leftover = tmp_path / "results" / ".claude.jsonl.import"
    (leftover / "sub").mkdir(
        parents=True
    )  # what a SIGKILL in the middle of an import leaves
    assert invoke(cli_manager, "claude-code", CC_DST, "--out", out).exit_code == 0
    assert not leftover.exists()
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "claude.analysis.jsonl",
        "claude.jsonl",
        "claude.manifest.json",
        "sessions",
    ]


# -- links planted in the output folder, and what a killed import leaves (issue 31,
# items 3 and 12) --


@pytest.mark.parametrize("planted", ["claude.analysis.jsonl", "claude.jsonl"])
def test_append_does_not_write_through_a_dangling_link(tmp_path, cli_manager, planted):
    out = tmp_path / "results" / "claude.jsonl"
    assert invoke(cli_manager, "claude-code", CC_DST, "--out", out).exit_code == 0
    elsewhere = tmp_path / "elsewhere.jsonl"
    (out.parent / planted).unlink()
    (out.parent / planted).symlink_to(elsewhere)
    result = invoke(cli_manager, "claude-code", CC_API_ERROR, "--out", out, "--append")
    assert result.exit_code == 1
    assert (
        result.stderr.count("\n") == 1
        and "is a symbolic link; refusing to write through it" in result.stderr
    )
    assert not elsewhere.exists()


def test_traces_do_not_follow_a_sessions_link_out_of_the_folder(tmp_path, cli_manager):
    out = tmp_path / "results" / "claude.jsonl"
    out.parent.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out.parent / "sessions").symlink_to(elsewhere)
    result = invoke(cli_manager, "claude-code", CC_DST, "--out", out)
    assert (
        result.exit_code == 1
        and "refusing to write outside" in result.stderr
        and result.stderr.count("\n") == 1
    )
    assert list(elsewhere.iterdir()) == [] and not out.exists()
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "sessions"
    ]  # no staging folder, no lock left


def test_a_kill_during_replace_never_pairs_new_rows_with_the_old_analysis(
    tmp_path, cli_manager, monkeypatch
):
    import os

    from profiler_core.runner import replay

    out = tmp_path / "results" / "claude.jsonl"
    assert invoke(cli_manager, "claude-code", CC_DST, "--out", out).exit_code == 0
    analysis = out.with_name("claude.analysis.jsonl")
    assert analysis.is_file()
    real_replace = os.replace

    def killed_before_the_analysis(src, dst):
        if str(dst) == str(analysis):
            raise KeyboardInterrupt  # the process dies between the two renames
        real_replace(src, dst)

    monkeypatch.setattr(replay.os, "replace", killed_before_the_analysis)
    assert (
        invoke(
            cli_manager, "claude-code", CC_API_ERROR, "--out", out, "--replace"
        ).exit_code
        != 0
    )
    rows = read_jsonl(out).rows
    assert [r.scenario_id for r in rows] == ["api-error"]  # the new rows are in place
    bundles = (
        read_jsonl(analysis, SessionAnalysisBundle).rows if analysis.exists() else []
    )
    assert {b.scenario_id for b in bundles} <= {
        r.scenario_id for r in rows
    }  # no analysis of rows that are gone


def test_staging_folders_of_dead_imports_are_removed_and_a_live_ones_kept(
    tmp_path, cli_manager
):
    folder = tmp_path / "results"
    dead = folder / ".other.jsonl.import"
    live = folder / ".busy.jsonl.import"
    for staging in (dead, live):
        (staging / "sub").mkdir(parents=True)
    lock = RunLock(RunPaths(folder, "busy"))
    lock.acquire()  # `profiler import ... --out results/busy.jsonl` is still running
    try:
        result = invoke(
            cli_manager, "claude-code", CC_DST, "--out", folder / "claude.jsonl"
        )
        assert result.exit_code == 0, result.stderr
        assert not dead.exists() and (live / "sub").is_dir()
    finally:
        lock.release()
