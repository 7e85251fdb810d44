"""A provider calling sys.exit() gets an error row; a blocking cleanup does not hold up
a cancelled run (issue 31.10)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio

from profiler_core import (
    ModeConfig,
    PromptMetrics,
    PromptResult,
    Scenario,
    SessionHandle,
    TimingBreakdown,
    TokenBreakdown,
)
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FixedScorer


class Exiting:
    """``prompt`` calls sys.exit() on the first attempt of each cell (async, or sync in
    a worker thread)."""

    id = "exiting"

    def __init__(self, sync: bool) -> None:
        self.sync = sync
        self.attempts: dict[str, int] = {}
        if sync:
            self.prompt = self._sync_prompt

    def init(self, config):
        pass

    def create_session(self, params):
        key = f"{params.scenario_id}-{params.iteration}"
        self.attempts[key] = self.attempts.get(key, 0) + 1
        return SessionHandle(
            session_id=f"{key}-{self.attempts[key]}",
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )

    def _answer(self, handle):
        if handle.session_id.endswith("-1"):
            sys.exit(3)
        return PromptResult(
            text="done",
            metrics=PromptMetrics(
                tokens=TokenBreakdown(input=1, output=1),
                timing=TimingBreakdown(wall_ms=1),
            ),
        )

    def _sync_prompt(self, handle, text, timeout_ms=None):
        return self._answer(handle)

    async def prompt(self, handle, text, timeout_ms=None):
        return self._answer(handle)

    def export_session(self, handle):
        return None

    def destroy_session(self, handle):
        pass

    def shutdown(self):
        pass


def _options(tmp_path, manager, provider, **kw):
    options = RunOptions(
        provider=provider,
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do")],
        modes={"a": ModeConfig()},
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        **{"run_id": "r1", **kw},
    )
    options.plugin_manager = manager
    return options


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync-in-a-thread"])
def test_sys_exit_in_prompt_is_an_error_row_and_the_run_goes_on(
    tmp_path, profiler_plugin_manager, sync
):
    options = _options(
        tmp_path,
        profiler_plugin_manager,
        Exiting(sync),
        repetitions=2,
        allowed_retries=1,
    )
    # The real clock: under MockClock a worker thread's hop lets the clock jump past the
    # cell's timeout.
    result = trio.run(run_profile_suite, options)
    assert result.status == "completed"
    assert [(r.error, r.attempts) for r in result.rows] == [
        (None, 2),
        (None, 2),
    ]  # retried, then answered
    options = _options(
        tmp_path, profiler_plugin_manager, Exiting(sync), repetitions=1, run_id="r2"
    )
    (row,) = trio.run(run_profile_suite, options).rows
    assert row.error == "SystemExit: 3" and row.error_code == "provider_error"


BLOCKING = '''
import time
from datetime import UTC, datetime

import trio

from profiler_core import hookimpl, SessionHandle


class Blocking:
    """A session that never answers; destroy_session and shutdown block their thread for 60 s."""

    id = "blocking"

    def __init__(self, **options):
        pass

    def init(self, config):
        pass

    def create_session(self, params):
        return SessionHandle(session_id="b", provider=self.id, created_at=datetime.now(UTC).isoformat())

    async def prompt(self, handle, text, timeout_ms=None):
        print("PROMPTING", flush=True)
        await trio.sleep_forever()

    def export_session(self, handle):
        return None

    def destroy_session(self, handle):
        time.sleep(60)

    def shutdown(self):
        time.sleep(60)


@hookimpl
def profiler_register_providers():
    return [Blocking]
'''


@pytest.mark.slow
def test_ctrl_c_is_not_held_up_by_a_blocking_destroy_or_shutdown(tmp_path):
    site = tmp_path / "site"
    (site / "agent_profiler_blocking-0.1.dist-info").mkdir(parents=True)
    (site / "agent_profiler_blocking.py").write_text(BLOCKING)
    (site / "agent_profiler_blocking-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agent-profiler-blocking\nVersion: 0.1\n"
    )
    (site / "agent_profiler_blocking-0.1.dist-info" / "entry_points.txt").write_text(
        "[agent_profiler]\nblocking = agent_profiler_blocking\n"
    )
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s1.json").write_text(
        '{"id": "s1", "name": "s1", "prompt": "wait"}'
    )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        textwrap.dedent("""
        modes: {a: {}}
        scenarios: {path: scenarios}
        provider: {id: blocking, model: m}
        scorer: {id: checks}
        execution: {repetitions: 1, warmup: false}
    """)
    )
    env = {k: v for k, v in os.environ.items() if k != "PROFILER_LOAD_PLUGINS"}
    env.update(PYTHONPATH=str(site), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("profiler")),
            "run",
            str(profile),
            "--run-id",
            "r1",
            "--no-report",
            "--progress",
            "none",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("Run r1")
        assert proc.stdout.readline().strip() == "PROMPTING"
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert took < 15, (
        f"Ctrl-C took {took:.1f} s (the cleanup waited for the blocked threads)"
    )
    assert "destroy_session(b) did not finish in 1.0s; abandoned" in err
