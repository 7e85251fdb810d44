"""OpenCode's server behind the wire recorder: where its model is, which key it holds,
how calls are split.

The recorder forwards to the model provider's ``baseURL`` of the config, else
to the vendor's API (``VENDOR_APIS``); the server is given the recorder's
address and a placeholder key, and the real key (the config's ``apiKey``, an
``{env:NAME}`` it names, or the vendor's usual variable) stays with the
recorder. One server serves every session of its mode through one path, and
OpenCode names the session of each model call in a header (``X-Session-Id``;
a sub-agent's also its parent's), so each session's calls are told apart.
See docs/wire.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import attrs

from ...model.record import Record
from .._agent_process import WIRE_PLACEHOLDER_KEY
from .config import deep_merge, split_model

__all__ = [
    "KEY_VARIABLES",
    "PARENT_HEADER",
    "SESSION_HEADER",
    "VENDOR_APIS",
    "WireSetup",
    "hide_key",
    "point_at",
    "real_key",
    "wire_setup",
]

#: The base URL of each vendor's API as OpenCode's SDKs call it (only APIs the recorder reads).
VENDOR_APIS = {
    "anthropic": "https://api.anthropic.com/v1",
    "openai": "https://api.openai.com/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "groq": "https://api.groq.com/openai/v1",
    "mistral": "https://api.mistral.ai/v1",
}
#: The variables OpenCode reads a vendor's key from (models.dev's ``env`` of each provider).
KEY_VARIABLES = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
}
#: OpenCode's header naming the session of a model call, and the one naming its parent
#: (a sub-agent's)
SESSION_HEADER = "x-session-id"
PARENT_HEADER = "x-parent-session-id"
#: ``{env:NAME}`` in an OpenCode config value: the variable's value
_ENV_REFERENCE = re.compile(r"^\{env:([A-Za-z_][A-Za-z0-9_]*)\}$")


@attrs.frozen(repr=False, eq=False)
class WireSetup(Record):
    """The server's config pointed at the recorder, the endpoint it forwards to and the real key."""

    config: dict[str, Any]
    endpoint: str
    #: the real key (None: the server sent none, forwarded as sent)
    key: str | None = attrs.field(repr=False)


def _lookup(name: str, mode_env: Mapping[str, str]) -> str | None:
    return mode_env.get(name) or os.environ.get(name) or None


def real_key(
    provider_id: str, settings: Mapping[str, Any], mode_env: Mapping[str, str]
) -> str | None:
    """The key OpenCode would send: the config's ``apiKey`` (or the variable it names),
    else the vendor's."""
    configured = settings.get("apiKey")
    if isinstance(configured, str) and configured:
        reference = _ENV_REFERENCE.match(configured)
        return _lookup(reference.group(1), mode_env) if reference else configured
    for name in KEY_VARIABLES.get(provider_id, ()):
        if found := _lookup(name, mode_env):
            return found
    return None


def wire_setup(
    server_config: dict[str, Any], model: str, mode_env: Mapping[str, str]
) -> WireSetup | None:
    """Where the recorder forwards the model's calls, the real key, and the config with
    a placeholder key
    (its ``baseURL`` is set by :func:`point_at` once the recorder runs); None: no
    endpoint it can read."""
    provider_id = split_model(model)[0]
    provider = (server_config.get("provider") or {}).get(provider_id)
    raw = provider.get("options") if isinstance(provider, dict) else None
    settings: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    base_url = settings.get("baseURL")
    if not isinstance(base_url, str) or not base_url:
        base_url = VENDOR_APIS.get(provider_id)
    if base_url is None:
        return None  # a vendor whose API the recorder does not read (Google's): not redirected
    key = real_key(provider_id, settings, mode_env)
    if key is None:
        return WireSetup(config=server_config, endpoint=base_url, key=None)
    # The config's key too: OpenCode would send whatever it holds, and --env shows it to
    # `docker inspect`.
    hidden = {"provider": {provider_id: {"options": {"apiKey": WIRE_PLACEHOLDER_KEY}}}}
    return WireSetup(
        config=deep_merge(server_config, hidden), endpoint=base_url, key=key
    )


def point_at(config: dict[str, Any], model: str, base_url: str) -> dict[str, Any]:
    """``config`` with the model's provider's ``baseURL`` set to the recorder's ``base_url``."""
    provider_id = split_model(model)[0]
    return deep_merge(
        config, {"provider": {provider_id: {"options": {"baseURL": base_url}}}}
    )


def hide_key(env: Mapping[str, str], key: str | None) -> dict[str, str]:
    """``env`` with the placeholder in every variable holding the real key (a copy in a
    longer value too,
    unless the key is so short it could be any value's part)."""
    if not key:
        return dict(env)
    return {
        name: WIRE_PLACEHOLDER_KEY
        if value == key or (len(key) >= 16 and key in value)
        else value
        for name, value in env.items()
    }
