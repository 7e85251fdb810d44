"""A write that the file system refuses (full disk, file size limit) names the file and
marks the run `failed` (issue 15.13).

A full disk is simulated by a real kernel limit: RLIMIT_FSIZE (set in the child
before it starts the profiler) makes every write past N bytes fail with EFBIG,
the way ENOSPC fails a write on a full disk.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROFILER = Path(sys.executable).with_name("profiler")

pytestmark = pytest.mark.slow


def _project(tmp_path: Path, analyzers: str) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s1.json").write_text(
        '{"id": "s1", "name": "S", "prompt": "do"}'
    )
    (tmp_path / "profile.yaml").write_text(
        textwrap.dedent(f"""
        modes: {{a: {{}}, b: {{}}}}
        scenarios: {{path: scenarios}}
        execution: {{repetitions: 100, warmup: false}}
        output: {{session_export: false}}
        {analyzers}
    """)
    )


def _profiler(
    args: list[str], cwd: Path, max_file_bytes: int | None = None
) -> subprocess.CompletedProcess:
    def limit() -> None:  # runs in the child before exec; both settings survive exec
        signal.signal(
            signal.SIGXFSZ, signal.SIG_IGN
        )  # a write past the limit fails (EFBIG) instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return subprocess.run(
        [str(PROFILER), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=limit if max_file_bytes else None,
    )


@pytest.mark.parametrize(
    ("analyzers", "full"),
    [
        ("analyzers: []", "r.jsonl: cannot append a result row"),
        ("", "r.analysis.jsonl: cannot append an analysis bundle"),
    ],
)
def test_a_full_disk_names_the_file_marks_the_run_failed_and_resume_finishes_it(
    tmp_path, analyzers, full
):
    _project(tmp_path, analyzers)
    results = tmp_path / "results"
    out = _profiler(
        ["run", "profile.yaml", "--run-id", "r", "--progress", "none"],
        tmp_path,
        max_file_bytes=30_000,
    )
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: {results / full} (File too large)"]
    manifest = json.loads((results / "r.manifest.json").read_text())
    assert manifest["status"] == "failed"
    assert 0 < manifest["counts"]["completed"] < 200

    again = _profiler(
        ["run", "profile.yaml", "--resume", "r", "--progress", "none", "--no-report"],
        tmp_path,
    )
    assert again.returncode == 0, again.stderr
    rows = [json.loads(line) for line in (results / "r.jsonl").read_text().splitlines()]
    cells = [(r["mode"], r["scenarioId"], r["iteration"]) for r in rows]
    assert len(cells) == len(set(cells)) == 200
    assert (
        json.loads((results / "r.manifest.json").read_text())["status"] == "completed"
    )


def test_a_full_disk_while_writing_a_report_names_the_file_and_leaves_no_partial_file(
    tmp_path,
):
    _project(tmp_path, "analyzers: []")
    ran = _profiler(
        ["run", "profile.yaml", "--run-id", "r", "--progress", "none", "--no-report"],
        tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    # results.json (the rows copied, ~200 KB) is the first file the report writes.
    out = _profiler(
        ["report", "results/r.jsonl", "--out", "rep"], tmp_path, max_file_bytes=20_000
    )
    assert out.returncode == 1, out.stdout
    assert "Traceback" not in out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: {Path('rep') / 'data' / 'results.json'}: cannot write (File too large)"
    ]
    assert not [p for p in (tmp_path / "rep").rglob("*") if p.name.endswith(".tmp")]
