"""The built-in ``config`` mode resolver: modes written out in the profile."""

from __future__ import annotations

import difflib
from typing import Any

from ..errors import ConfigError, UnknownModeError
from ..model import ModeConfig
from ..storage.serde import structure


class ConfigModeResolver:
    """Resolves modes from the profile's ``modes:`` mapping."""

    id = "config"

    def __init__(self, modes: dict[str, Any] | None = None) -> None:
        self._modes: dict[str, ModeConfig] = {}
        for name, spec in (modes or {}).items():
            if isinstance(spec, ModeConfig):
                self._modes[name] = spec
                continue
            if spec is None:
                spec = {}
            if not isinstance(spec, dict):
                raise ConfigError(
                    f"modes.{name}: expected a mapping, got {type(spec).__name__}"
                )
            self._modes[name] = _mode_from_profile(name, spec)

    def resolve(self, mode: str) -> ModeConfig:
        """Return the configured mode, or raise ``UnknownModeError``."""
        try:
            return self._modes[mode]
        except KeyError:
            hint = difflib.get_close_matches(mode, list(self._modes), n=1)
            did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
            known = ", ".join(sorted(self._modes)) or "none"
            raise UnknownModeError(
                f"unknown mode {mode!r}{did_you_mean} (configured: {known})"
            ) from None


def _mode_from_profile(name: str, spec: dict[str, Any]) -> ModeConfig:
    # Profiles are snake_case YAML; the model's JSON form is camelCase.
    allowed = {"environment", "system_instructions", "provider_overrides"}
    unknown = set(spec) - allowed
    if unknown:
        key = sorted(unknown)[0]
        hint = difflib.get_close_matches(key, sorted(allowed), n=1)
        did_you_mean = (
            f"; did you mean `{hint[0]}`?"
            if hint
            else f" (expected one of {', '.join(sorted(allowed))})"
        )
        raise ConfigError(f"modes.{name}.{key}: unknown key{did_you_mean}")
    env = spec.get("environment") or {}
    if not isinstance(env, dict):
        raise ConfigError(f"modes.{name}.environment: expected a mapping of strings")
    data = {
        "environment": {str(k): str(v) for k, v in env.items()},
        "systemInstructions": spec.get("system_instructions") or "",
        "providerOverrides": spec.get("provider_overrides") or {},
    }
    return structure(data, ModeConfig, source=f"modes.{name}")
