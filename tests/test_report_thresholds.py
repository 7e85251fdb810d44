"""Charts and the HTML helper process only when the data is big enough to profit (issue
30, docs/reports.md)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_core import to_json
from profiler_core.report import charts, worker, write_report
from test_report import all_rows, make_row

SRC = Path(__file__).resolve().parents[1] / "src"


def _write(path: Path, rows) -> Path:
    path.write_text("".join(to_json(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_few_rows_get_tables_and_no_charts_and_never_import_matplotlib(tmp_path):
    rows = _write(
        tmp_path / "few.jsonl",
        [make_row("base", "s1", i) for i in range(charts.MIN_CHART_ROWS - 1)],
    )
    code = (
        "import sys, json; from pathlib import Path; from profiler_core.report "
        "import write_report\n"
        f"write_report(Path({str(rows)!r}), Path({str(tmp_path / 'out')!r}))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib')))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(SRC), os.environ.get("PYTHONPATH")])
        ),
    }
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<svg" not in page
    assert f"drawn from {charts.MIN_CHART_ROWS} runs of a mode on" in page
    assert "Success" in page and "base" in page  # the tables are all there


def test_charts_from_the_threshold_on(tmp_path):
    rows = [
        make_row(m, "s1", i)
        for m in ("base", "fast")
        for i in range(charts.MIN_CHART_ROWS)
    ]
    page = write_report(
        _write(tmp_path / "enough.jsonl", rows), tmp_path / "out", parallel=False
    ).html.read_text()
    assert page.count('<svg class="chart"') >= 5
    assert "runs of a mode on" not in page


def test_the_helper_process_starts_only_for_big_inputs(tmp_path, monkeypatch):
    started = []

    class Recorder(worker.HtmlWorker):
        def __init__(self):
            started.append(True)
            super().__init__()

    monkeypatch.setattr(worker, "HtmlWorker", Recorder)
    small = _write(tmp_path / "small.jsonl", all_rows())
    write_report(small, tmp_path / "a")
    assert started == []
    monkeypatch.setattr(worker, "MIN_BYTES", small.stat().st_size)
    written = write_report(small, tmp_path / "b")
    assert started == [True] and "<svg" in written.html.read_text()


def test_a_gzip_input_is_measured_by_its_uncompressed_size(tmp_path):
    text = "".join(to_json(r) + "\n" for r in all_rows()) * 20
    path = tmp_path / "rows.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    assert path.stat().st_size < len(text.encode())
    assert worker.input_bytes(path) == len(text.encode())
    plain = _write(tmp_path / "rows.jsonl", all_rows())
    assert worker.input_bytes(plain) == plain.stat().st_size


@pytest.mark.parametrize("size", [0, 1])
def test_input_bytes_of_an_empty_or_broken_gzip_is_its_file_size(tmp_path, size):
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(b"\x1f" * size)
    assert worker.input_bytes(path) == size


def test_write_report_uses_the_threshold(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(worker, "input_bytes", lambda path: calls.append(path) or 0)
    write_report(_write(tmp_path / "r.jsonl", all_rows()), tmp_path / "out")
    assert calls == [tmp_path / "r.jsonl"]
