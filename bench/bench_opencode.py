"""Overhead of the ``opencode`` provider per session, and sessions per second at
concurrency 1 and 8 (not a test).

Run: ``python bench/bench_opencode.py [--sessions N] [--poll-ms MS] [--binary PATH]``.

A real ``opencode serve`` (from options, $OPENCODE_BIN, ``.agents/`` or PATH)
answers sessions of one ``bash`` call (``echo hello``) and a final text, driven
by the scripted model server with zero model latency. For each session the
clock runs from ``create_session`` to the end of ``destroy_session``;
*overhead* is that time minus the time the model server spent answering the
session's requests (so it is OpenCode's own work, the tool run and the
provider's polling). Server start-up is timed separately and excluded.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for entry in (ROOT / "src", ROOT):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

import trio

from profiler_core import CreateSessionParams, PermissionConfig, ProviderConfig
from profiler_core.fakemodel import FakeModelServer, tool_then_text
from profiler_core.providers.opencode import OpenCodeProvider


def find_binary(given: str | None) -> str:
    """The opencode program to benchmark."""
    for candidate in (
        given,
        os.environ.get("OPENCODE_BIN"),
        str(ROOT / ".agents" / "node_modules" / ".bin" / "opencode"),
        shutil.which("opencode"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    sys.exit("opencode not found: run `bash .ci/install-agents` or pass --binary")


def model_options(base_url: str, binary: str, poll_ms: float) -> dict:
    return {
        "binary": binary,
        "start_timeout_s": 120,
        "poll_interval_ms": poll_ms,
        "config": {
            "provider": {
                "local": {
                    "npm": "@ai-sdk/openai-compatible",
                    "options": {"baseURL": base_url, "apiKey": "bench"},
                    "models": {
                        "scripted": {
                            "cost": {"input": 1.0, "output": 2.0},
                            "limit": {"context": 100000, "output": 4096},
                        }
                    },
                }
            }
        },
    }


async def measure(
    binary: str, sessions: int, concurrency: int, poll_ms: float, workdir: str
) -> dict[str, float]:
    """Run ``sessions`` sessions at ``concurrency`` on one fresh server; return the figures."""
    with FakeModelServer(tool_then_text()) as model:
        provider = OpenCodeProvider(binary=binary)
        t0 = time.perf_counter()
        await provider.init(
            ProviderConfig(
                model="local/scripted",
                mode="bench",
                permissions=PermissionConfig(auto_approve=True),
                workdir=workdir,
                options=model_options(model.base_url, binary, poll_ms),
            )
        )
        start_s = time.perf_counter() - t0
        durations: list[float] = []
        limiter = trio.CapacityLimiter(concurrency)

        async def one(i: int) -> None:
            async with limiter:
                params = CreateSessionParams(
                    system_instructions="bench",
                    scenario_id="echo",
                    iteration=i,
                    mode="bench",
                    model="local/scripted",
                )
                t = time.perf_counter()
                handle = await provider.create_session(params)
                try:
                    result = await provider.prompt(handle, "Run echo hello.", 120_000)
                    await provider.export_session(handle)
                finally:
                    await provider.destroy_session(handle)
                durations.append(time.perf_counter() - t)
                if result.completion_reason != "stop":
                    raise SystemExit(
                        f"session {i} ended with {result.completion_reason}"
                    )

        try:
            # One session first so OpenCode's lazy start-up work is not counted as overhead.
            await one(-1)
            durations.clear()
            before = len(model.requests)
            t1 = time.perf_counter()
            async with trio.open_nursery() as nursery:
                for i in range(sessions):
                    nursery.start_soon(one, i)
            total_s = time.perf_counter() - t1
            model_s = sum(r.duration_s for r in model.requests[before:])
        finally:
            await provider.shutdown()
    return {
        "start_s": start_s,
        "session_ms_median": statistics.median(durations) * 1000,
        # Model time spread evenly: with zero latency it is a few ms a session anyway.
        "overhead_ms_per_session": (sum(durations) - model_s) / sessions * 1000,
        "model_ms_per_session": model_s / sessions * 1000,
        "sessions_per_s": sessions / total_s,
    }


def main() -> None:
    """Print the figures at concurrency 1 and 8."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument(
        "--poll-ms",
        type=float,
        default=300.0,
        help="the provider's poll interval (its default is 300)",
    )
    parser.add_argument("--binary")
    args = parser.parse_args()
    binary = find_binary(args.binary)
    workdir = tempfile.mkdtemp(prefix="bench-opencode-")
    try:
        print(
            f"opencode provider, {args.sessions} sessions per figure, poll "
            f"{args.poll_ms:g} ms, zero model latency"
        )
        for concurrency in (1, 8):
            f = trio.run(
                measure, binary, args.sessions, concurrency, args.poll_ms, workdir
            )
            print(
                f"concurrency {concurrency}: {f['sessions_per_s']:.2f} sessions/s, "
                f"overhead {f['overhead_ms_per_session']:.0f} ms/session "
                f"(median session {f['session_ms_median']:.0f} ms, "
                f"model {f['model_ms_per_session']:.1f} ms/session), server "
                f"start {f['start_s']:.1f} s"
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
