"""Entry-point module of the GitHub evaluation plugin: its hook implementations."""

from __future__ import annotations

import sys
from typing import Any

from profiler_core import hookimpl

# -------------------------------------------------------------------------
# Lifecycle hooks: fixtures (profiler_eval_ghx.hooks) and `profiler eval`
# -------------------------------------------------------------------------
#
# They act only on runs with ``extensions.fixtures`` or scenarios with a ``fixture``
# section; any other run never imports the fixtures machinery (GitHub client, retries).


def _uses_fixtures(ctx: Any) -> bool:
    if (getattr(ctx, "extensions", None) or {}).get("fixtures") is not None:
        return True
    scenarios = getattr(ctx, "scenarios", None) or ()
    return any(
        getattr(s, "fixture", None) is not None
        or "fixture" in (getattr(s, "extensions", None) or {})
        for s in scenarios
    )


def _hooks() -> Any:
    """The eval's hook state when a run of this process set it up (``before_run``), else
    None: nothing to do."""
    module = sys.modules.get(f"{__package__}.hooks")
    return None if module is None else module.HOOKS


@hookimpl
async def profiler_before_run(ctx):
    """Fixtures required by the scenarios exist (seeded first with ``seed_if_missing``)."""
    if not _uses_fixtures(ctx):
        return
    from .hooks import HOOKS

    await HOOKS.before_run(ctx)


@hookimpl
async def profiler_before_mode(mode, run):
    """Reset every fixture when ``reseed_between_modes`` is on."""
    if (hooks := _hooks()) is not None:
        await hooks.before_mode(mode, run)


@hookimpl
async def profiler_before_scenario(ctx):
    """Reset or seed this iteration's fixtures; the scenario with its bindings filled in."""
    if (hooks := _hooks()) is None:
        return None
    return await hooks.before_scenario(ctx)


@hookimpl
async def profiler_after_scenario(ctx):
    """Close what this iteration seeded."""
    if (hooks := _hooks()) is not None:
        await hooks.after_scenario(ctx)


@hookimpl
def profiler_after_run(ctx):
    """Forget the run's fixture state."""
    if (hooks := _hooks()) is not None:
        hooks.after_run(ctx)


@hookimpl
def profiler_register_commands(cli):
    """Add ``profiler eval``."""
    from .cli import eval_group

    cli.add_command(eval_group)


# -------------------------------------------------------------------------
# Components: registered by name, each module imported when its component is
# first used (listing the plugins or running another provider imports none).
# -------------------------------------------------------------------------


@hookimpl
def profiler_register_scorers(register) -> None:
    """The ``checkpoint`` scorer: checkpoints against live GitHub state."""
    register(f"{__package__}.scorer:CheckpointScorer", id="checkpoint")


@hookimpl
def profiler_register_collectors(register) -> None:
    """The ``ghx`` collector: tool calls by how they reached GitHub."""
    register(f"{__package__}.collector:GhxCollector", id="ghx")


@hookimpl
def profiler_register_mode_resolvers(register) -> None:
    """The ``eval`` mode resolver: ghx, mcp and baseline."""
    register(f"{__package__}.modes:EvalModeResolver", id="eval")


@hookimpl
def profiler_register_scenario_formats(register) -> None:
    """The ``ghx`` scenario format: the original eval's scenario files
    (``scenarios.format: ghx``)."""
    register(f"{__package__}.scenario:GhxScenarioFormat", id="ghx")
