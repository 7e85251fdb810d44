"""A bwrap trial is one environment, as Harbor's: what the agent starts runs until the trial ends.

A Harbor task without an image runs under ``execution.sandbox: bwrap`` as one
sandbox for the whole trial (environments/bwrap.py). Its oracle starts
an HTTP server in the background and returns; the verifier, a later command
on another network (the agent's phase has none, the verifier's is public),
must still reach it on the sandbox's loopback. When the trial ends the server
is gone from the host. Under ``CI=true`` a missing ``bwrap`` (or nsenter,
setpriv, slirp4netns) fails these tests.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
import trio
from tests.binaries import missing
from tests.sandbox_runtimes import require
from tests.scripted.agent_runs import run_tasks

pytestmark = pytest.mark.slow

SOLVE = """#!/bin/bash
# A server detached from this command (its own session): it must outlive it, as in a container.
setsid nohup python3 -m http.server {port} --bind 127.0.0.1 --directory "$PWD/served" \\
  >/dev/null 2>&1 < /dev/null &
for _ in $(seq 50); do
  python3 -c 'import urllib.request as u; u.urlopen("http://127.0.0.1:{port}/", timeout=1)' \\
    2>/dev/null && exit 0
  sleep 0.1
done
exit 1
"""
TEST = """#!/bin/bash
got="$(python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(
  "http://127.0.0.1:{port}/state.txt", timeout=3).read().decode().strip())' 2>/dev/null)"
reward=0; [ "$got" = {marker} ] && reward=1
echo $reward > /logs/verifier/reward.txt
"""


@pytest.fixture
def tools():
    require("bwrap")
    from profiler_core.environments.bwrap import TOOLS, persistent_tools

    if persistent_tools() is None:
        missing(
            ", ".join(TOOLS), "apt-get install util-linux slirp4netns (bwrap trials)"
        )


def _task(folder: Path, port: int, marker: str) -> None:
    task = folder / "tasks" / "server-persists"
    (task / "environment" / "served").mkdir(parents=True)
    (task / "environment" / "served" / "state.txt").write_text(marker + "\n")
    (task / "solution").mkdir()
    (task / "solution" / "solve.sh").write_text(SOLVE.format(port=port))
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text(TEST.format(port=port, marker=marker))
    (task / "instruction.md").write_text(
        f"Leave an HTTP server running on 127.0.0.1 port {port} serving ./served.\n"
    )
    (task / "task.toml").write_text(
        'schema_version = "1.1"\n\n[environment]\nworkdir = "/app"\n\n'
        "[agent]\ntimeout_sec = 60\n\n[verifier]\ntimeout_sec = 60\n"
    )


def _running(marker: str) -> list[int]:
    """Host processes whose command line names ``marker`` (the served folder's port)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def _run(folder: Path, provider: dict) -> dict:
    port = 20000 + uuid.uuid4().int % 20000
    marker = f"served-{uuid.uuid4().hex[:8]}"
    _task(folder, port, marker)
    _, found = run_tasks(folder, provider, kind="bwrap", prefix="bwrap")
    assert [r["scenarioId"] for r in found] == ["server-persists"], found
    assert not _running(f"http.server {port}".replace(" ", "\0")), (
        "the agent's server outlived its trial"
    )
    return found[0]


def test_a_server_the_oracle_starts_is_there_for_the_verifier(tools, tmp_path):
    row = _run(tmp_path, {"id": "oracle", "model": "none"})
    assert row.get("error") is None and row["reward"] == 1 and row["success"], row


def test_the_simulated_agent_starts_nothing_and_fails(tools, tmp_path):
    row = _run(
        tmp_path, {"id": "simulated", "model": "sim-small", "options": {"seed": 3}}
    )
    assert row.get("error") is None and row["reward"] == 0 and not row["success"], row


def test_files_outside_the_working_folder_and_the_network_switch(tools, tmp_path):
    """``put`` makes new top-level folders; a switch to ``none`` leaves loopback and its servers."""
    from profiler_core.environments.bwrap import BwrapEnvironment
    from profiler_core.model.environment import TrialSpec

    trial = BwrapEnvironment().start(
        TrialSpec(name="t", folders=("/logs/verifier",), network_switch=True)
    )
    try:
        (tmp_path / "tests").mkdir()
        (tmp_path / "tests" / "t.sh").write_text("echo hi\n")
        trial.put(tmp_path / "tests", "/tests")

        async def go() -> list:
            server = "setsid nohup python3 -m http.server 8111 --bind 127.0.0.1 >/dev/null 2>&1 &"
            asked = "import urllib.request as u; u.urlopen('http://127.0.0.1:8111/', timeout=2)"
            count = ["sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | xargs"]
            return [
                await trial.exec(["sh", "-c", "cat /tests/t.sh > /logs/verifier/out"]),
                await trial.exec(["sh", "-c", server + " sleep 0.5"]),
                await trial.exec(count),
                trial.set_network("none"),
                await trial.exec(["python3", "-c", asked]),
                await trial.exec(count),
            ]

        copied, started, before, _, reached, after = trio.run(go)
        assert copied.ok and started.ok, (copied, started)
        assert sorted(before.output.split()) == ["lo", "tap0"], before.output  # full
        assert reached.ok, (
            reached.output
        )  # the server outlived its command and the switch
        assert after.output.split() == ["lo"], after.output  # none: loopback only
        trial.get("/logs/verifier", tmp_path / "back")
        assert (tmp_path / "back" / "out").read_text() == "echo hi\n"
    finally:
        trial.stop()
    assert not trial.folder.exists()


def test_nothing_of_the_trial_outlives_a_killed_profiler(tools):
    """SIGKILL of the process that started the trial: its sandbox and slirp4netns end too."""
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import time\n"
        "from profiler_core.environments.bwrap import BwrapEnvironment\n"
        "from profiler_core.model.environment import TrialSpec\n"
        "t = BwrapEnvironment().start(TrialSpec(name='k', network_switch=True))\n"
        "print(t.pid, t._slirp.pid, flush=True)\n"
        "time.sleep(120)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True
    )
    try:
        pids = [int(p) for p in child.stdout.readline().split()]
        assert len(pids) == 2 and all(os.path.exists(f"/proc/{p}") for p in pids)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    deadline = time.monotonic() + 10
    while (
        any(os.path.exists(f"/proc/{p}") for p in pids) and time.monotonic() < deadline
    ):
        time.sleep(0.1)
    left = [p for p in pids if os.path.exists(f"/proc/{p}")]
    assert not left, f"still running after the profiler was killed: {left}"


def test_the_trial_cannot_write_where_the_host_copies_and_get_follows_no_link(
    tools, tmp_path
):
    """``put`` stages in a folder the sandbox sees read-only; ``get`` is a ``tar`` stream
    out of the sandbox, so a link the trial planted (to a host folder) comes out as a link."""
    from profiler_core.environments.bwrap import BwrapEnvironment
    from profiler_core.model.environment import TrialSpec

    secret = tmp_path / "host-only"
    secret.mkdir()
    (secret / "key.txt").write_text("host secret\n")
    trial = BwrapEnvironment().start(TrialSpec(name="t", workdir="/app"))
    try:
        plant = (
            f"touch {trial.stage}/planted; echo $? > /app/stage.txt; "
            f"mkdir -p /app/out && ln -s {secret} /app/out/linked"
        )
        done = trio.run(lambda: trial.exec(["sh", "-c", plant]))
        assert done.ok, done.output
        trial.get("/app", tmp_path / "back")
        assert (tmp_path / "back" / "stage.txt").read_text().strip() != "0"
        assert not (trial.stage / "planted").exists()
        linked = tmp_path / "back" / "out" / "linked"
        assert linked.is_symlink() and os.readlink(linked) == str(secret)
        assert not any(p.name == "key.txt" for p in (tmp_path / "back").rglob("*"))
        from profiler_core.errors import SandboxError

        with pytest.raises(SandboxError, match="cannot copy /nowhere out of the trial"):
            trial.get("/nowhere", tmp_path / "none")
    finally:
        trial.stop()
