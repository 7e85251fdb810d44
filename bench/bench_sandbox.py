"""Cost of a sandbox per session: start-up and teardown for none, bwrap, docker and
podman (not a test).

Run: ``python bench/bench_sandbox.py [--sessions N] [--backend
none|bwrap|docker|podman]... [--json]``.

Each session is what a provider does around an agent: ``confine()`` (private
folders, relays, for containers the network helper), then the confined
command (``true``) from start to exit, then ``close()`` (containers removed,
relays stopped, folders deleted). Measured with the network cut (``none``,
what a verifier gets) and with ``model`` (one loopback endpoint relayed: the
relays, and the inside relay before the command). Figures are medians over
``--sessions`` sessions after one warm-up session, in milliseconds. Docker
needs its daemon running; a backend that cannot start is reported and skipped.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from profiler_core.errors import SandboxError
from profiler_core.sandbox import Job, SandboxSettings, check, confine

BACKENDS = ("none", "bwrap", "docker", "podman")


def one_session(settings: SandboxSettings, job: Job) -> tuple[float, float, float]:
    """(open, run, close) of one session, in ms."""
    t0 = time.perf_counter()
    box = confine(settings, job).open()
    t1 = time.perf_counter()
    try:
        done = subprocess.run(
            box.argv,
            env=box.env,
            cwd=box.cwd,
            capture_output=True,
            start_new_session=True,
            check=False,
        )
        t2 = time.perf_counter()
    finally:
        box.close()
    t3 = time.perf_counter()
    if done.returncode != 0:
        raise SystemExit(
            f"{settings.sandbox}: the command failed: {done.stderr.decode(errors='replace')[-300:]}"
        )
    return (t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000


def measure(
    backend: str, network: str, sessions: int, endpoint: str
) -> dict[str, float]:
    """Median open / run / close / total (ms) over ``sessions`` sessions, after one warm-up."""
    settings = SandboxSettings(
        sandbox=backend, network=None if backend == "none" else network
    )
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as folder:
        job = Job(
            argv=("true",),
            env={"PATH": "/usr/bin:/bin"},
            workspace=Path(folder),
            endpoints=(endpoint,),
            name="bench",
        )
        one_session(settings, job)
        samples = [one_session(settings, job) for _ in range(sessions)]
    columns = list(zip(*samples))
    figures = {
        name: statistics.median(values)
        for name, values in zip(("open_ms", "run_ms", "close_ms"), columns)
    }
    figures["total_ms"] = statistics.median(sum(s) for s in samples)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--backend", action="append", choices=BACKENDS)
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of the table"
    )
    args = parser.parse_args()
    # The model endpoint: a listener nobody talks to (the relays are set up, not used).
    listener = socket.create_server(("127.0.0.1", 0))
    endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
    results: dict[str, dict[str, float] | str] = {}
    for backend in args.backend or BACKENDS:
        try:
            check(SandboxSettings(sandbox=backend))
        except SandboxError as exc:
            results[backend] = f"skipped: {exc}"
            continue
        for network in ("none", "model") if backend != "none" else ("full",):
            results[f"{backend}/{network}"] = measure(
                backend, network, args.sessions, endpoint
            )
    listener.close()
    if args.json:
        print(json.dumps(results))
        return
    print(
        f"sandbox cost per session, median of {args.sessions} (ms): confine() / "
        "the command `true` / close() / total"
    )
    for name, figures in results.items():
        if isinstance(figures, str):
            print(f"{name:16} {figures}")
        else:
            print(
                f"{name:16} {figures['open_ms']:8.1f} {figures['run_ms']:8.1f} "
                f"{figures['close_ms']:8.1f} {figures['total_ms']:8.1f}"
            )


if __name__ == "__main__":
    main()
