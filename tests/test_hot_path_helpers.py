"""Issue 44's hot-path helpers give the answers of what they replace: a kept timestamp
second, a kept
"not awaitable" class, orjson without OPT_NON_STR_KEYS first, and the redactor's key-shape look."""

from __future__ import annotations

import types
from datetime import UTC, datetime

import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from profiler_core.util import timestamps
from profiler_core.util.asyncs import await_me_maybe, is_awaitable
from profiler_core.util.timestamps import iso, now_iso


@pytest.mark.parametrize(
    "ns",
    [
        1_767_225_623_638_400_000,  # 2026-01-01T00:00:23.638
        1_767_225_623_999_999_999,  # the last nanosecond of that second
        1_767_225_624_000_000_000,  # the next second: its text is made anew
        1_767_225_623_001_000_000,  # back again (a clock stepped back)
        1_798_761_599_999_000_000,  # the year's last millisecond
    ],
)
def test_now_iso_writes_what_iso_writes_across_seconds(monkeypatch, ns):
    monkeypatch.setattr(timestamps.time, "time_ns", lambda: ns)
    expected = iso(datetime.fromtimestamp(ns // 1_000_000 / 1000, UTC))
    assert now_iso() == expected
    assert now_iso() == expected  # the kept second gives the same text


def test_now_iso_after_a_second_passes_is_not_the_kept_second(monkeypatch):
    clock = iter([1_767_225_623_500_000_000, 1_767_225_683_250_000_000])
    monkeypatch.setattr(timestamps.time, "time_ns", lambda: next(clock))
    assert now_iso() == "2026-01-01T00:00:23.500Z"
    assert now_iso() == "2026-01-01T00:01:23.250Z"


class _Plain:
    pass


class _Awaitable:
    def __await__(self):
        return iter(())


@types.coroutine
def _generator_coroutine():
    yield from ()
    return 7


def _generator():
    yield 1


def test_is_awaitable_gives_inspects_answer_before_and_after_a_class_is_kept():
    coroutine = await_me_maybe(3)
    try:
        values = [
            [],
            (),
            {},
            None,
            "text",
            1,
            _Plain(),
            _Awaitable(),
            coroutine,
            _generator(),
            _generator_coroutine(),
        ]
        expected = [False] * 7 + [True, True, False, True]
        for _ in range(2):  # the second round is answered from the kept classes
            assert [is_awaitable(v) for v in values] == expected
        # A plain generator must not make every generator "not awaitable".
        assert is_awaitable(_generator_coroutine()) and not is_awaitable(_generator())
    finally:
        coroutine.close()


def test_await_me_maybe_awaits_what_is_awaitable_and_passes_the_rest():
    async def seven():
        return 7

    async def main():
        return [
            await await_me_maybe(x) for x in (seven(), 7, _generator_coroutine(), [7])
        ]

    assert trio.run(main) == [7, 7, 7, [7]]


@pytest.mark.parametrize(
    "data",
    [
        {
            "sessionId": "s",
            "events": [{"type": "text_output", "content": "héllo ✓"}],
            "n": 1.5,
            "ok": True,
        },
        {
            1: "int key",
            "a": {2.5: None, "b": [1, 2]},
        },  # keys that are not strings: written as strings
        {"deep": {None: 1, True: 2}},
    ],
)
@pytest.mark.parametrize("indent", [None, 2])
def test_dumps_writes_what_orjson_writes_with_non_string_keys_allowed(data, indent):
    import orjson

    from profiler_core.storage.converter import dumps

    option = orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
    assert dumps(data, indent=indent) == orjson.dumps(data, option=option).decode()


#: Texts of key-shape prefixes, near misses, anchor characters alone and key bodies, so that
#: an anchor's character occurs from none to many times before, between and after any key.
_PIECES = st.sampled_from(
    ["sk-", "sk-proj-", "xoxb-", "xox-", "ghp_", "gh_", "github_pat_", "hf_", "AKIA", "AIza", "Bearer ", "-", "_", "A", "B",
     " ", '"', "x", "aZ09" * 3, "Q" * 16, "7" * 35, "é"]
)  # fmt: skip
_TEXTS = st.lists(_PIECES, max_size=40).map("".join)


@settings(max_examples=2000, deadline=None)
@given(_TEXTS)
def test_holds_key_shape_is_exactly_whether_a_key_shape_matches(text):
    from profiler_core.util.redact import KEY_SHAPES, holds_key_shape

    assert holds_key_shape(text) == (KEY_SHAPES.search(text) is not None)


@pytest.mark.parametrize("count", [0, 1, 3, 4, 5, 6, 30])
def test_a_key_after_many_anchor_characters_is_still_found(count):
    from profiler_core.util.redact import holds_key_shape

    for char in "-_AB":
        noise = f"{char}x " * count
        assert not holds_key_shape(noise)
        assert holds_key_shape(noise + "sk-" + "a" * 20)
        assert holds_key_shape(noise + "ghp_" + "a" * 20 + noise)
        assert holds_key_shape(noise + "AKIA" + "Q" * 16)
        assert holds_key_shape(noise + "Bearer " + "t" * 16)
