"""The plugin manager: built-ins, entry points, isolated hook calls, and the component registry.

Built this way (pluggy's ``eggsample`` host): add the hookspecs, register core's
built-in plugin modules, load the ``agent_profiler`` entry points one at a time
(a failing import is recorded and warned about, never fatal), validate every
hook implementation name, then ask each plugin, one at a time, for its
components and check each against its contract (``contracts.PROTOCOLS``).

Hooks are called through pluggy (``pm.hook.<name>(...)``), so pluggy's order
rules hold: ``tryfirst``/``trylast``, new-style wrappers (``wrapper=True``) and
otherwise the most recently registered plugin first. Each plugin is registered
with pluggy as an ``IsolatedPlugin`` (``isolation.py``: one failing lifecycle hook
must not skip the other plugins, docs/plugins.md); the components the plugins
register are kept in a ``Registry`` (``registry.py``); ``PluginInfo``
(``info.py``) is what ``profiler list-plugins`` shows. Only pluggy's public API
is used (``register``, ``subset_hook_caller``, ``get_hookimpls``), so a pluggy
upgrade within 1.x cannot break it silently.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pluggy

from . import discovery, hookspecs
from .builtins import BUILTIN_COMPONENTS, builtin_plugin
from .contracts import CONTRACTS
from .info import REGISTRATION_HOOKS, PluginInfo, warn
from .isolation import (
    HookFailures,
    IsolatedPlugin,
    ScannedPluginManager,
    isolated_hook_call,
    scan_hook_impls,
)
from .markers import PROJECT_NAME
from .registry import ComponentInfo, Registry, build_registry

__all__ = [
    "BUILTIN_PLUGINS",
    "CONTRACTS",
    "ENTRY_POINT_GROUP",
    "ComponentInfo",
    "HookFailures",
    "PluginInfo",
    "PluginManager",
    "Registry",
    "builtin_plugin_name",
    "default_plugin_manager",
    "get_plugin_manager",
    "isolated_hook_call",
    "set_default_plugin_manager",
]

ENTRY_POINT_GROUP = "agent_profiler"

#: Core's own plugins, registered before any entry point (pytest's default_plugins).
BUILTIN_PLUGINS: tuple[str, ...] = (
    *BUILTIN_COMPONENTS,  # registered by name from plugins/builtins.py
    "profiler_core.importers",  # light: registers its formats itself
)

#: Names the built-ins had before their modules moved into packages (``profiler
#: list-plugins`` shows them).
_STABLE_NAMES = {
    "profiler_core.config.modes": "core.modes",
    "profiler_core.metrics.collectors": "core.collectors",
}


def builtin_plugin_name(module_name: str) -> str:
    """The plugin name of a built-in module: ``core.providers.simulated`` for
    ``profiler_core.providers.simulated``."""
    return _STABLE_NAMES.get(module_name) or "core." + module_name.removeprefix(
        "profiler_core."
    )


class PluginManager:
    """pluggy's manager plus what agent-profiler knows about each plugin."""

    def __init__(self) -> None:
        self.pm = ScannedPluginManager(PROJECT_NAME)
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
        # one scan of the plugin's attributes: it is most of registering's cost
        impls = scan_hook_impls(self.pm, plugin)
        try:
            self._validate(name, impls)
            self.pm.register(IsolatedPlugin(plugin, name, impls), name=name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            self._forget(name)
            info.load_error = str(exc)
            warn(
                f"plugin {name!r} ({distribution or 'no distribution'}) disabled: {info.load_error}"
            )
            return info
        info.hooks = sorted(impls)
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
        from ..util.version import version

        for module_name in modules:
            # Most built-ins are registered by name, their modules imported when a
            # component is used (builtins.py).
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
                version=version(),
                builtin=True,
                module=module_name,
            )

    def defer_builtins(self, modules: Iterable[str] = BUILTIN_PLUGINS) -> None:
        """Register core's built-in plugin modules when first needed: the plugin list,
        the registry, a registration hook.

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
        # the scan is cached while no installed distribution changes (discovery.py)
        for ep in sorted(discovery.entry_points(group), key=lambda e: e.name):
            if wanted is not None and ep.name not in wanted:
                continue
            if ep.name in self._plugins:
                continue  # the same distribution seen twice on sys.path
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else None
            version = dist.version if dist is not None else None
            try:
                plugin = ep.load()
            except Exception as exc:  # noqa: BLE001 - an import failure is reported, never fatal
                info = PluginInfo(
                    name=ep.name,
                    module=ep.value,
                    distribution=dist_name,
                    version=version,
                )
                info.load_error = f"{type(exc).__name__}: {exc}"
                self._plugins[ep.name] = info
                warn(
                    f"plugin {ep.name!r} ({dist_name or 'unknown distribution'}) failed "
                    f"to load: {info.load_error}"
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
        """Call a hook through pluggy with per-plugin isolation: (pluggy's result,
        [(plugin, exception)]).

        For synchronous hooks such as ``profiler_register_commands``; the runner's
        :class:`~profiler_core.runner.hooks.HookCaller` is the async counterpart.
        """
        if hook_name in REGISTRATION_HOOKS:
            self._load_deferred()
        with isolated_hook_call(hook_name) as failures:
            result = getattr(self.pm.hook, hook_name)(**kwargs)
        return result, failures.failures

    def callers(self, hook_name: str) -> Iterator[tuple[str, Callable[..., Any]]]:
        """Yield (plugin name, pluggy's caller of the hook for that plugin alone), in
        pluggy's call order.

        For a hook whose every implementation needs its own arguments or its own
        error message (``profiler_register_commands``: one command group per plugin).
        """
        if hook_name in REGISTRATION_HOOKS:
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
        return build_registry(self.plugins, self._registered_caller)

    def _registered_caller(
        self, name: str, hook_name: str
    ) -> Callable[..., Any] | None:
        """The hook's caller for plugin ``name`` alone; None when pluggy does not hold it."""
        if self.pm.get_plugin(name) is None:
            return None
        return self._caller_for(name, hook_name)

    def plugin_infos(self) -> list[PluginInfo]:
        """Every plugin (loaded or failed), sorted by name, with its components and problems."""
        self.registry  # noqa: B018 - fills PluginInfo.components and .problems
        return sorted(self.plugins.values(), key=lambda p: p.name)


def _wanted_plugins() -> set[str] | None:
    raw = os.environ.get("PROFILER_LOAD_PLUGINS")
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def get_plugin_manager(
    *, entrypoints: bool = True, plugins: Iterable[tuple[str, Any]] = ()
) -> PluginManager:
    """A fresh plugin manager with built-ins, installed plugins and any extra ``(name,
    plugin)`` pairs."""
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
