"""Contract checks for plugin authors: run a component through the real runner and
assert its contract.

Each ``check_*`` builds the component from its factory and options (as the
registry would), checks it against its Protocol, runs it inside
``run_profile_suite`` with core's other components around it, and raises
:class:`ContractError` naming the component and the broken rule. The
components are watched by thin wrappers that check every value they return;
nothing of the runner is replaced.

    from profiler_core.testing import check_provider
    check_provider(MyProvider, api_url="http://127.0.0.1:8080")
"""

from __future__ import annotations

import collections
import functools
import inspect
import math
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import trio

from ..errors import UnknownModeError
from ..model import (
    FINDING_TAGS,
    TRACE_EVENT_TAGS,
    AnalysisResult,
    CreateSessionParams,
    CustomMetric,
    ModeConfig,
    ProfileSuiteResult,
    PromptResult,
    ProviderConfig,
    Scenario,
    ScorerCheckResult,
    ScorerResult,
    SessionHandle,
    SessionTrace,
    ToolCallEvent,
    TraceSummary,
)
from ..plugins.contracts import missing_methods, optional_method
from ..util.asyncs import await_me_maybe

__all__ = [
    "ContractError",
    "check_analyzer",
    "check_collector",
    "check_mode_resolver",
    "check_provider",
    "check_scorer",
    "check_trace",
]

#: The scenario a check runs when the caller gives none.
DEFAULT_SCENARIO = Scenario(
    id="contract-check",
    name="Contract check",
    prompt="List the files and say done.",
    timeout_ms=60_000,
)


class ContractError(AssertionError):
    """A component broke its contract; the message names the component and the rule."""


# -- providers ---------------------------------------------------------------------


def check_provider(
    factory: Callable[..., Any],
    /,
    *,
    scenarios: Sequence[Scenario] | None = None,
    modes: Mapping[str, ModeConfig] | None = None,
    models: Sequence[str] = ("default",),
    repetitions: int = 2,
    allow_errors: bool = False,
    workdir: str | Path | None = None,
    **options: Any,
) -> ProfileSuiteResult:
    """Run a session provider through the runner and assert its contract; return the run's result.

    Asserted: the Protocol's methods exist; ``create_session`` gives a
    ``SessionHandle``, ``prompt`` a ``PromptResult``,
    ``export_session`` a well-formed ``SessionTrace`` (:func:`check_trace`);
    every session is destroyed and every ``init`` is matched by a
    ``shutdown``; no row fails with a provider error (unless ``allow_errors``).
    Error paths: a session destroyed before any prompt, and a run whose
    scenarios time out after 1 ms, must leave no session behind.
    """
    provider = _build(factory, "providers", options)
    label = f"provider {provider.id!r}"
    spy = _ProviderSpy(provider, label)
    with _workdir(workdir) as root:
        result = _run(
            root / "run",
            provider=spy,
            scorer=_PassScorer(),
            scenarios=scenarios,
            modes=modes,
            models=models,
            repetitions=repetitions,
            collectors=_core_collectors(),
        )
        spy.assert_clean()
        if not allow_errors:
            _no_error(result, label, {"provider_error", "timeout"})
        cells = (
            len(models)
            * len(modes or ["default"])
            * len(scenarios or [DEFAULT_SCENARIO])
            * repetitions
        )
        _expect(
            len(result.rows) == cells,
            f"{label}: the run has {len(result.rows)} rows, expected one per cell",
        )

        # Error path 1: a session destroyed before any prompt (the runner does this on a timeout).
        async def destroy_unprompted() -> None:
            config = _provider_config(models[0], next(iter(modes or ["default"])))
            await spy.init(config)
            try:
                handle = await spy.create_session(
                    _session_params(models[0], config.mode)
                )
                await spy.destroy_session(handle)
            finally:
                await spy.shutdown()

        trio.run(destroy_unprompted)
        spy.assert_clean()
        # Error path 2: every prompt may time out; sessions are still destroyed.
        hurried = [
            attrs.evolve(s, timeout_ms=1, id=f"{s.id}")
            for s in (scenarios or [DEFAULT_SCENARIO])
        ]
        timed = _run(
            root / "timeout",
            provider=spy,
            scorer=_PassScorer(),
            scenarios=hurried,
            modes=modes,
            models=models[:1],
            repetitions=1,
        )
        spy.assert_clean()
        for row in timed.rows:
            _expect(
                row.error is None or row.error_code in ("timeout", "provider_error"),
                f"{label}: a timed-out cell failed with {row.error_code}: {row.error}",
            )
    return result


@attrs.define
class _Spy:
    """Forwards to a component (``inner``) and collects what breaks its contract."""

    inner: Any
    label: str
    problems: list[str] = attrs.Factory(list)

    def assert_clean(self) -> None:
        """Raise ContractError naming every problem seen so far."""
        if self.problems:
            raise ContractError(
                f"{self.label}: " + "; ".join(dict.fromkeys(self.problems))
            )


@attrs.define
class _ProviderSpy(_Spy):
    """Forwards to the provider and checks what it returns and that sessions are cleaned up."""

    #: session id -> sessions open under it (a replaying provider may reuse a recording's id)
    live: collections.Counter[str] = attrs.Factory(collections.Counter)
    open_inits: int = 0

    @property
    def id(self) -> str:
        """The provider's id."""
        return str(self.inner.id)

    def __getattr__(self, name: str) -> Any:
        # the optional members (init_scope, needs_process_env...) of the wrapped
        # provider show through
        if name.startswith("__") or name in (
            "inner",
            "label",
            "problems",
            "live",
            "open_inits",
        ):
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def init(self, config: ProviderConfig) -> None:
        """Start the provider (counted, to match shutdowns)."""
        await await_me_maybe(self.inner.init(config))
        self.open_inits += 1

    async def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """Open a session; it must be a SessionHandle."""
        handle = await await_me_maybe(self.inner.create_session(params))
        if not isinstance(handle, SessionHandle):
            self.problems.append(
                f"create_session returned {type(handle).__name__}, expected SessionHandle"
            )
            raise ContractError(self.problems[-1])
        self.live[handle.session_id] += 1
        return handle

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Prompt; a blocking provider runs in a thread, as the runner would run it."""
        prompt = self.inner.prompt
        if inspect.iscoroutinefunction(prompt):
            result = await prompt(handle, text, timeout_ms)
        else:
            call = functools.partial(prompt, handle, text, timeout_ms)
            result = await await_me_maybe(
                await trio.to_thread.run_sync(call, abandon_on_cancel=True)
            )
        if not isinstance(result, PromptResult):
            self.problems.append(
                f"prompt returned {type(result).__name__}, expected PromptResult"
            )
            raise ContractError(self.problems[-1])
        return result

    async def export_session(self, handle: SessionHandle) -> SessionTrace:
        """Export; the trace must be well formed."""
        trace = await await_me_maybe(self.inner.export_session(handle))
        try:
            check_trace(trace, where=f"{self.label}: export_session")
        except ContractError as exc:
            self.problems.append(str(exc).removeprefix(f"{self.label}: "))
            raise  # the runner records the cell as a provider error; assert_clean names the problem
        return trace

    async def destroy_session(self, handle: Any) -> None:
        """Destroy; must not raise, whatever state the session is in."""
        try:
            await await_me_maybe(self.inner.destroy_session(handle))
        except Exception as exc:  # noqa: BLE001 - reported as a contract problem
            self.problems.append(f"destroy_session raised {type(exc).__name__}: {exc}")
        session_id = getattr(handle, "session_id", handle)
        if self.live[session_id] > 0:
            self.live[session_id] -= 1

    async def shutdown(self) -> None:
        """Stop the provider."""
        await await_me_maybe(self.inner.shutdown())
        self.open_inits -= 1

    def assert_clean(self) -> None:
        """Raise ContractError for anything seen so far: wrong types, leaked sessions,
        unmatched init."""
        problems = list(self.problems)
        leaked = sorted(+self.live)
        if leaked:
            problems.append(f"sessions never destroyed: {', '.join(leaked)}")
        if self.open_inits != 0:
            problems.append(f"{self.open_inits} init(s) without shutdown")
        if problems:
            raise ContractError(f"{self.label}: " + "; ".join(dict.fromkeys(problems)))


def check_trace(trace: Any, *, where: str = "trace") -> SessionTrace:
    """Assert ``trace`` is a well-formed SessionTrace (types, turn numbers, summary
    totals, JSON round trip)."""
    if not isinstance(trace, SessionTrace):
        raise ContractError(
            f"{where} returned {type(trace).__name__}, expected SessionTrace"
        )
    problems = [*_trace_shape_problems(trace), *_summary_problems(trace)]
    if not problems:
        problems = _round_trip_problems(trace, where)
    if problems:
        raise ContractError(f"{where}: the trace " + "; ".join(problems))
    return trace


def _trace_shape_problems(trace: SessionTrace) -> list[str]:
    """An empty session id, events of unknown types, turn numbers out of order."""
    problems = []
    if not isinstance(trace.session_id, str) or not trace.session_id:
        problems.append("session_id is empty")
    strange = sorted(
        {type(e).__name__ for e in trace.events if type(e) not in TRACE_EVENT_TAGS}
    )
    if strange:
        problems.append(f"events of unknown types {', '.join(strange)}")
    numbers = [turn.number for turn in trace.turns]
    if any(n < 1 for n in numbers) or numbers != sorted(set(numbers)):
        problems.append(f"turn numbers must count up from 1, got {numbers}")
    return problems


def _summary_problems(trace: SessionTrace) -> list[str]:
    """A summary whose totals disagree with the turns and tool calls."""
    summary = trace.summary
    if not isinstance(summary, TraceSummary):
        return [f"summary is {type(summary).__name__}, expected TraceSummary"]
    problems = []
    if summary.total_turns != len(trace.turns):
        problems.append(
            f"summary.total_turns is {summary.total_turns} but there are {len(trace.turns)} turns"
        )
    calls = sum(1 for e in trace.events if isinstance(e, ToolCallEvent))
    if summary.total_tool_calls != calls:
        problems.append(
            f"summary.total_tool_calls is {summary.total_tool_calls} but there "
            f"are {calls} tool_call events"
        )
    return problems


def _round_trip_problems(trace: SessionTrace, where: str) -> list[str]:
    """Whether the trace comes back equal from JSON."""
    from ..storage.serde import from_json, to_json

    try:
        again = from_json(to_json(trace), SessionTrace, source=where)
    except Exception as exc:  # noqa: BLE001 - any failure is the finding
        return [f"does not survive a JSON round trip: {exc}"]
    if again != trace:
        return ["changes in a JSON round trip (use JSON values in events)"]
    return []


# -- scorers -----------------------------------------------------------------------


def check_scorer(
    factory: Callable[..., Any],
    /,
    *,
    scenarios: Sequence[Scenario] | None = None,
    provider: Any = None,
    allow_errors: bool = False,
    workdir: str | Path | None = None,
    **options: Any,
) -> ProfileSuiteResult:
    """Run a scorer through the runner and assert its contract; return the run's result.

    Asserted: ``evaluate`` exists and returns a ``ScorerResult`` (``passed <=
    total``, details ``ScorerCheckResult`` with unique ids) that becomes the
    row's verdict; ``check_scenario``, if present, accepts the given
    scenarios. Error path: an empty answer with no tool calls is scored, not
    raised on. The agent is the ``simulated`` provider unless ``provider`` is given.
    """
    scorer = _build(factory, "scorers", options)
    label = f"scorer {scorer.id!r}"
    spy = _ScorerSpy(scorer, label)
    for scenario in scenarios or [DEFAULT_SCENARIO]:
        check = optional_method(scorer, "check_scenario")
        if check is not None:
            check(scenario)
    with _workdir(workdir) as root:
        result = _run(
            root / "run",
            provider=provider or _simulated(),
            scorer=spy,
            scenarios=scenarios,
            collectors=_core_collectors(),
        )
        spy.assert_clean()
        if not allow_errors:
            _no_error(result, label, {"scorer_error"})
        for row in result.rows:
            if row.error is None:
                verdict = spy.verdicts[(row.scenario_id, row.iteration)]
                _expect(
                    row.success == verdict.success,
                    f"{label}: row success {row.success} differs from the ScorerResult",
                )
        empty = _run(
            root / "empty",
            provider=_empty_provider(),
            scorer=spy,
            scenarios=scenarios,
            repetitions=1,
        )
        spy.assert_clean()
        for row in empty.rows:
            _expect(
                row.error_code != "scorer_error" or allow_errors,
                f"{label}: on an empty answer: {row.error}",
            )
    return result


@attrs.define
class _ScorerSpy(_Spy):
    verdicts: dict[tuple[str, int], ScorerResult] = attrs.Factory(dict)

    @property
    def id(self) -> str:
        return str(self.inner.id)

    async def evaluate(self, scenario: Scenario, context: Any) -> Any:
        try:
            result = await await_me_maybe(self.inner.evaluate(scenario, context))
        except Exception as exc:
            self.problems.append(
                f"evaluate raised {type(exc).__name__}: {exc} (return "
                "ScorerResult(error=...) for a failure worth a retry)"
            )
            raise
        if not isinstance(result, ScorerResult):
            self.problems.append(
                f"evaluate returned {type(result).__name__}, expected ScorerResult"
            )
            return result
        if not isinstance(result.success, bool):
            self.problems.append(
                f"ScorerResult.success is {type(result.success).__name__}, expected bool"
            )
        if result.passed > result.total:
            self.problems.append(
                f"ScorerResult.passed ({result.passed}) > total ({result.total})"
            )
        ids = [d.id for d in result.details if isinstance(d, ScorerCheckResult)]
        if len(ids) != len(result.details):
            self.problems.append("ScorerResult.details must all be ScorerCheckResult")
        if len(set(ids)) != len(ids):
            self.problems.append(
                "ScorerResult.details has duplicate ids "
                f"{sorted(i for i in ids if ids.count(i) > 1)}"
            )
        self.verdicts[(scenario.id, context.iteration)] = result
        return result


# -- collectors --------------------------------------------------------------------


def check_collector(
    factory: Callable[..., Any],
    /,
    *,
    scenarios: Sequence[Scenario] | None = None,
    provider: Any = None,
    workdir: str | Path | None = None,
    **options: Any,
) -> ProfileSuiteResult:
    """Run a collector through the runner and assert its contract; return the run's result.

    Asserted: ``collect`` returns ``CustomMetric``s with unique names and
    finite numbers (or strings) as values, and their values reach the rows. Error paths: no
    trace (session export off), and an empty answer with no tokens or tool
    calls, are measured without raising.
    """
    collector = _build(factory, "collectors", options)
    label = f"collector {collector.id!r}"
    spy = _CollectorSpy(collector, label)
    with _workdir(workdir) as root:
        result = _run(
            root / "run",
            provider=provider or _simulated(),
            scorer=_PassScorer(),
            scenarios=scenarios,
            collectors=[spy],
        )
        spy.assert_clean()
        _no_error(result, label, {"collector_error"})
        # What collect returned, call by call, is what the rows carry (as extensions).
        names = {name for call in spy.emitted for name in call}
        in_rows = sorted(
            sorted((k, v) for k, v in row.extensions.items() if k in names)
            for row in result.rows
        )
        _expect(
            in_rows == sorted(sorted(call.items()) for call in spy.emitted),
            f"{label}: its metrics did not reach the rows",
        )
        for folder, provider_, export in (
            ("no-trace", provider or _simulated(), False),
            ("empty", _empty_provider(), True),
        ):
            other = _run(
                root / folder,
                provider=provider_,
                scorer=_PassScorer(),
                scenarios=scenarios,
                collectors=[spy],
                repetitions=1,
                session_export=export,
            )
            spy.assert_clean()
            _no_error(other, f"{label} ({folder})", {"collector_error"})
    return result


@attrs.define
class _CollectorSpy(_Spy):
    emitted: list[dict[str, Any]] = attrs.Factory(list)

    @property
    def id(self) -> str:
        return str(self.inner.id)

    async def collect(
        self, result: Any, scenario: Scenario, mode: str, trace: Any, **kwargs: Any
    ) -> Any:
        from ..util.signature import accepts_keyword

        extra = {
            k: v for k, v in kwargs.items() if accepts_keyword(self.inner.collect, k)
        }
        try:
            metrics = await await_me_maybe(
                self.inner.collect(result, scenario, mode, trace, **extra)
            )
        except Exception as exc:
            where = "with no trace" if trace is None else "on a trace"
            self.problems.append(f"collect raised {type(exc).__name__} {where}: {exc}")
            raise
        if isinstance(metrics, str | bytes | Mapping) or not isinstance(
            metrics, Sequence | Iterator | tuple | list
        ):
            self.problems.append(
                f"collect returned {type(metrics).__name__}, expected a list of CustomMetric"
            )
            return metrics
        metrics = list(metrics)
        self.problems.extend(_metric_problems(metrics))
        self.emitted.append(
            {m.name: m.value for m in metrics if isinstance(m, CustomMetric)}
        )
        return metrics


def _metric_problems(metrics: list[Any]) -> list[str]:
    """What is wrong with a collector's metrics: not CustomMetric, not a finite number or a
    string, names twice."""
    problems = []
    names = []
    for metric in metrics:
        if not isinstance(metric, CustomMetric):
            problems.append(
                f"collect returned a {type(metric).__name__}, expected CustomMetric"
            )
            continue
        names.append(metric.name)
        if not _metric_value_ok(metric.value):
            problems.append(
                f"metric {metric.name!r} has value {metric.value!r}, expected a "
                "finite number or a string"
            )
    if len(set(names)) != len(names):
        problems.append(
            "collect returned duplicate metric names "
            f"{sorted(n for n in names if names.count(n) > 1)}"
        )
    return problems


def _metric_value_ok(value: Any) -> bool:
    """A finite number, or a string (a label such as cost_source)."""
    if isinstance(value, str):
        return True
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


# -- analyzers ---------------------------------------------------------------------


def check_analyzer(
    factory: Callable[..., Any],
    /,
    *,
    scenarios: Sequence[Scenario] | None = None,
    provider: Any = None,
    workdir: str | Path | None = None,
    **options: Any,
) -> ProfileSuiteResult:
    """Run an analyzer through the runner and assert its contract; return the run's result.

    Asserted: ``analyze`` returns an ``AnalysisResult`` whose ``analyzer`` is
    the analyzer's ``name``, whose findings are finding types under string
    keys, and which survives JSON; the results reach the run's analysis
    bundles. Error path: a trace with no events at all is analysed without raising.
    """
    analyzer = _build(factory, "analyzers", options)
    label = f"analyzer {analyzer.name!r}"
    spy = _AnalyzerSpy(analyzer, label)
    with _workdir(workdir) as root:
        result = _run(
            root / "run",
            provider=provider or _simulated(),
            scorer=_PassScorer(),
            scenarios=scenarios,
            analyzers=[spy],
        )
        spy.assert_clean()
        _no_error(result, label, {"analyzer_error"})
        _expect(
            bool(result.analysis_results)
            and all(analyzer.name in b.results for b in result.analysis_results),
            f"{label}: its results did not reach the analysis bundles",
        )
        empty = _run(
            root / "empty",
            provider=_empty_provider(empty_trace=True),
            scorer=_PassScorer(),
            scenarios=scenarios,
            analyzers=[spy],
            repetitions=1,
        )
        spy.assert_clean()
        _no_error(empty, f"{label} (empty trace)", {"analyzer_error"})
    return result


@attrs.define
class _AnalyzerSpy(_Spy):
    @property
    def name(self) -> str:
        return str(self.inner.name)

    async def analyze(self, trace: SessionTrace, scenario: Scenario, mode: str) -> Any:
        from ..storage.serde import from_json, to_json

        try:
            result = await await_me_maybe(self.inner.analyze(trace, scenario, mode))
        except Exception as exc:
            self.problems.append(
                f"analyze raised {type(exc).__name__} on a trace of "
                f"{len(trace.events)} events: {exc}"
            )
            raise
        if not isinstance(result, AnalysisResult):
            self.problems.append(
                f"analyze returned {type(result).__name__}, expected AnalysisResult"
            )
            return result
        if result.analyzer != self.name:
            self.problems.append(
                f"AnalysisResult.analyzer is {result.analyzer!r}, expected its name {self.name!r}"
            )
        for key, finding in result.findings.items():
            if not isinstance(key, str) or type(finding) not in FINDING_TAGS:
                self.problems.append(
                    f"finding {key!r} is {type(finding).__name__}, expected one "
                    "of the finding types"
                )
        try:
            if from_json(to_json(result), AnalysisResult) != result:
                self.problems.append("the AnalysisResult changes in a JSON round trip")
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            self.problems.append(f"the AnalysisResult does not survive JSON: {exc}")
        return result


# -- mode resolvers ----------------------------------------------------------------


def check_mode_resolver(
    factory: Callable[..., Any],
    /,
    *,
    modes: Sequence[str],
    unknown_mode: str = "no-such-mode-for-the-contract-check",
    workdir: str | Path | None = None,
    **options: Any,
) -> ProfileSuiteResult:
    """Run a mode resolver through the runner and assert its contract; return the run's result.

    Asserted: every mode in ``modes`` resolves to a ``ModeConfig`` and the run
    has rows for each. Error path: ``resolve(unknown_mode)`` raises
    ``UnknownModeError`` (not ``KeyError``), and a run naming that mode stops
    before any session starts.
    """
    from .fakes import FakeProvider

    resolver = _build(factory, "mode_resolvers", options)
    label = f"mode resolver {resolver.id!r}"
    _expect(bool(modes), "check_mode_resolver needs modes= (the modes it knows)")
    with _workdir(workdir) as root:

        async def resolve_each() -> None:
            for mode in modes:
                config = await await_me_maybe(resolver.resolve(mode))
                _expect(
                    isinstance(config, ModeConfig),
                    f"{label}: resolve({mode!r}) returned "
                    f"{type(config).__name__}, expected ModeConfig",
                )
            try:
                await await_me_maybe(resolver.resolve(unknown_mode))
            except UnknownModeError:
                pass
            except Exception as exc:
                raise ContractError(
                    f"{label}: resolve of an unknown mode raised "
                    f"{type(exc).__name__}, expected UnknownModeError"
                ) from exc
            else:
                raise ContractError(
                    f"{label}: resolve of an unknown mode {unknown_mode!r} "
                    "returned instead of raising UnknownModeError"
                )

        trio.run(resolve_each)
        provider = FakeProvider()
        result = _run(
            root / "run",
            provider=provider,
            scorer=_PassScorer(),
            mode_resolver=resolver,
            mode_names=list(modes),
            repetitions=1,
        )
        _expect(
            sorted({r.mode for r in result.rows}) == sorted(modes),
            f"{label}: the run did not cover every mode",
        )
        stopped = FakeProvider()
        try:
            _run(
                root / "unknown",
                provider=stopped,
                scorer=_PassScorer(),
                mode_resolver=resolver,
                mode_names=[*modes, unknown_mode],
                repetitions=1,
            )
        except UnknownModeError:
            pass
        else:
            raise ContractError(
                f"{label}: a run naming an unknown mode was not stopped"
            )
        _expect(
            stopped.calls == [],
            f"{label}: sessions started before the unknown mode was reported",
        )
    return result


# -- shared ------------------------------------------------------------------------


def _build(factory: Callable[..., Any], contract: str, options: dict[str, Any]) -> Any:
    from ..plugins.contracts import CONTRACTS

    id_attr = CONTRACTS[contract].id_attr
    if isinstance(factory, type):
        missing = missing_methods(factory, contract)
        if missing:
            raise ContractError(
                f"{CONTRACTS[contract].singular} class {factory.__qualname__}: "
                f"missing {', '.join(missing)}"
            )
    component = factory(**options)
    missing = missing_methods(component, contract)
    identity = getattr(component, id_attr, None)
    if missing or not isinstance(identity, str) or not identity:
        what = f"missing {', '.join(missing)}" if missing else f"no string `{id_attr}`"
        raise ContractError(
            f"{CONTRACTS[contract].singular} built by "
            f"{getattr(factory, '__qualname__', factory)!r}: {what}"
        )
    return component


def _run(
    folder: Path,
    *,
    scenarios: Sequence[Scenario] | None = None,
    modes: Mapping[str, ModeConfig] | None = None,
    mode_resolver: Any = None,
    mode_names: Sequence[str] = (),
    models: Sequence[str] = ("default",),
    repetitions: int = 2,
    session_export: bool = True,
    **components: Any,
) -> ProfileSuiteResult:
    from ..plugins.manager import get_plugin_manager
    from ..runner import RunOptions, run_profile_suite

    if mode_resolver is None and modes is None:
        modes = {"default": ModeConfig()}
    options = RunOptions(
        scenarios=list(scenarios or [DEFAULT_SCENARIO]),
        modes=modes,
        mode_resolver=mode_resolver,
        mode_names=mode_names,
        models=models,
        repetitions=repetitions,
        warmup=False,
        session_export=session_export,
        results_dir=str(folder / "results"),
        reports_dir=str(folder / "reports"),
        plugin_manager=get_plugin_manager(entrypoints=False),
        destroy_timeout_s=10.0,
        **components,
    )
    return trio.run(run_profile_suite, options)


def _no_error(result: ProfileSuiteResult, label: str, codes: set[str]) -> None:
    bad = [r for r in result.rows if r.error is not None and r.error_code in codes]
    if bad:
        row = bad[0]
        raise ContractError(
            f"{label}: {len(bad)} cell(s) failed ({row.error_code}), e.g. "
            f"{row.scenario_id}#{row.iteration}: {row.error}"
        )


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ContractError(message)


class _PassScorer:
    id = "contract-pass"

    def evaluate(self, scenario: Scenario, context: Any) -> ScorerResult:
        return ScorerResult(success=True, passed=1, total=1)


def _core_collectors() -> list[Any]:
    from ..metrics.collectors import (
        CostCollector,
        LatencyCollector,
        TokenCollector,
        ToolCallCollector,
    )

    return [TokenCollector(), LatencyCollector(), CostCollector(), ToolCallCollector()]


def _simulated() -> Any:
    from ..providers.simulated import SimulatedProvider

    return SimulatedProvider(seed=11, tool_error_rate=0.3)


def _empty_provider(*, empty_trace: bool = False) -> Any:
    from ..model import TokenBreakdown
    from .fakes import FakeProvider

    class EmptyProvider(FakeProvider):
        def export_session(self, handle: SessionHandle) -> SessionTrace:
            if not empty_trace:
                return super().export_session(handle)
            summary = TraceSummary(
                total_turns=0,
                total_tool_calls=0,
                total_tokens=TokenBreakdown(),
                total_duration=0,
            )
            return SessionTrace(
                session_id=handle.session_id, events=(), turns=(), summary=summary
            )

    return EmptyProvider(text="", tokens=TokenBreakdown(), tool_calls=())


def _provider_config(model: str, mode: str) -> Any:
    from ..model import PermissionConfig, ProviderConfig

    return ProviderConfig(
        port=0,
        model=model,
        mode=mode,
        permissions=PermissionConfig(auto_approve=True),
        environment={},
        options={},
    )


def _session_params(model: str, mode: str) -> Any:
    from ..model import CreateSessionParams

    return CreateSessionParams(
        system_instructions="",
        scenario_id=DEFAULT_SCENARIO.id,
        iteration=0,
        mode=mode,
        model=model,
    )


@contextmanager
def _workdir(workdir: str | Path | None) -> Iterator[Path]:
    if workdir is not None:
        Path(workdir).mkdir(parents=True, exist_ok=True)
        yield Path(workdir)
        return
    with tempfile.TemporaryDirectory(prefix="profiler-contract-") as tmp:
        yield Path(tmp)
