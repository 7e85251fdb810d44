"""The contracts, where plugins written for earlier versions import them: they live in
:mod:`profiler_core.plugins.contracts`."""

from .plugins import contracts as _contracts
from .plugins.contracts import *  # noqa: F403 - the same names, whatever the contracts module adds

__all__: list[str] = []
__all__ += _contracts.__all__
