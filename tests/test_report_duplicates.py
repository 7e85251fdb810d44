"""A cell written twice (two writers on one run) is warned about and counted once, from
its last complete row (issue 15.4)."""

from __future__ import annotations

import csv
import json

from tests.test_report import all_rows, make_row, write_rows

from profiler_core import to_json
from profiler_core.report import write_report
from profiler_core.report.load import load_rows

#: cells written twice: (mode, scenario, iteration)
TWICE = [("base", "s1", 0), ("fast", "s2", 3), ("fast", "s1", 5)]


def _stale(mode: str, scen: str, it: int):
    """An earlier, different row of the same cell (the one the second writer replaced)."""
    return make_row(
        mode,
        scen,
        it,
        success=False,
        session_id=f"stale-{mode}-{scen}-{it}",
        extensions={"judge_score": 9.0},
    )


def _without_volatile(summary: dict) -> dict:
    summary = dict(summary)
    summary.pop("meta", None)
    summary.pop("generatedAt", None)
    return summary


def test_duplicated_cells_are_counted_once_from_their_last_row(tmp_path):
    clean = write_rows(tmp_path / "clean.jsonl", all_rows())
    # The stale copies come first (and one cell three times); a torn line at the end is not a row.
    rows = [_stale(*cell) for cell in TWICE] + [_stale(*TWICE[0])] + all_rows()
    doubled = write_rows(tmp_path / "doubled.jsonl", rows)

    table = load_rows(doubled, parallel=False)
    assert table.n == len(all_rows())
    assert table.duplicates == 4
    assert not any(s.startswith("stale-") for s in table.session_id)
    (warning,) = [p for p in table.problems if "duplicated" in p]
    assert "4 duplicated row(s) of 3 cell(s)" in warning

    want = write_report(clean, tmp_path / "want", parallel=False)
    got = write_report(doubled, tmp_path / "got", parallel=False)
    assert any("4 duplicated row(s) of 3 cell(s)" in w for w in got.warnings)
    want_summary = json.loads(want.summary.read_text())
    got_summary = json.loads(got.summary.read_text())
    for key in set(want_summary) - {
        "meta",
        "runId",
        "source",
        "generatedAt",
        "problems",
    }:
        assert got_summary[key] == want_summary[key], key
    assert json.loads(got.json.read_text()) == json.loads(want.json.read_text())
    got_csv = list(csv.reader(got.csv.open()))
    assert got_csv == list(csv.reader(want.csv.open()))
    assert "4 duplicated row(s)" in got.md.read_text()


def test_the_last_complete_row_wins_over_a_torn_one(tmp_path):
    rows = all_rows()
    last = make_row("base", "s1", 0, session_id="the-last")
    torn = to_json(make_row("base", "s1", 0, session_id="torn"))[:-20]
    path = write_rows(tmp_path / "run.jsonl", [*rows, last], extra_lines=[torn])
    table = load_rows(path, parallel=False)
    assert table.n == len(rows) and table.duplicates == 1
    assert "the-last" in table.session_id and "ses-base-s1-0" not in table.session_id


def test_no_warning_without_duplicates(tmp_path):
    table = load_rows(write_rows(tmp_path / "run.jsonl", all_rows()), parallel=False)
    assert table.duplicates == 0 and not table.problems


def test_the_two_process_reader_drops_the_same_rows(tmp_path, monkeypatch):
    from profiler_core.report import load

    rows = (
        [_stale(*cell) for cell in TWICE]
        + all_rows()
        + [_stale("base", "s2", 1), make_row("base", "s2", 1)]
    )
    path = write_rows(tmp_path / "run.jsonl", rows)
    sequential = write_report(path, tmp_path / "seq", parallel=False)
    monkeypatch.setattr(load, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(load, "can_fork", lambda: True)
    forked = write_report(path, tmp_path / "par")
    assert forked.rows == sequential.rows == len(all_rows())
    assert forked.warnings == sequential.warnings
    assert json.loads(forked.json.read_text()) == json.loads(
        sequential.json.read_text()
    )
    a, b = (
        json.loads(sequential.summary.read_text()),
        json.loads(forked.summary.read_text()),
    )
    a.pop("generatedAt"), b.pop("generatedAt")
    assert a == b
