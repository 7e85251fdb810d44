"""The component registry: components of every contract by id, and how it is built from
the plugins' registration hooks."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from ..errors import (
    ConfigError,
    DuplicateComponentError,
    PluginLoadError,
    UnknownComponentError,
)
from .contracts import CONTRACTS, missing_methods
from .info import PluginInfo, warn


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
        """The factory (imported on first use when registered by name); a
        PluginLoadError says why not."""
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
                f"{CONTRACTS[info.contract].singular} {info.id!r} is registered twice: "
                f"by plugin {existing.plugin!r} "
                f"({existing.distribution or 'unknown distribution'}) and by plugin "
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
        """Look a component up; a refused or duplicated one says why, an unknown one
        names the known ones."""
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
                f"unknown {CONTRACTS[contract].singular} {component_id!r}{did_you_mean} "
                f"(available: {known})"
            ) from None

    def create(
        self, contract: str, component_id: str, options: dict[str, Any] | None = None
    ) -> Any:
        """Build a component with its profile ``options`` as keyword arguments, and
        check its contract."""
        info = self.get(contract, component_id)
        try:
            component = info.factory(**(options or {}))
        except TypeError as exc:
            raise ConfigError(
                f"{CONTRACTS[contract].singular} {component_id!r}: bad options "
                f"{sorted(options or {})}: {exc}"
            ) from None
        problem = _contract_problem(component, contract)
        if problem:
            raise PluginLoadError(
                f"{CONTRACTS[contract].singular} {component_id!r} of plugin "
                f"{info.plugin!r}: the built object {problem}"
            )
        return component


def _contract_problem(component: Any, contract: str) -> str | None:
    missing = missing_methods(component, contract)
    if missing:
        return f"is missing {', '.join(missing)}"
    id_attr = CONTRACTS[contract].id_attr
    if not isinstance(getattr(component, id_attr, None), str):
        return f"has no string `{id_attr}`"
    return None


class _Registrations:
    """The ``register(factory, id=None)`` argument of the registration hooks (``llm``'s idiom)."""

    def __init__(self) -> None:
        self.entries: list[tuple[Any, str | None]] = []

    def __call__(self, factory: Any, id: str | None = None) -> None:
        self.entries.append((factory, id))


def _describe(factory: Any) -> str:
    return getattr(factory, "__qualname__", None) or repr(factory)


def build_registry(
    plugins: Mapping[str, PluginInfo],
    caller_for: Callable[[str, str], Callable[..., Any] | None],
) -> Registry:
    """Ask each plugin for its components and check each against its contract.

    ``caller_for(plugin, hook)`` is pluggy's caller of the hook for that plugin
    alone (None: pluggy does not hold the plugin).
    """
    registry = Registry()
    for info in plugins.values():
        info.components = {}
        info.problems = []
    # One plugin at a time, in registration order: a raising hook or a refused
    # component marks that plugin only; the others register as if it were absent.
    for name, info in list(plugins.items()):
        if info.load_error is not None:
            continue
        for contract in CONTRACTS.values():
            if contract.hook not in info.hooks:
                continue
            caller = caller_for(name, contract.hook)
            if caller is None:
                break
            for factory, component_id in _registrations(info, contract.hook, caller):
                _add_component(
                    registry,
                    info,
                    contract.name,
                    contract.id_attr,
                    factory,
                    component_id,
                )
    return registry


def _registrations(
    info: PluginInfo, hook_name: str, caller: Callable[..., Any]
) -> list[tuple[Any, str | None]]:
    """What one plugin's implementations of a registration hook give: (factory, id or None)."""
    register = _Registrations()
    try:
        returned = caller(register=register)
    except Exception as exc:  # noqa: BLE001 - name the plugin, never stop the others
        return _problem(info, f"{hook_name} failed: {type(exc).__name__}: {exc}")
    entries: list[tuple[Any, str | None]] = []
    for value in returned:  # one list per implementation of this plugin
        if value is None:
            continue
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            return _problem(
                info,
                f"{hook_name} returned {type(value).__name__}, expected a list of factories",
            )
        entries.extend((factory, None) for factory in value)
    return entries + register.entries


def _add_component(
    registry: Registry,
    info: PluginInfo,
    contract: str,
    id_attr: str,
    factory: Any,
    given_id: str | None,
) -> None:
    if isinstance(factory, str):
        _add_named_component(registry, info, contract, factory, given_id)
        return
    component_id = given_id if given_id is not None else getattr(factory, id_attr, None)
    if not isinstance(component_id, str) or not component_id:
        _problem(
            info,
            f"{CONTRACTS[contract].singular} factory {_describe(factory)} has no string "
            f"`{id_attr}`: give it a class "
            f"attribute `{id_attr}` or register it with register(factory, id=...)",
        )
        return
    # A class is checked now; what a plain factory function builds is checked by Registry.create.
    missing = missing_methods(factory, contract) if isinstance(factory, type) else []
    if not callable(factory):
        missing = ["__call__ (a factory: a class or a callable)"]
    if missing:
        reason = (
            f"{CONTRACTS[contract].singular} {component_id!r} of plugin {info.name!r} "
            f"is refused: missing {', '.join(missing)}"
        )
        registry.refuse(contract, component_id, reason)
        _problem(info, reason)
        return
    try:
        registry.add(
            ComponentInfo(contract, component_id, factory, info.name, info.distribution)
        )
    except DuplicateComponentError as exc:
        _problem(info, str(exc))
        return
    info.components.setdefault(contract, []).append(component_id)


def _add_named_component(
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
        _problem(
            info,
            f"{CONTRACTS[contract].singular} {target!r}: a factory given by name needs "
            f"the form 'package.module:attribute' "
            "and an id: register('package.module:Class', id='my-id')",
        )
        return
    try:
        registry.add(
            ComponentInfo(contract, given_id, target, info.name, info.distribution)
        )
    except DuplicateComponentError as exc:
        _problem(info, str(exc))
        return
    info.components.setdefault(contract, []).append(given_id)


def _problem(info: PluginInfo, message: str) -> list[Any]:
    info.problems.append(message)
    warn(f"plugin {info.name!r} ({info.distribution or 'no distribution'}): {message}")
    return []
