"""One module ``__getattr__`` (PEP 562) for the packages that load their public names on first use.

Each such package keeps one table, ``_LAZY``: its module -> the public names it defines.
The package's ``__getattr__`` comes from it here; its ``TYPE_CHECKING`` imports and its
``__all__`` are written from it by ``python -m profiler_core._lazy_gen`` (docs/architecture.md).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, table: Mapping[str, Iterable[str]]
) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``package``: a name of ``table[module]`` comes from that submodule.

    The submodule is imported on the name's first lookup, and the value is then set on
    the package, so the next lookup is a plain attribute.
    """
    modules = {name: module for module, names in table.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
