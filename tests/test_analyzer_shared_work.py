"""The five analyzers share their work on one trace: tool calls, turns and tool names
computed once (issue 30)."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import PARITY
from profiler_builtin_analyzers import ANALYZERS, _common, reasoning
from profiler_builtin_analyzers.error import ErrorAnalyzer
from profiler_builtin_analyzers.strategy import StrategyAnalyzer
from profiler_builtin_analyzers.tool_names import resolve_tool_display_name
from profiler_builtin_analyzers.tool_pattern import ToolPatternAnalyzer
from profiler_core import SessionTrace, ToolCallEvent
from profiler_core.storage.serde import from_json, unstructure


@pytest.fixture
def trace() -> SessionTrace:
    return from_json((PARITY / "session-trace.json").read_text(), SessionTrace)


def _counting(monkeypatch, name):
    calls = []
    real = getattr(_common, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_common, name, counted)
    return calls


def test_calls_turns_and_call_ids_are_computed_once_for_the_five_analyzers(
    trace, monkeypatch
):
    counts = {
        name: _counting(monkeypatch, name)
        for name in ("tool_calls", "turn_groups", "call_ids")
    }
    for factory in ANALYZERS:
        factory().analyze(trace, None, "m")
    assert {name: len(calls) for name, calls in counts.items()} == {
        "tool_calls": 1,
        "turn_groups": 1,
        "call_ids": 1,
    }
    # A new trace (even an equal one) gets its own facts.
    other = attrs.evolve(trace, session_id="other")
    for factory in ANALYZERS:
        factory().analyze(other, None, "m")
    assert {name: len(calls) for name, calls in counts.items()} == {
        "tool_calls": 2,
        "turn_groups": 2,
        "call_ids": 2,
    }


def test_one_resolver_names_each_call_once_for_every_analyzer_using_it(trace):
    calls_made = []

    def resolver(name, tool_input):
        calls_made.append(name)
        return resolve_tool_display_name(name, tool_input)

    clean = attrs.evolve(
        trace,
        events=tuple(
            attrs.evolve(e, success=True, error=None) if type(e) is ToolCallEvent else e
            for e in trace.events
        ),
    )
    n_calls = sum(1 for e in clean.events if type(e) is ToolCallEvent)
    for analyzer in (
        StrategyAnalyzer(resolve_name=resolver),
        ToolPatternAnalyzer(resolve_name=resolver),
        ErrorAnalyzer(resolve_name=resolver),
    ):
        analyzer.analyze(clean, None, "m")
    assert (
        len(calls_made) == n_calls
    )  # strategy and tool-pattern share one list; no failure for error to look at


def test_a_failing_resolver_is_reported_by_each_analyzer_that_uses_it(trace):
    def broken(name, tool_input):
        raise ValueError("no names today")

    from profiler_core import ProfilerError

    for analyzer in (
        StrategyAnalyzer(resolve_name=broken),
        ToolPatternAnalyzer(resolve_name=broken),
    ):
        with pytest.raises(
            ProfilerError, match=f"analyzer '{analyzer.name}': resolve_name"
        ):
            analyzer.analyze(trace, None, "m")


def test_shared_facts_change_no_finding(trace):
    # Each analyzer alone (fresh facts every time) and the five in a row (shared facts) agree.
    alone = {}
    for factory in ANALYZERS:
        _common._LAST = None
        alone[factory.name] = unstructure(factory().analyze(trace, None, "m"))
    together = {
        factory.name: unstructure(factory().analyze(trace, None, "m"))
        for factory in ANALYZERS
    }
    assert together == alone


def test_the_facts_do_not_keep_a_trace_alive(trace):
    import gc
    import weakref

    other = attrs.evolve(trace, session_id="short-lived")
    ref = weakref.ref(other)
    for factory in ANALYZERS:
        factory().analyze(other, None, "m")
    del other
    gc.collect()
    assert ref() is None


# The reasoning analyzer looks for confusion keywords in all reasoning blocks at once (issue 30).
BLOCK_PIECES = st.sampled_from(
    [
        "ok",
        "not sure",
        "Not Sure",
        "wrong",
        "RETRY",
        "don\u2019t understand",
        "stuck",
        "\x00",
        "\u03a3\u0391\u03a3",
        "\u0130",
        " ",
        "try",
        " again",
        "\n",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(BLOCK_PIECES, max_size=5).map("".join), max_size=8))
def test_one_search_finds_the_confused_blocks_a_search_per_block_finds(blocks):
    assert reasoning._confused(blocks) == [
        i for i, block in enumerate(blocks) if reasoning._is_confused(block)
    ]


EXCERPT_PIECES = st.sampled_from(
    ["a", "bc", " ", "  ", "\n", "\t", "\xa0", "\u3000", "\x85", "é", "x" * 30, "."]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(EXCERPT_PIECES, max_size=12).map("".join))
def test_an_excerpt_is_the_collapsed_text_cut_to_its_length(content):
    assert (
        reasoning._excerpt(content)
        == " ".join(content.split())[: reasoning.EXCERPT_CHARS]
    )
