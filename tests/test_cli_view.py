"""`profiler view` in a subprocess: the latest or a named report opens through $BROWSER; --serve serves on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

PROFILER = Path(sys.executable).with_name("profiler")


@pytest.fixture
def reports(tmp_path):
    """Two runs' report folders; run_b's is the newer one."""
    root = tmp_path / "reports"
    for i, run in enumerate(("run_a", "run_b")):
        (root / run).mkdir(parents=True)
        page = root / run / "report.html"
        page.write_text(f"<html><body>{run}</body></html>")
        os.utime(page, (1_700_000_000 + i, 1_700_000_000 + i))
    return root


@pytest.fixture
def browser(tmp_path):
    """A $BROWSER that records the URL it was asked to open (webbrowser runs it as `CMD URL`)."""
    log = tmp_path / "opened.txt"
    script = tmp_path / "fake-browser"
    script.write_text(f"#!/bin/sh\necho \"$1\" >> {log}\n")
    script.chmod(0o755)
    return script, log


def _view(args, cwd, browser_script):
    env = dict(os.environ, BROWSER=str(browser_script))
    return subprocess.run([str(PROFILER), "view", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_latest_report_opens(reports, browser, tmp_path):
    script, log = browser
    out = _view([], tmp_path, script)
    assert out.returncode == 0, out.stderr
    assert log.read_text().strip() == (reports / "run_b" / "report.html").resolve().as_uri()


def test_named_run_and_file(reports, browser, tmp_path):
    script, log = browser
    assert _view(["run_a"], tmp_path, script).returncode == 0
    assert _view([str(reports / "run_b" / "report.html")], tmp_path, script).returncode == 0
    opened = log.read_text().split()
    assert opened == [(reports / r / "report.html").resolve().as_uri() for r in ("run_a", "run_b")]


@pytest.mark.parametrize("target", ["nope", "../run_a", "/etc"])
def test_unknown_or_escaping_target_is_one_line(reports, browser, tmp_path, target):
    script, log = browser
    out = _view([target], tmp_path, script)
    assert out.returncode == 1
    assert out.stderr.startswith("Error: ") and len(out.stderr.strip().splitlines()) == 1
    assert not log.exists()


def test_no_reports_is_one_line(tmp_path, browser):
    out = _view([], tmp_path, browser[0])
    assert out.returncode == 1 and "no report found" in out.stderr


def test_serve_on_loopback_until_ctrl_c(reports, tmp_path):
    proc = subprocess.Popen(
        [str(PROFILER), "view", "--serve", "--no-browser", "run_a"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()
        url = line.split(" at ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/run_a/report.html")
        assert "run_a" in httpx.get(url, timeout=10).text
        listing = httpx.get(url.rsplit("/run_a/", 1)[0] + "/", timeout=10).text
        assert "run_b" in listing
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0
