"""After the README's main command, its other commands (`report RUN_ID`, `view`,
`analyze`, `traces export`) find the run from the root (issue 31.16)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_core.errors import StoreError
from profiler_core.storage.runs import SEARCH_DEPTH, find_report_html, find_run

ROOT = Path(__file__).resolve().parent.parent
PROFILER = [sys.executable, "-m", "profiler_core"]


def profiler(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PROFILER, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A folder laid out as the repository, after `profiler run
    examples/demo/profile.yaml` (one repetition)."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copytree(
        ROOT / "examples" / "demo",
        root / "examples" / "demo",
        ignore=shutil.ignore_patterns("results", "reports"),
    )
    profile = root / "examples" / "demo" / "profile.yaml"
    profile.write_text(
        profile.read_text().replace("time_scale: 0.002", "time_scale: 0")
    )
    done = profiler(
        root,
        "run",
        "examples/demo/profile.yaml",
        "--repetitions",
        "1",
        "--skip-warmup",
        "--run-id",
        "demo_run",
    )
    assert done.returncode == 0, done.stderr
    assert (
        root / "examples" / "demo" / "reports" / "demo_run" / "report.html"
    ).is_file()
    return root


def test_report_of_a_run_id_from_the_root_finds_the_demo_run(checkout):
    page = checkout / "examples" / "demo" / "reports" / "demo_run" / "report.html"
    page.unlink()
    done = profiler(checkout, "report", "demo_run")
    assert done.returncode == 0, done.stderr
    assert "rows from examples/demo/results/demo_run.jsonl" in done.stdout
    assert (
        page.is_file() and not (checkout / "reports").exists()
    )  # rewritten where the run keeps it


def test_view_from_the_root_opens_the_newest_run_and_a_named_one(checkout, tmp_path):
    """After `profiler run examples/demo/profile.yaml` from the root, `profiler view`
    serves that run's folder."""
    import signal
    import subprocess
    import sys

    import httpx

    for args in ((), ("demo_run",)):
        process = subprocess.Popen(
            [sys.executable, "-m", "profiler_core", "view", "--no-open", *args],
            cwd=checkout,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = process.stdout.readline()
            assert "examples/demo/results" in line, (
                line,
                process.stderr.read() if process.poll() is not None else "",
            )
            url = line.split(" at ", 1)[1].split()[0]
            assert (
                url.endswith("/runs/demo_run/")
                and "demo_run" in httpx.get(url, timeout=30).text
            )
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=20)


def test_analyze_and_traces_export_take_the_run_id_from_the_root(checkout, tmp_path):
    analyzed = profiler(checkout, "analyze", "demo_run", "--summary")
    assert analyzed.returncode == 0, analyzed.stderr
    assert analyzed.stdout.startswith("Summary: 10 sessions analysed")
    exported = profiler(
        checkout, "traces", "export", "demo_run", "--out", str(tmp_path / "traces")
    )
    assert exported.returncode == 0, exported.stderr
    assert len(list((tmp_path / "traces").rglob("*.json"))) == 10


def test_an_unknown_run_says_where_it_was_looked_for_in_one_line(checkout):
    done = profiler(checkout, "report", "no_such_run")
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert (
        "no run 'no_such_run' in results/ nor in the run manifests below the current directory"
        in done.stderr
    )


def _run_files(
    folder: Path,
    run_id: str,
    *,
    sessions: Path | None = None,
    report: bool = True,
    mtime: int = 1_700_000_000,
) -> None:
    """A run's manifest and results in ``folder/results``, its report in ``folder/reports``."""
    (folder / "results").mkdir(parents=True, exist_ok=True)
    manifest = folder / "results" / f"{run_id}.manifest.json"
    manifest.write_text(
        json.dumps(
            {"runId": run_id, "sessionsDir": str(sessions) if sessions else None}
        )
    )
    (folder / "results" / f"{run_id}.jsonl").write_text("{}\n")
    if report:
        (folder / "reports" / run_id).mkdir(parents=True, exist_ok=True)
        (folder / "reports" / run_id / "report.html").write_text("<html></html>")
    os.utime(manifest, (mtime, mtime))


def test_find_run_prefers_the_given_folders_then_the_newest_manifest_below(tmp_path):
    _run_files(tmp_path / "a" / "b", "old", mtime=1_700_000_000)
    _run_files(tmp_path / "c", "new", mtime=1_700_000_100)
    elsewhere = tmp_path / "elsewhere" / "reports" / "moved"
    _run_files(tmp_path / "d", "moved", sessions=elsewhere / "sessions", report=False)
    assert find_run(root=tmp_path).run_id == "new"
    found = find_run("old", root=tmp_path)
    assert (
        found.results == tmp_path / "a" / "b" / "results" / "old.jsonl"
        and found.report_dir == tmp_path / "a" / "b" / "reports" / "old"
    )
    assert (
        find_run("moved", root=tmp_path).report_dir == elsewhere
    )  # where the manifest says its traces went
    # The given folders come first, however old.
    here = tmp_path / "here"
    _run_files(here, "local", mtime=1_600_000_000)
    assert (
        find_run(
            results_dir=here / "results", reports_dir=here / "reports", root=tmp_path
        ).run_id
        == "local"
    )
    assert (
        find_report_html(None, here / "reports")
        == here / "reports" / "local" / "report.html"
    )


def test_find_run_stays_shallow_skips_environments_and_refuses_paths(tmp_path):
    deep = tmp_path.joinpath(*["x"] * SEARCH_DEPTH)
    _run_files(deep, "too_deep")
    _run_files(tmp_path / ".venv" / "lib", "in_venv")
    with pytest.raises(
        StoreError,
        match=r"no run found in results/ or reports/, nor in the run manifests below",
    ):
        find_run(root=tmp_path)
    with pytest.raises(StoreError, match="not a run id"):
        find_run("../etc", root=tmp_path)
    with pytest.raises(StoreError, match="no such report file or folder"):
        find_report_html("../etc", tmp_path / "reports")
