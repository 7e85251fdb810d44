"""Hook specifications: every extension point of agent-profiler.

Plugins implement these with ``@profiler_core.hookimpl``. An implementation may
accept any subset of a hook's arguments (pluggy passes them by name), so new
arguments can be added without breaking old plugins. Any implementation may be
``async def`` or return an awaitable: the runner awaits it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .markers import hookspec

if TYPE_CHECKING:  # pragma: no cover
    import click

    from ..model import (
        AfterScenarioContext,
        BeforeScenarioContext,
        ProfileRow,
        ProfileSuiteResult,
        ProgressEvent,
        RunContext,
        Scenario,
    )

# -------------------------------------------------------------------------
# Registration hooks: each returns a list of component factories, or calls
# ``register(factory, id=...)`` (``llm``'s idiom) for factories without an id
# attribute. The manager calls them one plugin at a time and checks each
# component against its protocol in ``profiler_core.plugins.contracts``.
# -------------------------------------------------------------------------

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Iterable, Mapping

    from ..model.report import ReportSection

    #: ``register(factory, id=None)``: add one factory; ``id`` for a factory without an
    #: id attribute, or
    #: for a factory given as ``"package.module:attribute"`` (imported when the
    #: component is first used)
    Register = Callable[..., None]


@hookspec
def profiler_register_providers(register: Register) -> list[Any] | None:
    """Register session providers (the agents that can be profiled).

    Called once, when the plugin manager builds its component registry.

    :return: a list of factories: classes, or callables taking the provider's
        ``options`` from the profile as keyword arguments. Each built object has
        an ``id`` and the methods of :class:`profiler_core.plugins.contracts.SessionProvider`.
        The lists of all plugins are merged; two providers with one id is an error
        naming both plugins. A class missing one of the protocol's methods is
        refused (``list-plugins`` shows it on the plugin's row).
    :param register: ``register(factory, id="my-agent")`` adds a factory that has
        no ``id`` attribute (a function), so the id is known without building it;
        ``register("package.module:Class", id="my-agent")`` names the factory, which
        is then imported (and checked) only when the component is first used.
    """


@hookspec
def profiler_register_scorers(register: Register) -> list[Any] | None:
    """Register scorers, which decide whether the agent did its task.

    Called once, when the component registry is built.

    :return: a list of factories building objects with an ``id`` and
        ``evaluate(scenario, context) -> ScorerResult``. Merged across plugins;
        ids must be unique.
    :param register: ``register(factory, id=...)`` for a factory without an id attribute.
    """


@hookspec
def profiler_register_collectors(register: Register) -> list[Any] | None:
    """Register collectors, which turn a prompt result into custom metrics.

    Called once, when the component registry is built.

    :return: a list of factories building objects with an ``id`` and
        ``collect(result, scenario, mode, trace) -> list[CustomMetric]``.
        Merged across plugins; ids must be unique.
    :param register: ``register(factory, id=...)`` for a factory without an id attribute.
    """


@hookspec
def profiler_register_analyzers(register: Register) -> list[Any] | None:
    """Register analyzers, which read a session trace and report findings.

    Called once, when the component registry is built.

    :return: a list of factories building objects with a ``name`` and
        ``analyze(trace, scenario, mode) -> AnalysisResult``. Merged across
        plugins; names must be unique.
    :param register: ``register(factory, id=...)`` for a factory without an id attribute.
    """


@hookspec
def profiler_register_mode_resolvers(register: Register) -> list[Any] | None:
    """Register mode resolvers, which turn a mode name into a ``ModeConfig``.

    Called once, when the component registry is built.

    :return: a list of factories building objects with an ``id`` and
        ``resolve(mode) -> ModeConfig`` (raising ``UnknownModeError`` for an
        unknown mode). Merged across plugins; ids must be unique.
    :param register: ``register(factory, id=...)`` for a factory without an id attribute.
    """


@hookspec
def profiler_register_judge_providers(register: Register) -> list[Any] | None:
    """Register judge providers, the LLMs behind the ``llm-judge`` scorer.

    Called once, when the component registry is built.

    :return: a list of factories building objects with an ``id`` and
        ``judge(request) -> JudgeResponse``, and optionally ``init()`` and
        ``shutdown()``: called once per run, before the judge's first question
        and when the run ends. Merged across plugins; ids must be unique.
    :param register: ``register(factory, id=...)`` for a factory without an id attribute.
    """


@hookspec
def profiler_register_importers(register: Register) -> list[Any] | None:
    """Register importers, which read a recorded-session file format.

    Called once, when the component registry is built. The formats are what
    ``profiler import FORMAT`` and the ``transcripts`` provider's ``format``
    option accept (built-ins: openai, anthropic, claude-code, opencode, trace).

    :return: a list of factories building objects with an ``id`` (the format
        name) and ``load(path) -> list[RecordedSession]`` (see
        :class:`profiler_core.plugins.contracts.Importer`). Merged across plugins; ids
        must be unique.
    :param register: ``register(factory, id="otel-genai")`` for a factory without an ``id``.
    """


@hookspec
def profiler_register_scenario_formats(register: Register) -> list[Any] | None:
    """Register scenario formats, which read scenario files laid out differently from the core's.

    A profile picks one with ``scenarios.format``; the core still walks the
    folder, reads JSON/YAML, applies ``scenario-sets.json``, ids and duplicate
    checks, and hands each file's data to the format's ``parse``.

    :return: a list of factories building objects with an ``id`` and
        ``parse(data, source) -> Scenario`` (see
        :class:`profiler_core.plugins.contracts.ScenarioFormat`). Merged across
        plugins; ids must be unique.
    :param register: ``register(factory, id="ghx")`` for a factory without an ``id``.
    """


@hookspec
def profiler_register_environments(register: Register) -> list[Any] | None:
    """Register execution environments: where a trial's set-up, agent and verifier run
    (``execution.sandbox``).

    Called once, when the component registry is built. Core registers ``none``,
    ``bwrap``, ``docker`` and ``podman`` through this hook too (docs/environments.md).

    :return: a list of factories (called without arguments) building objects with
        an ``id``, ``check()`` and ``start(spec) -> Environment`` (see
        :class:`profiler_core.plugins.contracts.ExecutionEnvironment`). Merged
        across plugins; ids must be unique.
    :param register: ``register("package.module:Class", id="my-sandbox")`` names a
        factory imported on first use.
    """


# -------------------------------------------------------------------------
# Lifecycle hooks: called through pluggy (tryfirst/trylast/wrappers honoured),
# each implementation isolated: one raising does not skip the others
# -------------------------------------------------------------------------


@hookspec
def profiler_before_run(ctx: RunContext) -> None:
    """Called once before any provider starts.

    Use it to check preconditions (fixtures, credentials). An exception here
    aborts the run before any session starts; the CLI prints its message and
    exits with status 1.

    :param ctx: the run's id, modes, models, scenarios and repetitions.
    """


@hookspec
def profiler_before_mode(mode: str, run: RunContext) -> None:
    """Called before the first iteration of a mode (for each model).

    Exceptions are logged with the plugin's name, recorded on the run manifest,
    and do not stop the suite.

    :param mode: the mode about to run.
    :param run: the run context.
    """


@hookspec(firstresult=True)
def profiler_before_scenario(ctx: BeforeScenarioContext) -> Scenario | None:
    """Called before each iteration (not before retries of it).

    Use it to reset fixtures. Return a ``Scenario`` to replace the scenario
    for this iteration only, or ``None``. The first non-``None`` result wins
    (pluggy's ``firstresult``). An ``async`` implementation is awaited before
    the next one is called; if it resolves to ``None`` the search goes on.
    Exceptions are recorded and do not stop the suite.

    :param ctx: scenario, mode, model, iteration and the run context.
    """


@hookspec
def profiler_after_scenario(ctx: AfterScenarioContext) -> None:
    """Called after each iteration, also when it failed.

    ``ctx.result`` is the written ``ProfileRow`` (with ``error`` set on
    failure); ``ctx.trace`` is the session trace or ``None``. Exceptions are
    recorded and do not stop the suite.

    :param ctx: the iteration's scenario, mode, model, iteration, row and trace.
    """


@hookspec
def profiler_after_mode(mode: str, run: RunContext) -> None:
    """Called after the last iteration of a mode (for each model).

    :param mode: the mode that finished.
    :param run: the run context.
    """


@hookspec
def profiler_after_run(ctx: RunContext, result: ProfileSuiteResult) -> None:
    """Called once after the whole matrix ran (also after an interrupted run).

    :param ctx: the run context.
    :param result: every row, the analysis bundles and the results path.
    """


@hookspec
def profiler_progress(event: ProgressEvent) -> None:
    """Called at each step of a run (iteration started/completed, warmup...).

    Keep it fast: it is called from the runner's hot path.

    :param event: what happened, with completed/total counts.
    """


# -------------------------------------------------------------------------
# Command line
# -------------------------------------------------------------------------


@hookspec
def profiler_register_commands(cli: click.Group) -> None:
    """Add commands to the ``profiler`` command line (e.g. ``profiler eval``).

    Called once when the CLI starts.

    :param cli: the ``profiler`` click group; call ``cli.add_command(...)``.
    """


# -------------------------------------------------------------------------
# Reports
# -------------------------------------------------------------------------


@hookspec
def profiler_report_sections(
    summary: Mapping[str, Any], rows: Iterable[ProfileRow]
) -> ReportSection | list[ReportSection] | None:
    """Add sections to a run's report (report.md and report.html), after its own sections.

    Called once per report, by ``profiler report`` and at the end of ``profiler
    run``, one plugin at a time. A plugin that raises, or returns something other
    than sections, gets one error line in both reports (and a warning on the
    terminal) instead of its sections; the report is still written.

    :param summary: the ``data/summary.json`` document (camelCase keys), read-only:
        nested mappings cannot be changed, lists are tuples.
    :param rows: the run's rows as ``ProfileRow`` records, read from the results
        file each time it is iterated (lines the report skipped are skipped here).
    :return: a :class:`profiler_core.ReportSection`, a list of them, or ``None``.
        Sections appear in plugin order, each under its title, naming its plugin;
        its ``text`` is Markdown in report.md and escaped text in report.html.
    """
