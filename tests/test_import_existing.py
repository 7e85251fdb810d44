"""``profiler import --out`` onto an existing or live run: refused, appended or replaced — never a lost run."""

from __future__ import annotations

from profiler_core.store import RunLock, RunPaths, read_jsonl
from tests.test_importers import CC_API_ERROR, CC_DST, cli_manager, invoke  # noqa: F401 - cli_manager is a fixture


def test_import_onto_a_run_being_written_is_refused_and_its_file_untouched(tmp_path, cli_manager):
    out = tmp_path / "results" / "live.jsonl"
    out.parent.mkdir()
    out.write_text("a row of the live run\n")
    lock = RunLock(RunPaths(out.parent, "live"))
    lock.acquire()  # `profiler run --run-id live` writes it right now
    try:
        result = invoke(cli_manager, "claude-code", CC_DST, "--out", out, "--replace")
    finally:
        lock.release()
    assert result.exit_code == 1 and "is being written by process" in result.stderr
    assert out.read_text() == "a row of the live run\n"


def test_an_existing_out_is_refused_unless_append_or_replace(tmp_path, cli_manager):
    out = tmp_path / "results" / "claude.jsonl"
    assert invoke(cli_manager, "claude-code", CC_DST, "--out", out).exit_code == 0
    again = invoke(cli_manager, "claude-code", CC_API_ERROR, "--out", out)
    assert again.exit_code == 1 and "already exists; use --append" in again.stderr
    assert len(read_jsonl(out).rows) == 1

    appended = invoke(cli_manager, "claude-code", CC_DST, CC_API_ERROR, "--out", out, "--append")
    assert appended.exit_code == 0, appended.stderr
    rows = read_jsonl(out).rows
    assert [(r.scenario_id, r.iteration) for r in rows] == [("fix-dst-test", 0), ("fix-dst-test", 1), ("api-error", 0)]
    analysis = read_jsonl(out.with_name("claude.analysis.jsonl"), cls=__import__("profiler_core").SessionAnalysisBundle).rows
    assert {(b.scenario_id, b.iteration) for b in analysis} == {("fix-dst-test", 0), ("fix-dst-test", 1), ("api-error", 0)}
    assert (tmp_path / "results" / "sessions" / "fix-dst-test" / "imported-iter-1.json").is_file()

    replaced = invoke(cli_manager, "claude-code", CC_API_ERROR, "--out", out, "--replace")
    assert replaced.exit_code == 0, replaced.stderr
    assert [(r.scenario_id, r.iteration) for r in read_jsonl(out).rows] == [("api-error", 0)]


def test_a_killed_imports_staging_folder_is_removed_by_the_next(tmp_path, cli_manager):
    out = tmp_path / "results" / "claude.jsonl"
    leftover = tmp_path / "results" / ".claude.jsonl.import"
    (leftover / "sub").mkdir(parents=True)  # what a SIGKILL in the middle of an import leaves
    assert invoke(cli_manager, "claude-code", CC_DST, "--out", out).exit_code == 0
    assert not leftover.exists()
    assert sorted(p.name for p in out.parent.iterdir()) == ["claude.analysis.jsonl", "claude.jsonl", "claude.manifest.json", "sessions"]
