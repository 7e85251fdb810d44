"""How fast ``profiler view`` opens a big run, and how much memory its server holds.

Run: ``python bench/bench_viewer.py [--rows 100000] [--quick] [--keep DIR] [--no-browser]``.

Writes a run of ``--rows`` rows (rows ~2 KB and traces ~3.4 KB each, like the
simulated provider's, plus analysis bundles) into a temporary folder, starts
``profiler view --no-open`` on it as a user would, and prints one JSON object:

- ``start_ms``: from starting the process to the URL being printed;
- ``first_page_ms``: the first request of the run's page (its rows are indexed
  then: the cold case a user meets) until the whole page has arrived;
- ``filtered_page_ms``: a filtered, sorted page afterwards;
- ``first_session_ms`` / ``next_session_ms``: the first session opened (the
  trace store and analysis file are indexed then) and another one;
- ``browser_first_page_ms``: in headless Chromium against a freshly started
  server, from navigation start to the load event (skipped without Chromium);
- ``server_rss_mb`` / ``server_peak_rss_mb``: the server's memory after all that;
- ``index_cpu_ms`` / ``traces_index_cpu_ms``: CPU time of building the rows
  index and the trace-store index in this process (steadier than wall time on a
  shared machine);
- ``results_mb`` / ``traces_mb``: the sizes of the files it read;
- ``load_average``: the machine's 1-minute load when the figures were taken (on
  2 cores, anything above 2 means the wall times include waiting for a core).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
try:
    import profiler_core  # noqa: F401
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(ROOT / "src"))

from profiler_core import (
    AnalysisResult,
    CheckpointResult,
    CostBreakdown,
    NumberFinding,
    ProfileRow,
    ReasoningEvent,
    SessionAnalysisBundle,
    SessionTrace,
    TextOutputEvent,
    TimingBreakdown,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    ToolCallSummary,
    TraceSummary,
    TurnBoundaryEvent,
    to_json,
)
from profiler_core.model.run import RunCounts, RunManifest
from profiler_core.storage.store import write_manifest
from profiler_core.storage.tracestore import TraceRecord, record_json

MODES = ("baseline", "with_tool")
SCENARIOS = tuple(f"scenario-{i:03d}" for i in range(50))
RUN_ID = "run_bench_viewer"


def _templates() -> tuple[str, str, str]:
    """One row, trace record and analysis bundle with placeholders the generator replaces."""
    records = tuple(ToolCallRecord(name=n, category=c, success=True, duration_ms=40.5) for n, c in
                    (("read_file", "file"), ("grep", "search"), ("bash", "shell"), ("edit", "file"), ("bash", "shell")) * 2)  # fmt: skip
    checks = tuple(CheckpointResult(id=f"check-{k}", description="the agent did the thing", passed=True,
                                    actual="Done: changed src/app.py and ran the "
                                        "tests (36 passed)", expected="output matches /^Done/")
                   for k in range(3))  # fmt: skip
    row = ProfileRow(
        run_id=RUN_ID, scenario_id="@SCEN@", mode="@MODE@", model="sim-small", iteration=777777,
        started_at="2026-01-01T00:00:00.000Z", completed_at="2026-01-01T00:00:20.000Z",
        tokens=TokenBreakdown(input=628, output=449, reasoning=945, cache_read=59039, cache_write=2499),
        timing=TimingBreakdown(wall_ms=111111.5), tool_calls=ToolCallSummary.from_records(records),
        cost=CostBreakdown(total_usd=0.222222, input_usd=0.004, output_usd=0.0006, reasoning_usd=0.0014),
        success=True, checkpoints_passed=3, checkpoints_total=3, checkpoint_details=checks, provider="simulated",
        session_id="sim-@SCEN@-@MODE@-777777", agent_turns=6, extensions={"cost_source": "provider", "latency_model_ms": 11935.6},
    )  # fmt: skip
    events = []
    for turn in range(1, 7):
        events += [
            ReasoningEvent(
                content="I should look at the layout of the project before changing anything.",
                duration_ms=1068.8,
                token_count=171,
            ),
            ToolCallEvent(
                name="bash",
                input={"command": "pytest -q"},
                output="2 failed, 34 passed in 2.81s\n" * 3,
                duration_ms=2811.3,
            ),
            TextOutputEvent(
                content="Applied a change; verifying next.", token_count=14
            ),
            TurnBoundaryEvent(turn_number=turn, timestamp="2026-01-01T00:00:01.908Z"),
        ]
    trace = SessionTrace(session_id="sim-@SCEN@", events=tuple(events), turns=(),
                         summary=TraceSummary(total_turns=6, total_tool_calls=6, total_tokens=TokenBreakdown(output=449), total_duration=18832.1))  # fmt: skip
    record = TraceRecord(
        scenario_id="@SCEN@",
        mode="@MODE@",
        model="sim-small",
        iteration=777777,
        trace=trace,
    )
    bundle = SessionAnalysisBundle(session_id="sim-@SCEN@", scenario_id="@SCEN@", mode="@MODE@", model="sim-small", iteration=777777,
                                   results={"efficiency": AnalysisResult(analyzer="efficiency", findings={"total_turns": NumberFinding(value=6, unit="turns")}, summary="6/6 productive turns")})  # fmt: skip
    return to_json(row), record_json(record), to_json(bundle)


def write_big_run(root: Path, rows: int) -> Path:
    """``rows`` rows over 2 modes x 50 scenarios; every 7th row failed, every 50th errored."""
    row_t, trace_t, bundle_t = _templates()
    results, sessions = root / "results", root / "reports" / RUN_ID / "sessions"
    results.mkdir(parents=True)
    sessions.mkdir(parents=True)
    per_cell = max(1, rows // (len(MODES) * len(SCENARIOS)))
    path = results / f"{RUN_ID}.jsonl"
    with (
        open(path, "w") as r,
        open(sessions / "traces.jsonl", "w") as t,
        open(results / f"{RUN_ID}.analysis.jsonl", "w") as a,
    ):
        for n in range(rows):
            mode, scen, it = (
                MODES[n % 2],
                SCENARIOS[(n // 2) % len(SCENARIOS)],
                n // (2 * len(SCENARIOS)),
            )
            line = (
                row_t.replace("@SCEN@", scen)
                .replace("@MODE@", mode)
                .replace("777777", str(it))
            )
            line = line.replace("111111.5", f"{10000 + (n * 7919) % 50000}.5").replace(
                "0.222222", f"{0.001 + (n % 997) / 1e5:.6f}"
            )
            if n % 7 == 3:
                line = line.replace('"success":true', '"success":false')
            if n % 50 == 9:
                line = line.replace(
                    '"completionReason":"stop"',
                    f'"completionReason":"timeout","error":"session {n} timed '
                    'out","errorCode":"timeout"',
                )
            r.write(line + "\n")
            t.write(
                trace_t.replace("@SCEN@", scen)
                .replace("@MODE@", mode)
                .replace("777777", str(it))
                + "\n"
            )
            a.write(
                bundle_t.replace("@SCEN@", scen)
                .replace("@MODE@", mode)
                .replace("777777", str(it))
                + "\n"
            )
    manifest = RunManifest(run_id=RUN_ID, profile_hash="sha256:0", started_at="2026-01-01T00:00:00Z", status="completed",
                           counts=RunCounts(expected=rows, completed=rows), models=("sim-small",), modes=MODES,
                           scenarios=SCENARIOS, repetitions=per_cell, trace_store=str(sessions / "traces.jsonl"))  # fmt: skip
    write_manifest(results / f"{RUN_ID}.manifest.json", manifest)
    return path


def _start(root: Path) -> tuple[subprocess.Popen, str, float]:
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "profiler_core", "view", "--no-open"], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    line = proc.stdout.readline() if proc.stdout else ""
    match = re.search(r" at (\S+)", line)
    if not match:
        proc.kill()
        raise SystemExit(
            f"profiler view did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}"
        )
    return proc, match.group(1), (time.perf_counter() - t0) * 1000


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _timed_get(url: str, **params) -> float:
    t0 = time.perf_counter()
    response = httpx.get(url, params=params, timeout=300)
    response.raise_for_status()
    return (time.perf_counter() - t0) * 1000


def _rss_mb(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    get = lambda key: int(re.search(rf"{key}:\s+(\d+) kB", status).group(1)) / 1024  # noqa: E731
    return round(get("VmRSS"), 1), round(get("VmHWM"), 1)


def _browser_first_page(root: Path) -> float | None:
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    proc, url, _ = _start(root)
    options = Options()
    options.binary_location = shutil.which("chromium") or ""
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={root / 'chrome'}",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(
        service=Service(shutil.which("chromedriver")), options=options
    )
    try:
        driver.set_page_load_timeout(300)
        driver.get(url)
        return float(
            driver.execute_script(
                "const t = performance.timing; return t.loadEventEnd - t.navigationStart"
            )
        )
    finally:
        driver.quit()
        _stop(proc)


def _index_cpu(root: Path) -> dict[str, float]:
    from profiler_core.viewer.index import RowIndex, Traces

    t0 = time.process_time()
    rows = RowIndex(root / "results" / f"{RUN_ID}.jsonl")
    t1 = time.process_time()
    traces = Traces(root / "reports" / RUN_ID / "sessions" / "traces.jsonl", rows)
    assert traces.store is not None
    traces.store.build()
    t2 = time.process_time()
    return {
        "index_cpu_ms": round((t1 - t0) * 1000, 1),
        "traces_index_cpu_ms": round((t2 - t1) * 1000, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="1,000 rows, no browser: a smoke test, not figures",
    )
    parser.add_argument("--keep", type=Path, help="write the run here and keep it")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    rows = 1000 if args.quick else args.rows
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    try:
        t0 = time.perf_counter()
        results = write_big_run(root, rows)
        figures: dict[str, object] = {
            "rows": rows,
            "generate_s": round(time.perf_counter() - t0, 1),
        }
        figures["results_mb"] = round(results.stat().st_size / 2**20, 1)
        figures["traces_mb"] = round(
            (root / "reports" / RUN_ID / "sessions" / "traces.jsonl").stat().st_size
            / 2**20,
            1,
        )
        proc, url, figures["start_ms"] = _start(root)
        try:
            figures["first_page_ms"] = round(_timed_get(url), 1)
            figures["filtered_page_ms"] = round(
                _timed_get(url, outcome="fail", sort="cost", desc="1", page="3"), 1
            )
            figures["first_session_ms"] = round(
                _timed_get(
                    url + "session",
                    model="sim-small",
                    mode="with_tool",
                    scenario="scenario-007",
                    iteration="1",
                ),
                1,
            )
            figures["next_session_ms"] = round(
                _timed_get(
                    url + "session",
                    model="sim-small",
                    mode="baseline",
                    scenario="scenario-042",
                    iteration="0",
                ),
                1,
            )
            figures["server_rss_mb"], figures["server_peak_rss_mb"] = _rss_mb(proc.pid)
        finally:
            _stop(proc)
        if not (args.quick or args.no_browser):
            figures["browser_first_page_ms"] = _browser_first_page(root)
        figures.update(_index_cpu(root))
        figures["load_average"] = os.getloadavg()[0]
        print(json.dumps(figures))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
