"""Resume never deletes more than one torn last line, and a bad byte costs one row in
report and resume alike (issue 31.4)."""

from __future__ import annotations

import json
import logging

import pytest
from click.testing import CliRunner

from profiler_core.cli import cli
from profiler_core.errors import StoreError
from profiler_core.storage.store import read_jsonl, repair_truncated_tail


@pytest.fixture
def run(tmp_path, profiler_plugin_manager):
    """A finished run ``r1`` of 4 cells, and a function invoking the CLI in its folder."""
    (tmp_path / "scenarios").mkdir()
    for sid in ("s-1", "s-2"):
        (tmp_path / "scenarios" / f"{sid}.json").write_text(
            json.dumps({"id": sid, "name": sid, "prompt": "Fix the parser."})
        )
    (tmp_path / "profile.yaml").write_text(
        json.dumps(
            {
                "modes": {"a": {}},
                "scenarios": {"path": "scenarios"},
                "provider": {
                    "id": "simulated",
                    "model": "sim-small",
                    "options": {"seed": 1, "time_scale": 0},
                },
                "execution": {"repetitions": 2, "warmup": False},
                "analyzers": [],
                "output": {
                    "results_dir": str(tmp_path / "results"),
                    "reports_dir": str(tmp_path / "reports"),
                },
            }
        )
    )

    def invoke(*args):
        return CliRunner().invoke(
            cli, [*args], obj=profiler_plugin_manager, catch_exceptions=False
        )

    first = invoke(
        "run", str(tmp_path / "profile.yaml"), "--run-id", "r1", "--no-report"
    )
    assert first.exit_code == 0, first.output
    return tmp_path / "results" / "r1.jsonl", invoke


def _resume(invoke, results):
    return invoke(
        "run",
        str(results.parent.parent / "profile.yaml"),
        "--resume",
        "r1",
        "--no-report",
    )


def test_a_file_with_cr_line_ends_is_refused_not_emptied(run):
    results, invoke = run
    rows = results.read_bytes().splitlines()
    results.write_bytes(b"\r".join(rows))  # classic Mac line ends: no \n at all
    before = results.read_bytes()
    resumed = _resume(invoke, results)
    assert resumed.exit_code == 1
    (line,) = resumed.output.strip().splitlines()[-1:]
    assert (
        line.startswith(
            f"Error: {results}:1: the last {len(before)} bytes hold carriage returns"
        )
        and "left untouched" in line
    )
    assert results.read_bytes() == before


def test_a_file_that_does_not_hold_rows_is_refused_untouched(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'these are my notes\nnot rows at all\n{"half')
    with pytest.raises(
        StoreError, match=r"notes.jsonl: does not hold result rows .*left untouched"
    ):
        repair_truncated_tail(path)
    assert path.read_bytes() == b'these are my notes\nnot rows at all\n{"half'
    path.write_bytes(b"these are my notes\nno record here")
    with pytest.raises(
        StoreError,
        match=r"notes.jsonl:2: the last line does not start like a JSON record",
    ):
        repair_truncated_tail(path)


def test_only_the_torn_last_line_is_cut(run, caplog):
    results, invoke = run
    rows = results.read_bytes().splitlines(keepends=True)
    results.write_bytes(b"".join(rows[:3]) + rows[3][:40])
    with caplog.at_level(logging.WARNING, logger="agent_profiler"):
        resumed = _resume(invoke, results)
    assert resumed.exit_code == 0, resumed.output
    assert f"{results}:4: dropped a torn last line (40 bytes)" in caplog.text
    assert (
        results.read_bytes().startswith(b"".join(rows[:3]))
        and len(read_jsonl(results).rows) == 4
    )


def test_a_bad_byte_costs_one_row_in_report_and_resume_alike(run, caplog):
    results, invoke = run
    rows = results.read_bytes().splitlines(keepends=True)
    rows[1] = rows[1].replace(b'"mode":"a"', b'"mode":"a\xff"', 1)
    assert b"\xff" in rows[1]
    results.write_bytes(b"".join(rows))
    report = invoke("report", str(results), "--out", str(results.parent.parent / "rep"))
    assert report.exit_code == 0, report.output
    assert (
        f"{results}:2:" in report.output
    )  # the line is named, the other rows are reported
    with caplog.at_level(logging.WARNING, logger="agent_profiler"):
        resumed = _resume(invoke, results)
    assert resumed.exit_code == 0, resumed.output
    warning = next(r for r in caplog.records if f"{results}:2:" in r.getMessage())
    assert (
        "not valid JSON" in warning.getMessage()
        and "resuming: 3 cells already done" in resumed.output
    )
    assert (
        len(read_jsonl(results).rows) == 4
    )  # the spoiled cell ran again; nothing else was lost
    assert results.read_bytes().startswith(b"".join(rows))
