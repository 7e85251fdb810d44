"""``run_profile_suite``: the Python API of a run (the phases live in :mod:`.run`)."""

from __future__ import annotations

import trio

from ..errors import ProfilerError
from ..model import ProfileSuiteResult
from .environment import mode_environment
from .ids import new_run_id
from .options import RunOptions
from .run import Run


async def run_profile_suite(options: RunOptions) -> ProfileSuiteResult:
    """Run the whole matrix under trio and return the suite result (rows are read from
    disk on use)."""
    return await Run(options).execute_all()


def run_profile_suite_sync(options: RunOptions) -> ProfileSuiteResult:
    """Run the suite from synchronous code (wraps ``trio.run``)."""
    return trio.run(run_profile_suite, options)


__all__ = [
    "ProfilerError",
    "mode_environment",
    "new_run_id",
    "run_profile_suite",
    "run_profile_suite_sync",
]
