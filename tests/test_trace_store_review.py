"""Defects a review of the trace store found (each test failed before its fix; the docstrings say what was wrong)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import trio
import trio.testing
from click.testing import CliRunner

from profiler_builtin_analyzers import plugin as builtin_analyzers
from profiler_core import ModeConfig, Scenario
from profiler_core.cli import cli
from profiler_core.plugins import get_plugin_manager
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.serde import to_json
from profiler_core.testing import Fail, FakeProvider, FixedScorer
from profiler_core.tracestore import TRACES_FILE, export_files, latest_records


def _run(tmp_path: Path, manager, *, models=("m1",), provider=None, **kw):
    options = RunOptions(
        provider=provider or FakeProvider(text="hello"),
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do"), Scenario(id="s2", name="S2", prompt="do")],
        modes={"a": ModeConfig(), "b": ModeConfig()},
        models=list(models),
        repetitions=2,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        **kw,
    )
    options.plugin_manager = manager
    return trio.run(run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0))


@pytest.fixture
def analyzers_manager():
    return get_plugin_manager(entrypoints=False, plugins=[("builtin_analyzers", builtin_analyzers)])


def test_resuming_a_store_run_with_trace_format_files_still_appends_to_its_store(tmp_path, profiler_plugin_manager):
    """A run started with the store and resumed after `output.trace_format: files` was set (output is not in the
    profile hash, so no --force is needed) splits its traces: the first cells stay in traces.jsonl, the rest become
    files, and the manifest's traceStore turns null. suite.py only handles the files -> store direction."""
    first = _run(tmp_path, profiler_plugin_manager, run_id="r")
    done = list(first.rows)[:3]
    (tmp_path / "results" / "r.jsonl").write_text("".join(to_json(r) + "\n" for r in done))
    # Drop the traces of the cells that "did not finish" so the store holds exactly what the killed run wrote.
    store = tmp_path / "reports" / "r" / "sessions" / TRACES_FILE
    store.write_text("".join(store.read_text().splitlines(keepends=True)[:3]))
    resumed = _run(tmp_path, profiler_plugin_manager, run_id="r", previous_rows=done, trace_format="files")
    sessions = tmp_path / "reports" / "r" / "sessions"
    assert set(latest_records(store)) == {row.cell for row in resumed.rows}, (
        f"store holds {len(latest_records(store))} of 8 cells; {len(list(sessions.rglob('*-iter-*.json')))} went to files"
    )
    assert json.loads(Path(resumed.manifest_path).read_text()).get("traceStore") == str(store)


def test_analyze_reads_a_gzipped_trace_store_as_traces_export_does(tmp_path, profiler_plugin_manager, analyzers_manager):
    """`profiler traces export traces.jsonl.gz` works (iter_lines reads gzip), but `profiler analyze` on the same
    file says 'not a text file (expected SessionTrace JSON)': is_store() sniffs raw bytes and never un-gzips."""
    result = _run(tmp_path, profiler_plugin_manager)
    store = tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    gz = tmp_path / "traces.jsonl.gz"
    gz.write_bytes(gzip.compress(store.read_bytes()))
    assert len(export_files(gz, tmp_path / "out")) == 8  # the store reader takes it
    out = CliRunner().invoke(cli, ["analyze", str(gz), "--json"], obj=analyzers_manager, catch_exceptions=False)
    assert out.exit_code == 0, out.stderr
    assert len(json.loads(out.stdout)) == 8


def test_export_of_a_two_model_run_keeps_the_model_in_names_when_one_model_left_no_trace(tmp_path, profiler_plugin_manager):
    """export_files decides "several models" from the models found in the store, not the run's: when m2's cells all
    failed (or the run was killed before m2), the files are named `a-iter-0.json`, while the run with
    `trace_format: files` names them `a+m1-iter-0.json` (and the docstring promises `<mode>+<model>` for such runs)."""

    def m2_down(params, attempt):
        return Fail("m2 down") if params.model == "m2" else None

    stored = _run(tmp_path / "one", profiler_plugin_manager, models=("m1", "m2"), provider=FakeProvider(script=m2_down))
    filed = _run(
        tmp_path / "two", profiler_plugin_manager, models=("m1", "m2"), provider=FakeProvider(script=m2_down), trace_format="files"
    )
    store = tmp_path / "one" / "reports" / stored.run_id / "sessions" / TRACES_FILE
    out = tmp_path / "exported"
    written = sorted(p.relative_to(out).as_posix() for p in export_files(store, out))
    files_dir = tmp_path / "two" / "reports" / filed.run_id / "sessions"
    expected = sorted(p.relative_to(files_dir).as_posix() for p in files_dir.rglob("*.json"))
    assert "s1/a+m1-iter-0.json" in expected
    assert written == expected


def test_analyze_reports_a_store_whose_only_record_is_torn_as_a_torn_store_line(tmp_path, analyzers_manager):
    """A run SIGKILLed while appending its first trace leaves traces.jsonl with one torn line. `traces export` says
    'traces.jsonl:1: truncated last line; skipped'; `profiler analyze` says 'not valid JSON (...)' instead, because
    is_store() needs a whole first record, and never says what it expected (a trace store or a SessionTrace)."""
    store = tmp_path / "reports" / "r" / "sessions" / TRACES_FILE
    store.parent.mkdir(parents=True)
    store.write_text('{"scenarioId":"s1","mode":"a","model":"m1","iteration":0,"trace":{"sessionId":"torn","ev')
    out = CliRunner().invoke(cli, ["analyze", str(store), "--json"], obj=analyzers_manager, catch_exceptions=False)
    assert out.exit_code == 1
    assert out.stderr.strip() == f"Error: {store}:1: truncated last line; skipped"


def test_a_store_torn_inside_a_multibyte_character_still_exports_its_complete_records(tmp_path, profiler_plugin_manager):
    """orjson writes non-ASCII text as raw UTF-8, so a store cut mid-write (SIGKILL, a full disk, a copy of a live run)
    can end inside a character. iter_lines decodes the file as strict UTF-8 and turns that into one StoreError for the
    whole file: `profiler traces export` and `profiler analyze` then give nothing, where a torn ASCII tail costs one line."""
    result = _run(tmp_path, profiler_plugin_manager, provider=FakeProvider(text="café — naïve"))
    store = tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    with open(store, "ab") as f:
        f.write('{"scenarioId":"s1","mode":"a","model":"m1","iteration":0,"trace":{"sessionId":"caf\u00e9'.encode()[:-1])
    out = CliRunner().invoke(
        cli, ["traces", "export", str(store), "--out", str(tmp_path / "out")], obj=profiler_plugin_manager, catch_exceptions=False
    )
    assert out.exit_code == 0, out.stderr
    assert out.stdout.strip() == f"Wrote 8 trace files to {tmp_path / 'out'}"
    assert f"{store}:9: truncated last line; skipped" in out.stderr


def test_analyze_gives_one_line_not_a_traceback_for_a_store_record_with_an_empty_scenario_id(
    tmp_path, profiler_plugin_manager, analyzers_manager
):
    """TraceRecord accepts `"scenarioId": ""` (so does export, writing `%/…`), but analyze builds
    Scenario(id="") from it (cli/analyze.py _run_analyzers) and dies with a ValueError traceback."""
    result = _run(tmp_path, profiler_plugin_manager)
    store = tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    first = json.loads(store.read_text().splitlines()[0])
    first["scenarioId"] = ""
    edited = tmp_path / TRACES_FILE
    edited.write_text(json.dumps(first) + "\n" + store.read_text())
    out = CliRunner().invoke(cli, ["analyze", str(edited), "--json"], obj=analyzers_manager)
    assert out.exception is None or isinstance(out.exception, SystemExit), repr(out.exception)
    assert "Traceback" not in out.output
