"""What ``profiler list-plugins`` knows about each plugin, and the warning a plugin's
problem prints."""

from __future__ import annotations

import sys
from typing import Any

import attrs

from .contracts import CONTRACTS

#: the hooks that register components (asked one plugin at a time, never isolated)
REGISTRATION_HOOKS = frozenset(c.hook for c in CONTRACTS.values())


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
        """The PROVIDES cell of ``list-plugins``: ``ERROR ...``, else the components and
        the other hooks, or ``-``."""
        if self.error:
            return f"ERROR {self.error}"
        parts = [
            f"{contract}: {', '.join(sorted(ids))}"
            for contract, ids in sorted(self.components.items())
        ]
        # Registration hooks show as the components above; the rest (lifecycle,
        # commands) by short name.
        hooks = sorted(
            h.removeprefix("profiler_")
            for h in self.hooks
            if h not in REGISTRATION_HOOKS
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


def warn(message: str) -> None:
    print(f"agent-profiler: warning: {message}", file=sys.stderr)
