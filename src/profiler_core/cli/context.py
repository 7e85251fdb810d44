"""The plugin manager of one ``profiler`` invocation, carried by click's context object.

``main()`` builds the manager once and passes it as ``obj``; a test passes its
own (``CliRunner().invoke(cli, args, obj=manager)``). Commands, built-in or
added by a plugin, get it with :func:`plugin_manager` or :func:`pass_manager`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from ..plugins.manager import PluginManager

F = TypeVar("F", bound=Callable[..., Any])


def plugin_manager(ctx: click.Context | None = None) -> PluginManager:
    """The invocation's plugin manager (``ctx.obj``); loaded on first use when the
    caller gave none."""
    from ..plugins.manager import (
        PluginManager,
        get_plugin_manager,
    )  # here: `profiler --help` needs no manager

    ctx = ctx or click.get_current_context()
    manager = ctx.find_object(PluginManager)
    if manager is None:
        manager = get_plugin_manager()
        # On the root context, so every command of this invocation shares the one manager.
        ctx.find_root().obj = manager
        ctx.obj = manager
    return manager


def pass_manager(f: F) -> F:
    """Decorator: call the command with the plugin manager as its first argument."""

    @click.pass_context
    def new_func(ctx: click.Context, *args: Any, **kwargs: Any) -> Any:
        return ctx.invoke(f, plugin_manager(ctx), *args, **kwargs)

    return functools.update_wrapper(new_func, f)  # type: ignore[return-value]


__all__ = ["pass_manager", "plugin_manager"]
