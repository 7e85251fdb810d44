"""The ``codex`` import format: Codex CLI rollout files (the same parser the codex provider uses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from profiler_core.errors import ValidationError
from profiler_core.importers import load_sessions
from profiler_core.importers.codex import codex_usage
from profiler_core.model import ProfileRow, TokenBreakdown
from profiler_core.storage.store import read_jsonl

#: A real rollout of Codex CLI 0.169.0 driven by the scripted Responses server: reasoning, `cat notes.txt`,
#: a failing `cat missing-file`, then the answer (usage 1500/1200 cached/40 out/8 reasoning, 1700/1400/30, 1900/1600/25).
NOTES = Path(__file__).parent / "fixtures" / "transcripts" / "codex" / "notes.jsonl"


def test_a_rollout_gives_the_sessions_tokens_turns_tools_and_text():
    [session] = load_sessions("codex", NOTES)
    assert session.model == "gpt-5-codex" and session.format == "codex"
    assert session.prompt == "What do the notes say?"
    assert session.text == "Done: the notes say alpha and beta."
    # input without the cached part; output without the reasoning part (the Responses API includes both).
    assert session.result.metrics.tokens == TokenBreakdown(input=900, cache_read=4200, output=87, reasoning=8)
    assert session.result.completion_reason == "stop" and session.error is None
    ok, failed = session.result.metrics.tool_calls
    assert (ok.name, ok.category, ok.success) == ("exec_command", "shell", True)
    assert not failed.success and "No such file or directory" in failed.error
    assert ok.duration_ms > 0 and failed.duration_ms > 0
    trace = session.trace
    assert [len(t.events) for t in trace.turns] == [2, 1, 1]  # reasoning + call, call, answer
    assert trace.turns[0].events[0].content == "Look at the notes first."
    assert trace.turns[0].events[1].input == {"cmd": "cat notes.txt"} and "beta" in trace.turns[0].events[1].output
    labels = [s.label for s in session.result.metrics.timing.segments]
    assert labels.count("model") == 3 and labels.count("tools") == 2
    assert session.result.metrics.timing.wall_ms > 0
    assert session.cost_source in ("computed", "unknown")


def rollout_line(kind: str, payload: dict, second: int = 0) -> str:
    return json.dumps({"timestamp": f"2026-01-01T00:00:{second:02d}.000Z", "type": kind, "payload": payload})


def test_cache_writes_and_an_aborted_task(tmp_path):
    path = tmp_path / "rollout-x.jsonl"
    usage = {"input_tokens": 500, "cached_input_tokens": 300, "cache_write_input_tokens": 100, "output_tokens": 20, "reasoning_output_tokens": 0}
    path.write_text(
        "\n".join(
            [
                rollout_line("session_meta", {"id": "s-1"}, 0),
                rollout_line("turn_context", {"model": "gpt-5"}, 0),
                rollout_line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}, 1),
                rollout_line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Working."}]}, 3),
                rollout_line("token_usage_record", {"response_id": "r1", "usage": usage}, 3),
                rollout_line("event_msg", {"type": "token_count", "info": {"total_token_usage": usage}}, 3),
                rollout_line("event_msg", {"type": "task_complete", "duration_ms": 2500, "error": {"message": "stream disconnected"}}, 4),
            ]
        )
        + "\n"
    )
    [session] = load_sessions("codex", path)
    assert session.session_id == "s-1"
    assert session.result.metrics.tokens == TokenBreakdown(input=100, cache_read=300, cache_write=100, output=20)
    assert session.result.completion_reason == "error" and session.error == "stream disconnected"
    assert session.result.metrics.timing.wall_ms == 2500
    [model] = session.result.metrics.timing.segments
    assert model.end_ms - model.start_ms == 2000  # the prompt at 0:01 to the usage record at 0:03


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"input_tokens": 10, "cached_input_tokens": 20, "output_tokens": 1}, "cached_tokens (20) exceeds input_tokens (10)"),
        ({"input_tokens": 10, "output_tokens": 1, "cache_write_input_tokens": 11}, "cache_write_input_tokens (11) exceeds input_tokens (10)"),
        ({"input_tokens": -1, "output_tokens": 1}, "input_tokens: expected a number >= 0, got -1"),
        ({"output_tokens": 1}, "expected input_tokens and output_tokens"),
    ],
)
def test_inconsistent_usage_is_one_line_naming_the_field(usage, expected):
    with pytest.raises(ValidationError, match=None) as info:
        codex_usage(usage, "f.jsonl:3: $.payload.usage")
    assert expected in str(info.value) and str(info.value).startswith("f.jsonl:3: $.payload.usage")


def test_a_file_without_model_items_is_refused(tmp_path):
    path = tmp_path / "rollout-empty.jsonl"
    path.write_text(rollout_line("session_meta", {"id": "s"}) + "\n")
    with pytest.raises(ValidationError, match=r"no response_item and no token_count lines; expected a Codex rollout file"):
        load_sessions("codex", path)


def test_profiler_import_codex(tmp_path):
    from profiler_core.cli.import_ import import_command

    out = tmp_path / "results" / "codex.jsonl"
    result = CliRunner().invoke(import_command, ["codex", str(NOTES), "--out", str(out)])
    assert result.exit_code == 0, result.output
    [row] = read_jsonl(out).rows
    assert isinstance(row, ProfileRow) and row.scenario_id == "notes"
    assert row.tokens.total == 5195 and row.tool_calls.failed == 1 and row.agent_turns == 3
    assert row.extensions["latency_model_ms"] > 0 and row.extensions["latency_tools_ms"] > 0
