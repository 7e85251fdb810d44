"""`profiler view` as a user runs it: a real server in a subprocess on 127.0.0.1, asked
over real HTTP."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from html import unescape
from pathlib import Path

import httpx
import pytest

from synthetic_runs import HOSTILE_ERROR, grid, write_run

pytestmark = pytest.mark.slow

PROFILER = Path(sys.executable).with_name("profiler")


def _outcome(mode: str, scenario: str, i: int) -> dict:
    """baseline fails s2 twice and errors once; fast passes; costs differ per row so
    sorting shows."""
    outcome = "pass"
    if mode == "baseline" and scenario == "s2":
        outcome = ("fail", "fail", "error")[i]
    return {
        "outcome": outcome,
        "cost": 0.01 * (1 + i) * (2 if mode == "baseline" else 1),
        "wall_ms": 1000.0 + 100 * i,
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs: an older one, and a newer one with failures, an error and hostile text."""
    root = tmp_path_factory.mktemp("view")
    write_run(
        root,
        "run_old",
        grid(["baseline"], ["s1"], 2),
        started_at="2026-01-01T00:00:00Z",
    )
    write_run(
        root,
        "run_new",
        grid(["baseline", "fast"], ["s1", "s2"], 3, _outcome),
        started_at="2026-02-01T00:00:00Z",
    )
    bad = write_run(
        root,
        "run_bad",
        grid(["a"], ["s1"], 1),
        started_at="2025-12-01T00:00:00Z",
        report=False,
    )
    # A row the table can list but the model refuses (a negative token count): its session says why.
    bad.write_text(
        re.sub(
            r'"tokens":\{"input":\d+', '"tokens":{"input":-5', bad.read_text(), count=1
        )
    )
    return root


@pytest.fixture(scope="module")
def server(runs):
    """`profiler view --no-open` on a free port; its base URL (stopped with Ctrl-C at the end)."""
    proc = subprocess.Popen(
        [str(PROFILER), "view", "--no-open"],
        cwd=runs,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        match = re.search(r" at (http://127\.0\.0\.1:\d+)(/\S*)", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield match.group(1), match.group(2), proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=20)


def _get(base: str, path: str, **kw) -> httpx.Response:
    return httpx.get(base + path, timeout=30, **kw)


def _raw(base: str, path: str, host: str = "127.0.0.1") -> tuple[int, bytes]:
    """Send ``GET path`` exactly as written (no client normalises the dots away)."""
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data


def _body_rows(html: str) -> list[str]:
    """The <tr> elements of the rows table (each carries its outcome as its class)."""
    tbody = html.split('<table class="rows">', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr class="(\w+)" data-href="([^"]+)"', tbody)


def test_opens_the_newest_run_and_lists_both(server):
    base, start, _ = server
    assert start == "/runs/run_new/"
    page = _get(base, "/").text
    assert page.index("run_new") < page.index("run_old")
    assert (
        "fast vs baseline" in page and "⚠ 1 row errored" in page
    )  # one row of run_new errored: singular


def test_rows_filter_and_sort(server):
    base, start, _ = server
    failed = _body_rows(_get(base, start, params={"outcome": "fail"}).text)
    assert [cls for cls, _ in failed] == ["fail", "fail"]
    assert all(
        "scenario=s2" in unescape(href) and "mode=baseline" in unescape(href)
        for _, href in failed
    )
    by_cost = _get(
        base, start, params={"sort": "cost", "desc": "1", "mode": "fast"}
    ).text
    costs = [
        float(c)
        for c in re.findall(
            r"<td>\$([0-9.]+)</td>",
            by_cost.split('<table class="rows">', 1)[1].split("</table>", 1)[0],
        )
    ]
    assert len(costs) == 6 and costs == sorted(costs, reverse=True)
    searched = _body_rows(_get(base, start, params={"q": "ONERROR"}).text)
    assert [cls for cls, _ in searched] == ["error"]


def test_session_shows_trace_checks_findings_and_escapes_everything(server):
    base, start, _ = server
    error_href = unescape(
        _body_rows(_get(base, start, params={"outcome": "error"}).text)[0][1]
    )
    page = _get(base, start + error_href)
    assert page.status_code == 200
    html = page.text
    assert "<script>window.__pwned" not in html and "<img src=x" not in html
    assert (
        HOSTILE_ERROR.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#x27;")
        in html
    )
    assert "&lt;/pre&gt;&lt;script&gt;" in html  # the tool's output, as text
    assert "Turn 1" in html and "Turn 2" in html and "pytest -q" in html
    assert "tests-pass" in html and "/passed/" in html and "flailing" in html
    assert "beside fast" in html
    csp = page.headers["content-security-policy"]
    assert (
        "script-src 'self'" in csp
        and "unsafe-inline" not in csp.split("script-src", 1)[1].split(";")[0]
    )


def test_pair_puts_two_modes_side_by_side(server):
    base, start, _ = server
    page = _get(
        base,
        start + "pair",
        params={
            "model": "m1",
            "scenario": "s2",
            "iteration": 0,
            "a": "baseline",
            "b": "fast",
        },
    ).text
    assert page.count('<div class="side">') == 2
    assert "baseline · iteration 0 beside fast · iteration 0" in page
    # turn by turn: turn 1 of each on one row, then turn 2; and what each left in its workspace
    rows = re.findall(
        r'<div class="turn-row" data-turn="(\d+)"><div><h3>Turn \1 ', page
    )
    assert rows == ["1", "2"]
    assert page.count("<h3>Workspace</h3>") == 2
    assert (
        "No change." in page and "src/s2.py | 3 ++-" in page
    )  # the failed session changed nothing, the passed one did


def test_a_failed_session_links_to_a_passed_one_of_its_scenario_beside_it(server):
    base, start, _ = server
    page = unescape(
        _get(
            base,
            start + "session",
            params={
                "model": "m1",
                "mode": "baseline",
                "scenario": "s2",
                "iteration": 1,
            },
        ).text
    )
    link = re.search(
        r'<a class="contrast" href="(pair\?[^"]+)">beside a passed session '
        r"\(fast, iteration 0\)</a>",
        page,
    )
    assert link, page[:2000]
    pair = _get(base, start + link.group(1)).text
    assert "baseline · iteration 1 beside fast · iteration 0" in pair
    assert (
        '<span class="badge fail">fail</span>' in pair
        and '<span class="badge pass">pass</span>' in pair
    )
    passed = unescape(
        _get(
            base,
            start + "session",
            params={"model": "m1", "mode": "fast", "scenario": "s2", "iteration": 2},
        ).text
    )
    assert "beside a failed session (baseline, iteration 0)" in passed
    alike = unescape(
        _get(
            base,
            start + "session",
            params={"model": "m1", "mode": "fast", "scenario": "s1", "iteration": 0},
        ).text
    )
    assert 'class="contrast"' not in alike  # every session of s1 passed


def test_report_links_reach_sessions(server):
    base, start, _ = server
    report = _get(base, start + "report.html").text
    links = re.findall(r'href="(session\?[^"]+)"', report)
    assert links, "the report's failure rows should link to their sessions"
    for link in links:
        assert _get(base, start + unescape(link)).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/runs/..%2F..%2Fetc%2Fpasswd/",
        "/runs/run_new/..%2F..%2Fresults%2Frun_new.jsonl",
        "/runs/run_new/../../../../etc/passwd",
        "/runs/run_new/data/../../../results/run_new.jsonl",
        "/static/..%2Fapp.py",
        "/static/../../pyproject.toml",
        "/runs/run_new/sessions/traces.jsonl",
        "/runs/%2e%2e/report.html",
    ],
)
def test_no_url_reaches_the_file_system(server, path):
    base, _, _ = server
    status, data = _raw(base, path)
    assert status == 404, data[:300]
    assert b"root:" not in data and b"runId" not in data and b"[project]" not in data


def test_a_foreign_host_name_is_refused(server):
    base, start, _ = server
    status, _ = _raw(base, start, host="evil.example")
    assert status == 400


def test_unknown_run_and_empty_folder_are_one_line(runs, tmp_path):
    out = subprocess.run(
        [str(PROFILER), "view", "--no-open", "nope"],
        cwd=runs,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        out.returncode == 1
        and out.stderr.startswith("Error: nope:")
        and len(out.stderr.strip().splitlines()) == 1
    )
    out = subprocess.run(
        [str(PROFILER), "view", "--no-open"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        out.returncode == 1
        and "no run found in results/ or reports/" in out.stderr
        and len(out.stderr.strip().splitlines()) == 1
    )


def test_without_the_extra_it_names_the_pip_command(runs):
    code = (
        "import sys; sys.modules['starlette'] = None; from profiler_core.cli "
        "import main; main(['view', '--no-open'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=runs,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert (
        out.stderr.strip()
        == "Error: profiler view needs starlette, which is not installed: pip "
        "install 'agent-profiler[view]'"
    )


def test_named_run_opens_in_the_browser_and_ctrl_c_stops(runs, tmp_path):
    log = tmp_path / "opened.txt"
    browser = tmp_path / "fake-browser"
    browser.write_text(f'#!/bin/sh\necho "$1" >> {log}\n')
    browser.chmod(0o755)
    env = dict(os.environ, BROWSER=str(browser))
    proc = subprocess.Popen(
        [str(PROFILER), "view", "run_old"],
        cwd=runs,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().split(" at ", 1)[1].split()[0]
        assert url.endswith("/runs/run_old/")
        assert "run_old" in httpx.get(url, timeout=30).text
        for _ in range(100):  # the browser is started after the URL is printed
            if log.exists():
                break
            time.sleep(0.1)
        assert log.read_text().strip() == url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            status = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()  # a viewer that ignored Ctrl-C fails the test, and is not left running
            proc.wait(timeout=20)
            raise
    assert status == 0
    assert "Stopped." in proc.stderr.read()


def test_a_row_that_does_not_read_is_one_line_not_a_traceback(server):
    base, _, _ = server
    page = _get(
        base,
        "/runs/run_bad/session",
        params={"model": "m1", "mode": "a", "scenario": "s1", "iteration": 0},
    )
    assert page.status_code == 500
    assert (
        "Cannot read" in page.text
        and "tokens.input" in page.text
        and "Traceback" not in page.text
    )


def test_runs_path_lists_the_runs_and_a_busy_port_is_one_line(server, runs):
    base, _start, _proc = server
    listing = _get(base, "/runs/", follow_redirects=True)
    assert (
        listing.status_code == 200
        and "run_new" in listing.text
        and "run_old" in listing.text
    )
    assert _get(base, "/runs").status_code == 308
    port = int(base.rsplit(":", 1)[1])  # the server's own port is busy now
    out = subprocess.run(
        [str(PROFILER), "view", "--no-open", "--port", str(port)],
        cwd=runs,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1 and out.stdout == ""
    assert (
        out.stderr.strip()
        == f"Error: cannot listen on 127.0.0.1:{port} (Address already in use)"
    ), out.stderr


def test_view_help_does_not_suggest_the_fake_models_port():
    from profiler_core.cli.fake_model import DEFAULT_PORT

    out = subprocess.run(
        [str(PROFILER), "view", "--help"], capture_output=True, text=True, timeout=60
    )
    assert "--port" in out.stdout and f"--port {DEFAULT_PORT}" not in out.stdout


def _machine_address() -> str | None:
    """This machine's address on its main interface (as its name resolves), or None."""
    try:
        found = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        return None
    addresses = [info[4][0] for info in found if not info[4][0].startswith("127.")]
    return addresses[0] if addresses else None


def test_on_every_interface_the_machines_own_address_and_name_are_served(runs):
    """`--host 0.0.0.0`: a browser elsewhere asks by the machine's address or name; a
    foreign name is still refused."""
    proc = subprocess.Popen([str(PROFILER), "view", "--no-open", "--host", "0.0.0.0"], cwd=runs, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        line = proc.stdout.readline()
        match = re.search(r" at (http://[^/\s]+:(\d+))(/\S*)", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        port, start = match.group(2), match.group(3)
        base = f"http://127.0.0.1:{port}"
        names = [socket.gethostname()] + (
            [address] if (address := _machine_address()) else []
        )
        for name in names:
            status, data = _raw(base, start, host=f"{name}:{port}")
            assert status == 200, (name, data[:200])
        assert _raw(base, start, host=f"evil.example:{port}")[0] == 400
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=20)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_browser_that_never_returns_does_not_hold_up_the_stop(runs, tmp_path, stop):
    started = tmp_path / "started.txt"
    browser = tmp_path / "slow-browser"
    # It leaves the viewer's pipes (so reading them ends) and gives its PID (so the test ends it).
    browser.write_text(
        f'#!/bin/sh\necho $$ > {started}.pid\necho "$1" > {started}\n'
        "exec sleep 600 </dev/null >/dev/null 2>&1\n"
    )
    browser.chmod(0o755)
    proc = subprocess.Popen(
        [str(PROFILER), "view", "run_old"],
        cwd=runs,
        env=dict(os.environ, BROWSER=str(browser)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().split(" at ", 1)[1].split()[0]
        for _ in range(200):
            if started.exists():
                break
            time.sleep(0.1)
        assert started.read_text().strip() == url
        assert "run_old" in httpx.get(url, timeout=30).text  # still serving
    finally:
        proc.send_signal(stop)
        try:
            status = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
            raise
        finally:
            if Path(f"{started}.pid").exists():
                os.kill(int(Path(f"{started}.pid").read_text()), signal.SIGKILL)
    assert status == 0
    assert "Stopped." in proc.stderr.read()
