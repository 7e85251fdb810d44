"""One append-only trace store per run (issue 18.4): written by the runner, read by
analyze and export."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import trio
import trio.testing
from click.testing import CliRunner

from profiler_builtin_analyzers import plugin as builtin_analyzers
from profiler_core import (
    ModeConfig,
    Scenario,
    SessionTrace,
    TokenBreakdown,
    TraceSummary,
    from_json,
)
from profiler_core.cli import cli
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.storage.serde import to_json
from profiler_core.storage.tracestore import (
    TRACES_FILE,
    TraceRecord,
    export_files,
    latest_records,
)
from profiler_core.testing import Fail, FakeProvider, FixedScorer


def _run(
    tmp_path: Path, manager, *, text: str = "hello", models=("m1",), provider=None, **kw
):
    options = RunOptions(
        provider=provider or FakeProvider(text=text),
        scorer=FixedScorer(),
        scenarios=[
            Scenario(id="s1", name="S1", prompt="do"),
            Scenario(id="s2", name="S2", prompt="do"),
        ],
        modes={"a": ModeConfig(), "b": ModeConfig()},
        models=list(models),
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


def _texts(trace: SessionTrace) -> list[str]:
    return [e.content for e in trace.events if type(e).__name__ == "TextOutputEvent"]


def test_a_run_appends_every_trace_to_one_store_and_creates_no_file_per_session(
    tmp_path, profiler_plugin_manager
):
    result = _run(tmp_path, profiler_plugin_manager, text="stored")
    sessions = tmp_path / "reports" / result.run_id / "sessions"
    assert [p.relative_to(sessions).as_posix() for p in sessions.rglob("*")] == [
        TRACES_FILE
    ]
    store = sessions / TRACES_FILE
    lines = store.read_text().splitlines()
    assert len(lines) == len(result.rows) == 8
    records = latest_records(store)
    assert set(records) == {r.cell for r in result.rows}
    for row in result.rows:
        record = records[row.cell]
        assert record.trace.session_id == row.session_id
        assert _texts(record.trace) == ["stored"]
    manifest = json.loads(Path(result.manifest_path).read_text())
    assert manifest["traceStore"] == str(store)
    assert manifest["sessionsDir"] == str(sessions)


def test_trace_format_files_keeps_one_file_per_session_and_no_store(
    tmp_path, profiler_plugin_manager
):
    result = _run(tmp_path, profiler_plugin_manager, trace_format="files")
    sessions = tmp_path / "reports" / result.run_id / "sessions"
    assert not (sessions / TRACES_FILE).exists()
    assert len(list(sessions.rglob("*-iter-*.json"))) == 8
    assert json.loads(Path(result.manifest_path).read_text()).get("traceStore") is None


def test_an_unknown_trace_format_is_refused_before_anything_is_written(
    tmp_path, profiler_plugin_manager
):
    from profiler_core import ConfigError

    with pytest.raises(
        ConfigError, match="trace_format 'zip': expected one of jsonl, files"
    ):
        _run(tmp_path, profiler_plugin_manager, trace_format="zip")
    assert not (tmp_path / "results").exists()


def test_export_writes_the_same_files_as_a_run_with_trace_format_files(
    tmp_path, profiler_plugin_manager
):
    stored = _run(tmp_path / "one", profiler_plugin_manager, models=("m1", "m2"))
    filed = _run(
        tmp_path / "two",
        profiler_plugin_manager,
        models=("m1", "m2"),
        trace_format="files",
    )
    store = tmp_path / "one" / "reports" / stored.run_id / "sessions" / TRACES_FILE
    out = tmp_path / "exported"
    written = export_files(store, out)
    files_dir = tmp_path / "two" / "reports" / filed.run_id / "sessions"
    expected = sorted(
        p.relative_to(files_dir).as_posix() for p in files_dir.rglob("*.json")
    )
    assert sorted(p.relative_to(out).as_posix() for p in written) == expected
    assert "s1/a+m2-iter-1.json" in expected  # several models: the model is in the name
    for name in expected:
        ours = from_json((out / name).read_text(), SessionTrace)
        theirs = from_json((files_dir / name).read_text(), SessionTrace)
        assert _texts(ours) == _texts(theirs) and len(ours.events) == len(theirs.events)


def test_the_last_record_of_a_cell_wins(tmp_path, profiler_plugin_manager):
    result = _run(tmp_path, profiler_plugin_manager, text="first")
    store = tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    record = next(iter(latest_records(store).values()))
    retried = TraceRecord(
        scenario_id=record.scenario_id,
        mode=record.mode,
        model=record.model,
        iteration=record.iteration,
        trace=SessionTrace(
            session_id="retried", events=[], turns=[], summary=record.trace.summary
        ),
    )
    with open(store, "a") as f:
        f.write(to_json(retried) + "\n")
    records = latest_records(store)
    assert len(records) == 8
    assert records[record.key].trace.session_id == "retried"


def test_export_keeps_hostile_modes_and_models_inside_the_folder(tmp_path):
    store = tmp_path / TRACES_FILE
    trace = SessionTrace(
        session_id="x",
        events=[],
        turns=[],
        summary=TraceSummary(
            total_turns=0,
            total_tool_calls=0,
            total_tokens=TokenBreakdown(),
            total_duration=0,
        ),
    )
    lines = [
        to_json(
            TraceRecord(
                scenario_id="s1",
                mode="../../evil",
                model="/etc/passwd",
                iteration=0,
                trace=trace,
            )
        ),
        to_json(
            TraceRecord(
                scenario_id="s1", mode="..", model="m", iteration=1, trace=trace
            )
        ),
    ]
    store.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    written = export_files(store, out)
    assert len(written) == 2
    for path in written:
        assert path.resolve().is_relative_to(out.resolve())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", TRACES_FILE]


def test_a_torn_last_record_is_cut_off_when_the_run_is_resumed(
    tmp_path, profiler_plugin_manager
):
    first = _run(tmp_path, profiler_plugin_manager, run_id="r1")
    store = tmp_path / "reports" / "r1" / "sessions" / TRACES_FILE
    kept = store.read_text()
    with open(store, "a") as f:
        f.write(
            '{"scenarioId":"s1","mode":"a","model":"m1","iteration":0,"trace":{"sessionId":"torn","ev'
        )
    done = list(first.rows)
    # Resume as the CLI does: the rows already on disk are done; the last cell runs again.
    (tmp_path / "results" / "r1.jsonl").write_text(
        "".join(to_json(r) + "\n" for r in done[:-1])
    )
    _run(tmp_path, profiler_plugin_manager, run_id="r1", previous_rows=done[:-1])
    text = store.read_text()
    assert text.startswith(kept) and "torn" not in text
    assert text.count("\n") == 9  # the eight first records and the redone cell's
    assert all(line.startswith("{") for line in text.splitlines())


def test_secrets_are_redacted_in_the_store(
    tmp_path, profiler_plugin_manager, monkeypatch
):
    monkeypatch.setenv("MY_API_KEY", 'super"secret\\value123')
    result = _run(
        tmp_path, profiler_plugin_manager, text='token super"secret\\value123 here'
    )
    store = (
        tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    ).read_text()
    assert "secret" not in store.replace("[REDACTED]", "")
    assert "[REDACTED]" in store


@pytest.fixture
def analyzers_manager():
    return get_plugin_manager(
        entrypoints=False, plugins=[("builtin_analyzers", builtin_analyzers)]
    )


def test_profiler_analyze_reads_a_store(
    tmp_path, profiler_plugin_manager, analyzers_manager
):
    result = _run(tmp_path, profiler_plugin_manager)
    store = tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    out = CliRunner().invoke(
        cli,
        ["analyze", str(store), "--json"],
        obj=analyzers_manager,
        catch_exceptions=False,
    )
    assert out.exit_code == 0, out.output
    analysed = json.loads(out.stdout)
    assert len(analysed) == 8
    assert {a["trace"] for a in analysed} == {
        f"{store}#{s}/{m}-iter-{i}"
        for s in ("s1", "s2")
        for m in ("a", "b")
        for i in (0, 1)
    }
    assert all("efficiency" in a["results"] for a in analysed)


def test_profiler_analyze_reports_a_torn_line_and_analyses_the_rest(
    tmp_path, profiler_plugin_manager, analyzers_manager
):
    result = _run(tmp_path, profiler_plugin_manager)
    store = tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    with open(store, "a") as f:
        f.write(
            '{"scenarioId":"s9","mode":"a","model":"m1","iteration":0,"trace":{"sess'
        )
    out = CliRunner().invoke(
        cli,
        ["analyze", str(store), "--json"],
        obj=analyzers_manager,
        catch_exceptions=False,
    )
    assert out.exit_code == 1
    assert f"{store}:9: truncated last line; skipped" in out.stderr
    assert len(json.loads(out.stdout)) == 8


def test_profiler_traces_export_from_a_report_folder(tmp_path, profiler_plugin_manager):
    result = _run(tmp_path, profiler_plugin_manager)
    run_dir = tmp_path / "reports" / result.run_id
    out = CliRunner().invoke(
        cli,
        ["traces", "export", str(run_dir)],
        obj=profiler_plugin_manager,
        catch_exceptions=False,
    )
    assert out.exit_code == 0, out.output
    assert out.stdout.strip() == f"Wrote 8 trace files to {run_dir / 'sessions'}"
    files = sorted(
        p.relative_to(run_dir / "sessions").as_posix()
        for p in (run_dir / "sessions").rglob("*.json")
    )
    assert files == [
        f"{s}/{m}-iter-{i}.json"
        for s in ("s1", "s2")
        for m in ("a", "b")
        for i in (0, 1)
    ]


def test_profiler_traces_export_without_a_store_says_so_in_one_line(
    tmp_path, profiler_plugin_manager
):
    out = CliRunner().invoke(
        cli, ["traces", "export", str(tmp_path)], obj=profiler_plugin_manager
    )
    assert out.exit_code == 1
    assert (
        out.stderr.strip()
        == f"Error: {tmp_path}: no trace store here (expected {TRACES_FILE}, a "
        "run's sessions folder or its report folder)"
    )


def test_the_profile_key_is_checked(tmp_path):
    from profiler_core.config.loader import load_profile
    from profiler_core.errors import ConfigError

    (tmp_path / "scenarios").mkdir()
    profile = tmp_path / "profile.yaml"
    profile.write_text("modes: {a: {}}\noutput: {trace_format: zip}\n")
    with pytest.raises(ConfigError) as err:
        load_profile(str(profile))
    assert "output.trace_format" in str(err.value) and "one of jsonl, files" in str(
        err.value
    )


def test_a_run_started_with_trace_files_is_resumed_with_trace_files(
    tmp_path, profiler_plugin_manager
):
    first = _run(tmp_path, profiler_plugin_manager, run_id="old", trace_format="files")
    done = list(first.rows)[:-1]
    (tmp_path / "results" / "old.jsonl").write_text(
        "".join(to_json(r) + "\n" for r in done)
    )
    resumed = _run(tmp_path, profiler_plugin_manager, run_id="old", previous_rows=done)
    sessions = tmp_path / "reports" / "old" / "sessions"
    assert not (sessions / TRACES_FILE).exists()
    assert len(list(sessions.rglob("*-iter-*.json"))) == 8
    manifest = json.loads(Path(resumed.manifest_path).read_text())
    assert (
        "traces written one file per session, as the run being resumed did"
        in manifest["warnings"]
    )


def test_a_new_run_refuses_a_run_id_whose_trace_store_exists(
    tmp_path, profiler_plugin_manager
):
    from profiler_core import ConfigError

    _run(tmp_path, profiler_plugin_manager, run_id="r")
    store = tmp_path / "reports" / "r" / "sessions" / TRACES_FILE
    kept = store.read_text()
    for name in ("r.jsonl", "r.manifest.json"):
        (
            tmp_path / "results" / name
        ).unlink()  # the results are gone, the traces are not
    with pytest.raises(
        ConfigError,
        match=r"run 'r' already has session traces in .*traces.jsonl; use --resume r",
    ):
        _run(tmp_path, profiler_plugin_manager, run_id="r")
    assert store.read_text() == kept


def test_analyze_says_when_a_store_is_empty(tmp_path, analyzers_manager):
    store = tmp_path / TRACES_FILE
    store.write_text("")
    out = CliRunner().invoke(
        cli, ["analyze", str(store)], obj=analyzers_manager, catch_exceptions=False
    )
    assert out.exit_code == 1
    assert (
        out.stderr.strip()
        == f"Error: {store}: an empty trace store (no session was exported)"
    )


def test_import_trace_names_a_store_and_what_to_do(tmp_path, profiler_plugin_manager):
    result = _run(tmp_path, profiler_plugin_manager)
    store = tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    out = CliRunner().invoke(
        cli,
        ["import", "trace", str(store), "--out", str(tmp_path / "imported.jsonl")],
        obj=profiler_plugin_manager,
    )
    assert out.exit_code == 1
    assert (
        "a run's trace store (one trace per line), not one SessionTrace" in out.stderr
    )
    assert "profiler traces export" in out.stderr and "Traceback" not in out.output


# Defects a review of the trace store found (each test failed before its fix; the
# docstrings say what was wrong).


def test_resuming_a_store_run_with_trace_format_files_still_appends_to_its_store(
    tmp_path, profiler_plugin_manager
):
    """A run started with the store and resumed after `output.trace_format: files` was
    set (output is not in the
    profile hash, so no --force is needed) splits its traces: the first cells stay in
    traces.jsonl, the rest become
    files, and the manifest's traceStore turns null. suite.py only handles the files ->
    store direction."""
    first = _run(tmp_path, profiler_plugin_manager, run_id="r")
    done = list(first.rows)[:3]
    (tmp_path / "results" / "r.jsonl").write_text(
        "".join(to_json(r) + "\n" for r in done)
    )
    # Drop the traces of the cells that "did not finish" so the store holds exactly what
    # the killed run wrote.
    store = tmp_path / "reports" / "r" / "sessions" / TRACES_FILE
    store.write_text("".join(store.read_text().splitlines(keepends=True)[:3]))
    resumed = _run(
        tmp_path,
        profiler_plugin_manager,
        run_id="r",
        previous_rows=done,
        trace_format="files",
    )
    sessions = tmp_path / "reports" / "r" / "sessions"
    assert set(latest_records(store)) == {row.cell for row in resumed.rows}, (
        f"store holds {len(latest_records(store))} of 8 cells; "
        f"{len(list(sessions.rglob('*-iter-*.json')))} went to files"
    )
    assert json.loads(Path(resumed.manifest_path).read_text()).get("traceStore") == str(
        store
    )


def test_analyze_reads_a_gzipped_trace_store_as_traces_export_does(
    tmp_path, profiler_plugin_manager, analyzers_manager
):
    """`profiler traces export traces.jsonl.gz` works (iter_lines reads gzip), but
    `profiler analyze` on the same
    file says 'not a text file (expected SessionTrace JSON)': is_store() sniffs raw
    bytes and never un-gzips."""
    result = _run(tmp_path, profiler_plugin_manager)
    store = tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    gz = tmp_path / "traces.jsonl.gz"
    gz.write_bytes(gzip.compress(store.read_bytes()))
    assert len(export_files(gz, tmp_path / "out")) == 8  # the store reader takes it
    out = CliRunner().invoke(
        cli,
        ["analyze", str(gz), "--json"],
        obj=analyzers_manager,
        catch_exceptions=False,
    )
    assert out.exit_code == 0, out.stderr
    assert len(json.loads(out.stdout)) == 8


def test_export_of_a_two_model_run_keeps_the_model_in_names_when_one_model_left_no_trace(
    tmp_path, profiler_plugin_manager
):
    """export_files decides "several models" from the models found in the store, not the
    run's: when m2's cells all
    failed (or the run was killed before m2), the files are named `a-iter-0.json`, while
    the run with
    `trace_format: files` names them `a+m1-iter-0.json` (and the docstring promises
    `<mode>+<model>` for such runs)."""

    def m2_down(params, attempt):
        # Failures that differ from cell to cell: a run whose model's every session
        # fails the same way stops early.
        return (
            Fail(f"m2 down ({'pqrstuvwxyz'[params.iteration % 11]})")
            if params.model == "m2"
            else None
        )

    stored = _run(
        tmp_path / "one",
        profiler_plugin_manager,
        models=("m1", "m2"),
        provider=FakeProvider(script=m2_down),
    )
    filed = _run(
        tmp_path / "two",
        profiler_plugin_manager,
        models=("m1", "m2"),
        provider=FakeProvider(script=m2_down),
        trace_format="files",
    )
    store = tmp_path / "one" / "reports" / stored.run_id / "sessions" / TRACES_FILE
    out = tmp_path / "exported"
    written = sorted(p.relative_to(out).as_posix() for p in export_files(store, out))
    files_dir = tmp_path / "two" / "reports" / filed.run_id / "sessions"
    expected = sorted(
        p.relative_to(files_dir).as_posix() for p in files_dir.rglob("*.json")
    )
    assert "s1/a+m1-iter-0.json" in expected
    assert written == expected


def test_analyze_reports_a_store_whose_only_record_is_torn_as_a_torn_store_line(
    tmp_path, analyzers_manager
):
    """A run SIGKILLed while appending its first trace leaves traces.jsonl with one torn
    line. `traces export` says
    'traces.jsonl:1: truncated last line; skipped'; `profiler analyze` says 'not valid
    JSON (...)' instead, because
    is_store() needs a whole first record, and never says what it expected (a trace
    store or a SessionTrace)."""
    store = tmp_path / "reports" / "r" / "sessions" / TRACES_FILE
    store.parent.mkdir(parents=True)
    store.write_text(
        '{"scenarioId":"s1","mode":"a","model":"m1","iteration":0,"trace":{"sessionId":"torn","ev'
    )
    out = CliRunner().invoke(
        cli,
        ["analyze", str(store), "--json"],
        obj=analyzers_manager,
        catch_exceptions=False,
    )
    assert out.exit_code == 1
    assert out.stderr.strip() == f"Error: {store}:1: truncated last line; skipped"


def test_a_store_torn_inside_a_multibyte_character_still_exports_its_complete_records(
    tmp_path, profiler_plugin_manager
):
    """orjson writes non-ASCII text as raw UTF-8, so a store cut mid-write (SIGKILL, a
    full disk, a copy of a live run)
    can end inside a character. iter_lines decodes the file as strict UTF-8 and turns
    that into one StoreError for the
    whole file: `profiler traces export` and `profiler analyze` then give nothing, where
    a torn ASCII tail costs one line."""
    result = _run(
        tmp_path, profiler_plugin_manager, provider=FakeProvider(text="café — naïve")
    )
    store = tmp_path / "reports" / result.run_id / "sessions" / TRACES_FILE
    with open(store, "ab") as f:
        f.write(
            '{"scenarioId":"s1","mode":"a","model":"m1","iteration":0,"trace":{"sessionId":"caf\u00e9'.encode()[
                :-1
            ]
        )
    out = CliRunner().invoke(
        cli,
        ["traces", "export", str(store), "--out", str(tmp_path / "out")],
        obj=profiler_plugin_manager,
        catch_exceptions=False,
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
    out = CliRunner().invoke(
        cli, ["analyze", str(edited), "--json"], obj=analyzers_manager
    )
    assert out.exception is None or isinstance(out.exception, SystemExit), repr(
        out.exception
    )
    assert "Traceback" not in out.output


def test_profiler_traces_export_refuses_a_file_that_is_not_a_store(
    tmp_path, profiler_plugin_manager
):
    notes = tmp_path / "notes.txt"
    notes.write_text("garbage\n")
    out = CliRunner().invoke(
        cli, ["traces", "export", str(notes)], obj=profiler_plugin_manager
    )
    assert out.exit_code == 1
    assert out.stderr.strip() == (
        f"Error: {notes}: not a trace store (expected {TRACES_FILE}: one "
        f"{{scenarioId, mode, model, iteration, trace}} object per line)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_profiler_traces_export_fails_when_no_record_reads(
    tmp_path, profiler_plugin_manager
):
    store = tmp_path / TRACES_FILE
    store.write_text(
        '{"scenarioId":"s","mode":"a","model":"m","iteration":0,"trace":{}}\n'
    )
    out = CliRunner().invoke(
        cli,
        ["traces", "export", str(store), "--out", str(tmp_path / "out")],
        obj=profiler_plugin_manager,
    )
    assert out.exit_code == 1
    lines = out.stderr.strip().splitlines()
    assert lines[0].startswith(
        f"warning: {store}:1: $.trace.sessionId: required field missing"
    )
    assert lines[-1] == f"Error: {store}: no trace could be read"
    assert not (tmp_path / "out").exists()
