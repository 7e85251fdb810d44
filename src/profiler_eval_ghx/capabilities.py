"""GitHub capabilities the checkpoints call (`issue.view`, `pr.reviews.list`, ...).

Interface shared by the checkpoint scorer and the GitHub client; the
implementations arrive with the GitHub access layer.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs


@attrs.frozen(kw_only=True)
class CapabilityResult:
    """The outcome of one capability call: ``data`` when ``ok``, else ``error`` says why."""

    ok: bool
    data: Any = None
    error: str | None = None


class CapabilityExecutor(Protocol):
    """Runs a capability task (e.g. ``issue.view``) with its input against GitHub."""

    async def run(self, task: str, input: dict[str, Any]) -> CapabilityResult: ...
