"""Plugins: the contracts components implement, the hook specifications, and the plugin manager.

The manager's API is re-exported here (``from profiler_core.plugins import get_plugin_manager``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if (
    TYPE_CHECKING
):  # the names below load on first use, so importing a sibling module stays cheap
    from .manager import (
        BUILTIN_PLUGINS,
        CONTRACTS,
        ENTRY_POINT_GROUP,
        ComponentInfo,
        PluginInfo,
        PluginManager,
        Registry,
        default_plugin_manager,
        get_plugin_manager,
        set_default_plugin_manager,
    )

__all__ = [
    "BUILTIN_PLUGINS",
    "CONTRACTS",
    "ENTRY_POINT_GROUP",
    "ComponentInfo",
    "PluginInfo",
    "PluginManager",
    "Registry",
    "default_plugin_manager",
    "get_plugin_manager",
    "set_default_plugin_manager",
]


__getattr__ = lazy_exports(__name__, dict.fromkeys(__all__, "manager"))


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
