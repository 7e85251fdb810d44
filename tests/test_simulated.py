"""The simulated provider: determinism, internal consistency, options, time and timeouts."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio
import trio.testing

import profiler_core
from profiler_core import (
    CreateSessionParams,
    ErrorEvent,
    ProviderConfig,
    ReasoningEvent,
    SessionHandle,
    TextOutputEvent,
    ToolCallEvent,
    TurnBoundaryEvent,
    to_json,
)
from profiler_core.errors import ConfigError, ProfilerError
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.providers.simulated import DEFAULT_TOOL_CATEGORIES, SimulatedProvider

PROMPT = "Fix the failing test in tests/test_math.py and run `pytest -q`."
BIG_TIMEOUT = 10_000_000


def params(
    iteration=0, *, scenario="math-001", mode="baseline", model="sim-medium", system=""
):
    return CreateSessionParams(
        system_instructions=system,
        scenario_id=scenario,
        iteration=iteration,
        mode=mode,
        model=model,
    )


def session(provider, p=None, prompt=PROMPT, timeout_ms=BIG_TIMEOUT):
    """Create, prompt (without sleeping), export and destroy one session."""
    handle = provider.create_session(p or params())
    result = provider.simulate(handle, prompt, timeout_ms)
    trace = provider.export_session(handle)
    provider.destroy_session(handle)
    return result, trace


def many(
    provider,
    n,
    *,
    mode="baseline",
    model="sim-medium",
    prompt=PROMPT,
    timeout_ms=BIG_TIMEOUT,
):
    return [
        session(provider, params(i, mode=mode, model=model), prompt, timeout_ms)
        for i in range(n)
    ]


# --- determinism -------------------------------------------------------------------


def test_same_inputs_give_identical_json():
    a = session(SimulatedProvider(seed=7))
    b = session(SimulatedProvider(seed=7))
    assert to_json(a[0]) == to_json(b[0])
    assert to_json(a[1]) == to_json(b[1])


def test_each_key_part_changes_the_session():
    base = to_json(session(SimulatedProvider(seed=7))[0])
    assert to_json(session(SimulatedProvider(seed=7), params(1))[0]) != base
    assert to_json(session(SimulatedProvider(seed=8))[0]) != base
    assert to_json(session(SimulatedProvider(seed=7), params(mode="other"))[0]) != base
    assert (
        to_json(session(SimulatedProvider(seed=7), params(scenario="math-002"))[0])
        != base
    )
    assert (
        to_json(session(SimulatedProvider(seed=7), params(model="sim-large"))[0])
        != base
    )


def test_a_retry_is_a_fresh_attempt_and_replays_identically():
    provider = SimulatedProvider(seed=7)
    first = session(provider)
    retry = session(provider)  # same cell again: attempt 2
    assert to_json(first[0]) != to_json(retry[0])
    again = SimulatedProvider(seed=7)
    assert [to_json(session(again)[0]) for _ in range(2)] == [
        to_json(first[0]),
        to_json(retry[0]),
    ]


def test_attempts_are_counted_per_model():
    # Running sim-small first must not shift sim-medium's attempt numbers.
    mixed = SimulatedProvider()
    session(mixed, params(model="sim-small"))
    assert to_json(session(mixed)[0]) == to_json(session(SimulatedProvider())[0])


def test_determinism_holds_across_processes():
    # hashlib, not hash(): a different PYTHONHASHSEED must not change the session.
    code = (
        "from profiler_core.providers.simulated import SimulatedProvider;"
        "from profiler_core import CreateSessionParams, to_json;"
        "p = SimulatedProvider(seed=5);"
        "h = p.create_session(CreateSessionParams(system_instructions='', "
        "scenario_id='math-001', iteration=2, mode='baseline', "
        "model='sim-medium'));"
        "r = p.simulate(h, 'Fix the failing test in tests/test_math.py');"
        "print(h.session_id, to_json(r), to_json(p.export_session(h)))"
    )
    outputs = set()
    for hash_seed in ("1", "2"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": hash_seed,
            "PYTHONPATH": str(Path(profiler_core.__file__).parents[1]),
        }
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert outputs.pop().startswith("sim-")


# --- consistency between the prompt result and the trace ------------------------------


def _check_consistent(result, trace):
    m = result.metrics
    tool_events = [e for e in trace.events if isinstance(e, ToolCallEvent)]
    assert [(e.name, e.success, e.duration_ms, e.error) for e in tool_events] == [
        (r.name, r.success, r.duration_ms, r.error) for r in m.tool_calls
    ]
    for record in m.tool_calls:
        assert record.category == DEFAULT_TOOL_CATEGORIES[record.name]
        assert record.success == (record.error is None)
    assert trace.summary.total_tool_calls == len(m.tool_calls)
    assert trace.summary.total_tokens == m.tokens
    assert trace.summary.total_duration == m.timing.wall_ms
    assert trace.summary.total_turns == len(trace.turns)
    # Turns: numbered from 1, their events are the flat events minus the boundaries.
    boundaries = [e for e in trace.events if isinstance(e, TurnBoundaryEvent)]
    assert (
        [b.turn_number for b in boundaries]
        == [t.number for t in trace.turns]
        == list(range(1, len(trace.turns) + 1))
    )
    flat = [
        e for e in trace.events if not isinstance(e, (TurnBoundaryEvent, ErrorEvent))
    ]
    assert flat == [e for t in trace.turns for e in t.events]
    for turn, boundary in zip(trace.turns, boundaries):
        assert boundary.timestamp == turn.end_timestamp
        assert turn.start_timestamp <= turn.end_timestamp
    for before, after in zip(trace.turns, trace.turns[1:]):
        assert before.end_timestamp <= after.start_timestamp
    # Tokens: every reasoning token is in a reasoning event; text is part of the output.
    reasoning = sum(
        e.token_count for e in trace.events if isinstance(e, ReasoningEvent)
    )
    assert reasoning == m.tokens.reasoning
    assert (
        sum(e.token_count for e in trace.events if isinstance(e, TextOutputEvent))
        <= m.tokens.output
    )
    # Time: segments split the wall time exactly; turns add up to it.
    seg = {s.label: s.end_ms - s.start_ms for s in m.timing.segments}
    assert set(seg) == {"model", "tools"}
    assert seg["model"] + seg["tools"] == pytest.approx(m.timing.wall_ms, abs=0.2)
    if result.completion_reason != "timeout":
        assert sum(t.duration_ms for t in trace.turns) == pytest.approx(
            m.timing.wall_ms, abs=0.5
        )
        assert seg["tools"] >= sum(r.duration_ms for r in m.tool_calls) - 0.5
        texts = [e for e in trace.events if isinstance(e, TextOutputEvent)]
        assert texts[-1].content == result.text


def test_prompt_result_and_trace_agree():
    provider = SimulatedProvider(seed=3, tool_error_rate=0.25)
    sessions = many(provider, 60)
    for result, trace in sessions:
        _check_consistent(result, trace)
    # The sample really exercised failures and both outcomes.
    assert any(
        not r.success for result, _ in sessions for r in result.metrics.tool_calls
    )
    assert {result.text.split(":")[0] for result, _ in sessions} == {
        "Done",
        "Could not finish",
    }


def test_trace_round_trips_through_json():
    from profiler_core import SessionTrace, from_json

    _, trace = session(SimulatedProvider(seed=4))
    assert from_json(to_json(trace), SessionTrace) == trace


def test_cost_comes_from_the_price_table():
    from profiler_core.metrics.pricing import price_tokens

    result, _ = session(SimulatedProvider())
    assert result.metrics.cost == price_tokens("sim-medium", result.metrics.tokens)
    assert result.metrics.cost.total_usd > 0
    large, _ = session(SimulatedProvider(), params(model="sim-large"))
    per_token = lambda r: r.metrics.cost.total_usd / r.metrics.tokens.total  # noqa: E731
    assert per_token(large) > per_token(result)


def test_cache_reads_grow_with_the_context():
    # A one-turn session reads only the cached system prompt and tool definitions.
    one_turn, trace = session(SimulatedProvider(mean_turns=1, success_rate=1.0))
    assert trace.summary.total_turns == 1
    base = one_turn.metrics.tokens.cache_read
    sessions = many(SimulatedProvider(seed=5), 150)

    def excess_per_turn(result, trace):
        return (
            result.metrics.tokens.cache_read - base * trace.summary.total_turns
        ) / trace.summary.total_turns

    short = [excess_per_turn(r, t) for r, t in sessions if t.summary.total_turns <= 3]
    long = [excess_per_turn(r, t) for r, t in sessions if t.summary.total_turns >= 8]
    assert short and long
    # Each request re-reads the whole conversation so far: cache reads grow ~quadratically.
    assert statistics.mean(long) > 3 * statistics.mean(short) > 0
    for result, _ in sessions:
        tokens = result.metrics.tokens
        assert tokens.cache_read > tokens.input


# --- behaviour -------------------------------------------------------------------------


def test_final_text_says_what_was_done():
    sessions = many(SimulatedProvider(seed=1, success_rate=0.5), 80)
    done = [r.text for r, _ in sessions if r.text.startswith("Done:")]
    failed = [r.text for r, _ in sessions if r.text.startswith("Could not finish:")]
    assert len(done) + len(failed) == 80 and done and failed
    for text in done:
        assert "fix the failing test in tests/test_math.py" in text
        assert re.search(r"ran `pytest -q[^`]*` \(\d+ passed", text), text
        assert "Changed " in text and "Changed no files" not in text
    for text in failed:
        assert re.search(r"Gave up after `[^`]+` failed \(", text), text
    # The code under test is named after the test file the prompt mentions.
    assert any("src/app/math.py" in text for text in done)


def test_success_rate_extremes():
    assert all(
        r.text.startswith("Done:")
        for r, _ in many(SimulatedProvider(success_rate=1.0), 30)
    )
    assert all(
        r.text.startswith("Could not finish:")
        for r, _ in many(SimulatedProvider(success_rate=0.0), 30)
    )


def test_realistic_tools_errors_and_recoveries():
    sessions = many(
        SimulatedProvider(seed=2, tool_error_rate=0.3),
        150,
        prompt="Review PR #42 and fix src/app.ts; run `npm test`.",
    )
    calls = [e for _, t in sessions for e in t.events if isinstance(e, ToolCallEvent)]
    assert {c.name for c in calls} >= {"bash", "read_file", "edit", "grep", "glob"}
    commands = {c.input["command"] for c in calls if c.name == "bash"}
    assert {"git status", "npm test", "rg TODO src/"} <= commands
    assert any(c.startswith("gh pr view 42") for c in commands)
    errors = " | ".join(c.error for c in calls if not c.success)
    for pattern in (r"ENOENT|not found", r"timed out", r"401", r"JSON|jq: error"):
        assert re.search(pattern, errors), pattern
    # After a failure the agent usually does something about it in the same turn.
    recovered = total = 0
    for _, trace in sessions:
        for turn in trace.turns:
            events = turn.events
            for i, event in enumerate(events):
                if isinstance(event, ToolCallEvent) and not event.success:
                    total += 1
                    recovered += any(
                        isinstance(e, ToolCallEvent) for e in events[i + 1 :]
                    )
    assert total > 50 and recovered / total > 0.6


def test_not_found_read_is_followed_by_a_search_and_the_real_file():
    sessions = many(SimulatedProvider(seed=9, tool_error_rate=0.5), 80)
    seen = 0
    for _, trace in sessions:
        for turn in trace.turns:
            calls = [e for e in turn.events if isinstance(e, ToolCallEvent)]
            for a, b, c in zip(calls, calls[1:], calls[2:]):
                if (
                    a.name == "read_file"
                    and not a.success
                    and re.search("ENOENT|File not found", a.error or "")
                ):
                    if b.name == "glob" and c.name == "read_file" and c.success:
                        assert c.input["path"] != a.input["path"]
                        seen += 1
    assert seen >= 3


def _mean(values):
    return statistics.mean(values)


def test_mode_overrides_change_behaviour_measurably():
    provider = SimulatedProvider(seed=11)
    provider.init(ProviderConfig(model="sim-medium", mode="baseline", options={}))
    provider.init(
        ProviderConfig(
            model="sim-medium",
            mode="with_skill",
            options={"tool_error_rate": 0.02, "mean_turns": 3, "success_rate": 0.95},
        )
    )
    base = many(provider, 50, mode="baseline")
    skill = many(provider, 50, mode="with_skill")
    tokens = lambda s: [r.metrics.tokens.total for r, _ in s]  # noqa: E731
    failed = lambda s: [sum(not c.success for c in r.metrics.tool_calls) for r, _ in s]  # noqa: E731
    assert _mean(tokens(skill)) < 0.7 * _mean(tokens(base))
    assert _mean(failed(skill)) < _mean(failed(base))
    assert _mean([r.metrics.timing.wall_ms for r, _ in skill]) < _mean(
        [r.metrics.timing.wall_ms for r, _ in base]
    )
    assert sum(r.text.startswith("Done") for r, _ in skill) > sum(
        r.text.startswith("Done") for r, _ in base
    )


def test_verbosity_scales_generated_tokens():
    quiet = many(SimulatedProvider(seed=4, verbosity=0.5), 40)
    chatty = many(SimulatedProvider(seed=4, verbosity=2.0), 40)
    generated = lambda s: _mean(  # noqa: E731
        [r.metrics.tokens.reasoning + r.metrics.tokens.output for r, _ in s]
    )
    assert generated(chatty) > 2 * generated(quiet)


def test_bigger_models_are_slower_per_token():
    small = many(SimulatedProvider(seed=4), 40, model="sim-small")
    large = many(SimulatedProvider(seed=4), 40, model="sim-large")
    model_ms = lambda s: _mean(  # noqa: E731
        [
            r.metrics.timing.segments[0].end_ms - r.metrics.timing.segments[0].start_ms
            for r, _ in s
        ]
    )
    assert model_ms(large) > 1.5 * model_ms(small)


def test_json_answer_when_asked_for_json():
    from profiler_core.scorers.checks import parse_output_json

    provider = SimulatedProvider(success_rate=1.0)
    result, _ = session(
        provider, prompt="Fix src/app/utils.py and reply with a JSON summary."
    )
    value, error = parse_output_json(result.text)
    assert error is None
    assert (
        value["status"] == "done"
        and value["tests"]["failed"] == 0
        and value["filesChanged"]
    )
    plain, _ = session(
        SimulatedProvider(success_rate=1.0, output_format="text"),
        prompt="Reply with JSON.",
    )
    assert "```" not in plain.text
    forced, _ = session(
        SimulatedProvider(success_rate=0.0, output_format="json"), prompt="Just fix it."
    )
    assert parse_output_json(forced.text)[0]["status"] == "failed"


def test_turn_limit():
    result, trace = session(
        SimulatedProvider(mean_turns=30, max_turns=3, success_rate=1.0)
    )
    assert result.completion_reason == "tool_limit"
    assert trace.summary.total_turns == 3
    assert result.text.startswith("Could not finish:") and "turn limit" in result.text


def test_timeout_cuts_the_session():
    result, trace = session(SimulatedProvider(seed=1, mean_turns=12), timeout_ms=8_000)
    assert result.completion_reason == "timeout"
    assert result.metrics.timing.wall_ms == 8_000
    assert (
        isinstance(trace.events[-1], ErrorEvent)
        and "8000 ms" in trace.events[-1].message
    )
    assert trace.summary.total_duration == 8_000
    _check_consistent(result, trace)
    # The same session without the limit is longer and finishes its turns.
    full, _ = session(SimulatedProvider(seed=1, mean_turns=12))
    assert full.metrics.tokens.total > result.metrics.tokens.total


def test_default_timeout_is_120s():
    provider = SimulatedProvider(seed=1, mean_turns=40, max_turns=60)
    handle = provider.create_session(params())
    result = provider.simulate(handle, PROMPT)  # no timeout given
    assert result.completion_reason == "timeout"
    assert result.metrics.timing.wall_ms == 120_000


def test_tool_categories_option():
    result, _ = session(SimulatedProvider(tool_categories={"bash": "terminal"}))
    categories = {r.name: r.category for r in result.metrics.tool_calls}
    assert categories.get("bash") == "terminal"


# --- options ------------------------------------------------------------------------


def test_unknown_option_lists_the_valid_ones():
    with pytest.raises(
        ConfigError, match=r"unknown option\(s\) mean_turn .*valid: .*mean_turns"
    ):
        SimulatedProvider(mean_turn=3)


@pytest.mark.parametrize(
    ("option", "value", "expected"),
    [
        ("tool_error_rate", 1.5, "between 0 and 1"),
        ("success_rate", "high", "between 0 and 1"),
        ("mean_turns", 0, ">= 1"),
        ("time_scale", -1, ">= 0"),
        ("seed", 1.5, "an integer"),
        ("output_format", "yaml", "auto, text, json"),
        ("start_time", "yesterday", "ISO 8601"),
        ("tool_categories", ["bash"], "mapping"),
    ],
)
def test_bad_option_values_name_the_option(option, value, expected):
    with pytest.raises(ConfigError) as info:
        SimulatedProvider(**{option: value})
    assert f"option {option!r}" in str(info.value) and expected in str(info.value)


def test_price_overrides_are_checked_up_front_and_used():
    with pytest.raises(ConfigError, match=r"option 'prices'.*unknown keys \['input'\]"):
        SimulatedProvider(prices={"my-agent": {"input": 1}})
    provider = SimulatedProvider(
        prices={"my-agent": {"input_per_mtok": 1, "output_per_mtok": 2}}
    )
    result, _ = session(provider, params(model="my-agent"))
    assert result.metrics.cost.total_usd > 0


def test_bad_override_names_the_mode():
    provider = SimulatedProvider()
    with pytest.raises(ConfigError, match=r"mode 'fast'.*tool_error_rate"):
        provider.init(
            ProviderConfig(
                model="sim-small", mode="fast", options={"tool_error_rate": 2}
            )
        )


def test_config_options_win_over_constructor_options():
    provider = SimulatedProvider(seed=1, success_rate=0.0)
    provider.init(
        ProviderConfig(model="sim-medium", mode="baseline", options={"seed": 2})
    )
    assert provider.options_for("baseline").seed == 2
    assert (
        provider.options_for("baseline").success_rate == 0.0
    )  # kept from the constructor
    expected = session(SimulatedProvider(seed=2, success_rate=0.0))[0]
    assert to_json(session(provider)[0]) == to_json(expected)


def test_each_mode_keeps_its_own_options():
    provider = SimulatedProvider()
    provider.init(ProviderConfig(model="m", mode="a", options={"success_rate": 0.0}))
    provider.init(ProviderConfig(model="m", mode="b", options={"success_rate": 1.0}))
    assert all(r.text.startswith("Could not") for r, _ in many(provider, 10, mode="a"))
    assert all(r.text.startswith("Done") for r, _ in many(provider, 10, mode="b"))
    assert SimulatedProvider.init_scope == "mode"


# --- lifecycle --------------------------------------------------------------------


def test_unknown_handle_is_a_clear_error_and_destroy_is_idempotent():
    provider = SimulatedProvider()
    ghost = SessionHandle(
        session_id="sim-nope", provider="simulated", created_at="2025-01-01T00:00:00Z"
    )
    with pytest.raises(ProfilerError, match="unknown session 'sim-nope'"):
        provider.simulate(ghost, "x")
    provider.destroy_session(ghost)
    handle = provider.create_session(params())
    empty = provider.export_session(handle)
    assert empty.summary.total_turns == 0 and empty.events == ()
    provider.destroy_session(handle)
    provider.destroy_session(handle)
    with pytest.raises(ProfilerError):
        provider.export_session(handle)


def test_registered_as_a_built_in():
    info = get_plugin_manager(entrypoints=False).registry.get("providers", "simulated")
    assert (
        info.plugin == "core.providers.simulated" and info.factory is SimulatedProvider
    )
    assert SimulatedProvider.id == "simulated"


# --- real time ----------------------------------------------------------------------


def test_time_scale_sleeps_the_scaled_wall_time():
    async def main():
        provider = SimulatedProvider(seed=3, time_scale=0.5)
        handle = provider.create_session(params())
        start = trio.current_time()
        result = await provider.prompt(handle, PROMPT, BIG_TIMEOUT)
        return trio.current_time() - start, result

    elapsed, result = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert elapsed == pytest.approx(result.metrics.timing.wall_ms / 1000 * 0.5)
    assert elapsed > 1


def test_time_scale_zero_does_not_sleep_and_sessions_overlap():
    async def main(scale):
        provider = SimulatedProvider(seed=3, time_scale=scale)
        walls = []

        async def one(i):
            handle = provider.create_session(params(i))
            walls.append(
                (
                    await provider.prompt(handle, PROMPT, BIG_TIMEOUT)
                ).metrics.timing.wall_ms
            )

        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            for i in range(4):
                nursery.start_soon(one, i)
        return trio.current_time() - start, walls

    clock = trio.testing.MockClock(autojump_threshold=0)
    elapsed, _ = trio.run(main, 0.0, clock=clock)
    assert elapsed == 0
    elapsed, walls = trio.run(
        main, 1.0, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    # Concurrent sessions sleep side by side: the batch takes the longest, not the sum.
    assert elapsed == pytest.approx(max(walls) / 1000)
    assert elapsed < sum(walls) / 1000


def test_generation_is_fast():
    provider = SimulatedProvider(seed=1)
    p = [params(i) for i in range(500)]
    session(provider)  # warm the per-task caches
    start = time.perf_counter()
    for item in p:
        handle = provider.create_session(item)
        provider.simulate(handle, PROMPT)
        provider.export_session(handle)
        provider.destroy_session(handle)
    per_session_ms = (time.perf_counter() - start) / len(p) * 1000
    print(f"simulated session: {per_session_ms:.3f} ms")
    # Typically ~0.4 ms; the bound only catches an accidental slowdown by an order of magnitude.
    assert per_session_ms < 5
