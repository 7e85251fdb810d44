"""An ACP session's cost against the same agent's own mode: wall time per session, `acp`
provider vs the agent's provider.

Run: ``python bench/bench_acp.py [--sessions 3] [--json]``.

For each pair of the registry (``opencode`` / ``opencode-acp``, ``claude-code``
/ ``claude-code-acp``, ``codex`` / ``codex-acp``) whose programs are installed, one
``profiler run`` per
agent against the scripted model (``profiler fake-model``: a shell call, then
an answer), ``--sessions`` sessions one after the other, and the median of
the rows' ``timing.wallMs``. The two runs of a pair alternate nothing: on a
loaded machine, read the difference, not the figures. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from profiler_core.config.agents import registry
from profiler_core.providers.agents import find_installed

#: (the agent's own provider, its ACP row): each ``X-acp`` row of the registry beside its ``X``
PAIRS = tuple(
    (name.removesuffix("-acp"), name)
    for name, row in registry().items()
    if row.provider == "acp" and name.endswith("-acp") and name[:-4] in registry()
)


def installed(name: str) -> bool:
    row = registry()[name]
    return bool(
        os.environ.get(row.binary_env)
        or shutil.which(row.program)
        or find_installed(row.program)
    )


def run_agent(name: str, sessions: int, folder: Path) -> list[float]:
    """Wall ms of each session of ``name`` (``profiler init --agent`` + ``fake-model`` +
    ``run``)."""
    model = subprocess.Popen(
        [sys.executable, "-m", "profiler_core", "fake-model", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        assert model.stdout is not None
        port = re.search(r"127\.0\.0\.1:(\d+)", model.stdout.readline()).group(1)  # type: ignore[union-attr]
        target = folder / name
        subprocess.run(
            [
                sys.executable,
                "-m",
                "profiler_core",
                "init",
                "--agent",
                name,
                str(target),
                "--port",
                port,
            ],
            check=True,
            capture_output=True,
        )
        profile = (
            (target / "profile.yaml")
            .read_text()
            .replace("  concurrency: 2\n", "  concurrency: 1\n")
        )
        (target / "profile.yaml").write_text(
            profile.replace("  sandbox: bwrap", "  sandbox: none")
        )
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "profiler_core",
                "run",
                "profile.yaml",
                "--repetitions",
                str(sessions),
                "--run-id",
                "b",
                "--no-report",
                "--mode",
                "plain",
            ],
            cwd=target,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode != 0:
            raise SystemExit(f"{name}: {done.stderr[-500:]}")
        rows = [
            json.loads(line)
            for line in (target / "results" / "b.jsonl").read_text().splitlines()
        ]
        return [r["timing"]["wallMs"] for r in rows if r.get("error") is None]
    finally:
        os.killpg(model.pid, signal.SIGTERM)
        model.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        for own, acp in PAIRS:
            if not (installed(own) and installed(acp)):
                print(
                    f"skipped {own} / {acp}: not installed (profiler agents install {own} {acp})",
                    file=sys.stderr,
                )
                continue
            walls = {
                name: run_agent(name, args.sessions, Path(folder))
                for name in (own, acp)
            }
            figures[f"{own}_vs_{acp}"] = {
                name: round(statistics.median(w), 1) for name, w in walls.items()
            } | {
                "acp_added_ms": round(
                    statistics.median(walls[acp]) - statistics.median(walls[own]), 1
                )
            }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"wall time per session, median of {args.sessions} (load: {os.getloadavg()[0]:.1f})"
    )
    for pair, f in figures.items():
        own, acp = pair.split("_vs_")
        print(
            f"  {own:<12} {f[own]:9.1f} ms   {acp:<16} {f[acp]:9.1f} ms   ACP "
            f"adds {f['acp_added_ms']:+.1f} ms"
        )


if __name__ == "__main__":
    main()
