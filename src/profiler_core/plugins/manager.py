"""The plugin manager: built-ins, entry points, isolated hook calls, and the component registry.

Built this way (pluggy's ``eggsample`` host): add the hookspecs, register core's
built-in plugin modules, load the ``agent_profiler`` entry points one at a time
(a failing import is recorded and warned about, never fatal), validate every
hook implementation name, then ask each plugin, one at a time, for its
components and check each against its contract (``contracts.PROTOCOLS``).

Hooks are called through pluggy (``pm.hook.<name>(...)``), so pluggy's order
rules hold: ``tryfirst``/``trylast``, new-style wrappers (``wrapper=True``) and
otherwise the most recently registered plugin first. Per-plugin isolation (one
failing lifecycle hook must not skip the other plugins; docs/plugins.md) is kept
by registering each plugin with pluggy as an :class:`_IsolatedPlugin` whose hook
implementations are the plugin's own, each guarded: inside an
:func:`isolated_hook_call` a raising implementation reports its failure, with
its plugin's name, and pluggy carries on with the next one as if it had
returned ``None``. Outside one, the guard is transparent (plain pluggy). Only
pluggy's public API is used (``register``, ``subset_hook_caller``,
``get_hookimpls``), so a pluggy upgrade within 1.x cannot break it silently.
"""

from __future__ import annotations

import contextvars
import difflib
import functools
import importlib
import importlib.metadata
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import pluggy

from ..errors import (
    ConfigError,
    DuplicateComponentError,
    HookError,
    PluginLoadError,
    UnknownComponentError,
)
from . import hookspecs
from .builtins import BUILTIN_COMPONENTS, builtin_plugin
from .contracts import CONTRACTS, missing_methods
from .markers import PROJECT_NAME

ENTRY_POINT_GROUP = "agent_profiler"

#: Core's own plugins, registered before any entry point (pytest's default_plugins).
BUILTIN_PLUGINS: tuple[str, ...] = (
    *BUILTIN_COMPONENTS,  # registered by name from plugins/builtins.py
    "profiler_core.importers",  # light: registers its formats itself
)

#: Names the built-ins had before their modules moved into packages (``profiler list-plugins`` shows them).
_STABLE_NAMES = {
    "profiler_core.config.modes": "core.modes",
    "profiler_core.metrics.collectors": "core.collectors",
}


def builtin_plugin_name(module_name: str) -> str:
    """The plugin name of a built-in module: ``core.providers.simulated`` for ``profiler_core.providers.simulated``."""
    return _STABLE_NAMES.get(module_name) or "core." + module_name.removeprefix(
        "profiler_core."
    )


_REGISTRATION_HOOKS = frozenset(c.hook for c in CONTRACTS.values())


@attrs.define
class PluginInfo:
    """What ``profiler list-plugins`` shows about one plugin."""

    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    builtin: bool = False
    hooks: list[str] = attrs.Factory(list)
    components: dict[str, list[str]] = attrs.Factory(dict)
    #: why the plugin could not be loaded or registered (it contributes nothing)
    load_error: str | None = None
    #: what went wrong building its components (a raising hook, a refused component)
    problems: list[str] = attrs.Factory(list)

    @property
    def error(self) -> str | None:
        """The load error, else the component problems joined by ``; ``, else None."""
        if self.load_error:
            return self.load_error
        return "; ".join(self.problems) or None

    def provides(self) -> str:
        """The PROVIDES cell of ``list-plugins``: ``ERROR ...``, else the components and the other hooks, or ``-``."""
        if self.error:
            return f"ERROR {self.error}"
        parts = [
            f"{contract}: {', '.join(sorted(ids))}"
            for contract, ids in sorted(self.components.items())
        ]
        # Registration hooks show as the components above; the rest (lifecycle, commands) by short name.
        hooks = sorted(
            h.removeprefix("profiler_")
            for h in self.hooks
            if h not in _REGISTRATION_HOOKS
        )
        if hooks:
            parts.append("hooks: " + ", ".join(hooks))
        return "; ".join(parts) or "-"

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` form, every key always present."""
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "module": self.module,
            "builtin": self.builtin,
            "hooks": sorted(self.hooks),
            "components": {k: sorted(v) for k, v in self.components.items()},
            "error": self.error,
        }


@attrs.define(eq=False)
class ComponentInfo:
    """One registered component: its id, factory and the plugin that gave it.

    ``source`` is the factory, or ``"package.module:attribute"`` naming it: then the
    module is imported, and the factory checked against its contract, when the
    component is first used (:attr:`factory`), not when the plugins are listed.
    """

    contract: str
    id: str
    source: Callable[..., Any] | str
    plugin: str
    distribution: str | None
    _loaded: Callable[..., Any] | None = attrs.field(
        default=None, init=False, repr=False
    )

    @property
    def factory(self) -> Callable[..., Any]:
        """The factory (imported on first use when registered by name); a PluginLoadError says why not."""
        if self._loaded is None:
            self._loaded = (
                self.source if not isinstance(self.source, str) else self._import()
            )
        return self._loaded

    def _import(self) -> Callable[..., Any]:
        what = (
            f"{CONTRACTS[self.contract].singular} {self.id!r} of plugin {self.plugin!r}"
        )
        module_name, _, attribute = str(self.source).partition(":")
        try:
            target: Any = importlib.import_module(module_name)
            for part in attribute.split("."):
                target = getattr(target, part)
        except Exception as exc:  # noqa: BLE001 - a plugin's broken module: one line naming it
            raise PluginLoadError(
                f"{what} cannot be loaded from {self.source!r}: {type(exc).__name__}: {exc}"
            ) from None
        missing = (
            missing_methods(target, self.contract) if isinstance(target, type) else []
        )
        if not callable(target):
            missing = ["__call__ (a factory: a class or a callable)"]
        if missing:
            raise PluginLoadError(f"{what} is refused: missing {', '.join(missing)}")
        return target


class Registry:
    """Components of every contract by id, built from the plugins' registration hooks."""

    def __init__(self) -> None:
        self._components: dict[str, dict[str, ComponentInfo]] = {
            c: {} for c in CONTRACTS
        }
        #: ids that may not be used: refused components and duplicates -> the reason
        self._refused: dict[str, dict[str, str]] = {c: {} for c in CONTRACTS}

    def __getattr__(self, contract: str) -> dict[str, ComponentInfo]:
        # registry.providers, registry.analyzers, ...
        try:
            return self.__dict__["_components"][contract]
        except KeyError:
            raise AttributeError(contract) from None

    def add(self, info: ComponentInfo) -> None:
        """Add a component; a second one with the same id names both plugins."""
        existing = self._components[info.contract].get(info.id)
        if existing is not None:
            message = (
                f"{CONTRACTS[info.contract].singular} {info.id!r} is registered twice: by plugin "
                f"{existing.plugin!r} ({existing.distribution or 'unknown distribution'}) and by plugin "
                f"{info.plugin!r} ({info.distribution or 'unknown distribution'})"
            )
            # Ambiguous from now on: a profile naming it gets this message, not a guess.
            self._refused[info.contract][info.id] = message
            raise DuplicateComponentError(message)
        self._components[info.contract][info.id] = info

    def refuse(self, contract: str, component_id: str, reason: str) -> None:
        """Remember a component that failed its contract, so using it gives ``reason``."""
        self._refused[contract].setdefault(component_id, reason)

    def ids(self, contract: str) -> list[str]:
        """The sorted ids of one contract's usable components."""
        return sorted(set(self._components[contract]) - set(self._refused[contract]))

    def find(self, contract: str, component_id: str) -> ComponentInfo | None:
        """A usable component, or None (no error: for optional wiring)."""
        if component_id in self._refused[contract]:
            return None
        return self._components[contract].get(component_id)

    def get(self, contract: str, component_id: str) -> ComponentInfo:
        """Look a component up; a refused or duplicated one says why, an unknown one names the known ones."""
        reason = self._refused[contract].get(component_id)
        if reason is not None:
            error = (
                DuplicateComponentError
                if "registered twice" in reason
                else PluginLoadError
            )
            raise error(reason)
        try:
            return self._components[contract][component_id]
        except KeyError:
            known = ", ".join(self.ids(contract)) or "none installed"
            hint = difflib.get_close_matches(component_id, self.ids(contract), n=1)
            did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
            raise UnknownComponentError(
                f"unknown {CONTRACTS[contract].singular} {component_id!r}{did_you_mean} (available: {known})"
            ) from None

    def create(
        self, contract: str, component_id: str, options: dict[str, Any] | None = None
    ) -> Any:
        """Build a component with its profile ``options`` as keyword arguments, and check its contract."""
        info = self.get(contract, component_id)
        try:
            component = info.factory(**(options or {}))
        except TypeError as exc:
            raise ConfigError(
                f"{CONTRACTS[contract].singular} {component_id!r}: bad options {sorted(options or {})}: {exc}"
            ) from None
        problem = _contract_problem(component, contract)
        if problem:
            raise PluginLoadError(
                f"{CONTRACTS[contract].singular} {component_id!r} of plugin {info.plugin!r}: the built object {problem}"
            )
        return component


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
    """Within this block, a raising hook implementation is recorded (or, if ``fatal``, raised as HookError).

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
    # functools.wraps: pluggy reads the argument names (and the hookimpl marker) through __wrapped__.
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


class _IsolatedPlugin:
    """A plugin as pluggy sees it: the plugin's hook implementations, each guarded by :func:`isolated_hook_call`.

    pluggy registers this object instead of the plugin itself (its public
    ``register`` path reads the hookimpl markers from these functions), so the
    isolation needs no change to pluggy's own records.
    """

    def __init__(
        self,
        plugin: Any,
        name: str,
        pm: pluggy.PluginManager,
        hook_names: Iterable[str],
    ) -> None:
        self.plugin = plugin
        self.__name__ = name
        for attr in hook_names:
            function = getattr(plugin, attr)
            opts = pm.parse_hookimpl_opts(plugin, attr)
            if attr in _REGISTRATION_HOOKS or (opts and opts.get("hookwrapper")):
                # registration hooks are asked one plugin at a time; old-style hookwrappers run as pluggy runs them
                setattr(self, attr, function)
            else:
                setattr(
                    self,
                    attr,
                    (_guard_wrapper if opts and opts.get("wrapper") else _guard)(
                        function, name
                    ),
                )

    def __repr__(self) -> str:
        return f"<isolated plugin {self.__name__!r}: {self.plugin!r}>"


class _Registrations:
    """The ``register(factory, id=None)`` argument of the registration hooks (``llm``'s idiom)."""

    def __init__(self) -> None:
        self.entries: list[tuple[Any, str | None]] = []

    def __call__(self, factory: Any, id: str | None = None) -> None:
        self.entries.append((factory, id))


class PluginManager:
    """pluggy's manager plus what agent-profiler knows about each plugin."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self._plugins: dict[str, PluginInfo] = {}
        self._registry: Registry | None = None
        #: built-in modules registered when first needed (:meth:`defer_builtins`)
        self._deferred: list[str] = []

    @property
    def plugins(self) -> dict[str, PluginInfo]:
        """Every plugin by name (loaded or failed), built-ins first."""
        self._load_deferred()
        return self._plugins

    @property
    def hook(self) -> Any:
        """pluggy's hook relay (``manager.hook.profiler_progress(event=...)``)."""
        return self.pm.hook

    # -- registration -----------------------------------------------------

    def register(
        self,
        plugin: Any,
        name: str,
        *,
        distribution: str | None = None,
        version: str | None = None,
        builtin: bool = False,
        module: str | None = None,
    ) -> PluginInfo:
        """Register a plugin object (module, class instance) under ``name``."""
        info = PluginInfo(
            name=name,
            module=module or str(getattr(plugin, "__name__", type(plugin).__name__)),
            distribution=distribution,
            version=version,
            builtin=builtin,
        )
        self._plugins[name] = info
        hook_names = _hook_names(
            self.pm, plugin
        )  # one scan of the plugin's attributes: it is most of registering's cost
        try:
            self._validate(name, hook_names)
            self.pm.register(
                _IsolatedPlugin(plugin, name, self.pm, hook_names), name=name
            )
        except (pluggy.PluginValidationError, ValueError) as exc:
            self._forget(name)
            info.load_error = str(exc)
            _warn(
                f"plugin {name!r} ({distribution or 'no distribution'}) disabled: {info.load_error}"
            )
            return info
        info.hooks = sorted(hook_names)
        self._registry = None
        return info

    def unregister(self, name: str) -> None:
        """Remove a plugin (used for per-run ``RunHooks`` objects)."""
        self._forget(name)
        self._plugins.pop(name, None)
        self._registry = None

    def _forget(self, name: str) -> None:
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin=plugin, name=name)

    def _validate(self, name: str, hook_names: Iterable[str]) -> None:
        # pluggy's check_pending(), per plugin: a misspelt hook becomes this plugin's error.
        known = [n for n in dir(hookspecs) if n.startswith("profiler_")]
        for impl_name in hook_names:
            caller = getattr(self.pm.hook, impl_name, None)
            if caller is None or not caller.has_spec():
                hint = difflib.get_close_matches(impl_name, known, n=1)
                did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
                raise ValueError(f"unknown hook {impl_name!r}{did_you_mean}")

    def load_builtins(self, modules: Iterable[str] = BUILTIN_PLUGINS) -> None:
        """Register core's built-in plugin modules now."""
        from .. import __version__

        for module_name in modules:
            # Most built-ins are registered by name, their modules imported when a component is used (builtins.py).
            plugin = (
                builtin_plugin(module_name)
                if module_name in BUILTIN_COMPONENTS
                else importlib.import_module(module_name)
            )
            name = builtin_plugin_name(module_name)
            self.register(
                plugin,
                name,
                distribution="agent-profiler",
                version=__version__,
                builtin=True,
                module=module_name,
            )

    def defer_builtins(self, modules: Iterable[str] = BUILTIN_PLUGINS) -> None:
        """Register core's built-in plugin modules when first needed: the plugin list, the registry, a registration hook.

        Built-ins implement registration hooks only (a test holds them to it), which
        are asked one plugin at a time, so registering them after the entry points
        changes no hook's call order; ``profiler --help`` and plugin commands then
        never import them.
        """
        self._deferred.extend(modules)

    def _load_deferred(self) -> None:
        if not self._deferred:
            return
        modules, self._deferred = self._deferred, []
        others = self._plugins
        self._plugins = {}
        self.load_builtins(modules)
        self._plugins.update(
            others
        )  # built-ins first, as if registered before the entry points
        self._registry = None

    def load_entrypoints(self, group: str = ENTRY_POINT_GROUP) -> None:
        """Load installed plugins; ``PROFILER_LOAD_PLUGINS=a,b`` limits them (empty: none)."""
        wanted = _wanted_plugins()
        for ep in sorted(
            importlib.metadata.entry_points(group=group), key=lambda e: e.name
        ):
            if wanted is not None and ep.name not in wanted:
                continue
            if ep.name in self._plugins:
                continue  # the same distribution seen twice on sys.path
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else None
            version = dist.version if dist is not None else None
            try:
                plugin = ep.load()
            except Exception as exc:  # noqa: BLE001 - any import failure must be reported, not fatal
                info = PluginInfo(
                    name=ep.name,
                    module=ep.value,
                    distribution=dist_name,
                    version=version,
                )
                info.load_error = f"{type(exc).__name__}: {exc}"
                self._plugins[ep.name] = info
                _warn(
                    f"plugin {ep.name!r} ({dist_name or 'unknown distribution'}) failed to load: {info.load_error}"
                )
                continue
            self.register(
                plugin,
                ep.name,
                distribution=dist_name,
                version=version,
                module=ep.value,
            )

    # -- hooks ----------------------------------------------------------------

    def call_hook(
        self, hook_name: str, **kwargs: Any
    ) -> tuple[Any, list[tuple[str, Exception]]]:
        """Call a hook through pluggy with per-plugin isolation: (pluggy's result, [(plugin, exception)]).

        For synchronous hooks such as ``profiler_register_commands``; the runner's
        :class:`~profiler_core.runner.hooks.HookCaller` is the async counterpart.
        """
        if hook_name in _REGISTRATION_HOOKS:
            self._load_deferred()
        with isolated_hook_call(hook_name) as failures:
            result = getattr(self.pm.hook, hook_name)(**kwargs)
        return result, failures.failures

    def callers(self, hook_name: str) -> Iterator[tuple[str, Callable[..., Any]]]:
        """Yield (plugin name, pluggy's caller of the hook for that plugin alone), in pluggy's call order.

        For a hook whose every implementation needs its own arguments or its own
        error message (``profiler_register_commands``: one command group per plugin).
        """
        if hook_name in _REGISTRATION_HOOKS:
            self._load_deferred()
        impls = reversed(getattr(self.pm.hook, hook_name).get_hookimpls())
        for name in dict.fromkeys(
            impl.plugin_name for impl in impls if not (impl.wrapper or impl.hookwrapper)
        ):
            yield name, self._caller_for(name, hook_name)

    def _caller_for(self, name: str, hook_name: str) -> Callable[..., Any]:
        others = [
            plugin for other, plugin in self.pm.list_name_plugin() if other != name
        ]
        return self.pm.subset_hook_caller(hook_name, remove_plugins=others)

    # -- components -----------------------------------------------------------

    @property
    def registry(self) -> Registry:
        """The component registry (built on first use)."""
        self._load_deferred()
        if self._registry is None:
            self._registry = self._build_registry()
        return self._registry

    def _build_registry(self) -> Registry:
        registry = Registry()
        for info in self.plugins.values():
            info.components = {}
            info.problems = []
        # One plugin at a time, in registration order: a raising hook or a refused
        # component marks that plugin only; the others register as if it were absent.
        for name, info in list(self.plugins.items()):
            if info.load_error is not None or self.pm.get_plugin(name) is None:
                continue
            for contract in CONTRACTS.values():
                if contract.hook not in info.hooks:
                    continue
                for factory, component_id in self._registrations(name, contract.hook):
                    self._add_component(
                        registry,
                        info,
                        contract.name,
                        contract.id_attr,
                        factory,
                        component_id,
                    )
        return registry

    def _registrations(self, name: str, hook_name: str) -> list[tuple[Any, str | None]]:
        info = self.plugins[name]
        caller = self._caller_for(name, hook_name)
        register = _Registrations()
        try:
            returned = caller(register=register)
        except Exception as exc:  # noqa: BLE001 - name the plugin, never stop the others
            return self._problem(
                info, f"{hook_name} failed: {type(exc).__name__}: {exc}"
            )
        entries: list[tuple[Any, str | None]] = []
        for value in returned:  # one list per implementation of this plugin
            if value is None:
                continue
            if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                return self._problem(
                    info,
                    f"{hook_name} returned {type(value).__name__}, expected a list of factories",
                )
            entries.extend((factory, None) for factory in value)
        return entries + register.entries

    def _add_component(
        self,
        registry: Registry,
        info: PluginInfo,
        contract: str,
        id_attr: str,
        factory: Any,
        given_id: str | None,
    ) -> None:
        if isinstance(factory, str):
            self._add_named_component(registry, info, contract, factory, given_id)
            return
        component_id = (
            given_id if given_id is not None else getattr(factory, id_attr, None)
        )
        if not isinstance(component_id, str) or not component_id:
            self._problem(
                info,
                f"{CONTRACTS[contract].singular} factory {_describe(factory)} has no string `{id_attr}`: give it a class "
                f"attribute `{id_attr}` or register it with register(factory, id=...)",
            )
            return
        # A class is checked now; what a plain factory function builds is checked by Registry.create.
        missing = (
            missing_methods(factory, contract) if isinstance(factory, type) else []
        )
        if not callable(factory):
            missing = ["__call__ (a factory: a class or a callable)"]
        if missing:
            reason = f"{CONTRACTS[contract].singular} {component_id!r} of plugin {info.name!r} is refused: missing {', '.join(missing)}"
            registry.refuse(contract, component_id, reason)
            self._problem(info, reason)
            return
        try:
            registry.add(
                ComponentInfo(
                    contract, component_id, factory, info.name, info.distribution
                )
            )
        except DuplicateComponentError as exc:
            self._problem(info, str(exc))
            return
        info.components.setdefault(contract, []).append(component_id)

    def _add_named_component(
        self,
        registry: Registry,
        info: PluginInfo,
        contract: str,
        target: str,
        given_id: str | None,
    ) -> None:
        # register("package.module:Class", id="x"): known by id now, imported when first used.
        module_name, colon, attribute = target.partition(":")
        if (
            not isinstance(given_id, str)
            or not given_id
            or not colon
            or not module_name
            or not attribute
        ):
            self._problem(
                info,
                f"{CONTRACTS[contract].singular} {target!r}: a factory given by name needs the form 'package.module:attribute' "
                "and an id: register('package.module:Class', id='my-id')",
            )
            return
        try:
            registry.add(
                ComponentInfo(contract, given_id, target, info.name, info.distribution)
            )
        except DuplicateComponentError as exc:
            self._problem(info, str(exc))
            return
        info.components.setdefault(contract, []).append(given_id)

    def _problem(self, info: PluginInfo, message: str) -> list[Any]:
        info.problems.append(message)
        _warn(
            f"plugin {info.name!r} ({info.distribution or 'no distribution'}): {message}"
        )
        return []

    def plugin_infos(self) -> list[PluginInfo]:
        """Every plugin (loaded or failed), sorted by name, with its components and problems."""
        self.registry  # noqa: B018 - fills PluginInfo.components and .problems
        return sorted(self.plugins.values(), key=lambda p: p.name)


def _contract_problem(component: Any, contract: str) -> str | None:
    missing = missing_methods(component, contract)
    if missing:
        return f"is missing {', '.join(missing)}"
    id_attr = CONTRACTS[contract].id_attr
    if not isinstance(getattr(component, id_attr, None), str):
        return f"has no string `{id_attr}`"
    return None


def _describe(factory: Any) -> str:
    return getattr(factory, "__qualname__", None) or repr(factory)


def _hook_names(pm: pluggy.PluginManager, plugin: Any) -> list[str]:
    names = []
    for attr in dir(plugin):
        try:
            method = getattr(plugin, attr)
        except Exception:  # noqa: BLE001 - properties may raise
            continue
        if pm.parse_hookimpl_opts(plugin, attr) is not None and callable(method):
            names.append(attr)
    return names


def _wanted_plugins() -> set[str] | None:
    raw = os.environ.get("PROFILER_LOAD_PLUGINS")
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def _warn(message: str) -> None:
    print(f"agent-profiler: warning: {message}", file=sys.stderr)


def get_plugin_manager(
    *, entrypoints: bool = True, plugins: Iterable[tuple[str, Any]] = ()
) -> PluginManager:
    """A fresh plugin manager with built-ins, installed plugins and any extra ``(name, plugin)`` pairs."""
    manager = PluginManager()
    manager.defer_builtins()
    if entrypoints:
        manager.load_entrypoints()
    for name, plugin in plugins:
        manager.register(plugin, name)
    return manager


_DEFAULT: PluginManager | None = None


def default_plugin_manager() -> PluginManager:
    """The process-wide manager used where no registry is passed in (built on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = get_plugin_manager()
    return _DEFAULT


def set_default_plugin_manager(manager: PluginManager | None) -> None:
    """Make ``manager`` the default (the CLI passes its own; ``None`` rebuilds on next use)."""
    global _DEFAULT
    _DEFAULT = manager
