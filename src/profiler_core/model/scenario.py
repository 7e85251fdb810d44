"""Scenarios: the tasks an agent is profiled on."""

from __future__ import annotations

from typing import Any

import attrs

from ._validators import as_tuple, non_empty, non_negative, positive


@attrs.frozen(kw_only=True)
class Scenario:
    """One task given to the agent (the original's BaseScenario)."""

    id: str = attrs.field(validator=non_empty)
    name: str = attrs.field(validator=non_empty)
    description: str = ""
    prompt: str
    timeout_ms: int = attrs.field(default=120_000, validator=positive)
    allowed_retries: int = attrs.field(default=0, validator=non_negative)
    tags: tuple[str, ...] = attrs.field(default=(), converter=as_tuple)
    extensions: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ScenarioSets:
    """Named lists of scenario ids (``scenario-sets.json``)."""

    sets: dict[str, tuple[str, ...]] = attrs.field(factory=dict)

    def ids(self, name: str) -> tuple[str, ...]:
        """Return the scenario ids of the set ``name`` (KeyError if unknown)."""
        return self.sets[name]
