"""The in-process benchmark workloads of issue 9; one run of one workload per process.

Run: ``PYTHONPATH=src python bench/workloads.py WORKLOAD [--quick] [--concurrency N]``.
Prints one JSON object: ``{"ms": <the figure>, ...}`` plus workload details.
Fixtures are loaded and components built *before* the clock starts; what is
timed is the call a user waits for (``run_profile_suite``, one statistics
call, five analyzers). ``bench/run_all.py`` starts this script in fresh
processes (one warm-up, then the median of five) and reads the OS's peak RSS.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from anchor import anchor_dir  # bench/anchor.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
try:
    import profiler_core  # noqa: F401
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(ROOT / "src"))

import attrs

from profiler_core import (
    ModeConfig,
    PromptResult,
    Scenario,
    ScorerCheckResult,
    ScorerResult,
    SessionHandle,
    SessionTrace,
)
from profiler_core.errors import ProfilerError
from profiler_core.plugins.manager import PluginManager, get_plugin_manager
from profiler_core.storage.serde import from_json, structure

#: The TypeScript original's parity data (inputs of every workload).
ANCHOR = anchor_dir()

#: The four built-in collectors, by registry id.
COLLECTOR_IDS = ("token", "latency", "cost", "tool_calls")


def _read(name: str) -> str:
    path = ANCHOR / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfilerError(
            f"{path}: parity file not found (set PROFILER_BENCH_ANCHOR to the anchor-parity folder)"
        ) from None


def load_scenarios() -> list[Scenario]:
    """The ten benchmark scenarios of ``scenarios.json``."""
    data = json.loads(_read("scenarios.json"))
    if not isinstance(data, list):
        raise ProfilerError(
            f"{ANCHOR / 'scenarios.json'}: expected a JSON list of scenarios"
        )
    return [
        structure(item, Scenario, source=f"scenarios.json[{i}]")
        for i, item in enumerate(data)
    ]


class ReplayProvider:
    """A zero-latency async provider replaying one recorded prompt result and trace.

    Every session gets a fresh id, and its exported trace carries that id; the
    optional ``latency_s`` makes each prompt sleep (the latency workloads).
    """

    id = "bench-replay"
    init_scope = "suite"

    def __init__(
        self,
        result: PromptResult,
        trace: SessionTrace,
        latency_s: float = 0.0,
        ids: Iterator[int] | None = None,
    ) -> None:
        self.result = result
        self.trace = trace
        self.latency_s = latency_s
        self._ids = ids or itertools.count(
            1
        )  # shared by a factory's instances: session ids stay unique

    async def init(self, config: Any) -> None:
        """Nothing to start."""

    async def create_session(self, params: Any) -> SessionHandle:
        """A new session id per iteration."""
        return SessionHandle(
            session_id=f"ses_bench_{next(self._ids)}",
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """The recorded result, after ``latency_s``."""
        if self.latency_s:
            import trio

            await trio.sleep(self.latency_s)
        return self.result

    async def export_session(self, handle: SessionHandle) -> SessionTrace:
        """The recorded trace under this session's id."""
        return attrs.evolve(self.trace, session_id=handle.session_id)

    async def destroy_session(self, handle: SessionHandle) -> None:
        """Nothing to clean up."""

    async def shutdown(self) -> None:
        """Nothing to stop."""


class PassingScorer:
    """A scorer whose three checks always pass (3/3)."""

    id = "bench-3of3"

    def evaluate(self, scenario: Scenario, context: Any) -> ScorerResult:
        """Pass all three checkpoints."""
        details = tuple(
            ScorerCheckResult(id=f"cp_{i}", description=f"checkpoint {i}", passed=True)
            for i in (1, 2, 3)
        )
        return ScorerResult(success=True, passed=3, total=3, details=details)


def bench_plugin_manager() -> PluginManager:
    """Core's built-ins plus the built-in analyzers, registered as their entry point would be."""
    try:
        from profiler_builtin_analyzers import plugin as analyzers_plugin
    except ImportError as exc:
        raise ProfilerError(
            f"profiler_builtin_analyzers cannot be imported: {exc}"
        ) from exc
    # Entry points off: the checkout need not be pip-installed for its entry points to exist.
    return get_plugin_manager(
        entrypoints=False, plugins=[("builtin_analyzers", analyzers_plugin)]
    )


def _components(manager: PluginManager) -> tuple[list[Any], list[Any]]:
    registry = manager.registry
    collectors = [registry.create("collectors", cid) for cid in COLLECTOR_IDS]
    analyzers = [
        registry.create("analyzers", name) for name in registry.ids("analyzers")
    ]
    return collectors, analyzers


def run_suite(
    *,
    scenarios: int,
    repetitions: int,
    latency_s: float,
    concurrency: int,
    trace_events: int | None = None,
    analysis_workers: int | None = 0,
    watch_loop: bool = False,
) -> dict[str, Any]:
    """``run_profile_suite`` over 2 modes x ``scenarios`` x ``repetitions``; times the run only.

    ``trace_events``: every session exports a generated trace of that many events
    (``bench_analyzers``)
    instead of the parity trace; ``analysis_workers``: ``execution.analysis_workers``;
    ``watch_loop``: a
    task ticking every 5 ms beside the run measures how long the event loop was stalled at most.
    """
    import trio

    from profiler_core.runner import RunOptions, run_profile_suite

    logging.getLogger("agent_profiler").setLevel(logging.WARNING)  # log level "warn"
    result = from_json(
        _read("prompt-result.json"), PromptResult, source="prompt-result.json"
    )
    if trace_events is None:
        trace = from_json(
            _read("session-trace.json"), SessionTrace, source="session-trace.json"
        )
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_analyzers import generate_trace

        trace = generate_trace(trace_events)
    manager = bench_plugin_manager()
    collectors, analyzers = _components(manager)
    chosen = load_scenarios()[:scenarios]
    with tempfile.TemporaryDirectory(prefix="profiler-bench-") as tmp:
        ids = itertools.count(1)
        options = RunOptions(
            provider=ReplayProvider(result, trace, latency_s=latency_s, ids=ids),
            # As `profiler run` builds it: one provider per (model, mode), so modes
            # overlap (issue 18.1).
            provider_factory=lambda: ReplayProvider(
                result, trace, latency_s=latency_s, ids=ids
            ),
            scorer=PassingScorer(),
            scenarios=chosen,
            modes={"mode_a": ModeConfig(), "mode_b": ModeConfig()},
            collectors=collectors,
            analyzers=analyzers,
            repetitions=repetitions,
            warmup=False,
            session_export=True,
            concurrency=concurrency,
            analysis_workers=analysis_workers,
            results_dir=str(Path(tmp) / "results"),
            reports_dir=str(Path(tmp) / "reports"),
            plugin_manager=manager,
        )
        stalls: list[float] = []
        start, cpu_start = time.perf_counter(), time.process_time()
        suite = (
            trio.run(_watched, options, stalls)
            if watch_loop
            else trio.run(run_profile_suite, options)
        )
        elapsed_ms = (time.perf_counter() - start) * 1000
        # The process's CPU time over the same span: on a shared machine it moves much
        # less than the wall time.
        cpu_ms = (time.process_time() - cpu_start) * 1000
        # Checked by streaming the rows back: holding them all would make the process's peak RSS
        # (read by run_all.py) that of this check, not of the run.
        iterations = suite.counts.completed
        expected = 2 * len(chosen) * repetitions
        with open(suite.output_jsonl_path, "rb") as f:
            lines = sum(
                chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b"")
            )
        failed = [r.error for r in suite.rows.stream() if r.error or not r.success][:3]
        store = Path(tmp) / "reports" / suite.run_id / "sessions" / "traces.jsonl"
        trace_mb = (
            store.stat().st_size / iterations / 1e6
            if iterations and store.exists()
            else 0.0
        )
    if iterations != expected or lines != expected or failed:
        raise ProfilerError(
            f"suite run is not clean: {iterations} rows, {lines} JSONL lines, expected {expected}; "
            f"errors: {failed[:3]}"
        )
    return {
        "ms": elapsed_ms,
        "iterations": iterations,
        "ms_per_iter": elapsed_ms / iterations,
        "cpu_ms_per_iter": cpu_ms / iterations,
        "collectors": len(collectors),
        "analyzers": [a.name for a in analyzers],
        "trace_mb": round(trace_mb, 3),
        "analysis_workers": analysis_workers,
        **(_stall_figures(stalls) if watch_loop else {}),
    }


#: how often the loop watcher wakes
TICK_S = 0.005


async def _watched(options: Any, stalls: list[float]) -> Any:
    """``run_profile_suite(options)`` beside a task that records how late each of its 5
    ms ticks came."""
    import trio

    from profiler_core.runner import run_profile_suite

    async def tick() -> None:
        last = time.perf_counter()
        while True:
            await trio.sleep(TICK_S)
            now = time.perf_counter()
            stalls.append(now - last - TICK_S)
            last = now

    async with trio.open_nursery() as nursery:
        nursery.start_soon(tick)
        suite = await run_profile_suite(options)
        nursery.cancel_scope.cancel()
    return suite


def _stall_figures(stalls: list[float]) -> dict[str, float]:
    ordered = sorted(stalls) or [0.0]
    return {
        "loop_stall_ms_max": round(ordered[-1] * 1000, 2),
        "loop_stall_ms_p95": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
    }


def _stats_inputs() -> tuple[Any, Any, Any]:
    import numpy as np

    values = np.asarray(json.loads(_read("stats-values.json")), dtype=float)
    return values, values[:500], values[500:1000] + 3


def _time_once(func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return (time.perf_counter() - start) * 1000


def run_stats(name: str, quick: bool) -> dict[str, Any]:
    """One call of a statistics function on the parity values (10,000 resamples unless quick)."""
    # numpy loads it lazily (~25 ms): an import, not the work timed
    import numpy.random  # noqa: F401

    from profiler_core import stats

    values, a, b = _stats_inputs()
    n = 500 if quick else 10_000
    calls: dict[str, Callable[[], object]] = {
        "bootstrap_ci": lambda: stats.bootstrap_ci(values, resamples=n),
        "bootstrap_reduction_ci": lambda: stats.bootstrap_reduction_ci(
            a, b, resamples=n
        ),
        "permutation_test": lambda: stats.permutation_test(a, b, permutations=n),
        # defaults: 10,000 resamples and 10,000 permutations
        "compare_groups": lambda: stats.compare_groups(
            a, b, resamples=n, permutations=n
        ),
    }
    return {"ms": _time_once(calls[name]), "resamples": n}


def run_analyze(events: int) -> dict[str, Any]:
    """The five registered analyzers, one after another, on one generated trace."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_analyzers import generate_trace

    trace = generate_trace(events)
    _, analyzers = _components(bench_plugin_manager())
    scenario = load_scenarios()[0]

    def analyze_all() -> None:
        for analyzer in analyzers:
            analyzer.analyze(trace, scenario, "mode_a")

    return {
        "ms": _time_once(analyze_all),
        "events": len(trace.events),
        "analyzers": [a.name for a in analyzers],
    }


WORKLOADS = (
    "suite_overhead",
    "suite_latency",
    "suite_big_traces",
    "bootstrap_ci",
    "bootstrap_reduction_ci",
    "permutation_test",
    "compare_groups",
    "analyze",
)


def run_workload(
    name: str,
    *,
    quick: bool = False,
    concurrency: int = 1,
    repetitions: int | None = None,
    analysis_workers: int | None = 0,
) -> dict[str, Any]:
    """Run one workload once and return its figures (``ms`` is the headline)."""
    if name == "suite_overhead":
        # 2 modes x 10 scenarios x 100 repetitions = 2,000 iterations (1,000 repetitions: 20,000)
        reps = repetitions or (3 if quick else 100)
        return run_suite(
            scenarios=2 if quick else 10,
            repetitions=reps,
            latency_s=0.0,
            concurrency=1,
            analysis_workers=analysis_workers,
        )
    if name == "suite_big_traces":
        # Sessions of 100 ms whose traces are ~2 MB (10,000 events) at concurrency 4: 2
        # x 5 x 4 = 40 iterations
        # (quick: 2 x 2 x 2 of 1,000 events). What analysis and serialisation cost the
        # loop shows here.
        return run_suite(
            scenarios=2 if quick else 5,
            repetitions=2 if quick else 4,
            latency_s=0.1,
            concurrency=concurrency,
            trace_events=1_000 if quick else 10_000,
            analysis_workers=analysis_workers,
            watch_loop=True,
        )
    if name == "suite_latency":
        # quick: 2 x 2 x 2 with a 5 ms sleep, so the smoke test stays in seconds
        return run_suite(
            scenarios=2 if quick else 5,
            repetitions=2 if quick else 4,
            latency_s=0.005 if quick else 0.05,
            concurrency=concurrency,
            analysis_workers=analysis_workers,
        )
    if name in (
        "bootstrap_ci",
        "bootstrap_reduction_ci",
        "permutation_test",
        "compare_groups",
    ):
        return run_stats(name, quick)
    if name == "analyze":
        return run_analyze(2_000 if quick else 100_000)
    raise ProfilerError(
        f"unknown workload {name!r}; expected one of {', '.join(WORKLOADS)}"
    )


def _workers(text: str) -> int | None:
    return None if text == "auto" else int(text)


def main(argv: list[str] | None = None) -> int:
    """Run the workload named on the command line and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=WORKLOADS)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a tiny version of the workload (smoke test)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=1, help="suite_latency and suite_big_traces"
    )
    parser.add_argument(
        "--repetitions",
        type=int,
        default=None,
        help="suite_overhead only (default 100: 2,000 iterations)",
    )
    parser.add_argument(
        "--analysis-workers",
        type=_workers,
        default=0,
        help="suite_* workloads: execution.analysis_workers, a number or `auto` "
        "(default 0: inline)",
    )
    args = parser.parse_args(argv)
    try:
        figures = run_workload(
            args.workload,
            quick=args.quick,
            concurrency=args.concurrency,
            repetitions=args.repetitions,
            analysis_workers=args.analysis_workers,
        )
    except ProfilerError as exc:
        print(f"bench: {args.workload}: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
