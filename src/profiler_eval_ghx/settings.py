"""The eval's own profile settings: ``extensions.fixtures`` of an eval config.

```yaml
extensions:
  fixtures:
    repo: my-org/eval-sandbox       # the sandbox: every fixture write goes here, never
    where a manifest says (required)
    manifest: fixtures/latest.json  # relative to the profile's folder
    seed_if_missing: false          # seed before the run when the manifest is missing
    reseed_between_modes: false     # reset every fixture before each mode
```
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from profiler_core import ConfigError

from .github import GitHubError, split_repo

DEFAULT_MANIFEST = "fixtures/latest.json"
_KEYS = ("repo", "manifest", "seed_if_missing", "reseed_between_modes")


@attrs.frozen(kw_only=True)
class FixtureSettings:
    """Where fixtures live and when they are seeded or reset."""

    repo: str | None = None
    manifest: Path = Path(DEFAULT_MANIFEST)
    seed_if_missing: bool = False
    reseed_between_modes: bool = False


def _is_repo(repo: Any) -> bool:
    """``owner/name``, as the GitHub client reads it."""
    if not isinstance(repo, str):
        return False
    try:
        split_repo(repo)
    except GitHubError:
        return False
    return True


def _manifest_path(manifest: str, profile_path: str | None) -> Path:
    """The manifest file; a relative path is the profile's folder's."""
    path = Path(manifest).expanduser()
    if not path.is_absolute() and profile_path:
        path = Path(profile_path).resolve().parent / path
    return path


def fixture_settings(
    extensions: Mapping[str, Any], *, profile_path: str | None = None
) -> FixtureSettings | None:
    """Read ``extensions.fixtures`` (``None`` when absent); a wrong key or type is a
    ``ConfigError`` naming it."""
    raw = extensions.get("fixtures")
    if raw is None:
        return None
    where = f"{profile_path}: " if profile_path else ""
    if not isinstance(raw, Mapping):
        raise ConfigError(
            f"{where}extensions.fixtures: expected a mapping with repo, "
            "manifest, seed_if_missing, reseed_between_modes"
        )
    problems = [
        f"{where}extensions.fixtures.{key}: unknown key (expected one of {', '.join(_KEYS)})"
        for key in raw
        if key not in _KEYS
    ]
    repo = raw.get("repo")
    if repo is not None and not _is_repo(repo):
        problems.append(
            f"{where}extensions.fixtures.repo: expected owner/name, got {repo!r}"
        )
    manifest = raw.get("manifest", DEFAULT_MANIFEST)
    if not isinstance(manifest, str) or not manifest:
        problems.append(
            f"{where}extensions.fixtures.manifest: expected a file path, got {manifest!r}"
        )
        manifest = DEFAULT_MANIFEST
    for key in ("seed_if_missing", "reseed_between_modes"):
        if not isinstance(raw.get(key, False), bool):
            problems.append(
                f"{where}extensions.fixtures.{key}: expected true or false, got {raw[key]!r}"
            )
    if problems:
        raise ConfigError("\n".join(problems))
    path = _manifest_path(manifest, profile_path)
    return FixtureSettings(
        repo=repo,
        manifest=path,
        seed_if_missing=raw.get("seed_if_missing", False),
        reseed_between_modes=raw.get("reseed_between_modes", False),
    )
