"""``execution.analysis_workers``: analyzers and trace serialisation in worker processes
(issue 18.4).

Real spawned workers throughout: the demo profile through ``profiler run``, and
Python ``RunOptions`` whose analyzers (defined here, so a worker can import
them) are slow on purpose, record the worker's PID, or fail.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import trio
import yaml
from tests.scripted.agent_runs import wait_for

from profiler_core import AnalysisResult, ModeConfig, Scenario
from profiler_core.config.loader import load_profile
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.runner.analysis_pool import worker_count
from profiler_core.testing import FakeProvider, FixedScorer

pytestmark = pytest.mark.slow

PROFILER = [sys.executable, "-m", "profiler_core"]
#: Row fields that differ between two runs of the same cells whoever analyses them.
PER_RUN = {"runId", "startedAt", "completedAt", "sessionId", "timing"}


# -- components a worker imports from this module -----------------------------------------------


class SlowAnalyzer:
    """CPU-bound for ``seconds``; its summary is when it ran (``time.monotonic`` is one
    clock for every process)."""

    name = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def analyze(self, trace, scenario, mode) -> AnalysisResult:
        start = time.monotonic()
        while time.monotonic() - start < self.seconds:
            sum(range(1000))  # burn CPU, holding the GIL as a real analyzer would
        return AnalysisResult(analyzer=self.name, summary=f"{start} {time.monotonic()}")


class MarkingAnalyzer:
    """Writes its process's PID into ``folder`` and then takes ``seconds`` (sleeping:
    the test kills it meanwhile)."""

    name = "marking"

    def __init__(self, folder: str, seconds: float) -> None:
        self.folder = folder
        self.seconds = seconds

    def analyze(self, trace, scenario, mode) -> AnalysisResult:
        Path(self.folder, str(os.getpid())).touch()
        time.sleep(self.seconds)
        return AnalysisResult(analyzer=self.name, summary="done")


class FailingAnalyzer:
    """Raises on every trace."""

    name = "failing"

    def analyze(self, trace, scenario, mode) -> AnalysisResult:
        raise ValueError("no findings today")


class TickingProvider(FakeProvider):
    """A fake provider whose prompts tick every 10 ms (a ``long`` prompt 100 times),
    recording when (monotonic)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.ticks: list[float] = []

    async def prompt(self, handle, text, timeout_ms=None):
        for _ in range(100 if text == "long" else 2):
            await trio.sleep(0.01)
            self.ticks.append(time.monotonic())
        return await super().prompt(handle, text, timeout_ms)


# -- helpers --------------------------------------------------------------------------------------


def options(tmp_path: Path, manager, **kw) -> RunOptions:
    base = dict(
        provider=FakeProvider(),
        scorer=FixedScorer(),
        scenarios=[
            Scenario(id=f"s{i}", name=f"S{i}", prompt=f"do {i}") for i in (1, 2)
        ],
        modes={"a": ModeConfig(), "b": ModeConfig()},
        repetitions=2,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        plugin_manager=manager,
    )
    base.update(kw)
    return RunOptions(**base)


def alive(pid: int) -> bool:
    """Whether a process with this PID still exists (a zombie counts: it was not reaped)."""
    return Path(f"/proc/{pid}").exists()


def pids_in(folder: Path) -> set[int]:
    return {int(p.name) for p in folder.iterdir()} if folder.is_dir() else set()


def demo_profile(folder: Path, *, workers: int, trace_format: str) -> Path:
    """The demo (simulated provider, built-in analyzers) with ``analysis_workers: workers``."""
    if not (folder / "demo").exists():
        subprocess.run(
            [*PROFILER, "init", str(folder / "demo")], check=True, capture_output=True
        )
    profile = yaml.safe_load((folder / "demo" / "profile.yaml").read_text())
    profile["provider"]["options"]["time_scale"] = 0.0
    profile["execution"] = {
        "repetitions": 2,
        "concurrency": 3,
        "warmup": True,
        "analysis_workers": workers,
    }
    profile["output"]["trace_format"] = trace_format
    profile["output"]["log_level"] = "debug"
    path = folder / "demo" / f"w{workers}-{trace_format}.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def run_cli(profile: Path, run_id: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            *PROFILER,
            "run",
            str(profile),
            "--run-id",
            run_id,
            "--progress",
            "none",
            "--no-report",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=profile.parent,
    )


def by_cell(path: Path) -> dict[tuple, dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    cells = {(r["model"], r["mode"], r["scenarioId"], r["iteration"]): r for r in lines}
    assert len(cells) == len(lines), f"{path}: a cell recorded twice"
    return cells


# -- tests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("trace_format", ["jsonl", "files"])
def test_workers_write_what_inline_writes(tmp_path, trace_format):
    inline = run_cli(
        demo_profile(tmp_path, workers=0, trace_format=trace_format), "inline"
    )
    pooled = run_cli(
        demo_profile(tmp_path, workers=2, trace_format=trace_format), "pooled"
    )
    assert inline.returncode == 0, inline.stderr
    assert pooled.returncode == 0, pooled.stderr
    assert (
        "analysis in 2 worker process(es), analyzers built from the profile"
        in pooled.stderr
    )
    assert "worker process" not in inline.stderr
    demo = tmp_path / "demo"

    rows, other_rows = (
        by_cell(demo / "results" / "inline.jsonl"),
        by_cell(demo / "results" / "pooled.jsonl"),
    )
    assert len(rows) == 20 and rows.keys() == other_rows.keys()
    for key, row in rows.items():
        assert {k: v for k, v in row.items() if k not in PER_RUN} == {
            k: v for k, v in other_rows[key].items() if k not in PER_RUN
        }, key

    bundles, other_bundles = (
        by_cell(demo / "results" / "inline.analysis.jsonl"),
        by_cell(demo / "results" / "pooled.analysis.jsonl"),
    )
    assert len(bundles) == 20 and bundles == other_bundles
    assert {"efficiency", "error", "reasoning", "strategy", "tool-pattern"} <= set(
        next(iter(bundles.values()))["results"]
    )

    if trace_format == "jsonl":
        traces = by_cell(demo / "reports" / "inline" / "sessions" / "traces.jsonl")
        assert len(traces) == 20 and traces == by_cell(
            demo / "reports" / "pooled" / "sessions" / "traces.jsonl"
        )
    else:
        files = sorted(
            p.relative_to(demo / "reports" / "inline")
            for p in (demo / "reports" / "inline").rglob("*.json")
        )
        assert len(files) == 20
        for name in files:  # byte for byte
            assert (demo / "reports" / "pooled" / name).read_bytes() == (
                demo / "reports" / "inline" / name
            ).read_bytes(), name


@pytest.mark.parametrize("workers", [0, 2])
def test_a_slow_analyzer_stalls_other_sessions_only_inline(
    tmp_path, profiler_plugin_manager, caplog, workers
):
    caplog.set_level(logging.INFO, logger="agent_profiler")
    provider = TickingProvider()
    # Four cells at once: the two short sessions are analysed while the two long ones
    # are still prompting.
    result = trio.run(
        run_profile_suite,
        options(
            tmp_path,
            profiler_plugin_manager,
            provider=provider,
            analyzers=[SlowAnalyzer(0.3)],
            concurrency=4,
            scenarios=[
                Scenario(id="short", name="S", prompt="short"),
                Scenario(id="long", name="L", prompt="long"),
            ],
            modes={"a": ModeConfig()},
            analysis_workers=workers,
        ),
    )
    assert result.counts.completed == 4 and result.counts.errored == 0
    busy = [
        tuple(map(float, b.results["slow"].summary.split()))
        for b in result.analysis_results
    ]
    assert len(busy) == 4
    # Ticks of the long sessions' prompts while an analyzer was running.
    during = sum(
        1 for start, end in busy for tick in provider.ticks if start < tick < end
    )
    if workers:
        assert "analysis in 2 worker process(es), analyzers pickled" in caplog.text
        assert during >= 10, (
            f"only {during} prompt ticks while analyzers ran in workers"
        )
    else:
        assert during == 0, (
            f"{during} prompt ticks while an inline analyzer held the loop"
        )


@pytest.mark.parametrize("trace_format", ["jsonl", "files"])
def test_a_worker_redacts_the_trace_it_serialises(
    tmp_path, profiler_plugin_manager, trace_format
):
    secret, shaped = "mode-secret-value-42", "sk-" + "A" * 24
    written = {}
    for workers in (0, 1):
        folder = tmp_path / str(workers)
        trio.run(
            run_profile_suite,
            options(
                folder,
                profiler_plugin_manager,
                provider=FakeProvider(text=f"key {secret} and {shaped}"),
                modes={"a": ModeConfig(environment={"MY_API_KEY": secret})},
                repetitions=1,
                analyzers=[SlowAnalyzer(0.0)],
                trace_format=trace_format,
                analysis_workers=workers,
            ),
        )
        files = sorted(p for p in (folder / "reports").rglob("*") if p.is_file())
        # The fake's traces carry the time they were made; everything else must match.
        written[workers] = [
            re.sub(r'"\w*[tT]imestamp": ?"[^"]*"', "", p.read_text()) for p in files
        ]
        assert files and all(
            secret not in text and shaped not in text for text in written[workers]
        )
        assert all("[REDACTED]" in text for text in written[workers])
    assert written[0] == written[1]


def test_an_analyzer_failure_in_a_worker_is_the_inline_error(
    tmp_path, profiler_plugin_manager
):
    errors = {}
    for workers in (0, 1):
        result = trio.run(
            run_profile_suite,
            options(
                tmp_path / str(workers),
                profiler_plugin_manager,
                analyzers=[FailingAnalyzer()],
                allowed_retries=1,
                repetitions=1,
                modes={"a": ModeConfig()},
                analysis_workers=workers,
            ),
        )
        errors[workers] = [(r.error, r.error_code, r.attempts) for r in result.rows]
    assert (
        errors[0]
        == errors[1]
        == [
            (
                "analyzer 'failing' failed: ValueError: no findings today",
                "analyzer_error",
                2,
            )
        ]
        * 2
    )


def test_a_worker_killed_mid_analysis_gives_an_error_attempt_then_a_retry(
    tmp_path, profiler_plugin_manager, caplog
):
    marks = tmp_path / "marks"
    marks.mkdir()
    killed: list[int] = []

    async def main():
        async with trio.open_nursery() as nursery:

            async def kill_the_first_busy_worker():
                while not pids_in(marks):
                    await trio.sleep(0.02)
                (pid,) = pids_in(marks)
                os.kill(pid, signal.SIGKILL)  # by its own PID
                killed.append(pid)

            nursery.start_soon(kill_the_first_busy_worker)
            return await run_profile_suite(
                options(
                    tmp_path,
                    profiler_plugin_manager,
                    analyzers=[MarkingAnalyzer(str(marks), 0.5)],
                    repetitions=2,
                    modes={"a": ModeConfig()},
                    scenarios=[Scenario(id="s1", name="S1", prompt="do")],
                    allowed_retries=1,
                    analysis_workers=1,
                )
            )

    result = trio.run(main)
    rows = list(result.rows)
    assert [r.error for r in rows] == [None, None]
    assert sorted(r.attempts for r in rows) == [1, 2]
    assert (
        "an analysis worker died" in caplog.text
        and "analysis worker died" in caplog.text
    )
    assert [b.results["marking"].summary for b in result.analysis_results] == [
        "done",
        "done",
    ]
    workers = pids_in(marks)
    assert len(workers) == 2 and killed[0] in workers  # the retry ran in a new worker
    assert not [pid for pid in workers if alive(pid)]


def test_ctrl_c_during_analysis_leaves_no_worker(tmp_path, profiler_plugin_manager):
    marks = tmp_path / "marks"
    marks.mkdir()

    def interrupt_once_analysis_runs():
        wait_for(lambda: pids_in(marks), 60, "an analysis to start")
        os.kill(os.getpid(), signal.SIGINT)

    watcher = threading.Thread(target=interrupt_once_analysis_runs, daemon=True)
    watcher.start()
    started = time.monotonic()
    result = trio.run(
        run_profile_suite,
        options(
            tmp_path,
            profiler_plugin_manager,
            analyzers=[MarkingAnalyzer(str(marks), 60)],
            concurrency=2,
            analysis_workers=2,
            handle_sigint=True,
        ),
    )
    elapsed = time.monotonic() - started
    watcher.join(5)
    assert result.status == "interrupted"
    assert elapsed < 30, f"the interrupted run took {elapsed:.0f} s to end"
    workers = pids_in(marks)
    assert workers and not [pid for pid in workers if alive(pid)]


def test_a_cancelled_run_leaves_no_worker(tmp_path, profiler_plugin_manager):
    marks = tmp_path / "marks"
    marks.mkdir()

    async def main():
        async with trio.open_nursery() as nursery:

            async def cancel_once_analysis_runs():
                while not pids_in(marks):
                    await trio.sleep(0.02)
                nursery.cancel_scope.cancel()

            nursery.start_soon(cancel_once_analysis_runs)
            await run_profile_suite(
                options(
                    tmp_path,
                    profiler_plugin_manager,
                    analyzers=[MarkingAnalyzer(str(marks), 60)],
                    concurrency=2,
                    analysis_workers=2,
                )
            )

    started = time.monotonic()
    trio.run(main)
    assert time.monotonic() - started < 30
    workers = pids_in(marks)
    assert workers and not [pid for pid in workers if alive(pid)]
    manifest = json.loads(
        next((tmp_path / "results").glob("*.manifest.json")).read_text()
    )
    assert manifest["status"] != "running"


DRIVER = """
import sys, trio
sys.path.insert(0, {root!r})
from tests.test_analysis_workers import MarkingAnalyzer
from profiler_core import ModeConfig, Scenario
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer

trio.run(run_profile_suite, RunOptions(
    provider=FakeProvider(), scorer=FixedScorer(), scenarios=[Scenario(id="s1", name="S", prompt="do")],
    modes={{"a": ModeConfig()}}, repetitions=1, warmup=False, analyzers=[MarkingAnalyzer({marks!r}, 60)],
    analysis_workers=1, results_dir={results!r}, reports_dir={reports!r},
))
"""


def test_workers_end_when_their_driver_is_killed(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    script = DRIVER.format(
        root=str(Path(__file__).resolve().parent.parent),
        marks=str(marks),
        results=str(tmp_path / "results"),
        reports=str(tmp_path / "reports"),
    )
    driver = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        (worker,) = wait_for(
            lambda: pids_in(marks), 60, "the worker's analysis to start"
        )
        os.kill(
            driver.pid, signal.SIGKILL
        )  # no cleanup can run: the worker must notice by itself
        driver.wait(10)
        assert (
            wait_for(lambda: not alive(worker), 10, f"worker {worker} to end") is True
        )
    finally:
        driver.kill()
        driver.wait()


def test_analyzers_that_do_not_pickle_run_inline_and_say_so(
    tmp_path, profiler_plugin_manager, caplog
):
    class Local:  # a class inside a function does not pickle
        name = "local"

        def analyze(self, trace, scenario, mode):
            return AnalysisResult(analyzer="local", summary=str(os.getpid()))

    result = trio.run(
        run_profile_suite,
        options(
            tmp_path,
            profiler_plugin_manager,
            analyzers=[Local()],
            repetitions=1,
            analysis_workers=2,
        ),
    )
    assert (
        "execution.analysis_workers: analyzers run inline: the analyzers do not pickle"
        in caplog.text
    )
    assert {b.results["local"].summary for b in result.analysis_results} == {
        str(os.getpid())
    }


def test_analysis_workers_auto_and_counts(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s1.json").write_text(
        '{"id": "s1", "name": "S", "prompt": "do"}'
    )
    (tmp_path / "p.yaml").write_text(
        "modes: {a: {}}\nscenarios: {path: scenarios}\nexecution: {analysis_workers: auto}\n"
    )
    assert load_profile(tmp_path / "p.yaml").execution.analysis_workers is None
    assert worker_count(None, 64, 16) == min(len(os.sched_getaffinity(0)), 8)
    assert worker_count(6, 2, 16) == 2  # never more than cells in flight
    assert worker_count(3, None, 16) == 3
    assert worker_count(0, 4, 16) == 0


@pytest.mark.parametrize("value", ["-1", "many", "1.5", "true"])
def test_a_bad_analysis_workers_value_is_one_line_naming_the_key(tmp_path, value):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s1.json").write_text(
        '{"id": "s1", "name": "S", "prompt": "do"}'
    )
    (tmp_path / "p.yaml").write_text(
        f"modes: {{a: {{}}}}\nscenarios: {{path: scenarios}}\nexecution: "
        f"{{analysis_workers: {value}}}\n"
    )
    out = subprocess.run(
        [*PROFILER, "validate", "p.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[1] == "1 problem(s) found", out.stderr
    assert lines[0].startswith(
        "Error: p.yaml: execution.analysis_workers: expected an integer >= 0 or `auto`"
    ), lines[0]
    assert "Traceback" not in out.stderr
