"""Analyzers and trace serialisation in worker processes (``execution.analysis_workers``).

With ``analysis_workers: 0`` (the default) a cell's analyzers run inside the
runner's trio loop and its trace is redacted and serialised there too: a
CPU-heavy analyzer or a trace of several MB stalls every other session in
flight meanwhile. With N > 0 the run starts N worker processes (the ``spawn``
context: the runner has threads, so no ``fork``) once; each cell's trace goes
to one of them, which runs the analyzers and returns their results together
with the trace's redacted store line (or file text). The cell awaits that
without blocking the loop; the driver then writes trace, row and analysis in
the same order as inline, so resume and crash guarantees do not change.

A worker builds the profile's analyzers once, from the driver's loaded profile
(sent pickled: the file is read once per command) and the installed plugins
(as a Ray worker does); a run without a profile (a
Python caller's ``RunOptions``) sends pickled analyzer objects instead, and
analyzers that neither build nor pickle run inline (one log line says why).
"""

from __future__ import annotations

import inspect
import logging
import os
import pickle
import signal
import threading
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import attrs
import trio

from ..errors import ConfigError
from ..model import AnalysisResult, Scenario, SessionTrace
from ..model.record import Record
from ..storage.store import trace_file_text
from ..storage.tracestore import TraceRecord, record_json
from ..util.redact import Redactor
from .outcome import IterationError, analyzer_failure

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import Future, ProcessPoolExecutor

log = logging.getLogger("agent_profiler")

__all__ = ["AnalysisPool", "CellAnalysis", "CellJob", "analysis_pool", "worker_count"]

#: ``analysis_workers: auto`` starts one worker per core, but never more than this
AUTO_CAP = 8
#: seconds the workers get to finish at the end of a run, before SIGTERM and then SIGKILL
GRACE_S = 2.0


def worker_count(
    setting: int | None, concurrency: int | None, max_concurrency: int
) -> int:
    """How many workers ``setting`` means (None: ``auto``); never more than cells can be
    in flight at once."""
    wanted = max(1, min(usable_cores(), AUTO_CAP)) if setting is None else setting
    return min(wanted, concurrency if concurrency is not None else max_concurrency)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, as a container's cpuset sets
    it), else ``os.cpu_count()``."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


@attrs.frozen(kw_only=True, repr=False, eq=False)
class WorkerSetup(Record):
    """What every worker starts with (pickled once per worker process)."""

    #: the profile the analyzers are built from; None: ``analyzers`` holds them pickled
    profile_path: str | None
    overrides: dict[str, Any]
    analyzers: bytes | None
    #: the driver's loaded profile, pickled; None: the worker loads ``profile_path`` itself
    profile: bytes | None = None
    #: the run's redactor, with the secrets of the driver's environment and of every mode
    redactor: Redactor
    parent_pid: int


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CellJob(Record):
    """One cell attempt's trace, sent to a worker."""

    trace: SessionTrace
    scenario: Scenario
    mode: str
    model: str
    iteration: int
    analyze: bool
    #: the run's ``trace_format`` when this trace will be written; None: not written
    #: (warm-up, no export)
    trace_format: str | None
    multi_model: bool


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CellAnalysis(Record):
    """What a worker returns: the analyzer results, the first analyzer failure, the
    trace as it is written."""

    results: dict[str, AnalysisResult]
    error: str | None = None
    #: the redacted store line (``jsonl``) or file text (``files``); None: the driver serialises it
    trace_text: str | None = None


# -- the worker side --------------------------------------------------------------------------

_SETUP: list[WorkerSetup] = []
_ANALYZERS: list[list[Any]] = []


def _start_worker(setup: WorkerSetup) -> None:
    """Runs first in each worker: keep the setup, ignore Ctrl-C, and end when the driver is gone."""
    _SETUP.append(setup)
    # Ctrl-C reaches the whole process group; the driver handles it and ends us by PID.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_exit_when_orphaned,
        args=(setup.parent_pid,),
        name="profiler-orphan-watch",
        daemon=True,
    ).start()


def _exit_when_orphaned(parent_pid: int) -> None:
    # A driver killed outright (SIGKILL, a second Ctrl-C's os._exit) cannot end us: we
    # notice instead.
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    os._exit(1)


def _analyzers() -> list[Any]:
    """This worker's analyzers, built (or unpickled) on first use."""
    if not _ANALYZERS:
        setup = _SETUP[0]
        if setup.analyzers is not None:
            _ANALYZERS.append(pickle.loads(setup.analyzers))
        else:
            from ..config.loader import load_profile
            from ..plugins.manager import get_plugin_manager
            from .build import build_analyzers

            assert setup.profile_path is not None
            manager = get_plugin_manager()
            config = (
                pickle.loads(setup.profile)
                if setup.profile is not None
                else load_profile(
                    setup.profile_path, setup.overrides, registry=manager.registry
                )
            )
            analyzers, problems = build_analyzers(config, manager.registry)
            if problems:
                raise ConfigError("; ".join(problems))
            _ANALYZERS.append(analyzers)
    return _ANALYZERS[0]


def worker_ready() -> tuple[int, list[str]]:
    """This worker's PID and the names of its analyzers (building them now)."""
    return os.getpid(), [analyzer.name for analyzer in _analyzers()]


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def analyze_cell(job: CellJob) -> CellAnalysis:
    """Run the analyzers on one trace (the first failure stops them, as inline) and
    serialise the trace."""
    results: dict[str, AnalysisResult] = {}
    error = None
    if job.analyze:
        for analyzer in _analyzers():
            try:
                result = analyzer.analyze(job.trace, job.scenario, job.mode)
                if inspect.isawaitable(
                    result
                ):  # an async analyzer, as ``await_me_maybe`` allows inline
                    result = trio.run(_awaited, result)
            except Exception as exc:  # noqa: BLE001 - reported as the inline runner reports it
                error = analyzer_failure(analyzer, exc)
                break
            results[analyzer.name] = result
    return CellAnalysis(results=results, error=error, trace_text=_trace_text(job))


def _trace_text(job: CellJob) -> str | None:
    if job.trace_format is None:
        return None
    redact = _SETUP[0].redactor
    try:
        if job.trace_format == "files":
            return trace_file_text(job.trace, redact)
        record = TraceRecord(
            scenario_id=job.scenario.id,
            mode=job.mode,
            model=job.model,
            iteration=job.iteration,
            trace=job.trace,
            multi_model=job.multi_model,
        )
        return redact(record_json(record))
    # the driver serialises it again and reports the problem as inline
    except Exception:  # noqa: BLE001
        return None


# -- the driver side --------------------------------------------------------------------------


async def _result(future: Future) -> Any:
    """The future's result, awaited from trio: its done-callback wakes this task (no
    thread per call)."""
    token = trio.lowlevel.current_trio_token()
    done = trio.Event()

    def wake(_: Future) -> None:
        try:
            token.run_sync_soon(done.set)
        except trio.RunFinishedError:
            pass  # the run was cancelled and ended before the worker did

    future.add_done_callback(wake)
    try:
        await done.wait()
    finally:
        if not future.done():
            future.cancel()  # cancelled here: a job not yet handed to a worker never starts
    return future.result()


class AnalysisPool:
    """The run's analysis workers; a pool broken by a dying worker is replaced and the
    run goes on."""

    def __init__(self, workers: int, setup: WorkerSetup) -> None:
        self.workers = workers
        self.setup = setup
        self._executor = self._new_executor()

    def _new_executor(self) -> ProcessPoolExecutor:
        # The process machinery is imported here: a run without analysis workers never needs it.
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(self.setup,),
        )

    async def start(self) -> list[str]:
        """Start every worker and have it build its analyzers; their names (a worker
        that cannot raises)."""
        futures = [self._executor.submit(worker_ready) for _ in range(self.workers)]
        answers = [await _result(future) for future in futures]
        return answers[0][1]

    async def run(self, job: CellJob) -> CellAnalysis:
        """Analyse and serialise one trace in a worker; a failure is an
        ``IterationError`` (retry policy applies)."""
        from concurrent.futures.process import BrokenProcessPool  # loaded with the pool

        executor = self._executor
        try:
            return await _result(executor.submit(analyze_cell, job))
        except BrokenProcessPool as exc:
            await self._replace(executor)
            raise IterationError(
                f"analysis worker died: {exc}", code="executor_error"
            ) from None
        # a trace or result that does not pickle, a worker that cannot build its
        # analyzers
        except Exception as exc:
            raise IterationError(
                f"analysis worker failed: {type(exc).__name__}: {exc}",
                code="analyzer_error",
            ) from exc

    async def _replace(self, broken: ProcessPoolExecutor) -> None:
        if self._executor is not broken:
            return  # another cell of the same broken pool replaced it already
        log.warning("an analysis worker died; starting %d new worker(s)", self.workers)
        self._executor = self._new_executor()
        await trio.to_thread.run_sync(shut_down, broken)

    def close(self) -> None:
        """End every worker (blocks up to a few seconds; call it from a thread)."""
        shut_down(self._executor)


def shut_down(executor: ProcessPoolExecutor, grace_s: float = GRACE_S) -> None:
    """Stop ``executor``'s workers: let them finish, then SIGTERM, then SIGKILL each by
    its PID, and reap them."""
    # The pool's own process table is private, but nothing else names the PIDs it started.
    processes = list((getattr(executor, "_processes", None) or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        running = _wait_exited(processes, grace_s)
        if not running:
            break
        for process in running:
            log.warning(
                "analysis worker %d did not exit; sending %s",
                process.pid,
                signal.Signals(sig).name,
            )
            try:
                os.kill(process.pid, sig)
            except ProcessLookupError:
                pass
    _wait_exited(processes, grace_s)
    if manager is not None:
        manager.join(grace_s)  # it reaps the workers
    for process in processes:
        process.join(0.1)  # reap any the manager thread did not


def _wait_exited(processes: Sequence[Any], timeout_s: float) -> list[Any]:
    """Wait until every process has exited or ``timeout_s`` passed; those still running."""
    from multiprocessing.connection import wait as wait_for_exit

    deadline = time.monotonic() + timeout_s
    running = list(processes)
    while running:
        # A sentinel becomes ready when its process ends, whoever reaps it: no race with
        # the manager thread.
        ready = set(
            wait_for_exit(
                [p.sentinel for p in running], max(0.0, deadline - time.monotonic())
            )
        )
        running = [p for p in running if p.sentinel not in ready]
        if time.monotonic() >= deadline:
            break
    return running


@asynccontextmanager
async def analysis_pool(
    workers: int,
    *,
    profile_path: str | None,
    overrides: dict[str, Any],
    analyzers: Sequence[Any],
    redactor: Redactor,
    profile: Any = None,
) -> AsyncIterator[AnalysisPool | None]:
    """The run's started pool of ``workers``, ended on exit; None means analysis inline.

    None when ``workers`` is 0, or when the analyzers can run in no worker (one log line says why).
    """
    if workers < 1:
        yield None
        return
    pool = await _start_pool(
        workers, profile_path, overrides, analyzers, redactor, profile
    )
    try:
        yield pool
    finally:
        if pool is not None:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(pool.close)


def _pickled(profile: Any) -> bytes | None:
    """The driver's loaded profile for the workers; None (they load the file) when it
    will not pickle."""
    if profile is None:
        return None
    try:
        return pickle.dumps(profile)
    except Exception:  # noqa: BLE001 - any object may refuse to pickle; the file is still there
        return None


async def _start_pool(
    workers: int,
    profile_path: str | None,
    overrides: dict[str, Any],
    analyzers: Sequence[Any],
    redactor: Redactor,
    profile: Any = None,
) -> AnalysisPool | None:
    names = [analyzer.name for analyzer in analyzers]
    setups: list[tuple[str, WorkerSetup]] = []
    problems: list[str] = []
    common: dict[str, Any] = {
        "overrides": dict(overrides),
        "redactor": redactor,
        "parent_pid": os.getpid(),
    }
    if profile_path:
        setups.append(
            (
                "built from the profile",
                WorkerSetup(
                    profile_path=os.path.abspath(profile_path),
                    analyzers=None,
                    profile=_pickled(profile),
                    **common,
                ),
            )
        )
    try:
        pickled = pickle.dumps(list(analyzers))
    except Exception as exc:  # noqa: BLE001 - any object may refuse to pickle, in any way
        problems.append(f"the analyzers do not pickle ({type(exc).__name__}: {exc})")
    else:
        setups.append(
            ("pickled", WorkerSetup(profile_path=None, analyzers=pickled, **common))
        )
    for how, setup in setups:
        pool = AnalysisPool(workers, setup)
        found: list[str] | None = None
        try:
            found = await pool.start()
        # a worker that cannot build or unpickle them: try the next way
        except Exception as exc:  # noqa: BLE001
            problems.append(f"analyzers {how}: {type(exc).__name__}: {exc}")
        except BaseException:  # cancelled (Ctrl-C) while starting: end what started
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(pool.close)
            raise
        if found == names:
            log.info("analysis in %d worker process(es), analyzers %s", workers, how)
            return pool
        if found is not None:
            problems.append(f"analyzers {how} are {found}, not the run's {names}")
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(pool.close)
    log.warning(
        "execution.analysis_workers: analyzers run inline: %s", "; ".join(problems)
    )
    return None
