"""Write each lazy package's ``TYPE_CHECKING`` imports and ``__all__`` from its ``_LAZY`` table.

A package that loads its names on first use (``_lazy.lazy_exports``) lists each public
name once, in ``_LAZY`` (submodule -> names), or in ``_EAGER`` for the names it defines
or imports itself. Type checkers and ``import *`` need the names written out, so this
module writes them between two marker lines of the package's ``__init__.py``:

    python -m profiler_core._lazy_gen          # rewrite what is stale
    python -m profiler_core._lazy_gen --check  # list what is stale, exit 1 (tests run this)
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

BEGIN = (
    "# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand."
)
END = "# End of the written names."

#: The packages whose public names load on first use.
PACKAGES = (
    "profiler_core",
    "profiler_core.cli",
    "profiler_core.config",
    "profiler_core.importers",
    "profiler_core.model",
    "profiler_core.plugins",
    "profiler_core.runner",
    "profiler_core.sandbox",
    "profiler_core.wire",
)


def _order(name: str) -> tuple[int, str]:
    # isort's order by type, as ruff sorts imports and __all__: CONSTANTS, Classes, the rest.
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def render(package: str) -> str:
    """The marked block of ``package``'s ``__init__.py``, from its ``_LAZY`` and ``_EAGER``."""
    module = importlib.import_module(package)
    table: dict[str, tuple[str, ...]] = module._LAZY
    eager: tuple[str, ...] = getattr(module, "_EAGER", ())
    lines = [BEGIN, "if TYPE_CHECKING:"]
    for submodule in sorted(table):
        lines.append(f"    from .{submodule} import (")
        lines += [f"        {name}," for name in sorted(table[submodule], key=_order)]
        lines.append("    )")
    names = {*eager, *(name for names in table.values() for name in names)}
    lines.append("")
    lines.append("__all__ = [")
    lines += [f'    "{name}",' for name in sorted(names, key=_order)]
    lines.append("]")
    lines.append(END)
    return "\n".join(lines) + "\n"


def init_file(package: str) -> Path:
    """The ``__init__.py`` of ``package``."""
    origin = importlib.import_module(package).__file__
    assert origin is not None
    return Path(origin)


def written(package: str) -> str:
    """The marked block as it stands in ``package``'s ``__init__.py`` ('' when it has none)."""
    text = init_file(package).read_text(encoding="utf-8")
    start = text.find(BEGIN)
    end = text.find(END, start)
    if start < 0 or end < 0:
        return ""
    return text[start : end + len(END)] + "\n"


def write(package: str) -> bool:
    """Rewrite ``package``'s marked block from its table; True when it changed."""
    path = init_file(package)
    old, new = written(package), render(package)
    if old == new:
        return False
    if not old:
        raise SystemExit(f"{path}: no {BEGIN!r} ... {END!r} block to write")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    """Write (or with ``--check`` only list) the stale blocks; 1 when one was stale."""
    check = "--check" in argv
    stale = [p for p in PACKAGES if written(p) != render(p)]
    for package in stale:
        if not check:
            write(package)
        print(f"{init_file(package)}: {'stale' if check else 'rewritten'}")
    return 1 if stale and check else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
