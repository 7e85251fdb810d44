"""One module ``__getattr__`` (PEP 562) for the packages that load their public names on first use."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``package``: ``name`` comes from its submodule ``exports[name]``, imported then.

    The value is then set on the package, so the next lookup is a plain attribute.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
