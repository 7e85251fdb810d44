"""The model wire recorder: a recording proxy between an agent and its model (docs/wire.md).

The row's summary of what it recorded is the ``wire`` collector's
(``profiler_core.metrics.wire``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the recorder (httpx, http.server) loads on first use
    from .apis import WireToolCall, api_of
    from .recorder import WireRecorder, WireSession

__all__ = ["WireRecorder", "WireSession", "WireToolCall", "api_of"]

__getattr__ = lazy_exports(
    __name__,
    {
        "WireRecorder": "recorder",
        "WireSession": "recorder",
        "WireToolCall": "apis",
        "api_of": "apis",
    },
)
