"""What the wire recorder adds to a model call: latency per call and per session,
streamed or not, and CPU per 1,000 calls.

Run: ``python bench/bench_wire.py [--calls 300] [--session 10] [--json]``.

The scripted model (``profiler fake-model``) runs in a process of its own on
127.0.0.1, answering every request at once with a short text; this process is
the client (httpx, one kept-alive connection, as an agent's SDK) and hosts the
recorder (threads). Each figure compares the same requests sent straight to
the model and through the recorder, alternating in blocks so a load change on
a shared machine hits both:

- ``added_ms_per_call``: median latency through the recorder minus straight,
  for a whole answer and for a streamed one (OpenAI chat completions);
- ``added_ms_per_session``: the same for a session of ``--session`` calls in a row;
- ``cpu_s_per_1000_calls``: this process's CPU time (user + system) through
  the recorder minus straight, per 1,000 calls — the recorder's parsing,
  forwarding and recording, as the client's own work is in both.

See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from profiler_core.wire import WireRecorder

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "model: bench\nreplies:\n  - text: 'Done: ok.'\n"
BODY = {
    "model": "bench",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "bash"}}],
}


def start_model(folder: Path) -> tuple[subprocess.Popen[str], str]:
    """``profiler fake-model`` on a free port; its process and base URL."""
    (folder / "model.yaml").write_text(SCRIPT)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "profiler_core",
            "fake-model",
            str(folder / "model.yaml"),
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    found = re.search(r"on (http://127\.0\.0\.1:\d+)", process.stdout.readline())
    if not found:
        os.killpg(process.pid, signal.SIGKILL)
        raise SystemExit("the fake model did not start")
    return process, found.group(1) + "/v1"


def timed(
    client: httpx.Client, url: str, stream: bool, count: int
) -> tuple[list[float], float]:
    """Latency of ``count`` calls (ms each) and the CPU seconds this process spent on them."""
    body = {**BODY, "stream": stream}
    latencies = []
    cpu0 = time.process_time()
    for _ in range(count):
        t0 = time.perf_counter()
        response = client.post(url + "/chat/completions", json=body)
        response.read()
        latencies.append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200, response.text
    return latencies, time.process_time() - cpu0


def compare(
    client: httpx.Client,
    direct: str,
    through: str,
    stream: bool,
    calls: int,
    block: int,
) -> dict[str, float]:
    """Straight and through the recorder, in alternating blocks of ``block`` calls."""
    straight: list[float] = []
    recorded: list[float] = []
    cpu_straight = cpu_recorded = 0.0
    for _ in range(max(1, calls // block)):
        lat, cpu = timed(client, direct, stream, block)
        straight += lat
        cpu_straight += cpu
        lat, cpu = timed(client, through, stream, block)
        recorded += lat
        cpu_recorded += cpu
    n = len(straight)
    return {
        "straight_ms": round(statistics.median(straight), 3),
        "recorded_ms": round(statistics.median(recorded), 3),
        "added_ms_per_call": round(
            statistics.median(recorded) - statistics.median(straight), 3
        ),
        "cpu_s_per_1000_calls": round((cpu_recorded - cpu_straight) / n * 1000, 3),
    }


def session_figures(
    client: httpx.Client,
    direct: str,
    through: str,
    stream: bool,
    size: int,
    sessions: int,
) -> dict[str, float]:
    """Median wall time of a session of ``size`` calls in a row, straight and through."""
    straight, recorded = [], []
    for _ in range(sessions):
        straight.append(sum(timed(client, direct, stream, size)[0]))
        recorded.append(sum(timed(client, through, stream, size)[0]))
    return {
        "added_ms_per_session": round(
            statistics.median(recorded) - statistics.median(straight), 3
        )
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per figure [300]")
    parser.add_argument(
        "--session", type=int, default=10, help="calls in one session [10]"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        model, direct = start_model(Path(folder))
        try:
            with WireRecorder(direct) as recorder, httpx.Client(timeout=30) as client:
                session = recorder.open()
                timed(
                    client, direct, False, 20
                )  # warm both paths: connections, imports
                timed(client, session.base_url, False, 20)
                figures = {}
                for stream in (False, True):
                    kind = "streamed" if stream else "whole"
                    figures[kind] = compare(
                        client, direct, session.base_url, stream, args.calls, 25
                    )
                    figures[kind] |= session_figures(
                        client,
                        direct,
                        session.base_url,
                        stream,
                        args.session,
                        max(5, args.calls // (4 * args.session)),
                    )
                recorded = len(session.calls)
        finally:
            os.killpg(model.pid, signal.SIGTERM)
            model.wait(timeout=10)
    figures["recorded_calls"] = recorded  # type: ignore[assignment]
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"wire recorder, {args.calls} calls per figure, sessions of "
        f"{args.session} calls (load: {os.getloadavg()[0]:.1f})"
    )
    for kind in ("whole", "streamed"):
        f = figures[kind]
        print(
            f"  {kind:<8} straight {f['straight_ms']:7.3f} ms  through {f['recorded_ms']:7.3f} ms  "
            f"added {f['added_ms_per_call']:6.3f} ms/call  "
            f"{f['added_ms_per_session']:7.3f} ms/session  "
            f"CPU {f['cpu_s_per_1000_calls']:.3f} s/1000 calls"
        )
    print(f"  calls the recorder recorded: {recorded}")


if __name__ == "__main__":
    main()
