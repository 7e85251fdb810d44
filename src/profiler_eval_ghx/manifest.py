"""The fixture manifest: what was seeded on GitHub, by fixture name (``fixtures/manifest.json``).

JSON keys are camelCase, as in the original:
``{seedId, createdAt, repo, fixtures: {name: {type, number, repo, branch?, labels?, metadata}}}``.
``metadata.originalSha`` is the commit a branch is reset to.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

FixtureType = Literal["issue", "pr"]


@attrs.frozen(kw_only=True)
class FixtureResource:
    """One seeded issue or pull request (with its branch, when it has one)."""

    type: FixtureType
    number: int
    repo: str
    branch: str | None = None
    labels: tuple[str, ...] | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class FixtureManifest:
    """Every fixture of one seeding, by name."""

    seed_id: str
    created_at: str
    repo: str
    fixtures: dict[str, FixtureResource] = attrs.field(factory=dict)
