"""Per-trial time of the same task run three ways: our runner (oracle provider), Harbor
alone, and Harbor through our `harbor` provider.

    PROFILER_HARBOR_PYTHON=.harbor-venv/bin/python python bench/bench_harbor_overhead.py
    [--rounds N] [--trials K] [--concurrency C] [--kind podman|docker] [--calls]
    [--before CHECKOUT]

One shell-only Harbor task (written here; base image ``$PROFILER_HARBOR_BASE_IMAGE``,
default the offline ``localhost/agent-profiler-debian:bookworm``), solved by
its reference solution, in podman (``--kind docker``: docker, for ours and Harbor's
``-e`` alike). Each round runs the three variants one after
the other, in an order that alternates between rounds, so machine load drifts
fall on all of them alike; each variant runs K trials at concurrency C.
Printed: the median seconds per trial of each variant, each round's, and the
``harbor`` provider's overhead over Harbor alone. At concurrency C Harbor alone
is one ``harbor run -n C`` job of K trials; through the provider it is K
``harbor run`` processes (one trial each), C at a time. ``--calls`` first runs
ours and Harbor alone once more, untimed, through a shim in front of the runtime
that logs each call: printed are the runtime calls per trial by subcommand, and
the seconds from the process's start to its first call and from its last call
to its end (the process's own start and finish). ``--before`` adds a fourth variant:
our oracle run by another checkout's ``.venv`` (e.g. today's main); ``--skip-provider``
leaves out Harbor through our provider. Needs Harbor
(``bash .ci/install-harbor``) and the runtime; not part of run_all.py (minutes, and
containers).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_harbor_provider import OFFLINE_IMAGE, write_task

PROFILER = Path(sys.executable).with_name("profiler")


def _profile(
    folder: Path, provider: dict, trials: int, concurrency: int, sandbox: str
) -> Path:
    import yaml

    path = folder / f"{provider['id']}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "modes": {"m": {}},
                "scenarios": {"path": "tasks", "format": "harbor"},
                "provider": provider,
                "execution": {
                    "repetitions": trials,
                    "warmup": False,
                    "sandbox": sandbox,
                    "concurrency": concurrency,
                },
                "output": {"results_dir": "results", "reports_dir": "reports"},
            }
        )
    )
    return path


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(argv[:3])} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return time.perf_counter() - t0


def _shim(folder: Path, kind: str, log: Path) -> Path:
    """A ``kind`` in ``folder`` that logs each call (its arguments and times), then runs
    the real one."""
    real = shutil.which(kind)
    if real is None:
        raise SystemExit(f"{kind} is not on PATH")
    folder.mkdir(exist_ok=True)
    shim = folder / kind
    shim.write_text(
        "#!/bin/bash\n"
        f's=$(date +%s.%N); {real} "$@"; rc=$?; e=$(date +%s.%N)\n'
        f'echo "$s $e $*" >> {log}\nexit $rc\n'
    )
    shim.chmod(0o755)
    return folder


def _subcommand(words: list[str]) -> str:
    """``exec``, ``cp``, ``network connect``, ``compose up``... of one logged call."""
    first = words[0] if words else "?"
    while words and words[0].startswith("--"):  # podman --runtime PATH run ...
        words = words[2:] if "=" not in words[0] else words[1:]
    if not words:
        return first  # podman --version (podman-compose asks it before each command)
    if words[0] in ("network", "compose", "image", "container"):
        verbs = [w for w in words[1:] if not w.startswith("-")]
        if words[0] == "compose":  # docker compose -p NAME -f FILE up ...
            known = ("up", "down", "exec", "cp", "build", "config", "ps", "rm", "stop")
            verbs = [w for w in words[1:] if w in known]
        return f"{words[0]} {verbs[0]}" if verbs else words[0]
    return words[0]


def _calls(
    argv: list[str], cwd: Path, env: dict[str, str], kind: str, trials: int
) -> dict[str, float]:
    """Run ``argv`` once through the shim: calls per trial by subcommand, and the
    seconds before the first call and after the last."""
    log = cwd / f"calls-{os.getpid()}-{time.monotonic_ns()}.log"
    shim = _shim(cwd / "shim", kind, log)
    env = {**env, "PATH": f"{shim}{os.pathsep}{env['PATH']}"}
    started = time.time()
    _timed(argv, cwd, env)
    ended = time.time()
    lines = [line.split() for line in log.read_text().splitlines()]
    counts: dict[str, float] = {}
    for line in lines:
        key = _subcommand(line[2:])
        counts[key] = counts.get(key, 0) + 1 / trials
    counts = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
    counts["all"] = len(lines) / trials
    counts["before_first_call_s"] = min(float(w[0]) for w in lines) - started
    counts["after_last_call_s"] = ended - max(float(w[1]) for w in lines)
    return {k: round(v, 2) for k, v in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--kind", choices=("podman", "docker"), default="podman")
    parser.add_argument("--calls", action="store_true")
    parser.add_argument(
        "--skip-provider", action="store_true", help="not Harbor through our provider"
    )
    parser.add_argument(
        "--before", type=Path, default=None, help="another checkout with its .venv"
    )
    args = parser.parse_args()
    python = os.environ.get("PROFILER_HARBOR_PYTHON")
    if not python:
        raise SystemExit("set PROFILER_HARBOR_PYTHON (bash .ci/install-harbor)")
    harbor = str(Path(python).with_name("harbor"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_task(
            root / "tasks" / "hello-file",
            os.environ.get("PROFILER_HARBOR_BASE_IMAGE", OFFLINE_IMAGE),
        )
        nofile, nproc = (
            resource.getrlimit(resource.RLIMIT_NOFILE)[1],
            min(resource.getrlimit(resource.RLIMIT_NPROC)[1], 4096),
        )
        (root / "containers.conf").write_text(
            f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", '
            f'"nproc={nproc}:{nproc}"]\n'
        )
        env = {
            **os.environ,
            "CONTAINERS_CONF": str(root / "containers.conf"),
            "PATH": f"{Path(harbor).parent}{os.pathsep}{os.environ['PATH']}",
        }
        ours = _profile(
            root, {"id": "oracle"}, args.trials, args.concurrency, args.kind
        )
        through = _profile(
            root,
            {
                "id": "harbor",
                "model": "none",
                "options": {
                    "agent": "oracle",
                    "environment": args.kind,
                    "harbor": harbor,
                },
            },
            args.trials,
            args.concurrency,
            "bwrap",
        )
        variants = {
            "ours_oracle": lambda r: [
                str(PROFILER),
                "run",
                str(ours),
                "--run-id",
                f"o{r}",
                "--no-report",
                "--progress",
                "none",
            ],
            "harbor_alone": lambda r: [
                harbor,
                "run",
                "-p",
                "tasks/hello-file",
                "-a",
                "oracle",
                "-e",
                args.kind,
                "-o",
                "jobs",
                "--job-name",
                f"h{r}",
                "-k",
                str(args.trials),
                "-n",
                str(args.concurrency),
                "-y",
                "-q",
            ],
            "harbor_provider": lambda r: [
                str(PROFILER),
                "run",
                str(through),
                "--run-id",
                f"p{r}",
                "--no-report",
                "--progress",
                "none",
            ],
        }
        if args.skip_provider:
            del variants["harbor_provider"]
        if args.before is not None:
            before = str(args.before / ".venv" / "bin" / "profiler")
            variants["before_oracle"] = lambda r: [
                before,
                *variants["ours_oracle"](r)[1:4],
                f"b{r}",
                *variants["ours_oracle"](r)[5:],
            ]
        calls = (
            {
                name: _calls(variants[name](-1), root, env, args.kind, args.trials)
                for name in ("ours_oracle", "harbor_alone", "before_oracle")
                if name in variants
            }
            if args.calls
            else {}
        )
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        for round_ in range(args.rounds):
            order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
            for name in order:
                seconds[name].append(
                    _timed(variants[name](round_), root, env) / args.trials
                )
    figures = {
        f"{name}_s_per_trial": round(statistics.median(values), 2)
        for name, values in seconds.items()
    }
    if "harbor_provider" in seconds:
        figures["harbor_provider_overhead_s_per_trial"] = round(
            figures["harbor_provider_s_per_trial"]
            - figures["harbor_alone_s_per_trial"],
            2,
        )
    figures.update(rounds=args.rounds, trials=args.trials, concurrency=args.concurrency)
    for key, value in figures.items():
        print(f"{key:40} {value}")
    # Each round's figure too: at concurrency > 1 on a loaded machine the spread is the
    # honest caveat.
    for name, values in seconds.items():
        print(f"{name + '_rounds':40} {' '.join(f'{v:.2f}' for v in values)}")
    for name, counted in calls.items():
        print(f"{name} runtime calls per trial (--calls, untimed run):")
        for key, value in counted.items():
            print(f"  {key:38} {value}")
    print(json.dumps({**figures, "kind": args.kind, "calls": calls}))


if __name__ == "__main__":
    main()
