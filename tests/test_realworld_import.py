"""Importers on files real Claude Code, Codex and OpenCode installations wrote
(tests/fixtures/realworld/SOURCES.md).

Every expectation is computed here from the file itself with plain ``json``
(and genai-prices called directly for costs), never with the importer. Some
tests derive a variant from a real file - re-saved with nulls, parts stored out
of order, a fork that copies its parent - the way other tools and Codex itself
write them; the expected numbers stay those of the real file.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from genai_prices import Usage, calc_price

from profiler_core.errors import ValidationError
from profiler_core.importers import attach_subagents, load_sessions
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.runner.replay import load_all
from profiler_core.storage.store import read_jsonl

REAL = Path(__file__).parent / "fixtures" / "realworld"
CC = REAL / "claude-code"
MAIN = CC / "tmp-private" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
AGENTS = sorted((CC / "tmp-private").glob("agent-*.jsonl"))
TASK_MAIN = CC / "subagents-layout" / "e9fb405b.jsonl"
TASK_AGENT = CC / "subagents-layout" / "e9fb405b" / "subagents" / "agent-a485154.jsonl"
CODEX = (
    REAL
    / "codex"
    / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)
CODEX_NO_USAGE = (
    REAL
    / "codex"
    / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
)
OPENCODE = REAL / "opencode" / "ses_de8cfe295ffeY0vOY6gZjreKbM.json"
CLAUDE_FILES = [MAIN, *AGENTS, TASK_MAIN, TASK_AGENT, CC / "session-9eda1058.jsonl"]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# -- what the files say, read with plain json
# --------------------------------------------------------------------


def claude_responses(*paths: Path) -> dict[str, tuple[str, dict[str, int]]]:
    """message id -> (model, usage): Claude Code repeats a response's usage on each of
    its lines; the last is final."""
    found: dict[str, tuple[str, dict[str, int]]] = {}
    for path in paths:
        for event in lines(path):
            message = event.get("message")
            if (
                event.get("type") != "assistant"
                or event.get("isApiErrorMessage")
                or not isinstance(message, dict)
            ):
                continue
            usage = message.get("usage")
            if not usage or message.get("model") == "<synthetic>":
                continue
            known = found.get(message["id"])
            if known is None or usage["output_tokens"] >= known[1]["output_tokens"]:
                found[message["id"]] = (message["model"], usage)
    return found


def claude_tokens(*paths: Path) -> dict[str, int]:
    totals = Counter()
    for _, usage in claude_responses(*paths).values():
        totals["input"] += usage.get("input_tokens", 0)
        totals["output"] += usage.get("output_tokens", 0)
        totals["cache_read"] += usage.get("cache_read_input_tokens") or 0
        totals["cache_write"] += usage.get("cache_creation_input_tokens") or 0
    return dict(totals)


def claude_tool_uses(*paths: Path) -> int:
    ids = set()
    for path in paths:
        for event in lines(path):
            content = (
                (event.get("message") or {}).get("content")
                if event.get("type") == "assistant"
                else None
            )
            ids.update(
                b["id"]
                for b in content or ()
                if isinstance(b, dict) and b.get("type") == "tool_use"
            )
    return len(ids)


def genai_cost(model: str, usage: dict[str, int]) -> float:
    """One response priced by genai-prices itself (its input_tokens include the cached ones)."""
    read, write = (
        usage.get("cache_read_input_tokens") or 0,
        usage.get("cache_creation_input_tokens") or 0,
    )
    provider = None
    if (
        ".anthropic." in model
    ):  # a Bedrock id behind a routing and a region prefix: priced under "aws"
        model, provider = "anthropic." + model.split(".anthropic.", 1)[1], "aws"
    price = calc_price(
        Usage(
            input_tokens=usage["input_tokens"] + read + write,
            cache_read_tokens=read,
            cache_write_tokens=write,
            output_tokens=usage["output_tokens"],
        ),
        model,
        provider_id=provider,
    )
    return float(price.total_price)


def as_dict(tokens) -> dict[str, int]:
    return {
        k: getattr(tokens, k)
        for k in ("input", "output", "cache_read", "cache_write")
        if getattr(tokens, k)
    }


# -- Claude Code
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CLAUDE_FILES, ids=lambda p: p.name)
def test_claude_code_files_import_with_the_tokens_and_tool_calls_they_record(path):
    (session,) = load_sessions("claude-code", path)
    expected = claude_tokens(path)
    assert as_dict(session.result.metrics.tokens) == {
        k: v for k, v in expected.items() if v
    }
    assert len(session.result.metrics.tool_calls) == claude_tool_uses(path)
    assert (
        sum(call.tokens.total for call in session.result.metrics.model_calls)
        == session.result.metrics.tokens.total
    )


def resaved(path: Path, dest: Path) -> Path:
    """What a re-saving tool writes: ``null`` for every ``false`` and for optional keys
    Claude Code leaves out."""

    def nulls(value: Any, key: str = "") -> Any:
        if key == "input":  # the agent's own tool input is copied as it is
            return value
        if value is False:
            return None
        if isinstance(value, dict):
            return {k: nulls(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [nulls(v) for v in value]
        return value

    records = []
    for event in lines(path):
        event = nulls(event)
        for key in ("isMeta", "isApiErrorMessage", "isCompactSummary", "toolUseResult"):
            event.setdefault(key, None)
        if isinstance(event.get("message"), dict):
            event["message"].setdefault("stop_sequence", None)
            for block in event["message"].get("content") or ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    block["is_error"] = None
        records.append(event)
    return write_lines(dest, records)


def test_a_file_resaved_with_nulls_reads_like_the_original(tmp_path):
    copy = resaved(MAIN, tmp_path / MAIN.name)
    assert '"is_error": null' in copy.read_text()
    (session,) = load_sessions("claude-code", copy)
    assert as_dict(session.result.metrics.tokens) == claude_tokens(MAIN)
    calls = session.result.metrics.tool_calls
    assert len(calls) == claude_tool_uses(MAIN) and all(call.success for call in calls)


def test_a_bad_field_is_named_by_its_real_json_path(tmp_path):
    records = lines(MAIN)
    for record in records:
        for block in (record.get("message") or {}).get("content") or ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                block["is_error"] = "no"
    bad = write_lines(tmp_path / "bad.jsonl", records)
    with pytest.raises(ValidationError) as caught:
        load_sessions("claude-code", bad)
    assert "$.message.content[0].is_error: expected true or false, got 'no'" in str(
        caught.value
    )
    assert "$.message[0]" not in str(caught.value)


def switched(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The real session as if the user switched opus -> haiku -> opus (``/model``):
    haiku answers most responses."""
    ids = list(claude_responses(MAIN))
    models = {i: "claude-opus-4-1-20250805" for i in ids[:2] + ids[7:]}
    models.update({i: "claude-haiku-4-5-20251001" for i in ids[2:7]})
    records = lines(MAIN)
    for record in records:
        message = record.get("message")
        if record.get("type") == "assistant" and isinstance(message, dict):
            message["model"] = models[message["id"]]
    return write_lines(tmp_path / "switched.jsonl", records), models


def test_a_session_that_switches_models_is_priced_per_model(tmp_path):
    path, _ = switched(tmp_path)
    responses = claude_responses(path)
    expected = sum(genai_cost(model, usage) for model, usage in responses.values())
    cheapest = sum(
        genai_cost("claude-haiku-4-5-20251001", usage)
        for _, usage in responses.values()
    )
    assert (
        expected > 2 * cheapest
    )  # what pricing it all as the row's model (haiku) would miss

    out = tmp_path / "out" / "switched.jsonl"
    result = CliRunner().invoke(
        _cli(), ["import", "claude-code", str(path), "--out", str(out)], obj=_manager()
    )
    assert result.exit_code == 0, result.output
    (row,) = read_jsonl(out).rows
    assert (
        row.model == "claude-haiku-4-5-20251001"
    )  # the model of most responses (docs/importing.md)
    assert math.isclose(row.cost.total_usd, expected, rel_tol=1e-9)
    used = row.extensions["models"]
    assert set(used) == {"claude-opus-4-1-20250805", "claude-haiku-4-5-20251001"}
    assert {m: u["calls"] for m, u in used.items()} == Counter(
        model for model, _ in responses.values()
    )
    assert sum(u["total"] for u in used.values()) == row.tokens.total
    assert math.isclose(
        sum(u["costUsd"] for u in used.values()), expected, rel_tol=1e-9
    )


def test_long_sessions_are_priced_call_by_call_not_at_the_long_context_tier(tmp_path):
    # The session's cache reads add up past 200k tokens; no single call of it does.
    responses = claude_responses(MAIN)
    assert (
        sum(u.get("cache_read_input_tokens", 0) for _, u in responses.values())
        > 200_000
    )
    out = tmp_path / "out" / "main.jsonl"
    assert (
        CliRunner()
        .invoke(
            _cli(),
            ["import", "claude-code", str(MAIN), "--out", str(out)],
            obj=_manager(),
        )
        .exit_code
        == 0
    )
    (row,) = read_jsonl(out).rows
    assert math.isclose(
        row.cost.total_usd,
        sum(genai_cost(m, u) for m, u in responses.values()),
        rel_tol=1e-9,
    )


def test_main_and_subagent_transcripts_given_together_are_one_session(tmp_path):
    files = [MAIN, *AGENTS]
    out = tmp_path / "out" / "together.jsonl"
    result = CliRunner().invoke(
        _cli(),
        ["import", "claude-code", *map(str, files), "--out", str(out)],
        obj=_manager(),
    )
    assert result.exit_code == 0, result.output
    assert "Imported 1 session(s) from 3 file(s)" in result.output
    (row,) = read_jsonl(out).rows
    expected = claude_tokens(*files)
    assert (
        row.tokens.input,
        row.tokens.output,
        row.tokens.cache_read,
        row.tokens.cache_write,
    ) == (
        expected["input"],
        expected["output"],
        expected["cache_read"],
        expected["cache_write"],
    )
    # The Bedrock haiku of one subagent and the main agent's sonnet, each at its own price.
    responses = claude_responses(*files)
    assert {m for m, _ in responses.values()} == set(row.extensions["models"])
    assert math.isclose(
        row.cost.total_usd,
        sum(genai_cost(m, u) for m, u in responses.values()),
        rel_tol=1e-9,
    )


def test_a_task_subagent_is_attributed_in_the_trace_and_counted_once():
    sessions, problems = load_all("claude-code", [TASK_MAIN, TASK_AGENT, TASK_AGENT])
    assert problems == [] and len(sessions) == 1
    (session,) = sessions
    agent_id = {e["agentId"] for e in lines(TASK_AGENT)}.pop()
    assert as_dict(session.result.metrics.tokens) == claude_tokens(
        TASK_MAIN, TASK_AGENT
    )
    assert len(session.result.metrics.tool_calls) == claude_tool_uses(
        TASK_MAIN
    ) + claude_tool_uses(TASK_AGENT)
    theirs = [turn for turn in session.trace.turns if turn.agent == agent_id]
    assert len(theirs) == len(claude_responses(TASK_AGENT))
    assert len(session.trace.turns) - len(theirs) == len(claude_responses(TASK_MAIN))
    assert [t.number for t in session.trace.turns] == list(
        range(1, len(session.trace.turns) + 1)
    )
    tool_events = sum(
        1 for turn in theirs for e in turn.events if type(e).__name__ == "ToolCallEvent"
    )
    assert tool_events == claude_tool_uses(TASK_AGENT)


def test_a_subagent_transcript_alone_stays_a_session_of_its_own():
    (alone,) = attach_subagents(load_sessions("claude-code", TASK_AGENT))
    assert alone.agent_id == "a485154" and as_dict(
        alone.result.metrics.tokens
    ) == claude_tokens(TASK_AGENT)


# -- Codex
# --------------------------------------------------------------------------------------


def codex_expected(records: list[dict[str, Any]]) -> dict[str, int]:
    last = [
        r["payload"]["info"]["total_token_usage"]
        for r in records
        if r["type"] == "event_msg"
        and r["payload"].get("type") == "token_count"
        and r["payload"].get("info")
    ][-1]
    return codex_fields(last)


def codex_fields(usage: dict[str, int]) -> dict[str, int]:
    # Codex's input includes the cached input, its output the reasoning (docs/normalization.md).
    return {
        "input": usage["input_tokens"] - usage.get("cached_input_tokens", 0),
        "cache_read": usage.get("cached_input_tokens", 0),
        "output": usage["output_tokens"] - usage.get("reasoning_output_tokens", 0),
        "reasoning": usage.get("reasoning_output_tokens", 0),
    }


def tokens_of(session) -> dict[str, int]:
    t = session.result.metrics.tokens
    return {
        "input": t.input,
        "cache_read": t.cache_read,
        "output": t.output,
        "reasoning": t.reasoning,
    }


def test_a_codex_rollout_imports_its_usage_and_web_searches_as_tool_calls():
    records = lines(CODEX)
    (session,) = load_sessions("codex", CODEX)
    assert tokens_of(session) == codex_expected(records)
    kinds = Counter(
        r["payload"].get("type") for r in records if r["type"] == "response_item"
    )
    calls = session.result.metrics.tool_calls
    assert kinds["web_search_call"] == 3
    assert (
        len(calls)
        == kinds["function_call"] + kinds["custom_tool_call"] + kinds["web_search_call"]
    )
    assert (
        sum(1 for c in calls if c.name == "web_search" and c.category == "web")
        == kinds["web_search_call"]
    )


def codex_responses(records: list[dict[str, Any]]) -> list[tuple[str, dict[str, int]]]:
    """(model, last_token_usage) per model response: the model of the turn_context
    before it; a repeated total is no new response."""
    model, previous, found = None, None, []
    for r in records:
        payload = r["payload"]
        if r["type"] == "turn_context":
            model = payload["model"]
        elif (
            r["type"] == "event_msg"
            and payload.get("type") == "token_count"
            and payload.get("info")
        ):
            total = payload["info"]["total_token_usage"]
            if total != previous:
                found.append((model, payload["info"]["last_token_usage"]))
            previous = total
    return found


def codex_cost(model: str, usage: dict[str, int]) -> float:
    """One response priced by genai-prices itself (Codex's input includes the cached
    input, its output the reasoning)."""
    counted = Usage(
        input_tokens=usage["input_tokens"],
        cache_read_tokens=usage.get("cached_input_tokens", 0),
        output_tokens=usage["output_tokens"],
    )
    return float(calc_price(counted, model).total_price)


def test_a_codex_rollout_is_priced_response_by_response(tmp_path):
    records = lines(CODEX)
    responses = codex_responses(records)
    expected = sum(codex_cost(model, usage) for model, usage in responses)
    # gpt-5.5 charges more above 272k input tokens per request: the session's 6M are far
    # past it, no request is.
    last_total = [
        r["payload"]["info"]["total_token_usage"]
        for r in records
        if r["payload"].get("type") == "token_count"
    ][-1]
    assert codex_cost(responses[-1][0], last_total) > 1.5 * expected
    assert max(u["input_tokens"] for _, u in responses) < 272_000

    out = tmp_path / "out" / "codex.jsonl"
    result = CliRunner().invoke(
        _cli(), ["import", "codex", str(CODEX), "--out", str(out)], obj=_manager()
    )
    assert result.exit_code == 0, result.output
    (row,) = read_jsonl(out).rows
    assert row.extensions["cost_source"] == "computed"
    assert math.isclose(row.cost.total_usd, expected, rel_tol=1e-9)
    used = row.extensions["models"]
    assert {m: u["calls"] for m, u in used.items()} == Counter(
        model for model, _ in responses
    )
    assert sum(u["total"] for u in used.values()) == row.tokens.total
    assert math.isclose(
        sum(u["costUsd"] for u in used.values()), expected, rel_tol=1e-9
    )


def test_a_codex_rollout_without_usage_imports_with_a_warning():
    (session,) = load_sessions("codex", CODEX_NO_USAGE)
    assert not any(
        r["payload"].get("type") == "token_count" for r in lines(CODEX_NO_USAGE)
    )
    assert session.result.metrics.tokens.total == 0 and session.cost_source == "unknown"
    assert any("no token usage recorded" in w for w in session.warnings)


def test_a_codex_file_of_token_counts_only_imports_its_tokens(tmp_path):
    kept = [
        r
        for r in lines(CODEX)
        if r["type"] == "session_meta" or r["payload"].get("type") == "token_count"
    ]
    path = write_lines(tmp_path / "counts.jsonl", kept)
    (session,) = load_sessions("codex", path)
    assert tokens_of(session) == codex_expected(kept)
    assert session.trace.turns == () and any(
        "only token counts" in w for w in session.warnings
    )


def fork_of(
    parent: list[dict[str, Any]], *, repeat_own_meta: bool, own_delta: dict[str, int]
) -> list[dict[str, Any]]:
    """A fork as Codex writes it: its own session_meta, the parent's lines copied, then
    its own turn."""
    end = max(
        datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")) for r in parent
    )
    fork_at = end + timedelta(hours=2)
    stamp = lambda moment: moment.isoformat(timespec="milliseconds").replace(  # noqa: E731
        "+00:00", "Z"
    )
    parent_total = [
        r
        for r in parent
        if r["payload"].get("type") == "token_count" and r["payload"].get("info")
    ][-1]
    total = dict(parent_total["payload"]["info"]["total_token_usage"])
    for key, value in own_delta.items():
        total[key] = total.get(key, 0) + value
    own_id = "019f0000-0000-7000-8000-00000000f0c0"
    fork = [
        {
            "timestamp": stamp(fork_at),
            "type": "session_meta",
            "payload": {
                "id": own_id,
                "forked_from_id": parent[0]["payload"]["id"],
                "timestamp": stamp(fork_at),
            },
        }
    ]
    fork += parent
    if repeat_own_meta:
        fork.append(
            {
                "timestamp": stamp(fork_at),
                "type": "session_meta",
                "payload": {"id": own_id},
            }
        )
    later = lambda s: stamp(fork_at + timedelta(seconds=s))  # noqa: E731
    fork += [
        {
            "timestamp": later(20),
            "type": "turn_context",
            "payload": {"model": "gpt-5.5"},
        },
        {
            "timestamp": later(20),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "and now the tests"}],
            },
        },
        {
            "timestamp": later(25),
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "exec_command",
                "arguments": '{"cmd":"pytest -q"}',
                "call_id": "call_own",
            },
        },
        {
            "timestamp": later(29),
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": "call_own",
                "output": "Process exited with code 0",
            },
        },
        {
            "timestamp": later(30),
            "type": "event_msg",
            "payload": {"type": "token_count", "info": {"total_token_usage": total}},
        },
    ]
    return fork


@pytest.mark.parametrize(
    "repeat_own_meta", [True, False], ids=["own-meta-again", "dated-after-the-copy"]
)
def test_a_forked_codex_rollout_does_not_count_its_parents_usage(
    tmp_path, repeat_own_meta
):
    delta = {
        "input_tokens": 9000,
        "cached_input_tokens": 8000,
        "output_tokens": 300,
        "reasoning_output_tokens": 120,
    }
    path = write_lines(
        tmp_path / "fork.jsonl",
        fork_of(lines(CODEX), repeat_own_meta=repeat_own_meta, own_delta=delta),
    )
    (session,) = load_sessions("codex", path)
    assert tokens_of(session) == codex_fields(delta)
    # The parent's responses are not priced again: the fork's one response is what its
    # total grew by.
    (call,) = session.result.metrics.model_calls
    own = {k: getattr(call.tokens, k) for k in codex_fields(delta)}
    assert (call.model, own) == ("gpt-5.5", codex_fields(delta))
    assert [c.name for c in session.result.metrics.tool_calls] == ["exec_command"]
    assert session.prompt == "and now the tests" and session.session_id.endswith("f0c0")


# -- OpenCode
# --------------------------------------------------------------------------------------


def opencode_steps(export: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p for m in export["messages"] for p in m["parts"] if p["type"] == "step-finish"
    ]


def test_an_opencode_export_imports_its_steps_tokens_and_cost():
    export = json.loads(OPENCODE.read_text())
    (session,) = load_sessions("opencode", OPENCODE)
    steps = opencode_steps(export)
    t = session.result.metrics.tokens
    assert t.input == sum(s["tokens"]["input"] for s in steps) and t.output == sum(
        s["tokens"]["output"] for s in steps
    )
    assert t.reasoning == sum(s["tokens"]["reasoning"] for s in steps) > 0
    assert t.cache_read == sum(s["tokens"]["cache"]["read"] for s in steps)
    # OpenCode 1.18 writes each step's total with the reasoning on top of the output:
    # nothing is counted twice.
    assert all(
        s["tokens"]["total"]
        == s["tokens"]["input"]
        + s["tokens"]["output"]
        + s["tokens"]["reasoning"]
        + s["tokens"]["cache"]["read"]
        + s["tokens"]["cache"]["write"]
        for s in steps
    )
    assert session.cost_source == "provider"
    assert math.isclose(
        session.result.metrics.cost.total_usd,
        sum(m["info"].get("cost", 0) for m in export["messages"]),
    )
    assert len(session.trace.turns) == sum(
        1 for m in export["messages"] for p in m["parts"] if p["type"] == "step-start"
    )


def test_opencode_parts_stored_out_of_order_are_put_back_in_order(tmp_path):
    export = json.loads(OPENCODE.read_text())
    steps = sum(
        1 for m in export["messages"] for p in m["parts"] if p["type"] == "step-start"
    )
    for message in export["messages"]:
        message["parts"].reverse()  # a step-finish now comes before its step-start
    export["messages"].reverse()
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(export))
    (session,) = load_sessions("opencode", path)
    assert len(session.trace.turns) == steps
    assert session.prompt == export["messages"][-1]["parts"][0]["text"]
    assert session.result.metrics.tokens.total == sum(
        s["tokens"]["total"] for s in opencode_steps(export)
    )


def test_an_opencode_cost_kept_only_on_the_steps_is_the_providers(tmp_path):
    export = json.loads(OPENCODE.read_text())
    expected = sum(s["cost"] for s in opencode_steps(export))
    for message in export["messages"]:
        message["info"].pop("cost", None)
    path = tmp_path / "steps-cost.json"
    path.write_text(json.dumps(export))
    (session,) = load_sessions("opencode", path)
    assert session.cost_source == "provider" and math.isclose(
        session.result.metrics.cost.total_usd, expected
    )


@pytest.mark.parametrize("how", ["total-says-so", "old-release"])
def test_opencode_reasoning_inside_the_output_is_not_counted_twice(tmp_path, how):
    export = json.loads(OPENCODE.read_text())
    reasoning = sum(s["tokens"]["reasoning"] for s in opencode_steps(export))
    output = sum(s["tokens"]["output"] for s in opencode_steps(export))
    for message in export["messages"]:
        for part in [message["info"], *message["parts"]]:
            tokens = part.get("tokens")
            if tokens:
                tokens["output"] += tokens[
                    "reasoning"
                ]  # as releases before 1.0.62 recorded it
                if how == "old-release":
                    tokens.pop("total", None)
                else:
                    tokens["total"] = (
                        tokens["input"]
                        + tokens["output"]
                        + tokens["cache"]["read"]
                        + tokens["cache"]["write"]
                    )
    if how == "old-release":
        export["info"]["version"] = "0.15.8"
    path = tmp_path / f"{how}.json"
    path.write_text(json.dumps(export))
    (session,) = load_sessions("opencode", path)
    assert (
        session.result.metrics.tokens.output,
        session.result.metrics.tokens.reasoning,
    ) == (output, reasoning)


# -- helpers
# --------------------------------------------------------------------------------------


def _manager():
    return get_plugin_manager(entrypoints=False)


def _cli():
    from profiler_core.cli import cli

    return cli
