"""Start-up of the ``profiler`` command as a user feels it: whole processes, bytecode caches warm.

Run: ``python bench/bench_startup.py [--runs 9] [--json] [--quick] [--offenders 8] [--src DIR]``.

Each figure is one command of issue 30, timed as a whole process (the console
script a user types, start to exit): one warm-up process (it also writes the
bytecode caches: ``PYTHONDONTWRITEBYTECODE`` is dropped for the children),
then the median wall time of ``--runs`` (9). The CPU time (user + system, from
``os.wait4``) is printed beside it: on a shared machine it moves less than the
wall time. Then ``python -X importtime`` names the top offenders of each
command: the packages whose import costs most, cumulatively.

``--src DIR`` times another source tree (for example an older checkout made
with ``git archive``) with this checkout's interpreter, for before/after
figures. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: figure -> (the arguments of ``profiler``, target in seconds)
COMMANDS: dict[str, tuple[tuple[str, ...], float]] = {
    "startup_help_s": (("--help",), 0.15),
    "startup_list_plugins_s": (("list-plugins",), 0.15),
    "startup_completion_s": (
        (),
        0.15,
    ),  # click's completion protocol: see _completion_env
    "startup_validate_s": (("validate", "{demo}/profile.yaml"), 0.4),
    "startup_run_report_s": (
        ("run", "{demo}/one-cell.yaml", "--progress", "none"),
        0.6,
    ),
    "startup_run_no_report_s": (
        ("run", "{demo}/one-cell.yaml", "--progress", "none", "--no-report"),
        0.35,
    ),
}

#: A 1-cell profile on the simulated provider: one mode, one scenario, one repetition, no warm-up.
ONE_CELL = """\
modes:
  baseline: {system_instructions: "You are a coding agent. Use the shell and the file tools."}
scenarios: {path: scenarios, ids: [fix-parser-test]}
provider: {id: simulated, model: sim-small, options: {seed: 7, time_scale: 0}}
scorer: {id: checks}
execution: {repetitions: 1, warmup: false}
output: {results_dir: results, reports_dir: reports}
"""


class BenchError(Exception):
    """A timed command failed."""


def profiler_command(src: Path | None) -> list[str]:
    """How to start ``profiler``: the console script beside this interpreter, else
    ``python -m profiler_core``."""
    script = Path(sys.executable).with_name("profiler")
    if script.exists() and src is None:
        return [str(script)]
    return [sys.executable, "-m", "profiler_core"]


def child_env(src: Path | None) -> dict[str, str]:
    """The environment of every timed process: bytecode caches written, the source tree
    first on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tree = str(src or ROOT / "src")
    env["PYTHONPATH"] = tree + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env["NO_COLOR"] = "1"
    return env


def _completion_env(env: dict[str, str]) -> dict[str, str]:
    # What bash's TAB after "profiler " runs: every command, plugin commands included, is listed.
    return {
        **env,
        "_PROFILER_COMPLETE": "bash_complete",
        "COMP_WORDS": "profiler ",
        "COMP_CWORD": "1",
    }


def make_demo(folder: Path, profiler: list[str], env: dict[str, str]) -> Path:
    """``profiler init`` a demo folder and add the 1-cell profile."""
    demo = folder / "demo"
    proc = subprocess.run(
        [*profiler, "init", str(demo)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise BenchError(
            f"profiler init: exited with {proc.returncode}: {proc.stderr.strip()[-300:]}"
        )
    (demo / "one-cell.yaml").write_text(ONE_CELL, encoding="utf-8")
    return demo


def time_process(
    cmd: Sequence[str], env: dict[str, str], cwd: Path
) -> tuple[float, float]:
    """Run ``cmd`` once; (wall seconds, CPU seconds of the process)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd), env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [
            "(no output)"
        ]
        raise BenchError(
            f"{' '.join(cmd[-4:])}: exited with {proc.returncode}: {tail[0]}"
        )
    return wall, usage.ru_utime + usage.ru_stime


def measure(
    name: str,
    profiler: list[str],
    env: dict[str, str],
    demo: Path,
    runs: int,
    warmups: int,
) -> tuple[float, float]:
    """Median wall and CPU seconds of one command over ``runs`` processes after ``warmups``."""
    args, _ = COMMANDS[name]
    cmd = [*profiler, *(a.format(demo=demo) for a in args)]
    if name == "startup_completion_s":
        env = _completion_env(env)
    walls, cpus = [], []
    for index in range(warmups + runs):
        wall, cpu = time_process(cmd, env, demo)
        if index >= warmups:
            walls.append(wall)
            cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus)


def import_offenders(
    name: str, env: dict[str, str], demo: Path, top: int
) -> list[tuple[str, float]]:
    """The packages whose import costs ``name`` most (cumulative ms, from ``python -X
    importtime``)."""
    args, _ = COMMANDS[name]
    if name == "startup_completion_s":
        env = _completion_env(env)
    cmd = [
        sys.executable,
        "-X",
        "importtime",
        "-m",
        "profiler_core",
        *(a.format(demo=demo) for a in args),
    ]
    proc = subprocess.run(
        cmd, env=env, cwd=demo, capture_output=True, text=True, check=False
    )
    return top_offenders(proc.stderr, top)


def top_offenders(importtime: str, top: int) -> list[tuple[str, float]]:
    """Top-level packages by cumulative import time (ms) from ``-X importtime`` output,
    largest first."""
    totals: dict[str, float] = {}
    for line in importtime.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, module = line.split("|", 2)
        if not cumulative.strip().isdigit():
            continue  # the header line
        name = module.rstrip()
        depth = len(name) - len(name.lstrip())
        # Top-level imports of the process (depth 1) and of the project's own packages
        # as they happen.
        if depth <= 1 or (
            name.strip().startswith(
                ("profiler_core.", "profiler_eval_ghx", "profiler_builtin")
            )
            and depth <= 3
        ):
            key = name.strip()
            totals[key] = max(totals.get(key, 0.0), int(cumulative) / 1000)
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]


def main(argv: list[str] | None = None) -> int:
    """Time every start-up command and print the table (or one JSON object)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help="measured processes per command (default 9; 1 with --quick)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print exactly one JSON object: figure -> median seconds",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one process per command, no warm-up (smoke test)",
    )
    parser.add_argument(
        "--offenders",
        type=int,
        default=6,
        help="import offenders shown per command (0: none)",
    )
    parser.add_argument(
        "--src",
        type=Path,
        default=None,
        help="time this source tree instead of the checkout's src/",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(COMMANDS),
        help="time only this figure (repeatable)",
    )
    args = parser.parse_args(argv)
    runs = args.runs if args.runs is not None else (1 if args.quick else 9)
    warmups = 0 if args.quick else 1
    src = args.src.resolve() if args.src else None
    env = child_env(src)
    profiler = profiler_command(src)
    names = args.only or list(COMMANDS)
    figures: dict[str, float | None] = {}
    lines = [f"{'figure':<26} {'wall s':>7} {'cpu s':>7} {'target':>7}"]
    folder = Path(tempfile.mkdtemp(prefix="profiler-startup-"))
    try:
        demo = make_demo(folder, profiler, env)
        for name in names:
            try:
                wall, cpu = measure(name, profiler, env, demo, runs, warmups)
            except BenchError as exc:
                print(f"bench: {name}: {exc}", file=sys.stderr)
                figures[name] = None
                continue
            figures[name] = wall
            target = COMMANDS[name][1]
            verdict = "ok" if wall < target else "MISSED"
            lines.append(
                f"{name:<26} {wall:>7.3f} {cpu:>7.3f} {target:>7.2f}  {verdict}"
            )
        if args.offenders and not args.json:
            lines.append("")
            lines.append(
                "import offenders (python -X importtime, cumulative ms, one process each):"
            )
            for name in names:
                worst = import_offenders(name, env, demo, args.offenders)
                lines.append(
                    f"  {name}: "
                    + ", ".join(f"{module} {ms:.0f}" for module, ms in worst)
                )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(
            json.dumps(
                {k: None if v is None else round(v, 4) for k, v in figures.items()}
            )
        )
    else:
        print("\n".join(lines))
    return 1 if any(v is None for v in figures.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
