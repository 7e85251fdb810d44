"""The plugin manager: built-ins, entry points, and the component registry.

Built this way (pluggy's ``eggsample`` host): add the hookspecs, register core's
built-in plugin modules, load the ``agent_profiler`` entry points one at a time
(a failing import is recorded and warned about, never fatal), validate every
hook implementation name, then ask each plugin for its components.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import attrs
import pluggy

from . import hookspecs
from ._hookmarkers import PROJECT_NAME
from .errors import ConfigError, DuplicateComponentError, PluginLoadError, UnknownComponentError

ENTRY_POINT_GROUP = "agent_profiler"

#: Core's own plugins, registered before any entry point (pytest's default_plugins).
BUILTIN_PLUGINS: tuple[str, ...] = (
    "profiler_core.modes",
    "profiler_core.collectors",
    "profiler_core.scorers.checks",
    "profiler_core.providers.simulated",
    "profiler_core.providers.transcripts",
    "profiler_core.providers.claude_code",
    "profiler_core.providers.codex",
    "profiler_core.judges.openai",
    "profiler_core.scorers.llm_judge",
    "profiler_core.scorers.composite",
)

#: contract name -> (registration hook, attribute holding the component's id)
CONTRACTS: dict[str, tuple[str, str]] = {
    "providers": ("profiler_register_providers", "id"),
    "scorers": ("profiler_register_scorers", "id"),
    "collectors": ("profiler_register_collectors", "id"),
    "analyzers": ("profiler_register_analyzers", "name"),
    "mode_resolvers": ("profiler_register_mode_resolvers", "id"),
    "judge_providers": ("profiler_register_judge_providers", "id"),
}

_SINGULAR = {
    "providers": "provider",
    "scorers": "scorer",
    "collectors": "collector",
    "analyzers": "analyzer",
    "mode_resolvers": "mode resolver",
    "judge_providers": "judge provider",
}


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
    error: str | None = None

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


@attrs.frozen
class ComponentInfo:
    """One registered component: its id, factory and the plugin that gave it."""

    contract: str
    id: str
    factory: Callable[..., Any]
    plugin: str
    distribution: str | None


class Registry:
    """Components of every contract by id, built from the plugins' registration hooks."""

    def __init__(self) -> None:
        self._components: dict[str, dict[str, ComponentInfo]] = {c: {} for c in CONTRACTS}

    def __getattr__(self, contract: str) -> dict[str, ComponentInfo]:
        # registry.providers, registry.analyzers, ...
        try:
            return self._components[contract]
        except KeyError:
            raise AttributeError(contract) from None

    def add(self, info: ComponentInfo) -> None:
        """Add a component; a second one with the same id names both plugins."""
        existing = self._components[info.contract].get(info.id)
        if existing is not None:
            raise DuplicateComponentError(
                f"{_SINGULAR[info.contract]} {info.id!r} is registered twice: by plugin "
                f"{existing.plugin!r} ({existing.distribution or 'unknown distribution'}) and by plugin "
                f"{info.plugin!r} ({info.distribution or 'unknown distribution'})"
            )
        self._components[info.contract][info.id] = info

    def ids(self, contract: str) -> list[str]:
        """The sorted ids of one contract's components."""
        return sorted(self._components[contract])

    def get(self, contract: str, component_id: str) -> ComponentInfo:
        """Look a component up; an unknown id names the known ones."""
        try:
            return self._components[contract][component_id]
        except KeyError:
            known = ", ".join(self.ids(contract)) or "none installed"
            hint = difflib.get_close_matches(component_id, self.ids(contract), n=1)
            did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
            raise UnknownComponentError(
                f"unknown {_SINGULAR[contract]} {component_id!r}{did_you_mean} (available: {known})"
            ) from None

    def create(self, contract: str, component_id: str, options: dict[str, Any] | None = None) -> Any:
        """Build a component with its profile ``options`` as keyword arguments."""
        info = self.get(contract, component_id)
        try:
            return info.factory(**(options or {}))
        except TypeError as exc:
            raise ConfigError(f"{_SINGULAR[contract]} {component_id!r}: bad options {sorted(options or {})}: {exc}") from None


class PluginManager:
    """pluggy's manager plus what agent-profiler knows about each plugin."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.plugins: dict[str, PluginInfo] = {}
        self._registry: Registry | None = None

    @property
    def hook(self) -> Any:
        """pluggy's hook relay (``pm.hook.profiler_progress(event=...)``)."""
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
            module=module or getattr(plugin, "__name__", type(plugin).__name__),
            distribution=distribution,
            version=version,
            builtin=builtin,
        )
        self.plugins[name] = info
        try:
            self.pm.register(plugin, name=name)
            self._validate(name, plugin)
        except (pluggy.PluginValidationError, ValueError) as exc:
            self._forget(name)
            info.error = str(exc)
            _warn(f"plugin {name!r} ({distribution or 'no distribution'}) disabled: {info.error}")
            return info
        info.hooks = sorted(impl_name for impl_name in _hook_names(self.pm, plugin))
        self._registry = None
        return info

    def unregister(self, name: str) -> None:
        """Remove a plugin (used for per-run ``RunHooks`` objects)."""
        self._forget(name)
        self.plugins.pop(name, None)
        self._registry = None

    def _forget(self, name: str) -> None:
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin=plugin, name=name)

    def _validate(self, name: str, plugin: Any) -> None:
        # pluggy's check_pending(), per plugin: a misspelt hook becomes this plugin's error.
        known = [n for n in dir(hookspecs) if n.startswith("profiler_")]
        for impl_name in _hook_names(self.pm, plugin):
            caller = getattr(self.pm.hook, impl_name, None)
            if caller is None or not caller.has_spec():
                hint = difflib.get_close_matches(impl_name, known, n=1)
                did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
                raise ValueError(f"unknown hook {impl_name!r}{did_you_mean}")

    def load_builtins(self, modules: Iterable[str] = BUILTIN_PLUGINS) -> None:
        """Register core's built-in plugin modules."""
        from . import __version__

        for module_name in modules:
            module = importlib.import_module(module_name)
            name = "core." + module_name.removeprefix("profiler_core.")
            self.register(
                module, name, distribution="agent-profiler", version=__version__, builtin=True, module=module_name
            )

    def load_entrypoints(self, group: str = ENTRY_POINT_GROUP) -> None:
        """Load installed plugins; ``PROFILER_LOAD_PLUGINS=a,b`` limits them (empty: none)."""
        wanted = _wanted_plugins()
        for ep in sorted(importlib.metadata.entry_points(group=group), key=lambda e: e.name):
            if wanted is not None and ep.name not in wanted:
                continue
            if ep.name in self.plugins:
                continue  # the same distribution seen twice on sys.path
            dist = getattr(ep, "dist", None)
            dist_name = dist.metadata["Name"] if dist is not None else None
            version = dist.version if dist is not None else None
            try:
                plugin = ep.load()
            except Exception as exc:  # noqa: BLE001 - any import failure must be reported, not fatal
                info = PluginInfo(name=ep.name, module=ep.value, distribution=dist_name, version=version)
                info.error = f"{type(exc).__name__}: {exc}"
                self.plugins[ep.name] = info
                _warn(f"plugin {ep.name!r} ({dist_name or 'unknown distribution'}) failed to load: {info.error}")
                continue
            self.register(plugin, ep.name, distribution=dist_name, version=version, module=ep.value)

    # -- hooks ----------------------------------------------------------------

    def hookimpls(self, hook_name: str) -> Iterator[tuple[str, Callable[..., Any]]]:
        """Yield (plugin name, call(**kwargs)) for each implementation, one plugin at a time."""
        caller = getattr(self.pm.hook, hook_name)
        # pluggy keeps implementations in reverse registration order; call in registration order.
        for impl in reversed(caller.get_hookimpls()):
            yield impl.plugin_name, _bind(impl)

    # -- components -----------------------------------------------------------

    @property
    def registry(self) -> Registry:
        """The component registry (built on first use)."""
        if self._registry is None:
            self._registry = self._build_registry()
        return self._registry

    def _build_registry(self) -> Registry:
        registry = Registry()
        for info in self.plugins.values():
            info.components = {}
        for contract, (hook_name, id_attr) in CONTRACTS.items():
            for plugin_name, call in self.hookimpls(hook_name):
                info = self.plugins.get(plugin_name)
                try:
                    factories = call() or []
                except Exception as exc:  # noqa: BLE001 - name the plugin, don't crash the CLI
                    raise PluginLoadError(f"plugin {plugin_name!r}: {hook_name} failed: {type(exc).__name__}: {exc}") from exc
                for factory in factories:
                    component_id = _component_id(factory, id_attr, plugin_name, contract)
                    registry.add(
                        ComponentInfo(
                            contract=contract,
                            id=component_id,
                            factory=factory,
                            plugin=plugin_name,
                            distribution=info.distribution if info else None,
                        )
                    )
                    if info is not None:
                        info.components.setdefault(contract, []).append(component_id)
        return registry

    def plugin_infos(self) -> list[PluginInfo]:
        """Every plugin (loaded or failed), sorted by name, with its components."""
        try:
            self.registry  # noqa: B018 - fills PluginInfo.components
        except (DuplicateComponentError, PluginLoadError) as exc:
            _warn(str(exc))
        return sorted(self.plugins.values(), key=lambda p: p.name)


def _bind(impl: pluggy.HookImpl) -> Callable[..., Any]:
    # An implementation may take any subset of the hook's arguments (pluggy's rule).
    def call(**kwargs: Any) -> Any:
        return impl.function(*[kwargs[name] for name in impl.argnames])

    return call


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


def _component_id(factory: Any, id_attr: str, plugin: str, contract: str) -> str:
    value = getattr(factory, id_attr, None)
    if not isinstance(value, str):
        # A plain factory function: build one with no options to learn its id.
        try:
            value = getattr(factory(), id_attr, None)
        except Exception as exc:  # noqa: BLE001
            raise PluginLoadError(f"plugin {plugin!r}: cannot determine the {id_attr} of {factory!r}: {exc}") from exc
    if not isinstance(value, str) or not value:
        raise PluginLoadError(f"plugin {plugin!r}: {_SINGULAR[contract]} {factory!r} has no string `{id_attr}`")
    return value


def _wanted_plugins() -> set[str] | None:
    raw = os.environ.get("PROFILER_LOAD_PLUGINS")
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def _warn(message: str) -> None:
    print(f"agent-profiler: warning: {message}", file=sys.stderr)


def get_plugin_manager(*, entrypoints: bool = True, plugins: Iterable[tuple[str, Any]] = ()) -> PluginManager:
    """A fresh plugin manager with built-ins, installed plugins and any extra ``(name, plugin)`` pairs."""
    manager = PluginManager()
    manager.load_builtins()
    if entrypoints:
        manager.load_entrypoints()
    for name, plugin in plugins:
        manager.register(plugin, name)
    return manager
