"""Orchestration: the matrix, iterations, hooks (imports trio; its modules load when a name is first used)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover
    from .build import build_components, options_from_config, resolve_all_modes
    from .options import RunOptions
    from .suite import (
        mode_environment,
        new_run_id,
        run_profile_suite,
        run_profile_suite_sync,
    )

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


__getattr__ = lazy_exports(__name__, _EXPORTS)


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
