"""Orchestration: the matrix, iterations, hooks (imports trio; loaded lazily)."""

from .build import build_components, options_from_config, resolve_all_modes
from .options import RunOptions
from .suite import mode_environment, new_run_id, run_profile_suite, run_profile_suite_sync

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
