"""Progress outside a terminal: plain lines with errored / unsuccessful counts, tokens
and cost; or none (issue 16.13)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from profiler_core.cli.progress import PlainProgress, Tally

PROFILER = Path(sys.executable).with_name("profiler")
DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo" / "profile.yaml"
LINE = re.compile(
    r"^progress: (\d+)/(\d+) cells \(\d+%\) · (\d+) errored · (\d+) "
    r"unsuccessful · \S+ tokens · \$[\d.]+ · \d\d:\d\d elapsed( · \d+ at once)?$"
)


def _run(tmp_path, *args):
    # A copy: the demo's results and reports folders are beside its profile (never write
    # into examples/).
    demo = tmp_path / "demo"
    shutil.copytree(
        DEMO.parent, demo, ignore=shutil.ignore_patterns("results", "reports")
    )
    return subprocess.run(
        [
            str(PROFILER),
            "run",
            str(demo / "profile.yaml"),
            "--repetitions",
            "2",
            "--no-report",
            "--skip-warmup",
            *args,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_plain_lines_when_stderr_is_not_a_terminal(tmp_path):
    out = _run(tmp_path)  # auto: stderr is a pipe here
    lines = [line for line in out.stderr.splitlines() if line.startswith("progress:")]
    assert lines and all(LINE.match(line) for line in lines), out.stderr
    done, total = map(int, LINE.match(lines[-1]).groups()[:2])
    assert total == 20 and done >= 18  # a line at each 10% at least
    assert "failed" not in out.stderr


def test_none_prints_no_progress(tmp_path):
    out = _run(tmp_path, "--progress", "none")
    assert out.returncode == 0 and "progress:" not in out.stderr


def test_tally_counts_errored_apart_from_unsuccessful():
    class Row:
        def __init__(self, error, success):
            self.error, self.success = error, success
            self.tokens = type("T", (), {"total": 100})()
            self.cost = type("C", (), {"total_usd": 0.5})()

    tally = Tally(total=4)
    for row in (Row("boom", False), Row(None, False), Row(None, True), Row(None, True)):
        tally.add(row)
    assert (
        tally.completed,
        tally.errored,
        tally.unsuccessful,
        tally.tokens,
        tally.cost_usd,
    ) == (4, 1, 1, 400, 2.0)
    assert "1 errored · 1 unsuccessful · 400 tokens · $2.0000" in tally.line()
    assert PlainProgress(every_s=1).every_s == 1
