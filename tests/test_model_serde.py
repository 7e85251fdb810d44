"""Every model type round-trips through to_json/from_json; bad input names the field."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import typing
from datetime import UTC
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import profiler_core
from profiler_core import ProfilerError, ProfileRow, TokenBreakdown, from_json, to_json
from profiler_core import model as m

ALL_TYPES = [
    getattr(m, name)
    for name in m.__all__
    if isinstance(getattr(m, name), type) and attrs.has(getattr(m, name))
]

_text = st.text(min_size=1, max_size=12)
_json_scalar = (
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8)
)
_json = st.recursive(
    _json_scalar,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_number = st.integers(0, 10**9) | st.floats(0, 1e9, allow_nan=False)

_OVERRIDES = {
    ("*", "extensions"): st.dictionaries(st.text(max_size=8), _json, max_size=3),
    ("*", "metadata"): st.dictionaries(st.text(max_size=8), _json, max_size=3),
    ("*", "options"): st.dictionaries(st.text(max_size=8), _json, max_size=3),
    ("*", "provider_overrides"): st.dictionaries(
        st.text(max_size=8), _json, max_size=3
    ),
    (m.ScenarioSets, "sets"): st.dictionaries(
        _text, st.lists(_text, max_size=3).map(tuple), max_size=3
    ),
    (m.Scenario, "timeout_ms"): st.integers(1, 10**7),
    (m.TokenBreakdown, "total"): st.none(),
    (m.TokenBreakdown, "active"): st.none(),
    ("*", "reward"): st.none() | st.floats(0, 1, allow_nan=False),
    (m.VerifierSpec, "timeout_ms"): st.integers(1, 10**7),
    (m.TaskEnvironment, "build_timeout_ms"): st.integers(1, 10**7),
    # Paths inside a sandbox: absolute, not `/`.
    ("*", "mounts"): st.dictionaries(
        _text.map(lambda t: "/" + t.replace("/", "_").replace(".", "_")),
        _text,
        max_size=3,
    ),
    ("*", "base_mounts"): st.dictionaries(
        _text.map(lambda t: "/" + t.replace("/", "_").replace(".", "_")),
        _text,
        max_size=3,
    ),
    ("*", "logs_dir"): st.none()
    | _text.map(lambda t: "/" + t.replace("/", "_").replace(".", "_")),
    (m.TaskEnvironment, "workdir"): st.none()
    | _text.map(lambda t: "/" + t.replace("/", "_").replace(".", "_")),
    (m.TrialSpec, "network"): st.sampled_from(("none", "model", "full")),
    (m.TrialSpec, "mounts"): st.lists(
        st.builds(m.TrialMount, source=_text, target=_text, read_only=st.booleans()),
        max_size=2,
    ).map(tuple),
    # a running environment is a live object, never serialised: a session's record holds none
    (m.CreateSessionParams, "environment"): st.none(),
}

#: Classes whose fields depend on each other: a workspace is a folder or a repository, not both.
_CLASS_OVERRIDES = {
    m.WorkspaceSpec: st.builds(
        m.WorkspaceSpec, path=_text, exclude=st.lists(_text, max_size=2).map(tuple)
    )
    | st.builds(m.WorkspaceSpec, git=_text, ref=st.none() | _text),
    # An environment kind is a name; `network: none|model` needs a sandbox (the record
    # refuses it without one).
    m.SandboxSettings: st.builds(
        m.SandboxSettings,
        sandbox=st.sampled_from(("bwrap", "docker", "podman", "my-kind")),
        network=st.none() | st.sampled_from(("none", "model", "full")),
        image=st.none() | _text,
        pull=st.sampled_from(("never", "missing", "always")),
        verifier_network=st.none() | st.sampled_from(("none", "model", "full")),
        agent_user=_text,
        wire=st.booleans(),
        host_toolchain=st.booleans(),
        workdir=st.none() | _text,
    )
    | st.builds(m.SandboxSettings),
}


def _strategy(tp, owner=None, name=None):
    override = _OVERRIDES.get((owner, name), _OVERRIDES.get(("*", name)))
    if override is not None:
        return override
    if attrs.has(tp):
        return _class_strategy(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is str:
        return _text
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.integers(0, 10**9)
    if tp is float:
        return st.floats(0, 1e9, allow_nan=False)
    if tp is typing.Any:
        return _json
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, __import__("types").UnionType):
        if set(args) <= {int, float}:
            return _number
        if set(args) == {int, float, str}:
            return _number | _text
        return st.one_of([_strategy(a) for a in args])
    if tp is type(None):
        return st.none()
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(_strategy(args[0]), max_size=3).map(tuple)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), _strategy(args[1]), max_size=3)
    if origin is __import__("collections.abc").abc.Sequence:
        return st.lists(_strategy(args[0]), max_size=3).map(tuple)
    raise NotImplementedError(f"no strategy for {tp!r}")


def _class_strategy(cls):
    if cls in _CLASS_OVERRIDES:
        return _CLASS_OVERRIDES[cls]
    from profiler_core.plugins import (
        contracts,
    )  # protocols a record names only for type checkers

    hints = typing.get_type_hints(cls, localns=vars(contracts))
    fields = {}
    for a in attrs.fields(cls):
        fields[a.name] = _strategy(hints[a.name], cls, a.name)
    return st.builds(cls, **fields)


@pytest.mark.parametrize("cls", ALL_TYPES, ids=lambda c: c.__name__)
def test_every_type_round_trips(cls):
    @settings(max_examples=25, deadline=None)
    @given(_class_strategy(cls))
    def check(obj):
        text = to_json(obj)
        again = from_json(text, cls)
        assert to_json(again) == text
        assert again == obj or json.loads(to_json(again)) == json.loads(text)

    check()


def test_original_rows_round_trip_unchanged(parity_dir):
    with gzip.open(parity_dir / "report-rows.jsonl.gz", "rt") as f:
        lines = f.read().splitlines()
    assert len(lines) == 1_000
    for line in lines:
        row = from_json(line, ProfileRow)
        assert json.loads(to_json(row)) == json.loads(line)
    # absent optional fields stay absent
    assert "error" not in json.loads(to_json(from_json(lines[0], ProfileRow)))
    assert "attempts" not in json.loads(to_json(from_json(lines[0], ProfileRow)))


def test_wrong_value_names_the_field_path(parity_dir):
    with gzip.open(parity_dir / "report-rows.jsonl.gz", "rt") as f:
        data = json.loads(f.readline())
    data["iteration"] = "three"
    with pytest.raises(ProfilerError, match=r"\$\.iteration: expected int"):
        from_json(json.dumps(data), ProfileRow)
    data["iteration"] = 1.5  # no silent truncation to 1
    with pytest.raises(ProfilerError, match=r"\$\.iteration: expected int"):
        from_json(json.dumps(data), ProfileRow)


def test_nested_and_missing_and_unknown_fields_reported_together(parity_dir):
    with gzip.open(parity_dir / "report-rows.jsonl.gz", "rt") as f:
        data = json.loads(f.readline())
    data["tokens"]["cacheRead"] = -1
    data["toolCalls"]["records"][1]["success"] = "yes"
    del data["mode"]
    data["bogus"] = 1
    with pytest.raises(ProfilerError) as info:
        from_json(json.dumps(data), ProfileRow, source="r.jsonl:1")
    message = str(info.value)
    assert message.startswith("r.jsonl:1: ")
    assert "$.mode: required field missing" in message
    assert "$.tokens.cacheRead: expected a value >= 0" in message
    assert "$.toolCalls.records[1].success: expected bool" in message
    assert "unknown field(s): bogus" in message
    assert "\n" not in message


def test_bad_json_is_one_line():
    with pytest.raises(ProfilerError, match="x.json: not valid JSON"):
        from_json("{", ProfileRow, source="x.json")


def test_token_totals_are_derived():
    t = TokenBreakdown(input=10, output=5, reasoning=2, cache_read=100, cache_write=7)
    assert t.total == 124
    assert t.active == 17
    assert TokenBreakdown(input=1, total=99).total == 99  # given values are kept


def test_trace_events_tagged_by_type():
    trace = m.SessionTrace(
        session_id="s",
        events=(
            m.ReasoningEvent(content="hm"),
            m.ToolCallEvent(name="bash", input={"command": "ls"}, output="a"),
            m.ErrorEvent(message="x"),
        ),
        turns=(),
        summary=m.TraceSummary(
            total_turns=0,
            total_tool_calls=1,
            total_tokens=TokenBreakdown(),
            total_duration=0,
        ),
    )
    data = json.loads(to_json(trace))
    assert [e["type"] for e in data["events"]] == ["reasoning", "tool_call", "error"]
    assert "error" not in data["events"][1]  # None optional field omitted
    assert from_json(to_json(trace), m.SessionTrace) == trace


def test_public_api_names_and_defaults():
    s = profiler_core.Scenario(id="a", name="A", prompt="p")
    assert (s.description, s.timeout_ms, s.allowed_retries, s.tags, s.extensions) == (
        "",
        120000,
        0,
        (),
        {},
    )
    assert profiler_core.ToolCallRecord(name="x").category == "other"
    assert (
        profiler_core.PromptResult(
            text="",
            metrics=profiler_core.PromptMetrics(
                tokens=TokenBreakdown(), timing=profiler_core.TimingBreakdown(wall_ms=0)
            ),
        ).completion_reason
        == "stop"
    )
    assert profiler_core.ProviderConfig(model="m", mode="x").port == 0
    assert profiler_core.ModeConfig().system_instructions == ""
    assert (
        profiler_core.ScorerResult(success=True, passed=0, total=0).output_valid is True
    )
    for name in profiler_core.__all__:
        assert getattr(profiler_core, name) is not None


def test_validators_reject_bad_values():
    with pytest.raises(ValueError, match="id"):
        profiler_core.Scenario(id="", name="A", prompt="p")
    with pytest.raises(ValueError, match="timeoutMs"):
        profiler_core.Scenario(id="a", name="A", prompt="p", timeout_ms=0)
    with pytest.raises(ValueError, match="input"):
        TokenBreakdown(input=-1)


def test_strings_and_lists_are_not_silently_coerced():
    from profiler_core.storage.serde import structure

    with pytest.raises(
        ProfilerError,
        match=r"sets.json: \$\['core'\]: expected a list, got string 'fix'",
    ):
        structure({"core": "fix"}, m.ScenarioSets, source="sets.json")
    with pytest.raises(ProfilerError, match=r"\$: expected an object, got list"):
        from_json("[1, 2]", m.SessionTrace)


def test_version_is_the_distributions_own():
    import tomllib

    import profiler_core

    pyproject = tomllib.loads(
        (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    )
    assert profiler_core.__version__ == pyproject["project"]["version"]


def test_a_scorers_check_result_is_the_rows_checkpoint_result():
    from profiler_core.model import CheckpointResult, ScorerCheckResult

    assert ScorerCheckResult is CheckpointResult
    check = ScorerCheckResult(
        id="c1", description="file exists", passed=False, actual=3, expected=4
    )
    assert from_json(to_json(check), CheckpointResult) == check


def test_iso_timestamps_are_utc_with_milliseconds():
    from datetime import datetime, timedelta, timezone

    from profiler_core.util.timestamps import iso, now_iso, parse_iso

    moment = datetime(
        2026, 1, 1, 2, 0, 23, 638_400, tzinfo=timezone(timedelta(hours=2))
    )
    assert iso(moment) == "2026-01-01T00:00:23.638Z"
    assert iso(datetime(2026, 1, 1)) == "2026-01-01T00:00:00.000Z"  # naive: UTC
    assert parse_iso("2026-01-01T00:00:23.638Z") == moment.replace(microsecond=638_000)
    assert parse_iso("2026-01-01T00:00:00") == datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_iso("yesterday") is None and parse_iso(3) is None
    assert (
        parse_iso(now_iso()) is not None
        and now_iso().endswith("Z")
        and len(now_iso()) == 24
    )


@pytest.mark.parametrize("value", [True, "0.5", None])
def test_a_number_field_refuses_booleans_strings_and_null(value):
    from profiler_core.model import CostBreakdown

    with pytest.raises(ProfilerError, match=r"\$\.totalUsd: expected float"):
        from_json(json.dumps({"totalUsd": value}), CostBreakdown)


def test_the_detailed_converter_is_built_when_a_structuring_first_fails():
    # Start-up (issue 30): most processes never need the detailed twin of the converter.
    code = (
        "from profiler_core.storage import converter as c\n"
        "from profiler_core.model import ModeConfig\n"
        "c.structure({'systemInstructions': 'x'}, ModeConfig)\n"
        "assert c._DETAILED == [], 'built for valid data'\n"
        "try:\n"
        "    c.structure({'systemInstructions': 3}, ModeConfig, source='m.yaml')\n"
        "except Exception as exc:\n"
        "    print(exc)\n"
        "assert len(c._DETAILED) == 1\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert (
        out.stdout.strip() == "m.yaml: $.systemInstructions: expected str, got int 3"
    )  # the path: the detailed twin's work


def test_a_union_registered_after_the_detailed_converter_exists_is_known_to_both():
    import attrs

    from profiler_core.errors import ValidationError
    from profiler_core.storage import converter as c

    @attrs.frozen
    class Left:
        n: int

    @attrs.frozen
    class Right:
        s: str

    c._detailed()  # built before the registration
    c.register_tagged_union(Left | Right, {Left: "left", Right: "right"}, "side")
    assert c.structure({"type": "right", "s": "x"}, Left | Right) == Right(s="x")
    with pytest.raises(ValidationError, match="expected a side"):
        c.structure({"type": "up"}, Left | Right)
