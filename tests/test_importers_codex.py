"""The ``codex`` import format: Codex CLI rollout files (the same parser the codex
provider uses)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from genai_prices import Usage, calc_price

from profiler_core.errors import ValidationError
from profiler_core.importers import load_sessions
from profiler_core.importers.codex import codex_usage
from profiler_core.model import ProfileRow, TokenBreakdown
from profiler_core.storage.store import read_jsonl

#: A real rollout of Codex CLI 0.169.0 driven by the scripted Responses server:
#: reasoning, `cat notes.txt`,
#: a failing `cat missing-file`, then the answer (usage 1500/1200 cached/40 out/8
#: reasoning, 1700/1400/30, 1900/1600/25).
NOTES = Path(__file__).parent / "fixtures" / "transcripts" / "codex" / "notes.jsonl"


def test_a_rollout_gives_the_sessions_tokens_turns_tools_and_text():
    [session] = load_sessions("codex", NOTES)
    assert session.model == "gpt-5-codex" and session.format == "codex"
    assert session.prompt == "What do the notes say?"
    assert session.text == "Done: the notes say alpha and beta."
    # input without the cached part; output without the reasoning part (the Responses
    # API includes both).
    assert session.result.metrics.tokens == TokenBreakdown(
        input=900, cache_read=4200, output=87, reasoning=8
    )
    assert session.result.completion_reason == "stop" and session.error is None
    ok, failed = session.result.metrics.tool_calls
    assert (ok.name, ok.category, ok.success) == ("exec_command", "shell", True)
    assert not failed.success and "No such file or directory" in failed.error
    assert ok.duration_ms > 0 and failed.duration_ms > 0
    trace = session.trace
    assert [len(t.events) for t in trace.turns] == [
        2,
        1,
        1,
    ]  # reasoning + call, call, answer
    assert trace.turns[0].events[0].content == "Look at the notes first."
    assert (
        trace.turns[0].events[1].input == {"cmd": "cat notes.txt"}
        and "beta" in trace.turns[0].events[1].output
    )
    labels = [s.label for s in session.result.metrics.timing.segments]
    assert labels.count("model") == 3 and labels.count("tools") == 2
    assert session.result.metrics.timing.wall_ms > 0
    assert session.cost_source in ("computed", "unknown")


def rollout_line(kind: str, payload: dict, second: int = 0) -> str:
    return json.dumps(
        {
            "timestamp": f"2026-01-01T00:00:{second:02d}.000Z",
            "type": kind,
            "payload": payload,
        }
    )


def test_cache_writes_and_an_aborted_task(tmp_path):
    path = tmp_path / "rollout-x.jsonl"
    usage = {
        "input_tokens": 500,
        "cached_input_tokens": 300,
        "cache_write_input_tokens": 100,
        "output_tokens": 20,
        "reasoning_output_tokens": 0,
    }
    path.write_text(
        "\n".join(
            [
                rollout_line("session_meta", {"id": "s-1"}, 0),
                rollout_line("turn_context", {"model": "gpt-5"}, 0),
                rollout_line(
                    "response_item",
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "go"}],
                    },
                    1,
                ),
                rollout_line(
                    "response_item",
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "Working."}],
                    },
                    3,
                ),
                rollout_line(
                    "token_usage_record", {"response_id": "r1", "usage": usage}, 3
                ),
                rollout_line(
                    "event_msg",
                    {"type": "token_count", "info": {"total_token_usage": usage}},
                    3,
                ),
                rollout_line(
                    "event_msg",
                    {
                        "type": "task_complete",
                        "duration_ms": 2500,
                        "error": {"message": "stream disconnected"},
                    },
                    4,
                ),
            ]
        )
        + "\n"
    )
    [session] = load_sessions("codex", path)
    assert session.session_id == "s-1"
    assert session.result.metrics.tokens == TokenBreakdown(
        input=100, cache_read=300, cache_write=100, output=20
    )
    assert (
        session.result.completion_reason == "error"
        and session.error == "stream disconnected"
    )
    assert session.result.metrics.timing.wall_ms == 2500
    [model] = session.result.metrics.timing.segments
    assert (
        model.end_ms - model.start_ms == 2000
    )  # the prompt at 0:01 to the usage record at 0:03


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {"input_tokens": 10, "cached_input_tokens": 20, "output_tokens": 1},
            "cached_tokens (20) exceeds input_tokens (10)",
        ),
        (
            {"input_tokens": 10, "output_tokens": 1, "cache_write_input_tokens": 11},
            "cache_write_input_tokens (11) exceeds input_tokens (10)",
        ),
        (
            {"input_tokens": -1, "output_tokens": 1},
            "input_tokens: expected a number >= 0, got -1",
        ),
        ({"output_tokens": 1}, "expected input_tokens and output_tokens"),
    ],
)
def test_inconsistent_usage_is_one_line_naming_the_field(usage, expected):
    with pytest.raises(ValidationError, match=None) as info:
        codex_usage(usage, "f.jsonl:3: $.payload.usage")
    assert expected in str(info.value) and str(info.value).startswith(
        "f.jsonl:3: $.payload.usage"
    )


def test_a_file_without_model_items_is_refused(tmp_path):
    path = tmp_path / "rollout-empty.jsonl"
    path.write_text(rollout_line("session_meta", {"id": "s"}) + "\n")
    with pytest.raises(
        ValidationError,
        match=r"no response_item and no token_count lines; expected a Codex rollout file",
    ):
        load_sessions("codex", path)


def test_profiler_import_codex(tmp_path):
    from profiler_core.cli.import_ import import_command

    out = tmp_path / "results" / "codex.jsonl"
    result = CliRunner().invoke(
        import_command, ["codex", str(NOTES), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    [row] = read_jsonl(out).rows
    assert isinstance(row, ProfileRow) and row.scenario_id == "notes"
    assert (
        row.tokens.total == 5195 and row.tool_calls.failed == 1 and row.agent_turns == 3
    )
    assert (
        row.extensions["latency_model_ms"] > 0
        and row.extensions["latency_tools_ms"] > 0
    )


def test_each_response_of_a_rollout_with_usage_records_is_one_model_call():
    # Codex 0.169 writes a token_usage_record and a token_count (with last_token_usage)
    # per response: counted once.
    records = [
        json.loads(line) for line in NOTES.read_text().splitlines() if line.strip()
    ]
    usages = [
        r["payload"]["usage"] for r in records if r["type"] == "token_usage_record"
    ]
    [session] = load_sessions("codex", NOTES)
    calls = session.result.metrics.model_calls
    assert [
        (c.tokens.input + c.tokens.cache_read, c.tokens.output + c.tokens.reasoning)
        for c in calls
    ] == [(u["input_tokens"], u["output_tokens"]) for u in usages]
    assert {c.model for c in calls} == {"gpt-5-codex"}
    assert (
        sum((c.tokens for c in calls), TokenBreakdown())
        == session.result.metrics.tokens
    )


#: Responses of a session that switched gpt-5 -> gpt-5-mini -> gpt-5: (model, input
#: incl. cached, cached, output incl. reasoning, reasoning).
SWITCHED = [
    ("gpt-5", 180_000, 150_000, 4_000, 1_500),
    ("gpt-5-mini", 190_000, 175_000, 2_000, 300),
    ("gpt-5-mini", 200_000, 185_000, 1_500, 0),
    ("gpt-5-mini", 210_000, 195_000, 900, 100),
    ("gpt-5", 220_000, 205_000, 3_000, 800),
]


def switched_rollout(path: Path, *, with_last: bool) -> Path:
    """A rollout as Codex CLI writes it (token_count events only), one turn_context per
    model change."""

    def usage(inp: int, cached: int, out: int, reasoning: int) -> dict[str, int]:
        return {
            "input_tokens": inp,
            "cached_input_tokens": cached,
            "output_tokens": out,
            "reasoning_output_tokens": reasoning,
            "total_tokens": inp + out,
        }

    lines = [
        rollout_line("session_meta", {"id": "s-switch"}, 0),
        rollout_line(
            "event_msg", {"type": "token_count", "info": None, "rate_limits": {}}, 0
        ),
        rollout_line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "go"}],
            },
            1,
        ),
    ]
    total = dict.fromkeys(
        (
            "input_tokens",
            "cached_input_tokens",
            "output_tokens",
            "reasoning_output_tokens",
            "total_tokens",
        ),
        0,
    )
    model = None
    for second, (name, *counts) in enumerate(SWITCHED, start=2):
        if name != model:
            lines.append(rollout_line("turn_context", {"model": name}, second))
            model = name
        last = usage(*counts)
        total = {k: total[k] + last[k] for k in total}
        info = {
            "total_token_usage": dict(total),
            **({"last_token_usage": last} if with_last else {}),
        }
        lines.append(
            rollout_line("event_msg", {"type": "token_count", "info": info}, second)
        )
        # Codex sends the same count again when only the rate limits changed: not another response.
        lines.append(
            rollout_line(
                "event_msg",
                {"type": "token_count", "info": info, "rate_limits": {"primary": None}},
                second,
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def genai_price(model: str, inp: int, cached: int, out: int, reasoning: int) -> float:
    """One response priced by genai-prices itself (OpenAI's counting: input includes
    cached, output includes reasoning)."""
    return float(
        calc_price(
            Usage(input_tokens=inp, cache_read_tokens=cached, output_tokens=out), model
        ).total_price
    )


@pytest.mark.parametrize(
    "with_last", [True, False], ids=["last_token_usage", "running-totals-only"]
)
def test_a_rollout_that_switches_models_is_priced_per_model(tmp_path, with_last):
    from profiler_core.cli import cli
    from profiler_core.plugins.manager import get_plugin_manager

    path = switched_rollout(tmp_path / "rollout-switch.jsonl", with_last=with_last)
    expected = sum(genai_price(*response) for response in SWITCHED)
    at_last_model = sum(genai_price("gpt-5", *counts) for _, *counts in SWITCHED)
    assert (
        at_last_model > 1.5 * expected
    )  # what pricing it all as the last model would add

    [session] = load_sessions("codex", path)
    assert (
        session.model == "gpt-5-mini"
    )  # the model of most responses (docs/importing.md)
    assert [c.model for c in session.result.metrics.model_calls] == [
        name for name, *_ in SWITCHED
    ]
    assert session.cost_source == "computed" and math.isclose(
        session.result.metrics.cost.total_usd, expected, rel_tol=1e-9
    )

    out = tmp_path / "out" / "switch.jsonl"
    result = CliRunner().invoke(
        cli,
        ["import", "codex", str(path), "--out", str(out)],
        obj=get_plugin_manager(entrypoints=False),
    )
    assert result.exit_code == 0, result.output
    [row] = read_jsonl(out).rows
    assert math.isclose(row.cost.total_usd, expected, rel_tol=1e-9)
    used = row.extensions["models"]
    assert {m: u["calls"] for m, u in used.items()} == {"gpt-5": 2, "gpt-5-mini": 3}
    for model, u in used.items():
        mine = [counts for name, *counts in SWITCHED if name == model]
        assert u["cacheRead"] == sum(c[1] for c in mine) and u["input"] == sum(
            c[0] - c[1] for c in mine
        )
        assert u["reasoning"] == sum(c[3] for c in mine) and u["output"] == sum(
            c[2] - c[3] for c in mine
        )
        assert math.isclose(
            u["costUsd"], sum(genai_price(model, *c) for c in mine), rel_tol=1e-9
        )
    assert sum(u["total"] for u in used.values()) == row.tokens.total


def test_tokens_of_the_running_total_that_no_response_recorded_are_still_priced(
    tmp_path,
):
    recorded = {
        "input_tokens": 1000,
        "cached_input_tokens": 600,
        "output_tokens": 50,
        "reasoning_output_tokens": 10,
    }
    total = {
        "input_tokens": 3000,
        "cached_input_tokens": 2000,
        "output_tokens": 150,
        "reasoning_output_tokens": 30,
    }
    path = tmp_path / "rollout-gap.jsonl"
    path.write_text(
        "\n".join(
            [
                rollout_line("session_meta", {"id": "s-gap"}, 0),
                rollout_line("turn_context", {"model": "gpt-5"}, 0),
                rollout_line(
                    "response_item",
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "go"}],
                    },
                    1,
                ),
                rollout_line(
                    "token_usage_record", {"response_id": "r1", "usage": recorded}, 2
                ),
                rollout_line(
                    "event_msg",
                    {"type": "token_count", "info": {"total_token_usage": total}},
                    3,
                ),
            ]
        )
        + "\n"
    )
    [session] = load_sessions("codex", path)
    metrics = session.result.metrics
    assert metrics.tokens == TokenBreakdown(
        input=1000, cache_read=2000, output=120, reasoning=30
    )
    first, rest = metrics.model_calls
    assert first.tokens == TokenBreakdown(
        input=400, cache_read=600, output=40, reasoning=10
    )
    assert (
        rest.tokens
        == TokenBreakdown(input=600, cache_read=1400, output=80, reasoning=20)
        and rest.model == "gpt-5"
    )
    [warning] = session.warnings
    assert warning.startswith(
        f"{path}: 2100 tokens of the running total belong to no recorded model response"
    )
    expected = genai_price("gpt-5", 1000, 600, 50, 10) + genai_price(
        "gpt-5", 2000, 1400, 100, 20
    )
    assert math.isclose(metrics.cost.total_usd, expected, rel_tol=1e-9)
