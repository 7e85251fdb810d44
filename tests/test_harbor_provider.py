"""The ``harbor`` provider: cells run as real Harbor trials (Harbor's CLI in its own
Python >= 3.12), read back by the importer.

Needs Harbor (``bash .ci/install-harbor``, or ``PROFILER_HARBOR_PYTHON``) and podman: in
CI a missing one
fails the test, elsewhere it skips. The task is written here (a shell-only one, so any
base image with bash
serves); its base image is ``$PROFILER_HARBOR_BASE_IMAGE``, else the offline Debian
image when podman has it,
else ``debian:bookworm-slim``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.binaries import HARBOR_HINT, harbor_interpreter, missing
from tests.sandbox_runtimes import require
from tests.scripted.agent_runs import profiler, rows

# One worker runs the module: its Harbor run (about a minute) is set up once, not once per worker.
pytestmark = pytest.mark.xdist_group("harbor_provider")

OFFLINE_IMAGE = "localhost/agent-profiler-debian:bookworm"


def harbor_program() -> Path:
    python = harbor_interpreter()
    if not Path(python).with_name("harbor").exists():
        missing(f"harbor beside {python}", HARBOR_HINT)
    return Path(python).with_name("harbor")


def base_image(podman: str) -> str:
    if os.environ.get("PROFILER_HARBOR_BASE_IMAGE"):
        return os.environ["PROFILER_HARBOR_BASE_IMAGE"]
    exists = (
        subprocess.run(
            [podman, "image", "exists", OFFLINE_IMAGE], capture_output=True, timeout=60
        ).returncode
        == 0
    )
    return OFFLINE_IMAGE if exists else "debian:bookworm-slim"


def write_task(folder: Path, image: str) -> None:
    for part in ("environment", "solution", "tests"):
        (folder / part).mkdir(parents=True)
    (folder / "task.toml").write_text(
        'version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n[agent]\ntimeout_sec = 120.0\n'
    )
    (folder / "instruction.md").write_text(
        'Create /app/hello.txt containing "Hello, world!".\n'
    )
    # RUN mkdir: podman builds WORKDIR without the folder, and our runner copies /app
    # out of the image
    (folder / "environment" / "Dockerfile").write_text(
        f"FROM {image}\nRUN mkdir -p /app\nWORKDIR /app\n"
    )
    (folder / "solution" / "solve.sh").write_text(
        '#!/bin/bash\necho "Hello, world!" > /app/hello.txt\n'
    )
    (folder / "tests" / "test.sh").write_text(
        '#!/bin/bash\nif grep -q "Hello, world!" /app/hello.txt 2>/dev/null; '
        'then echo 1 > /logs/verifier/reward.txt; echo "1 passed";\n'
        'else echo 0 > /logs/verifier/reward.txt; echo "1 failed"; fi\n'
    )


@pytest.fixture(scope="module")
def harbor_run(tmp_path_factory):
    """Two modes of one task, one repetition each and both at once, run through Harbor:
    the oracle solves it, Harbor's nop agent does not."""
    harbor = harbor_program()
    podman = require("podman")
    require("bwrap")
    root = tmp_path_factory.mktemp("harbor-provider")
    write_task(root / "tasks" / "hello-file", base_image(podman))
    # A root without CAP_SYS_RESOURCE cannot raise its limits: containers get the ones it has.
    nofile, nproc = (
        resource.getrlimit(resource.RLIMIT_NOFILE)[1],
        resource.getrlimit(resource.RLIMIT_NPROC)[1],
    )
    conf = root / "containers.conf"
    conf.write_text(
        f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", '
        f'"nproc={min(nproc, 4096)}:{min(nproc, 4096)}"]\n'
    )
    os.environ["CONTAINERS_CONF"] = str(conf)
    (root / "profile.yaml").write_text(
        yaml.safe_dump(
            {
                "modes": {
                    "solved": {},
                    "untouched": {"provider_overrides": {"agent": "nop"}},
                },
                "scenarios": {"path": "tasks", "format": "harbor"},
                "provider": {
                    "id": "harbor",
                    "model": "none",
                    "options": {
                        "agent": "oracle",
                        "environment": "podman",
                        "harbor": str(harbor),
                        "keep_jobs": "jobs",
                    },
                },
                "execution": {
                    # each Harbor trial costs ~10 s of CPU: one per mode, the two at once
                    "repetitions": 1,
                    "warmup": False,
                    "sandbox": "bwrap",
                    "concurrency": 2,
                    # Harbor's own podman-compose once failed to find the image it had just
                    # built for a trial, in a loaded suite run: that trial is Harbor's error,
                    # so the cell is tried again (the row says how many attempts it took).
                    "allowed_retries": 1,
                },
            }
        )
    )
    done = profiler(
        root, "run", "profile.yaml", "--run-id", "h", "--no-report", timeout=900
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_cells_are_harbor_trials_and_harbors_verifier_decides(harbor_run):
    got = rows(harbor_run, "h")
    assert sorted((r["mode"], r["success"], r.get("reward")) for r in got) == [
        ("solved", True, 1.0),
        ("untouched", False, 0.0),
    ]
    assert all(
        r["checkpointDetails"][0]["id"] == "verify:harbor" and not r.get("error")
        for r in got
    )
    assert all(
        {"latency_environment_setup_ms", "latency_agent_ms", "latency_verifier_ms"}
        <= set(r["extensions"])
        for r in got
    )


def test_our_rows_equal_what_the_importer_reads_from_the_same_jobs(harbor_run):
    got = rows(harbor_run, "h")
    jobs = [harbor_run / "jobs" / r["sessionId"] for r in got]
    modes = [a for r in got for a in ("--as-mode", r["mode"])]
    out = profiler(
        harbor_run,
        "import",
        "harbor",
        *map(str, jobs),
        *modes,
        "--out",
        "imported/i.jsonl",
    )
    assert out.returncode == 0, out.stderr
    imported = [
        json.loads(line)
        for line in (harbor_run / "imported" / "i.jsonl").read_text().splitlines()
    ]
    same = (
        "mode",
        "scenarioId",
        "success",
        "reward",
        "tokens",
        "cost",
        "timing",
        "completionReason",
        "checkpointsPassed",
        "agentTurns",
    )
    key = lambda r: tuple(json.dumps(r.get(k), sort_keys=True) for k in same)  # noqa: E731
    assert sorted(map(key, got)) == sorted(map(key, imported))


def test_the_two_modes_are_compared_to_a_verdict(harbor_run):
    out = profiler(harbor_run, "report", "h")
    assert out.returncode == 0, out.stderr
    report = (harbor_run / "reports" / "h" / "report.md").read_text()
    verdict = [line for line in report.splitlines() if line.startswith("| Success |")]
    assert len(verdict) == 1 and verdict[0].startswith("| Success | solved"), report[
        :2000
    ]
    assert (
        "**Success:** untouched succeeded in 0.0% of runs vs 100.0% for solved"
        in report
    )


def test_validate_says_in_one_line_when_harbor_is_missing(tmp_path):
    write_task(tmp_path / "tasks" / "hello-file", OFFLINE_IMAGE)
    (tmp_path / "profile.yaml").write_text(
        yaml.safe_dump(
            {
                "modes": {"solved": {}},
                "scenarios": {"path": "tasks", "format": "harbor"},
                "provider": {
                    "id": "harbor",
                    "options": {
                        "agent": "oracle",
                        "harbor": str(tmp_path / "no-venv" / "harbor"),
                    },
                },
                "execution": {"sandbox": "bwrap"},
            }
        )
    )
    out = profiler(tmp_path, "validate", "profile.yaml")
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: profile.yaml: provider.id: provider 'harbor': the harbor "
        f"program '{tmp_path / 'no-venv' / 'harbor'}' is not found; "
        "install Harbor in a Python >= 3.12 (e.g. python3.12 -m venv h && "
        "h/bin/pip install harbor) and give option harbor: h/bin/harbor"
    ]
