"""`profiler run` exits 1 when cells still errored after their retries, unless
--allow-errors, and prints the verdict (issues 16.1, 16.14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

PROFILER = Path(sys.executable).with_name("profiler")


def _profile(tmp_path, timeout_ms, provider="simulated"):
    (tmp_path / "scenarios").mkdir()
    for sid in ("s1", "s2"):
        (tmp_path / "scenarios" / f"{sid}.json").write_text(
            json.dumps(
                {
                    "id": sid,
                    "name": sid,
                    "prompt": "fix the bug",
                    "timeoutMs": timeout_ms,
                }
            )
        )
    path = tmp_path / "profile.yaml"
    path.write_text(
        textwrap.dedent(f"""
        modes: {{baseline: {{}}, tool: {{system_instructions: "use the tool"}}}}
        scenarios: {{path: scenarios}}
        provider: {{id: {provider}, model: sim-small}}
        execution: {{repetitions: 2, warmup: false, fail_fast: false}}
    """)
    )
    return path


FAILING_PLUGIN = """
from datetime import UTC, datetime
from profiler_core import SessionHandle, hookimpl


class AlwaysFails:
    id = "always-fails"

    def __init__(self, **options):
        pass

    def init(self, config):
        pass

    def create_session(self, params):
        return SessionHandle(session_id=f"x-{params.iteration}", provider=self.id, created_at=datetime.now(UTC).isoformat())

    async def prompt(self, handle, text, timeout_ms=None):
        raise RuntimeError("upstream model unavailable")

    def export_session(self, handle):
        return None

    def destroy_session(self, handle):
        pass

    def shutdown(self):
        pass


class SlowAgent(AlwaysFails):
    id = "slow-agent"

    async def prompt(self, handle, text, timeout_ms=None):
        import trio

        await trio.sleep(30)


@hookimpl
def profiler_register_providers():
    return [AlwaysFails, SlowAgent]
"""


def _failing_env(tmp_path):
    """A real installed plugin (a dist-info on PYTHONPATH) whose provider raises on every prompt."""
    site = tmp_path / "site"
    (site / "always_fails-0.1.dist-info").mkdir(parents=True)
    (site / "always_fails-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: always-fails\nVersion: 0.1\n"
    )
    (site / "always_fails-0.1.dist-info" / "entry_points.txt").write_text(
        "[agent_profiler]\nalways_fails = always_fails_plugin\n"
    )
    (site / "always_fails_plugin.py").write_text(FAILING_PLUGIN)
    return {**os.environ, "PYTHONPATH": str(site)}


def _run(*args, cwd, env=None):
    return subprocess.run(
        [str(PROFILER), "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_errored_cells_exit_1_with_one_line(tmp_path):
    out = _run(
        str(_profile(tmp_path, 60_000, provider="always-fails")),
        cwd=tmp_path,
        env=_failing_env(tmp_path),
    )
    assert out.returncode == 1, out.stdout + out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    assert (
        errors == [line for line in errors if "8 of 8 cells errored" in line]
        and len(errors) == 1
    )
    rows = [
        json.loads(line)
        for line in next((tmp_path / "results").glob("*.jsonl"))
        .read_text()
        .splitlines()
    ]
    assert len(rows) == 8 and all(
        "upstream model unavailable" in r["error"] for r in rows
    )


def test_allow_errors_accepts_them_and_says_so(tmp_path):
    out = _run(
        str(_profile(tmp_path, 60_000, provider="always-fails")),
        "--allow-errors",
        cwd=tmp_path,
        env=_failing_env(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    assert (
        "8 of 8 cells errored after their retries (accepted: --allow-errors)"
        in out.stdout
    )


def test_clean_run_exits_0_and_prints_the_verdict(tmp_path):
    out = _run(str(_profile(tmp_path, 600_000)), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = lines.index("Verdict:")
    verdict = lines[
        start + 1 : next(
            i for i, line in enumerate(lines) if line.startswith("Report:")
        )
    ]
    assert [line.strip().split(":")[0] for line in verdict[:4]] == [
        "Success",
        "Cost",
        "Speed",
        "Tokens",
    ]
    assert any("tool" in line and "baseline" in line for line in verdict)
    assert lines[-2].startswith("Report:") and lines[-2].endswith("report.html")


def test_time_limit_caps_sessions_from_the_command_line(tmp_path):
    # A plugin agent that would take 30 s: --time-limit 0.2 ends every session at 200 ms.
    out = _run(
        str(_profile(tmp_path, 600_000, provider="slow-agent")),
        "--time-limit",
        "0.2",
        "--allow-errors",
        cwd=tmp_path,
        env=_failing_env(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    rows = [
        json.loads(line)
        for line in next((tmp_path / "results").glob("*.jsonl"))
        .read_text()
        .splitlines()
    ]
    assert len(rows) == 8 and {r["error"] for r in rows} == {"timed out after 200 ms"}
