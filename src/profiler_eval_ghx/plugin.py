"""Entry-point module of the GitHub evaluation plugin: its hook implementations."""

from __future__ import annotations

from profiler_core import hookimpl

# -------------------------------------------------------------------------
# Lifecycle hooks: fixtures (profiler_eval_ghx.hooks) and `profiler eval`
# -------------------------------------------------------------------------


@hookimpl
async def profiler_before_run(ctx):
    """Fixtures required by the scenarios exist (seeded first with ``seed_if_missing``)."""
    from .hooks import HOOKS

    await HOOKS.before_run(ctx)


@hookimpl
async def profiler_before_mode(mode, run):
    """Reset every fixture when ``reseed_between_modes`` is on."""
    from .hooks import HOOKS

    await HOOKS.before_mode(mode, run)


@hookimpl
async def profiler_before_scenario(ctx):
    """Reset or seed this iteration's fixtures; the scenario with its bindings filled in."""
    from .hooks import HOOKS

    return await HOOKS.before_scenario(ctx)


@hookimpl
async def profiler_after_scenario(ctx):
    """Close what this iteration seeded."""
    from .hooks import HOOKS

    await HOOKS.after_scenario(ctx)


@hookimpl
def profiler_after_run(ctx):
    """Forget the run's fixture state."""
    from .hooks import HOOKS

    HOOKS.after_run(ctx)


@hookimpl
def profiler_register_commands(cli):
    """Add ``profiler eval``."""
    from .cli import eval_group

    cli.add_command(eval_group)


# -------------------------------------------------------------------------
# Components
# -------------------------------------------------------------------------


@hookimpl
def profiler_register_scorers() -> list:
    """The ``checkpoint`` scorer: checkpoints against live GitHub state."""
    from .scorer import CheckpointScorer

    return [CheckpointScorer]


@hookimpl
def profiler_register_collectors() -> list:
    """The ``ghx`` collector: tool calls by how they reached GitHub."""
    from .collector import GhxCollector

    return [GhxCollector]


@hookimpl
def profiler_register_mode_resolvers() -> list:
    """The ``eval`` mode resolver: ghx, mcp and baseline."""
    from .modes import EvalModeResolver

    return [EvalModeResolver]


@hookimpl
def profiler_register_scenario_formats() -> list:
    """The ``ghx`` scenario format: the original eval's scenario files (``scenarios.format: ghx``)."""
    from .scenario import GhxScenarioFormat

    return [GhxScenarioFormat]
