"""Each run keeps its traces under its own run id; a second run never replaces the
first's (issue 16.2)."""

from __future__ import annotations

import json

import trio
import trio.testing

from profiler_core import ModeConfig, Scenario, SessionTrace, from_json
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer


def _run(tmp_path, manager, text, **kw):
    options = RunOptions(
        provider=FakeProvider(text=text),
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do")],
        modes={"a": ModeConfig()},
        repetitions=2,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        **kw,
    )
    options.plugin_manager = manager
    return trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )


def _trace_text(path):
    return _trace_text_of(json.loads(path.read_text()))


def _trace_text_of(data):
    trace = from_json(json.dumps(data), SessionTrace)
    return [e.content for e in trace.events if type(e).__name__ == "TextOutputEvent"]


def test_two_runs_keep_their_own_traces(tmp_path, profiler_plugin_manager):
    first = _run(tmp_path, profiler_plugin_manager, "first run", trace_format="files")
    second = _run(tmp_path, profiler_plugin_manager, "second run", trace_format="files")
    assert first.run_id != second.run_id
    for result, text in ((first, "first run"), (second, "second run")):
        sessions = tmp_path / "reports" / result.run_id / "sessions"
        files = sorted(
            p.relative_to(sessions).as_posix() for p in sessions.rglob("*.json")
        )
        assert files == ["s1/a-iter-0.json", "s1/a-iter-1.json"]
        assert _trace_text(sessions / "s1" / "a-iter-0.json") == [text]
        manifest = json.loads(
            (tmp_path / "results" / f"{result.run_id}.manifest.json").read_text()
        )
        assert manifest["sessionsDir"] == str(sessions)
    assert not (tmp_path / "reports" / "sessions").exists()


def test_two_runs_keep_their_own_trace_stores(tmp_path, profiler_plugin_manager):
    first = _run(tmp_path, profiler_plugin_manager, "first run")
    second = _run(tmp_path, profiler_plugin_manager, "second run")
    for result, text in ((first, "first run"), (second, "second run")):
        store = tmp_path / "reports" / result.run_id / "sessions" / "traces.jsonl"
        records = [json.loads(line) for line in store.read_text().splitlines()]
        assert [(r["scenarioId"], r["iteration"]) for r in records] == [
            ("s1", 0),
            ("s1", 1),
        ]
        assert _trace_text_of(records[0]["trace"]) == [text]


def test_no_sessions_dir_in_manifest_when_export_is_off(
    tmp_path, profiler_plugin_manager
):
    result = _run(
        tmp_path, profiler_plugin_manager, "x", session_export=False, analyzers=[]
    )
    manifest = json.loads(
        (tmp_path / "results" / f"{result.run_id}.manifest.json").read_text()
    )
    assert manifest.get("sessionsDir") is None
    assert not (tmp_path / "reports" / result.run_id / "sessions").exists()
