"""What running an agent program inside a trial adds to the trial (not a test).

Run: ``python bench/bench_trial_agent.py [--rounds N] [--kind docker|podman|bwrap] [--json]``.

Per round, one trial container of the host-toolchain image is started with a
package folder mounted read-only (as an agent's ``node_modules``), then the
steps ``providers/in_trial.py`` adds around the agent, each timed:
``relay_open`` (the model relay: host relays and the helper container in the
trial's namespace, ``network: model``), ``home_in`` (a session home of a few
files copied in and given to the agent's user), ``exec`` (``true`` run by
the environment's ``command_line``, streamed as an agent is), ``end`` (the
mark's processes killed inside), ``home_out`` (the home copied back) and
``relay_close``; plus ``start`` and ``stop`` of the trial itself for scale.
Under ``bwrap`` the trial is one sandbox (environments/bwrap.py): ``relay_open``
is the switch to ``model`` (the relay started inside it), ``relay_close`` the
switch to ``none``; and ``beside`` times what the agent cost before it ran
inside: a bwrap sandbox of its own for the session, with its model relay, running ``true``.
Medians over ``--rounds`` rounds after one warm-up, in milliseconds. The
machine is shared: run it when nothing else runs, and read the figures as such.
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

import trio

from profiler_core.environments.bwrap import BwrapEnvironment
from profiler_core.environments.containers import (
    DockerEnvironment,
    PodmanEnvironment,
    wait_removed,
)
from profiler_core.model.environment import TrialMount, TrialSpec
from profiler_core.providers.in_trial import give_folders, take_home
from profiler_core.sandbox.containers import HOST_IMAGE


def one_round(kind, package: Path, port: int, scratch: Path) -> dict[str, float]:
    """The timed steps of one trial, in ms."""
    marks: dict[str, float] = {}
    spec = TrialSpec(
        name="bench-agent",
        image=HOST_IMAGE,
        host_toolchain=True,
        network="full",
        network_switch=True,
        endpoints=(f"http://127.0.0.1:{port}",),
        mounts=(TrialMount(source=str(package), target=str(package)),),
    )
    t = time.perf_counter()
    trial = kind.start(spec)
    marks["start"] = time.perf_counter() - t
    try:
        # a container relays by open_relay; a bwrap trial by its network's switch
        inside = not isinstance(kind, BwrapEnvironment)
        if inside:
            trial.set_network("model")
        t = time.perf_counter()
        trial.open_relay("model") if inside else trial.set_network("model")
        marks["relay_open"] = time.perf_counter() - t
        home = scratch / "home"
        home.mkdir(parents=True, exist_ok=True)
        for i in range(5):
            (home / f"file-{i}.json").write_text("{}" * 200)
        (scratch / "tmp").mkdir(exist_ok=True)
        dirs = type("Dirs", (), {"home": home, "tmp": scratch / "tmp", "root": scratch})
        params = type("Params", (), {"scenario_id": "bench"})
        live = type("Live", (), {"dirs": dirs, "params": params})
        t = time.perf_counter()
        trio.run(give_folders, trial, live, "65534")
        marks["home_in"] = time.perf_counter() - t
        argv, env, marker = trial.command_line(["true"], env={}, cwd="/", user="65534")
        t = time.perf_counter()
        subprocess.run(argv, env=env, check=True, timeout=60)
        marks["exec"] = time.perf_counter() - t
        t = time.perf_counter()
        trial.end(marker)
        marks["end"] = time.perf_counter() - t
        t = time.perf_counter()
        trio.run(take_home, trial, live)
        marks["home_out"] = time.perf_counter() - t
        t = time.perf_counter()
        trial.close_relay() if inside else trial.set_network("none")
        marks["relay_close"] = time.perf_counter() - t
    finally:
        t = time.perf_counter()
        trial.stop()
        marks["stop"] = time.perf_counter() - t
    return {k: v * 1000 for k, v in marks.items()}


def beside(port: int, scratch: Path) -> float:
    """Seconds of ``true`` in a bwrap sandbox of its own with the model relayed (the
    session's sandbox before agents ran inside bwrap trials)."""
    from profiler_core.model.environment import SandboxSettings
    from profiler_core.sandbox import Job, confine

    work = scratch / "beside"
    work.mkdir(parents=True, exist_ok=True)
    settings = SandboxSettings(sandbox="bwrap", network="model")
    job = Job(
        argv=("true",),
        env={"PATH": "/usr/bin:/bin"},
        workspace=work,
        endpoints=(f"http://127.0.0.1:{port}",),
    )
    t = time.perf_counter()
    with confine(settings, job) as box:
        subprocess.run(box.argv, env=box.env, cwd=box.cwd, check=True, timeout=60)
    return time.perf_counter() - t


def main() -> None:
    """Print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--kind", choices=("docker", "podman", "bwrap"), default="docker"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    kinds = {"docker": DockerEnvironment, "podman": PodmanEnvironment}
    kind = kinds.get(args.kind, BwrapEnvironment)()
    problem = kind.check()
    if problem:
        print(f"{args.kind}: {problem}")
        return
    listener = socket.create_server(
        ("127.0.0.1", 0)
    )  # the "model": only relayed, never called
    port = listener.getsockname()[1]
    rounds: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as folder:
        package = Path(folder) / "node_modules"
        package.mkdir()
        for i in range(args.rounds + 1):
            scratch = Path(folder) / f"round-{i}"
            rounds.append(one_round(kind, package, port, scratch))
            if args.kind == "bwrap":
                rounds[-1]["beside"] = beside(port, scratch) * 1000
    if args.kind != "bwrap":
        wait_removed()
    listener.close()
    medians = {k: statistics.median(r[k] for r in rounds[1:]) for k in rounds[0]}
    added = sum(medians[k] for k in medians if k not in ("start", "stop", "beside"))
    if args.json:
        print(json.dumps({"kind": args.kind, "medians_ms": medians, "added_ms": added}))
        return
    print(f"{args.kind}, {args.rounds} rounds after one warm-up (median ms):")
    for name, value in medians.items():
        print(f"  {name:<12} {value:8.1f}")
    print(
        f"  added by running the agent inside: {added:.1f} ms (start and stop excluded)"
    )


if __name__ == "__main__":
    main()
