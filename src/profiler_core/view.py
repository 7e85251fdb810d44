"""``profiler view``: find a run's report.html, open it in a browser, or serve the reports folder on 127.0.0.1."""

from __future__ import annotations

import functools
import http.server
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path

from .errors import StoreError

REPORT_FILE = "report.html"


def latest_report(reports_dir: Path) -> Path:
    """The most recently written ``<reports_dir>/<run>/report.html``."""
    candidates = [p for p in reports_dir.glob(f"*/{REPORT_FILE}") if p.is_file()] if reports_dir.is_dir() else []
    if not candidates:
        raise StoreError(f"{reports_dir}: no report found (looked for {reports_dir}/<runId>/{REPORT_FILE})")
    return max(candidates, key=lambda p: (p.stat().st_mtime_ns, p.parent.name))


def find_report(target: str | None, reports_dir: Path) -> Path:
    """``report.html`` for a run id, a report folder or file, or the latest report when ``target`` is None."""
    if target is None:
        return latest_report(reports_dir)
    path = Path(target)
    if path.is_file():
        return path
    if path.is_dir() and (path / REPORT_FILE).is_file():
        return path / REPORT_FILE
    # A run id is one path segment: anything else was meant as a path that does not exist.
    if any(sep in target for sep in ("/", "\\")) or target in (".", "..") or not target.strip():
        raise StoreError(f"{target}: no such report file or folder")
    candidate = reports_dir / target / REPORT_FILE
    if candidate.is_file():
        return candidate
    raise StoreError(f"{target}: no report for run {target!r} in {reports_dir}/ (looked for {candidate})")


def open_url(url: str, opener: Callable[[str], bool] = webbrowser.open) -> str:
    """Open ``url`` with the user's browser (``$BROWSER`` is honoured); ``url`` again."""
    if not opener(url):
        raise StoreError(f"no browser could be started; open {url} yourself")
    return url


def open_in_browser(report: Path, opener: Callable[[str], bool] = webbrowser.open) -> str:
    """Open ``report`` in the user's browser; the ``file://`` URL opened."""
    return open_url(report.resolve().as_uri(), opener)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without a log line per request (the command prints its own)."""

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(reports_dir: Path, port: int = 0) -> tuple[http.server.ThreadingHTTPServer, threading.Thread]:
    """Serve ``reports_dir`` on 127.0.0.1 (``port`` 0: a free one) from a background thread."""
    if not reports_dir.is_dir():
        raise StoreError(f"{reports_dir}: no such reports folder")
    handler = functools.partial(_QuietHandler, directory=str(reports_dir))
    # Loopback only: a report may hold prompts and outputs nobody else should read.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, name="profiler-view", daemon=True)
    thread.start()
    return server, thread


def served_url(server: http.server.ThreadingHTTPServer, reports_dir: Path, report: Path | None) -> str:
    """The URL of ``report`` (or of the folder listing) on ``server``."""
    port = server.server_address[1]
    base = f"http://127.0.0.1:{port}/"
    if report is None:
        return base
    try:
        relative = report.resolve().relative_to(reports_dir.resolve())
    except ValueError:
        return base
    return base + relative.as_posix()
