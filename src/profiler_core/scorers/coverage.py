"""Is the profile's scorer the one its scenarios were written for?

A scorer may say which keys of a scenario's ``extensions`` it scores by
(``scenario_keys``: ``checks`` for the ``checks`` scorer, ``rubric`` for
``llm-judge``, ``assertions`` for the eval's ``checkpoint``). When the
scenarios carry a key that some installed scorer scores by, but the profile's
scorer does not read it, every task would be scored without it - the
``checks`` scorer would call an eval task done with 0 of 0 checks. ``profiler
validate`` (and so ``profiler eval check``) refuses that in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ..config import ProfilerConfig
    from ..model.scenario import Scenario
    from ..plugins.manager import Registry

__all__ = ["scenario_keys_of", "unscored_problems"]


def scenario_keys_of(component: Any) -> tuple[str, ...] | None:
    """The scenario keys a scorer (or its class) declares it scores by; None when it
    does not say."""
    keys = getattr(component, "scenario_keys", None)
    if isinstance(keys, (tuple, list, frozenset, set)) and all(
        isinstance(k, str) for k in keys
    ):
        return tuple(keys)
    return None


def _readers(registry: Registry) -> dict[str, list[str]]:
    """Each scenario key an installed scorer scores by, and the scorers that do."""
    readers: dict[str, list[str]] = {}
    for scorer_id in registry.ids("scorers"):
        info = registry.find("scorers", scorer_id)
        for key in scenario_keys_of(getattr(info, "factory", None)) or ():
            readers.setdefault(key, []).append(scorer_id)
    return readers


def unscored_problems(
    config: ProfilerConfig,
    scorer: Any,
    registry: Registry,
    scenarios: Sequence[Scenario] | None = None,
) -> list[str]:
    """One line when the scenarios carry what another scorer scores by and ``scorer``
    ignores it; else none."""
    reads = scenario_keys_of(scorer)
    if reads is None:
        return []  # a scorer that does not say what it reads may read anything
    readers = _readers(registry)
    chosen: Sequence[Scenario] = config.scenarios if scenarios is None else scenarios
    carried = sorted(
        {
            key
            for s in chosen
            for key in (s.extensions or {})
            if key in readers and key not in reads
        }
    )
    if not carried:
        return []
    key = carried[0]
    count = sum(1 for s in chosen if key in (s.extensions or {}))
    by = readers[key]
    return [
        f"{config.path}: scorer: {count} scenario(s) carry `{key}`, which "
        f"scorer {config.scorer.id!r} ignores "
        f"(it is scored by {', '.join(repr(b) for b in by)}): set `scorer: {{id: {by[0]}}}`"
    ]
