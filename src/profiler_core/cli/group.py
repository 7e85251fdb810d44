"""The ``profiler`` click group: one-line errors, and the commands plugins add (``profiler eval``).

Plugin commands come from the ``profiler_register_commands`` hook of the
invocation's plugin manager (``ctx.obj``). Each plugin adds its commands to a
group of its own, so a plugin that fails is named in a warning and skipped,
and nothing is added to the module-level ``cli`` object: two invocations with
two managers (two tests) never see each other's commands.
"""

from __future__ import annotations

from typing import Any

import click

from ..errors import ProfilerError
from ..util import collector
from ..util.asyncs import leaves
from ..util.interrupt import EXIT_STATUS, arm
from ..util.redact import redact_text
from ..util.textcut import cut_lines, printable
from .context import plugin_manager

#: ``ctx.meta`` key under which the plugin commands of one invocation are kept.
_META_KEY = "profiler_core.plugin_commands"
#: Commands that resume the garbage collector themselves, once their start-up is done
#: (``run``: before its matrix).
RESUMES_COLLECTOR = frozenset({"run"})


class ProfilerGroup(click.Group):
    """A click group that turns ``ProfilerError`` into one line and exit status 1, and
    serves plugin commands."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; expected failures become one ``Error:`` line each."""
        try:
            return super().invoke(ctx)
        except ProfilerError as exc:
            click.echo(f"Error: {redact_text(cut_lines(str(exc)))}", err=True)
            ctx.exit(1)
        except (OSError, UnicodeError) as exc:
            # Files that cannot be read or written: one line, not a traceback.
            filename, strerror = (
                getattr(exc, "filename", None),
                getattr(exc, "strerror", None),
            )
            click.echo(
                redact_text(
                    f"Error: {f'{filename}: ' if filename else ''}{strerror or exc}"
                ),
                err=True,
            )
            ctx.exit(1)
        except KeyboardInterrupt:
            _interrupted(ctx)
        except BaseExceptionGroup as group:
            if any(isinstance(leaf, KeyboardInterrupt) for leaf in leaves(group)):
                _interrupted(ctx)
            # Several concurrent failures (trio): one line each.
            for leaf in leaves(group):
                click.echo(
                    f"Error: {type(leaf).__name__}: {redact_text(cut_lines(str(leaf)))}",
                    err=True,
                )
            ctx.exit(1)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command to run; the garbage collector, paused by ``main``, runs again for
        its work (util/collector.py)."""
        name, command, rest = super().resolve_command(ctx, args)
        if name not in RESUMES_COLLECTOR:
            collector.resume()
        return name, command, rest

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A built-in command, else one a plugin added."""
        return super().get_command(ctx, cmd_name) or self.plugin_commands(ctx).get(
            cmd_name
        )

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Built-in and plugin commands, sorted (for ``--help``)."""
        return sorted({*super().list_commands(ctx), *self.plugin_commands(ctx)})

    def plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        """The commands the plugins of this invocation add (asked once per invocation)."""
        if _META_KEY not in ctx.meta:
            ctx.meta[_META_KEY] = self._collect_plugin_commands(ctx)
        return ctx.meta[_META_KEY]

    def _collect_plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        try:
            manager = plugin_manager(ctx)
        except ProfilerError as exc:
            _warn(str(exc))
            return {}
        commands: dict[str, click.Command] = {}
        for plugin_name, call in manager.callers("profiler_register_commands"):
            added = click.Group(name=self.name)
            try:
                call(cli=added)
            except Exception as exc:  # noqa: BLE001 - one bad plugin must not break the CLI
                _warn(
                    f"plugin {plugin_name!r} failed to add commands: {type(exc).__name__}: {exc}"
                )
                continue
            for name, command in added.commands.items():
                if name in self.commands or name in commands:
                    _warn(
                        f"plugin {plugin_name!r}: command {name!r} already "
                        "exists; the plugin's is ignored"
                    )
                    continue
                commands[name] = command
        return commands


def _interrupted(ctx: click.Context) -> None:
    """A Ctrl-C outside the run's own handling: exit 130 (and at once if another comes
    during the exit)."""
    arm()
    click.echo("Interrupted", err=True)
    ctx.exit(EXIT_STATUS)


def _warn(message: str) -> None:
    click.echo(f"agent-profiler: warning: {printable(message)}", err=True)


__all__ = ["ProfilerGroup", "leaves"]
