"""The ``profiler`` command line (click): one module per command.

The plugin manager is built once per invocation, when a command first needs it,
and reaches every command through click's context object (``ctx.obj``); see
:mod:`profiler_core.cli.context`.
Plugins add commands with the ``profiler_register_commands`` hook
(:mod:`profiler_core.cli.group`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .._lazy import lazy_exports
from ..util import codecache, collector

#: the public names this module defines or imports itself
_EAGER = ("main",)

#: module of this package -> the public names it defines, each imported on first use:
#: ``main`` pauses the garbage collector before any is loaded
_LAZY = {
    "app": ("cli",),
    "context": ("pass_manager", "plugin_manager"),
}

__getattr__ = lazy_exports(__name__, _LAZY)

# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand.
if TYPE_CHECKING:
    from .app import (
        cli,
    )
    from .context import (
        pass_manager,
        plugin_manager,
    )

__all__ = [
    "cli",
    "main",
    "pass_manager",
    "plugin_manager",
]
# End of the written names.


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``profiler`` console script.

    It is a process's entry point: the objects that exist when the command's work
    starts are frozen out of the garbage collector's sight for the rest of the
    process (util/collector.py). The collector itself is on again when it returns.
    """
    # start-up only makes objects that live as long as the process: none to scan for
    collector.pause()
    # attrs' generated methods compiled once per machine, not per start (util/codecache.py)
    codecache.install()
    try:
        from ..errors import ProfilerError
        from ..util.interrupt import EXIT_STATUS, armed, leave
        from .app import cli

        try:
            # No manager yet: the first command that needs one loads it into ctx.obj
            # (``profiler report`` never does).
            cli.main(args=argv, prog_name="profiler", standalone_mode=True)
        except SystemExit as exc:
            if exc.code == EXIT_STATUS and armed():
                leave(
                    EXIT_STATUS
                )  # interrupted: no interpreter shutdown where a second Ctrl-C would kill
            raise
        except (
            ProfilerError
        ) as exc:  # raised outside a command's invoke (e.g. in a callback)
            import click

            from ..util.redact import redact_text
            from ..util.textcut import cut_lines

            click.echo(f"Error: {redact_text(cut_lines(str(exc)))}", err=True)
            sys.exit(1)
    finally:
        collector.resume(
            freeze=False
        )  # a caller in the same process gets its collector back
