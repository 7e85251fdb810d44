"""Hook specifications: every extension point of agent-profiler.

Plugins implement these with ``@profiler_core.hookimpl``. An implementation may
accept any subset of a hook's arguments (pluggy passes them by name), so new
arguments can be added without breaking old plugins. Any implementation may be
``async def`` or return an awaitable: the runner awaits it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._hookmarkers import hookspec

if TYPE_CHECKING:  # pragma: no cover
    import click

    from .model import (
        AfterScenarioContext,
        BeforeScenarioContext,
        ProfileSuiteResult,
        ProgressEvent,
        RunContext,
        Scenario,
    )

# -------------------------------------------------------------------------
# Registration hooks: each returns a list of component factories
# -------------------------------------------------------------------------


@hookspec
def profiler_register_providers() -> list[Any]:
    """Register session providers (the agents that can be profiled).

    Called once, when the plugin manager builds its component registry.

    :return: a list of factories: classes, or callables taking the provider's
        ``options`` from the profile as keyword arguments. Each built object has
        an ``id`` and the methods of :class:`profiler_core.contracts.SessionProvider`.
        The lists of all plugins are merged; two providers with one id is an error
        naming both plugins.
    """


@hookspec
def profiler_register_scorers() -> list[Any]:
    """Register scorers, which decide whether the agent did its task.

    Called once, when the component registry is built.

    :return: a list of factories building objects with an ``id`` and
        ``evaluate(scenario, context) -> ScorerResult``. Merged across plugins;
        ids must be unique.
    """


@hookspec
def profiler_register_collectors() -> list[Any]:
    """Register collectors, which turn a prompt result into custom metrics.

    Called once, when the component registry is built.

    :return: a list of factories building objects with an ``id`` and
        ``collect(result, scenario, mode, trace) -> list[CustomMetric]``.
        Merged across plugins; ids must be unique.
    """


@hookspec
def profiler_register_analyzers() -> list[Any]:
    """Register analyzers, which read a session trace and report findings.

    Called once, when the component registry is built.

    :return: a list of factories building objects with a ``name`` and
        ``analyze(trace, scenario, mode) -> AnalysisResult``. Merged across
        plugins; names must be unique.
    """


@hookspec
def profiler_register_mode_resolvers() -> list[Any]:
    """Register mode resolvers, which turn a mode name into a ``ModeConfig``.

    Called once, when the component registry is built.

    :return: a list of factories building objects with an ``id`` and
        ``resolve(mode) -> ModeConfig`` (raising ``UnknownModeError`` for an
        unknown mode). Merged across plugins; ids must be unique.
    """


@hookspec
def profiler_register_judge_providers() -> list[Any]:
    """Register judge providers, the LLMs behind the ``llm-judge`` scorer.

    Called once, when the component registry is built.

    :return: a list of factories building objects with an ``id`` and
        ``judge(request) -> JudgeResponse``. Merged across plugins; ids must be unique.
    """


# -------------------------------------------------------------------------
# Lifecycle hooks: called on every plugin, one plugin at a time
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
    for this iteration only, or ``None``. The first non-``None`` result wins.
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
