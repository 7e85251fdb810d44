"""Hostile values and JSON mutations for the fuzz tests (hypothesis strategies)."""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

#: Bounded for CI: every fuzz file runs in well under a minute on two cores.
FUZZ = settings(
    max_examples=int(os.environ.get("PROFILER_FUZZ_EXAMPLES", "30")),
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)

#: Stand-ins replaced in the JSON text by nesting json.dumps itself could not write.
_DEEP = "\u2063deep-{}\u2063"

HOSTILE: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([10**400, -(10**400), 2**63, 2**64, -1, 0, 10**18]),
    st.floats(),  # NaN and infinities included (Python's json writes and reads them)
    st.text(max_size=20),
    st.sampled_from(
        [
            "",
            "\x00",
            "a\x00b",
            "\ud800",
            "../../x",
            "/etc/passwd",
            "x" * 5000,
            "=cmd|' /c calc'!A0",
            "<script>",
        ]
    ),
    st.integers(100, 5000).map(_DEEP.format),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def dumps(value: Any) -> str:
    """JSON text of ``value`` (lone surrogates escaped), with deep-nesting stand-ins expanded."""
    text = json.dumps(value)
    while "\\u2063deep-" in text:
        start = text.index('"\\u2063deep-')
        end = text.index('\\u2063"', start + 2) + len('\\u2063"')
        depth = int(text[start + len('"\\u2063deep-') : end - len('\\u2063"')])
        text = text[:start] + "[" * depth + "]" * depth + text[end:]
    return text


def paths(value: Any) -> list[tuple[Any, ...]]:
    """Every key path inside a JSON value (iteratively), the root excluded."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        children = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, child in children:
            out.append((*path, key))
            stack.append((child, (*path, key)))
    return out


@st.composite
def mutated(draw: st.DrawFn, value: Any, rounds: int = 3) -> Any:
    """``value`` (a parsed JSON document) with a few values replaced by hostile ones, or
    keys dropped."""
    value = json.loads(json.dumps(value))
    for _ in range(draw(st.integers(1, rounds))):
        candidates = paths(value)
        if not candidates:
            return draw(HOSTILE)
        path = draw(st.sampled_from(candidates))
        parent = value
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict) and draw(st.booleans()) and draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(HOSTILE)
    return value


@st.composite
def mutated_text(draw: st.DrawFn, text: str) -> str:
    """``text`` cut short, with a stray character inserted, or unchanged."""
    kind = draw(st.sampled_from(["cut", "insert", "same"]))
    if kind == "cut":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "insert":
        at = draw(st.integers(0, len(text)))
        return (
            text[:at]
            + draw(st.sampled_from(["\x00", "}", "{", '"', "\n", "\ud800", "\\"]))
            + text[at:]
        )
    return text
