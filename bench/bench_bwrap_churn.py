"""How often a bwrap sandbox fails to start while other containers start and stop on the
host (not a test).

Run: ``python bench/bench_bwrap_churn.py [--starts 400] [--loops 3] [--image IMAGE]``.

Docker mounts each container's file system under ``/var/lib/docker`` and unmounts it
when the container ends. bwrap binds a host folder with every mount beneath it, so a
sandbox that bound ``/var`` whole could fail when one of those mounts went away while
it started (docs/sandbox.md, ``UNSHOWN``). This starts ``--loops`` loops of ``docker
run --rm IMAGE true`` beside ``--starts`` bwrap sandboxes running ``true``, and prints
how many sandboxes failed to start and the last error. Docker's daemon must be running
and IMAGE present (default: the first local image).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from profiler_core.sandbox import Job, SandboxSettings, confine


def churn(image: str, stop: threading.Event) -> None:
    """Start and end containers until ``stop`` is set."""
    while not stop.is_set():
        subprocess.run(
            ["docker", "run", "--rm", "--entrypoint", "true", image],
            capture_output=True,
            timeout=120,
            check=False,
        )


def start_sandboxes(count: int) -> tuple[int, str]:
    """Start ``count`` bwrap sandboxes one after another; failures and the last error."""
    failures, last = 0, ""
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(count):
            job = Job(
                argv=("true",), env={"PATH": "/usr/bin:/bin"}, workspace=Path(folder)
            )
            with confine(SandboxSettings(sandbox="bwrap"), job) as box:
                done = subprocess.run(
                    box.argv, env=box.env, cwd=box.cwd, capture_output=True, text=True
                )
            if done.returncode != 0:
                failures, last = failures + 1, done.stderr.strip()[-300:]
    return failures, last


def main() -> int:
    parser = argparse.ArgumentParser(
        description=" ".join(__doc__.split("\n\n")[0].split())
    )
    parser.add_argument("--starts", type=int, default=400)
    parser.add_argument("--loops", type=int, default=3)
    parser.add_argument(
        "--image", help="the image the loops run (default: the first local one)"
    )
    args = parser.parse_args()
    image = (
        args.image
        or subprocess.run(
            ["docker", "images", "--format", "{{.Repository}}:{{.Tag}}"],
            capture_output=True,
            text=True,
            check=False,
        )
        .stdout.split("\n")[0]
        .strip()
    )
    if not image:
        print("no local Docker image to run (pass --image)", file=sys.stderr)
        return 1
    stop = threading.Event()
    loops = [
        threading.Thread(target=churn, args=(image, stop), daemon=True)
        for _ in range(args.loops)
    ]
    for loop in loops:
        loop.start()
    try:
        failures, last = start_sandboxes(args.starts)
    finally:
        stop.set()
        for loop in loops:
            loop.join(timeout=120)
    print(
        f"{failures} of {args.starts} bwrap starts failed beside {args.loops} docker run loops"
    )
    if last:
        print(f"last error: {last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
