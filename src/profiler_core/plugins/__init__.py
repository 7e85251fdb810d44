"""Plugins: the contracts components implement, the hook specifications, and the plugin manager.

The manager's API is re-exported here (``from profiler_core.plugins import get_plugin_manager``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

#: module of this package -> the public names it defines, each imported on first use:
#: importing a sibling module stays cheap
_LAZY = {
    "manager": (
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
    ),
}

__getattr__ = lazy_exports(__name__, _LAZY)

# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand.
if TYPE_CHECKING:
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
# End of the written names.


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
