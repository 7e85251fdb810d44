"""Overhead per session of the claude-code and codex providers (not a test).

Run: ``python bench/bench_cli_agents.py [--sessions N] [--agent claude-code|codex]... [--json]``.

Each agent runs ``--sessions`` sessions of one scenario (a shell tool call,
then the answer) through ``profiler run`` against a zero-latency scripted
model server on 127.0.0.1, at concurrency 1 and 4. The overhead of a session
is its wall time (``timing.wallMs``: start of the agent program to its exit)
minus the time the model server spent answering its requests: agent start-up,
the agent's own work between requests, the tool it ran, and the provider
(isolated home, process group, reading the transcript). Needs the agent
programs (``bash .ci/install-agents``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.scripted.agent_runs import write_profile

from profiler_core.fakemodel import FakeModelServer, tool_then_text

AGENTS = {
    # provider id: (program, env var, model, server factory, base_url suffix)
    "claude-code": (
        "claude",
        "CLAUDE_BIN",
        "claude-sonnet-4-5",
        lambda: FakeModelServer(tool_then_text()),
        "",
    ),
    "codex": (
        "codex",
        "CODEX_BIN",
        "gpt-5-codex",
        lambda: FakeModelServer(tool_then_text()),
        "/v1",
    ),
}


def binary(program: str, env_var: str) -> str | None:
    """The agent program: its env var, then .agents/, else None."""
    found = os.environ.get(env_var) or str(
        ROOT / ".agents" / "node_modules" / ".bin" / program
    )
    return found if Path(found).exists() else None


def measure(agent: str, sessions: int, concurrency: int) -> dict[str, float]:
    """Run ``sessions`` sessions at ``concurrency``; figures in ms (medians over sessions)."""
    program, env_var, model, server_factory, suffix = AGENTS[agent]
    path = binary(program, env_var)
    if path is None:
        raise SystemExit(
            f"{program} not found: run `bash .ci/install-agents` or set ${env_var}"
        )
    with (
        tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp,
        server_factory() as server,
    ):
        folder = Path(tmp)
        profile = write_profile(
            folder,
            provider=agent,
            model=model,
            options={"base_url": server.url + suffix, "binary": path, "max_retries": 0},
            modes={"bench": {}},
            extensions={"prices": {model: {"input_per_mtok": 1, "output_per_mtok": 1}}},
        )
        text = profile.read_text().replace(
            "repetitions: 1", f"repetitions: {sessions}\n  concurrency: {concurrency}"
        )
        profile.write_text(text)
        started = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "profiler_core",
                "run",
                str(profile),
                "--run-id",
                "bench",
                "--no-report",
            ],
            cwd=folder,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
            check=False,
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"profiler run failed: {done.stderr.strip()[-500:]}")
        rows = [
            json.loads(line)
            for line in (folder / "results" / "bench.jsonl").read_text().splitlines()
            if line.strip()
        ]
        errors = [r["error"] for r in rows if r.get("error")]
        if errors:
            raise SystemExit(f"{len(errors)} session(s) failed: {errors[0]}")
        model_ms = server.model_time_s() * 1000 / len(rows)
    walls = [r["timing"]["wallMs"] for r in rows]
    startups = [r["extensions"].get("latency_startup_ms", 0) for r in rows]
    return {
        "sessions": len(rows),
        "wall_ms": statistics.median(walls),
        "model_server_ms": model_ms,
        "overhead_ms": statistics.median(walls) - model_ms,
        "startup_ms": statistics.median(startups),
        "sessions_per_s": len(rows) / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sessions",
        type=int,
        default=8,
        help="sessions per agent and concurrency (default 8)",
    )
    parser.add_argument(
        "--agent",
        action="append",
        choices=sorted(AGENTS),
        help="agents to measure (default: both)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of a table"
    )
    args = parser.parse_args()
    figures = {}
    for agent in args.agent or sorted(AGENTS):
        for concurrency in (1, 4):
            figures[f"{agent}_c{concurrency}"] = measure(
                agent, args.sessions, concurrency
            )
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"{'agent, concurrency':<20} {'sessions':>8} {'wall ms':>9} "
        f"{'model ms':>9} {'overhead ms':>12} {'startup ms':>11} "
        f"{'sessions/s':>11}"
    )
    for name, f in figures.items():
        print(
            f"{name:<20} {f['sessions']:>8} {f['wall_ms']:>9.0f} {f['model_server_ms']:>9.1f} "
            f"{f['overhead_ms']:>12.0f} {f['startup_ms']:>11.0f} {f['sessions_per_s']:>11.2f}"
        )


if __name__ == "__main__":
    main()
