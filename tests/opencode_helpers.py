"""Shared by the OpenCode tests: a profile writer, and `profiler run` in a subprocess
whose opencode children are watched by PID."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from profiler_core.providers.opencode.server import process_alive

#: Generous: opencode's cold start is 4.5-7 s, slower when the machine is busy.
START_TIMEOUT_S = 120

CHECKS = [
    {
        "id": "finished",
        "description": "the agent says it is done",
        "target": "output",
        "condition": {"type": "matches", "pattern": "^Done:"},
    }
]


def model_config(base_url: str, *, priced: bool = True) -> dict[str, Any]:
    """OpenCode's `provider` block for the scripted model, with prices (USD per million
    tokens) unless ``priced`` is false; OpenCode's undo snapshots off.

    A snapshot is a git commit of the working folder at each step, for the TUI's undo:
    no test reads one, and they cost ~0.4 s of CPU per session (a tenth of an
    ``opencode run``). The profiler itself leaves them as OpenCode has them.
    """
    model: dict[str, Any] = {"limit": {"context": 100000, "output": 4096}}
    if priced:
        model["cost"] = {"input": 1.0, "output": 2.0, "cache_read": 0.5}
    return {
        "snapshot": False,
        "provider": {
            "local": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": base_url, "apiKey": "scripted-key-0000"},
                "models": {"scripted": model},
            }
        },
    }


def write_profile(
    folder: Path,
    base_url: str,
    binary: Path | str,
    *,
    modes: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    execution: dict[str, Any] | None = None,
    timeout_ms: int = 90_000,
    analyzers: Any = "all",
    extensions: dict[str, Any] | None = None,
) -> Path:
    """A profile (JSON is YAML) with one scenario, `echo-hello`, checked by the `checks` scorer."""
    (folder / "scenarios").mkdir(parents=True, exist_ok=True)
    scenario = {
        "id": "echo-hello",
        "name": "Echo hello",
        "prompt": "Run `echo hello` with the bash tool and tell me the output.",
        "timeoutMs": timeout_ms,
        "extensions": {"checks": CHECKS},
    }
    (folder / "scenarios" / "echo-hello.json").write_text(json.dumps(scenario))
    profile = {
        "modes": modes or {"plain": {"system_instructions": "You are a test agent."}},
        "scenarios": {"path": "scenarios"},
        "provider": {
            "id": "opencode",
            "model": "local/scripted",
            "options": {
                "binary": str(binary),
                "start_timeout_s": START_TIMEOUT_S,
                "config": model_config(base_url),
                **(options or {}),
            },
        },
        "scorer": {"id": "checks"},
        "analyzers": analyzers,
        "execution": {"repetitions": 1, "warmup": False, **(execution or {})},
        "extensions": extensions or {},
    }
    path = folder / "profile.yaml"
    path.write_text(json.dumps(profile, indent=2))
    return path


def children_of(pid: int) -> list[int]:
    """Process ids whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(
                f"/proc/{entry}/stat", encoding="ascii", errors="replace"
            ) as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _is_server(pid: int) -> bool:
    """Whether ``pid`` runs ``opencode serve`` (directly or as the last words of a
    launcher's command line)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return b"serve" in argv and any(
        Path(os.fsdecode(arg)).name == "opencode" for arg in argv
    )


class ProfilerRun:
    """`profiler ARGS...` in a subprocess; records every child process it starts (the
    opencode servers)."""

    def __init__(
        self, args: list[str], cwd: Path, env: dict[str, str] | None = None
    ) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "profiler_core", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.servers: list[int] = []  # in order of appearance
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            for child in children_of(self.process.pid):
                # Only `opencode serve` (maybe behind the sandbox's launcher): the
                # profiler may start other short
                # children too (one was caught under load), and a child seen before its
                # exec still shows the
                # profiler's own command line; it is looked at again next time.
                if child not in self.servers and _is_server(child):
                    self.servers.append(child)
            time.sleep(0.05)

    def wait(self, timeout: float = 240) -> tuple[int, str, str]:
        """Exit status, stdout and stderr (kills the run if it overstays)."""
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
            raise AssertionError(
                f"profiler run did not finish in {timeout} s; stderr: {err[-2000:]}"
            ) from None
        finally:
            self._stop.set()
            self._watcher.join()
        return self.process.returncode, out, err

    def interrupt(self) -> None:
        """Ctrl-C: SIGINT to the profiler process."""
        self.process.send_signal(signal.SIGINT)

    def leftovers(self) -> list[int]:
        """Child processes of the run that are still alive."""
        return [pid for pid in self.servers if process_alive(pid)]


def wait_until(predicate, timeout: float = 120, what: str = "condition") -> None:
    """Poll ``predicate`` every 50 ms until true, else fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def read_rows(folder: Path) -> list[dict[str, Any]]:
    """Rows of the only results JSONL in ``folder/results``."""
    (path,) = [
        p
        for p in (folder / "results").glob("*.jsonl")
        if not p.name.endswith(".analysis.jsonl")
    ]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_id_of(stdout: str) -> str:
    """The run id `profiler run` prints first."""
    first = stdout.splitlines()[0]
    assert first.startswith("Run "), stdout
    return first.split()[1]
