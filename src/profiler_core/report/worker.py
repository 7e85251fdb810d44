"""Render report.html in a helper process, so matplotlib's import and drawing overlap the data work.

``write_report`` starts ``python -m profiler_core.report.worker`` before it
reads the rows; the helper imports matplotlib while the rows load, then gets
the computed summary and the report's view (pickled, a few hundred KB) on stdin and writes the page.
A plain subprocess rather than ``fork`` (unsafe with threads) or
``multiprocessing`` spawn (which re-imports the caller's ``__main__``). If the
helper cannot start or dies, the page is rendered in-process instead, so the
report never depends on it.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

#: Rows (uncompressed bytes of them) below which the helper costs more than it saves: it overlaps
#: matplotlib's import with the data work, which needs a free core and seconds of data work
#: (bench/bench_report_small.py, 2 cores: a loss at every size up to 10,000 rows, 25 MB, on a busy
#: machine, 0.15 s saved of 1.1 s at 10,000 rows on a quiet one; docs/reports.md). From here on,
#: as the loader's fork, the data work is seconds long.
MIN_BYTES = 64 * 2**20


def input_bytes(path: Path) -> int:
    """The size of the rows in ``path``: a gzip file's own record of its uncompressed
    size, else the file's."""
    size = path.stat().st_size
    if path.suffix == ".gz" and size >= 4:
        with open(path, "rb") as f:
            f.seek(-4, os.SEEK_END)
            # ISIZE: the uncompressed size modulo 2**32 (RFC 1952); never less than the file itself.
            return max(size, int.from_bytes(f.read(4), "little"))
    return size


class HtmlWorker:
    """A helper process that renders one report.html."""

    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH")) if p
        )
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "profiler_core.report.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )

    def submit(self, job: dict[str, Any]) -> None:
        """Hand the job over (the helper drains its stdin in a thread, so this returns at once)."""
        stdin, self._proc.stdin = (
            self._proc.stdin,
            None,
        )  # communicate() must not touch it again
        assert stdin is not None  # opened with PIPE
        try:
            stdin.write(pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL))
        except (BrokenPipeError, OSError, ValueError):
            pass  # the helper died; wait() reports it
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def wait(self, timeout: float = 600) -> str | None:
        """None when the page was written, else why the helper failed."""
        try:
            _, err = self._proc.communicate(timeout=timeout)
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            self.close()
            return f"{type(exc).__name__}: {exc}"
        if self._proc.returncode != 0:
            lines = err.decode("utf-8", "replace").strip().splitlines()
            return lines[-1] if lines else f"exit status {self._proc.returncode}"
        return None

    def close(self) -> None:
        """Stop the helper if it is still running (the report failed before it was needed)."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass


def render_page(job: dict[str, Any]) -> None:
    """Draw the charts and write report.html for a job (the summary the charts draw, the
    report's view, path)."""
    from ..storage.paths import write_output_text
    from .charts import render_all
    from .html import render_html

    view = job["view"]
    charts = (
        render_all(job["summary"]) if view.charts.drawn else {}
    )  # a few rows: tables only, no matplotlib
    write_output_text(Path(job["path"]), render_html(view, charts))


def _main() -> int:
    # numpy before matplotlib imports it, so that its idle BLAS threads sleep (util/arrays.py)
    from ..util import arrays  # noqa: F401

    # Drain stdin in a thread (the parent never waits on the pipe) while the
    # drawing stack imports: this import is what overlaps the parent's loading.
    received: list[bytes] = []
    reader = threading.Thread(
        target=lambda: received.append(sys.stdin.buffer.read()), daemon=True
    )
    reader.start()
    import matplotlib.backends.backend_svg
    import matplotlib.figure  # noqa: F401

    from . import charts, html  # noqa: F401

    reader.join()
    data = received[0] if received else b""
    if not data:
        return 0  # the parent gave up (bad input): nothing to do
    render_page(pickle.loads(data))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
