"""Per-plugin isolation of hook calls: one failing implementation does not skip the others.

Each plugin is registered with pluggy as an :class:`IsolatedPlugin` whose hook
implementations are the plugin's own, each guarded: inside an
:func:`isolated_hook_call` a raising implementation reports its failure, with
its plugin's name, and pluggy carries on with the next one as if it had
returned ``None``. Outside one, the guard is transparent (plain pluggy).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Awaitable, Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pluggy

from ..errors import HookError
from .info import REGISTRATION_HOOKS


class HookFailures:
    """The failures of one isolated hook call, each with the name of the plugin that raised."""

    def __init__(self, hook_name: str, *, fatal: bool = False) -> None:
        self.hook_name = hook_name
        self.fatal = fatal
        self.failures: list[tuple[str, Exception]] = []
        #: plugins whose (non-wrapper) implementation pluggy called, in call order
        self.called: list[str] = []

    def failed(self, plugin_name: str, exc: Exception) -> None:
        """Record a failure; in a fatal call raise ``HookError`` naming the plugin instead."""
        if self.fatal:
            raise HookError(
                f"plugin {plugin_name!r}: {self.hook_name} failed: {exc}"
            ) from exc
        self.failures.append((plugin_name, exc))


_FAILURES: contextvars.ContextVar[HookFailures | None] = contextvars.ContextVar(
    "profiler_hook_failures", default=None
)


@contextmanager
def isolated_hook_call(
    hook_name: str, *, fatal: bool = False
) -> Iterator[HookFailures]:
    """Within this block, a raising hook implementation is recorded (or, if ``fatal``,
    raised as HookError).

    Awaitables returned by implementations called inside the block stay guarded
    when they are awaited after it.
    """
    failures = HookFailures(hook_name, fatal=fatal)
    token = _FAILURES.set(failures)
    try:
        yield failures
    finally:
        _FAILURES.reset(token)


def _guard(function: Callable[..., Any], plugin_name: str) -> Callable[..., Any]:
    # functools.wraps: pluggy reads the argument names (and the hookimpl marker) through
    # __wrapped__.
    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        failures = _FAILURES.get()
        if failures is None:
            return function(*args, **kwargs)
        failures.called.append(plugin_name)
        try:
            result = function(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the isolation policy (docs/plugins.md)
            failures.failed(plugin_name, exc)
            return None  # pluggy skips None: the next implementation still runs
        if inspect.isawaitable(result):
            return _guard_awaitable(result, plugin_name, failures)
        return result

    return guarded


async def _guard_awaitable(
    awaitable: Awaitable[Any], plugin_name: str, failures: HookFailures
) -> Any:
    try:
        return await awaitable
    except Exception as exc:  # noqa: BLE001 - async implementations get the same policy
        failures.failed(plugin_name, exc)
        return None


def _guard_wrapper(
    function: Callable[..., Any], plugin_name: str
) -> Callable[..., Any]:
    # A new-style wrapper (``wrapper=True``): a failure in its own code before or after
    # ``yield`` is recorded and the inner result passes through unchanged.
    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Generator[None, Any, Any]:
        teardown = function(*args, **kwargs)
        failures = _FAILURES.get()
        if failures is None:
            return (yield from teardown)
        try:
            next(teardown)
        except StopIteration:
            failures.failed(plugin_name, RuntimeError("hook wrapper did not yield"))
            return (yield)
        except Exception as exc:  # noqa: BLE001
            failures.failed(plugin_name, exc)
            return (yield)
        try:
            result = yield
        except (
            BaseException
        ) as inner:  # an inner implementation raised: the wrapper may handle it
            try:
                teardown.throw(inner)
            except StopIteration as stop:
                return stop.value
            teardown.close()
            raise
        try:
            teardown.send(result)
        except StopIteration as stop:
            return stop.value
        except Exception as exc:  # noqa: BLE001
            failures.failed(plugin_name, exc)
            return result
        teardown.close()
        failures.failed(plugin_name, RuntimeError("hook wrapper has a second yield"))
        return result

    return guarded


class IsolatedPlugin:
    """A plugin as pluggy sees it: the plugin's hook implementations, each guarded by
    :func:`isolated_hook_call`.

    pluggy registers this object instead of the plugin itself (its public
    ``register`` path reads the hookimpl markers from these functions), so the
    isolation needs no change to pluggy's own records.
    """

    def __init__(
        self,
        plugin: Any,
        name: str,
        impls: Mapping[str, tuple[Callable[..., Any], pluggy.HookimplOpts]],
    ) -> None:
        self.plugin = plugin
        self.__name__ = name
        #: each hook implementation's pluggy options, as the one scan read them
        self.hook_opts = {attr: opts for attr, (_, opts) in impls.items()}
        for attr, (function, opts) in impls.items():
            if attr in REGISTRATION_HOOKS or opts.get("hookwrapper"):
                # registration hooks are asked one plugin at a time; old-style
                # hookwrappers run as pluggy runs them
                setattr(self, attr, function)
            else:
                setattr(
                    self,
                    attr,
                    (_guard_wrapper if opts.get("wrapper") else _guard)(function, name),
                )

    def __repr__(self) -> str:
        return f"<isolated plugin {self.__name__!r}: {self.plugin!r}>"


#: ``type.__flags__`` bit of a class defined in Python (built-in types lack it)
_HEAPTYPE = 1 << 9


def _on_builtin_type(plugin: Any, attr: str) -> bool:
    """Whether ``plugin.attr`` is found on a built-in type (``object``, ``SimpleNamespace``).

    A built-in type's attributes carry no hook marker (its classes cannot be
    given attributes), so pluggy's answer for them is None; asking costs an
    ``inspect.getattr_static`` each, ~25 per plugin object (its dunders).
    """
    if isinstance(plugin, type) or inspect.ismodule(plugin):
        return False
    try:
        if attr in vars(plugin):
            return False
    except TypeError:  # no instance dict (slots): let pluggy look
        return False
    for klass in type(plugin).__mro__:
        if attr in klass.__dict__:
            return not klass.__flags__ & _HEAPTYPE
    return False


def scan_hook_impls(
    pm: pluggy.PluginManager, plugin: Any
) -> dict[str, tuple[Callable[..., Any], pluggy.HookimplOpts]]:
    """The plugin's hook implementations: name -> (function, pluggy's options), read once."""
    impls = {}
    for attr in dir(plugin):
        try:
            method = getattr(plugin, attr)
        except Exception:  # noqa: BLE001 - properties may raise
            continue
        if _on_builtin_type(plugin, attr):
            continue
        opts = pm.parse_hookimpl_opts(plugin, attr)
        if opts is not None and callable(method):
            impls[attr] = (method, opts)
    return impls


class ScannedPluginManager(pluggy.PluginManager):
    """pluggy's manager, reading an :class:`IsolatedPlugin`'s hooks from its one scan.

    ``register`` asks ``parse_hookimpl_opts`` of every attribute of the object it
    registers, and pluggy's answer looks each one up statically
    (``inspect.getattr_static``): ~30 attributes of an ``IsolatedPlugin``, half a
    start-up's plugin registration. Its hooks are the scanned implementations,
    carrying the same options (``functools.wraps`` copies the marker), and no
    other attribute has a marker: the answer is the same, from a dict.
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        """The options of ``plugin``'s hook ``name``; None when it is no hook implementation."""
        if isinstance(plugin, IsolatedPlugin):
            return plugin.hook_opts.get(name)
        return super().parse_hookimpl_opts(plugin, name)
