"""What the one-sandbox bwrap trial and the compose trial cost beside the trials they
replace or extend.

Run: ``python bench/bench_trial_kinds.py [--rounds 5] [--kinds bwrap,compose,compose-podman]``.

Per kind, the median over rounds of each step of one trial driven through the environment contract,
on this machine, now:

- ``bwrap``: the one-sandbox trial (``environments/bwrap.py``, ``PersistentTrial``) against the
  per-command one it replaces (``FolderTrial``): start (with Harbor's three log folders), three
  commands (``true``), ``put`` of a small folder at ``/tests``, ``get`` of ``/logs/verifier``, stop;
- ``compose``: the ``compose`` conformance task's project (``main`` plus its built ``web`` service,
  ``environments/compose.py``) against one container of the same image: start (``up --wait``), one
  command, stop plus the removal finished in the background (``wait_removed``). Needs
  Docker, Compose
  v2 and the conformance base image (``bash .ci/build-base-image``); the images are built before;
- ``compose-podman``: the same under podman (Compose against a ``podman system service`` of the
  trial's own, ``environments/compose_podman.py``) against one podman container; here ``stop``
  includes ``down`` and the service's end, which run before the trial is over.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "tests" / "fixtures" / "harbor_conformance" / "compose" / "environment"
LOGS = ("/logs/verifier", "/logs/agent", "/logs/artifacts")


def _timed(
    steps: dict[str, list[float]], name: str, work: Callable[[], object]
) -> object:
    started = time.perf_counter()
    result = work()
    steps.setdefault(name, []).append(time.perf_counter() - started)
    return result


def _bwrap_round(
    persistent: bool, steps: dict[str, list[float]], scratch: Path
) -> None:
    from profiler_core.environments.bwrap import PersistentTrial, persistent_tools
    from profiler_core.environments.local import FolderTrial
    from profiler_core.model.environment import SandboxSettings, TrialSpec

    spec = TrialSpec(name="bench", folders=LOGS, network="none")
    settings = SandboxSettings(sandbox="bwrap", network="none")
    tools = persistent_tools()
    if persistent and tools is None:
        raise SystemExit(
            "nsenter, setpriv or slirp4netns is missing: no one-sandbox bwrap trial"
        )

    def start() -> FolderTrial:
        if persistent:
            assert tools is not None
            return PersistentTrial(spec, settings, tools)
        return FolderTrial(spec, settings)

    trial = _timed(steps, "start", start)
    assert isinstance(trial, FolderTrial)
    try:
        for _ in range(3):
            _timed(
                steps,
                "exec",
                lambda: trio.run(lambda: trial.exec(["true"], timeout_s=30)),
            )
        _timed(steps, "put", lambda: trial.put(scratch, "/tests"))
        _timed(
            steps, "get", lambda: trial.get("/logs/verifier", scratch.parent / "back")
        )
    finally:
        _timed(steps, "stop", trial.stop)


def _compose_round(
    compose: bool, steps: dict[str, list[float]], image: str, runtime: str = "docker"
) -> None:
    from profiler_core.environments.compose import start_compose
    from profiler_core.environments.containers import (
        DockerEnvironment,
        PodmanEnvironment,
        wait_removed,
    )
    from profiler_core.model.environment import TrialSpec

    spec = TrialSpec(name="bench", image=image, folders=LOGS)
    if compose:
        compose_file = str(COMPOSE / "docker-compose.yaml")
        trial = _timed(
            steps,
            "start",
            lambda: start_compose(
                spec, compose_file, pull="never", timeout_s=600, kind=runtime
            ),
        )
    else:
        kind = PodmanEnvironment() if runtime == "podman" else DockerEnvironment()
        trial = _timed(steps, "start", lambda: kind.start(spec))
    try:
        _timed(steps, "exec", lambda: trial.exec(["true"], timeout_s=30))  # type: ignore[attr-defined]
    finally:
        _timed(steps, "stop", trial.stop)  # type: ignore[attr-defined]
        _timed(steps, "removed", wait_removed)


def _image(runtime: str = "docker") -> str:
    tag = "localhost/agent-profiler-bench-compose:1"
    subprocess.run(
        [runtime, "build", "-q", "-t", tag, str(COMPOSE)],
        check=True,
        capture_output=True,
    )
    return tag


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kinds", default="bwrap,compose")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} cores, load {load}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-kinds-") as scratch:
        tests = Path(scratch) / "tests"
        tests.mkdir()
        (tests / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")
        for kind in kinds:
            variants = (
                (("one sandbox", True), ("per command", False))
                if kind == "bwrap"
                else (
                    ("compose", True),
                    ("one container", False),
                )
            )
            runtime = "podman" if kind == "compose-podman" else "docker"
            image = _image(runtime) if kind != "bwrap" else ""
            if (
                kind != "bwrap"
            ):  # warm-up: web's image built, the first up's caches filled
                _compose_round(True, {}, image, runtime)
            for label, flag in variants:
                steps: dict[str, list[float]] = {}
                for _ in range(args.rounds):
                    if kind == "bwrap":
                        _bwrap_round(flag, steps, tests)
                    else:
                        _compose_round(flag, steps, image, runtime)
                total = sum(
                    statistics.median(v) * (3 if k == "exec" and kind == "bwrap" else 1)
                    for k, v in steps.items()
                )
                parts = "  ".join(
                    f"{k} {statistics.median(v) * 1000:7.1f} ms"
                    for k, v in steps.items()
                )
                print(f"{kind:8s} {label:14s} total {total:6.3f} s   {parts}")


if __name__ == "__main__":
    main()
