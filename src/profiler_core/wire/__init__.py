"""The model wire recorder: a recording proxy between an agent and its model (docs/wire.md).

The row's summary of what it recorded is the ``wire`` collector's
(``profiler_core.metrics.wire``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

#: module of this package -> the public names it defines: the recorder (httpx, http.server)
#: loads on first use
_LAZY = {
    "apis": ("WireToolCall", "api_of"),
    "recorder": ("WireRecorder", "WireSession"),
}

__getattr__ = lazy_exports(__name__, _LAZY)

# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand.
if TYPE_CHECKING:
    from .apis import (
        WireToolCall,
        api_of,
    )
    from .recorder import (
        WireRecorder,
        WireSession,
    )

__all__ = [
    "WireRecorder",
    "WireSession",
    "WireToolCall",
    "api_of",
]
# End of the written names.
