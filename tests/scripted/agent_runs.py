"""Helpers for tests that drive `profiler run` with a real agent program: profiles, the
CLI, process checks."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from profiler_core.util.processes import process_alive as alive

#: The variable every agent process of a test carries (through the mode's environment),
#: to find them in /proc.
MARK = "PROFILER_TEST_MARK"


#: The real agents a trial test drives: name -> (program, its variable in tests/binaries.py,
#: the model it asks for, the path the scripted model's URL needs for it).
TRIAL_AGENTS = {
    "claude-code": ("claude", "CLAUDE_BIN", "claude-sonnet-4-5", ""),
    "codex": ("codex", "CODEX_BIN", "gpt-5-codex", "/v1"),
    "opencode": ("opencode", "OPENCODE_BIN", "local/scripted", "/v1"),
}
#: The task's file as the agent finds it: ``add`` subtracts.
BROKEN_CALC = "def add(a, b):\n    return a - b\n"


@contextmanager
def host_server(address: str, greeting: bytes = b"") -> Iterator[int]:
    """A TCP server on the host at ``address`` that an agent must not reach; its port."""
    server = socket.create_server((address, 0))
    server.settimeout(0.5)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.sendall(greeting)
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


def late_verifier(pattern: str) -> str:
    """A task's ``test.sh`` for an agent run past its timeout: how many processes match
    ``pattern`` still (``agents.txt``), and reward 1 when the agent's first step left
    ``/app/partial.txt``."""
    return (
        "#!/bin/bash\n"
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"
        f" | grep -c '{pattern}' > /logs/verifier/agents.txt\n"
        "if [ -f /app/partial.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
    )


def late_script():
    """The scripted model's steps for that run: one file written, then an answer that
    comes long after the timeout."""
    from profiler_core.fakemodel import Shell, Text, steps

    return steps(
        [
            Shell("echo started > partial.txt"),
            Text("Done: never said in time.", delay_s=120),
        ]
    )


#: the agent's timeouts tried in turn by :func:`assert_ended_and_verified`
LATE_TIMEOUTS_S = (8.0, 40.0)


def assert_ended_and_verified(root: Path, profile: Path) -> None:
    """Run mode ``fix`` of ``profile`` (task ``calc``): the row is a timeout the verifier
    still judged (reward 1), and no agent process was left for it to see.

    The agent's timeout is short, so the test does not wait long for it; on a loaded
    machine the agent's first step may come later than that, leaving the verifier
    nothing to judge, and the run is made again with a longer timeout.
    """
    task = root / "tasks" / "calc" / "task.toml"
    for attempt, timeout_s in enumerate(LATE_TIMEOUTS_S):
        toml, count = re.subn(
            r"(?m)^(\[agent\]\ntimeout_sec = ).*$",
            rf"\g<1>{timeout_s}",
            task.read_text(),
        )
        assert count == 1, f"{task}: expected one [agent] timeout_sec line"
        task.write_text(toml)
        run_id = f"late{attempt}"
        done = profiler(
            root,
            "run",
            str(profile),
            "--run-id",
            run_id,
            "--mode",
            "fix",
            "--progress",
            "none",
            "--allow-errors",
            timeout=300,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        (row,) = [r for r in rows(root, run_id) if r["iteration"] >= 0]
        assert row["completionReason"] == "timeout", row
        kept = root / "reports" / run_id / "verifier" / "calc" / "fix-iter-0"
        assert (kept / "agents.txt").read_text().strip() == "0"  # no agent left running
        if row["reward"] == 1:
            return
    raise AssertionError(f"the agent's first step never came before its timeout: {row}")


def new_mark() -> str:
    """A value of :data:`MARK` unique to one test."""
    return uuid.uuid4().hex


def write_profile(
    folder: Path,
    *,
    provider: str,
    model: str,
    options: dict[str, Any],
    modes: dict[str, Any],
    prompt: str = "Say hello using the shell.",
    timeout_ms: int = 60_000,
    checks: list[dict[str, Any]] | None = None,
    extensions: dict[str, Any] | None = None,
) -> Path:
    """A profile with one scenario (``hello``) scored by ``checks``; returns its path."""
    scenarios = folder / "scenarios"
    scenarios.mkdir(parents=True, exist_ok=True)
    checks = checks or [
        {
            "id": "finished",
            "target": "output",
            "condition": {"type": "matches", "pattern": "^Done:"},
        }
    ]
    scenario = {
        "id": "hello",
        "name": "Say hello",
        "prompt": prompt,
        "timeoutMs": timeout_ms,
        "extensions": {"checks": checks},
    }
    (scenarios / "hello.json").write_text(json.dumps(scenario), encoding="utf-8")
    profile = {
        "modes": modes,
        "scenarios": {"path": "scenarios"},
        "provider": {"id": provider, "model": model, "options": options},
        "scorer": {"id": "checks"},
        "execution": {"repetitions": 1, "warmup": False},
        "extensions": extensions or {},
    }
    path = folder / "profile.yaml"
    path.write_text(yaml.safe_dump(profile, sort_keys=False), encoding="utf-8")
    return path


def cli_env(folder: Path) -> dict[str, str]:
    """The profiler's environment: its temporary files under ``folder/tmp`` (so a test
    sees any left behind)."""
    tmp = folder / "tmp"
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp)}


def profiler(
    folder: Path, *args: str, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Run ``profiler ARGS`` in ``folder`` as a subprocess and wait for it."""
    return subprocess.run(
        [sys.executable, "-m", "profiler_core", *args],
        cwd=folder,
        env=cli_env(folder),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start_profiler(folder: Path, *args: str) -> subprocess.Popen[str]:
    """Start ``profiler ARGS`` in ``folder`` without waiting."""
    return subprocess.Popen(
        [sys.executable, "-m", "profiler_core", *args],
        cwd=folder,
        env=cli_env(folder),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def rows(folder: Path, run_id: str) -> list[dict[str, Any]]:
    """The result rows of a run, as camelCase JSON objects."""
    path = folder / "results" / f"{run_id}.jsonl"
    return [
        json.loads(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def marked_processes(mark: str) -> dict[int, int]:
    """PID -> process group of every live process whose environment carries ``MARK=mark``."""
    needle = f"{MARK}={mark}".encode()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            if needle in environ and alive(int(entry)):
                found[int(entry)] = os.getpgid(int(entry))
        except (OSError, ProcessLookupError):
            continue
    return found


def group_alive(pgid: int) -> bool:
    """Whether any process is left in the process group."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return any(
        alive(int(p)) and _pgid(int(p)) == pgid
        for p in os.listdir("/proc")
        if p.isdigit()
    )


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def wait_for(condition, timeout: float = 60.0, what: str = "condition") -> Any:
    """Poll ``condition()`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def assert_no_survivor(seen: dict[int, int], mark: str) -> None:
    """Every agent process seen during the run, and its process group, is gone; none
    carries the mark."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (
        marked_processes(mark) or any(alive(p) for p in seen)
    ):
        time.sleep(0.1)
    assert not [p for p in seen if alive(p)], f"processes survived the run: {seen}"
    assert not [g for g in set(seen.values()) if group_alive(g)], (
        f"process groups survived: {set(seen.values())}"
    )
    assert marked_processes(mark) == {}


def run_tasks(
    folder: Path,
    provider: dict[str, Any],
    *,
    kind: str = "docker",
    prefix: str = "trial",
    execution: dict[str, Any] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """Run the Harbor tasks in ``folder/tasks`` once each with ``provider`` under the
    ``kind`` environment; the run id, its rows."""
    import uuid

    import yaml

    profile = {
        "modes": {"baseline": {"system_instructions": "Do the task."}},
        "scenarios": {"path": "tasks", "format": "harbor"},
        "provider": provider,
        "scorer": {"id": "verify"},
        "execution": {
            "repetitions": 1,
            "warmup": False,
            "sandbox": kind,
            "pull": "never",
            "fail_fast": False,
            **(execution or {}),
        },
        "output": {"results_dir": "results", "reports_dir": "reports"},
    }
    (folder / "profile.yaml").write_text(yaml.safe_dump(profile))
    run_id = f"{prefix}-{uuid.uuid4().hex[:8]}"
    done = profiler(
        folder, "run", "profile.yaml", "--run-id", run_id, "--allow-errors", timeout=400
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return run_id, [r for r in rows(folder, run_id) if r["iteration"] >= 0]
