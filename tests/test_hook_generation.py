"""Work a 1-cell run does once instead of per use (issue 44): the converter's generated
functions and the model's type hints.

Each test counts calls of the generating function, so it fails if a function is
generated again per use or for a member nothing writes.
"""

from __future__ import annotations

import collections
import typing

import attrs
import pytest

from profiler_core import model as m
from profiler_core.storage import converter as c
from profiler_core.util.hints import type_hints


def _trace(*events: m.TraceEvent) -> m.SessionTrace:
    return m.SessionTrace(
        session_id="s",
        events=events,
        turns=(),
        summary=m.TraceSummary(
            total_turns=0,
            total_tool_calls=1,
            total_tokens=m.TokenBreakdown(input=3),
            total_duration=0,
        ),
    )


@pytest.fixture
def generated(monkeypatch):
    """A fresh converter and how many times each class's unstructure function was made."""
    counts: collections.Counter[str] = collections.Counter()
    make = c.make_dict_unstructure_fn

    def counting(cls, *args, **kwargs):
        counts[cls.__name__] += 1
        return make(cls, *args, **kwargs)

    monkeypatch.setattr(c, "make_dict_unstructure_fn", counting)
    return c._make(detailed=False), counts


def test_a_nested_class_function_is_generated_once(generated):
    conv, counts = generated
    trace = _trace(m.ReasoningEvent(content="hm"))
    first = conv.unstructure(trace)
    summary = conv.unstructure(trace.summary)  # TraceSummary again, at the top
    tokens = conv.unstructure(m.TokenBreakdown(input=3))
    # cattrs looks nested classes up past its cache: each was made once per use
    assert counts["TraceSummary"] == 1
    assert counts["TokenBreakdown"] == 1
    # the same JSON as the process's converter writes
    assert first == c.unstructure(trace)
    assert summary == first["summary"]
    assert tokens == first["summary"]["totalTokens"]


def test_a_tagged_unions_members_are_generated_when_first_written(generated):
    conv, counts = generated
    events = set(m.TRACE_EVENT_TAGS)
    assert not {cls.__name__ for cls in events} & set(counts)  # none at start
    trace = _trace(
        m.ReasoningEvent(content="hm"),
        m.ToolCallEvent(name="bash", input={"command": "ls"}, output="a"),
        m.ReasoningEvent(content="again"),
    )
    data = conv.unstructure(trace)
    assert [e["type"] for e in data["events"]] == [
        "reasoning",
        "tool_call",
        "reasoning",
    ]
    made = {cls.__name__ for cls in events} & set(counts)
    assert made == {"ReasoningEvent", "ToolCallEvent"}
    assert counts["ReasoningEvent"] == 1
    one = conv.unstructure(m.ErrorEvent(message="x"), m.TraceEvent)
    assert one == {**conv.unstructure(m.ErrorEvent(message="x")), "type": "error"}
    assert counts["ErrorEvent"] == 1


def test_an_object_outside_a_tagged_union_is_refused(generated):
    conv, _ = generated

    @attrs.frozen
    class Stranger:
        n: int = 1

    with pytest.raises(KeyError):
        conv.unstructure(Stranger(), m.TraceEvent)


def test_type_hints_are_resolved_once_and_read_only(monkeypatch):
    calls = collections.Counter()
    get = typing.get_type_hints

    def counting(cls, *args, **kwargs):
        calls[cls] += 1
        return get(cls, *args, **kwargs)

    @attrs.frozen
    class Pair:
        left: int
        right: str | None = None

    monkeypatch.setattr(typing, "get_type_hints", counting)
    assert dict(type_hints(Pair)) == {"left": int, "right": str | None}
    assert type_hints(Pair) is type_hints(Pair)
    assert calls[Pair] == 1
    with pytest.raises(TypeError):
        type_hints(Pair)["left"] = float  # type: ignore[index]


def test_type_hints_that_fail_are_asked_again(monkeypatch):
    # a class whose annotation names a class of this module that does not exist yet
    early = type(
        "Early", (), {"__annotations__": {"later": "_Later"}, "__module__": __name__}
    )
    with pytest.raises(NameError):
        type_hints(early)
    monkeypatch.setitem(globals(), "_Later", int)
    assert dict(type_hints(early)) == {"later": int}
