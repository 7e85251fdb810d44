"""Orchestration: the matrix, iterations, hooks (imports trio; its modules load when a
name is first used)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

#: module of this package -> the public names it defines, each imported on first use
#: (``profiler validate`` needs ``build`` without trio)
_LAZY = {
    "build": ("build_components", "options_from_config", "resolve_all_modes"),
    "options": ("RunOptions",),
    "suite": (
        "mode_environment",
        "new_run_id",
        "run_profile_suite",
        "run_profile_suite_sync",
    ),
}

__getattr__ = lazy_exports(__name__, _LAZY)

# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand.
if TYPE_CHECKING:
    from .build import (
        build_components,
        options_from_config,
        resolve_all_modes,
    )
    from .options import (
        RunOptions,
    )
    from .suite import (
        mode_environment,
        new_run_id,
        run_profile_suite,
        run_profile_suite_sync,
    )

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
# End of the written names.
