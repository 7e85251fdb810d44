"""Orchestration: the matrix, iterations, hooks (imports trio; its modules load when a name is first used)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .build import build_components, options_from_config, resolve_all_modes
    from .options import RunOptions
    from .suite import mode_environment, new_run_id, run_profile_suite, run_profile_suite_sync

#: public name -> the module of this package defining it (``profiler validate`` needs ``build`` without trio)
_EXPORTS = {
    "RunOptions": "options",
    "build_components": "build",
    "mode_environment": "suite",
    "new_run_id": "suite",
    "options_from_config": "build",
    "resolve_all_modes": "build",
    "run_profile_suite": "suite",
    "run_profile_suite_sync": "suite",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = [
    "RunOptions",
    "build_components",
    "mode_environment",
    "new_run_id",
    "options_from_config",
    "resolve_all_modes",
    "run_profile_suite",
    "run_profile_suite_sync",
]
