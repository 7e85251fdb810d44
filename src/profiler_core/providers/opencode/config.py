"""The ``opencode`` provider's options and the OpenCode configuration generated from them.

Every option may be set in the profile's ``provider.options`` and changed per
mode by ``provider_overrides`` (see docs/providers/opencode.md).
"""

from __future__ import annotations

import copy
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ...errors import ConfigError, ProfilerError
from ...model import CreateSessionParams, PermissionConfig
from ...model.record import Record

#: How to get the program when it is missing (one line, in the error message).
INSTALL_HINT = (
    "install it with `npm install -g opencode-ai` or `profiler agents install` (or "
    "set options.binary / OPENCODE_BIN to its path)"
)

#: Tools whose permission ``auto_approve`` turns to "allow" (a headless session cannot
#: answer a question).
PERMISSION_KEYS = ("edit", "bash", "webfetch", "external_directory")


class OpenCodeError(ProfilerError):
    """OpenCode failed: it would not start, a request failed, or the model reported an error."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class OpenCodeOptions(Record):
    """The provider's options, validated."""

    #: path of the opencode program; else $OPENCODE_BIN, else `opencode` on PATH
    binary: str | None = None
    #: use this running server (``http://127.0.0.1:4096``) instead of starting one
    base_url: str | None = None
    #: merged (deeply) into the generated OpenCode config
    config: dict[str, Any] = attrs.field(factory=dict)
    #: OpenCode MCP servers (the config's ``mcp``), usually set per mode
    mcp: dict[str, Any] = attrs.field(factory=dict)
    #: OpenCode permissions (the config's ``permission``), merged over the auto-approve defaults
    permission: dict[str, Any] = attrs.field(factory=dict)
    #: OpenCode agent that answers the prompt (default: OpenCode's default agent, ``build``)
    agent: str | None = None
    #: seconds to wait for "opencode server listening" (a cold start takes 4.5-7 s)
    start_timeout_s: float = 30.0
    #: milliseconds between two polls of a running session
    poll_interval_ms: float = 300.0
    #: seconds any one HTTP request to OpenCode may take
    request_timeout_s: float = 30.0
    #: model-request retries OpenCode may make (it retries 5xx forever) before the
    #: session is aborted as failed
    max_model_retries: int = 2
    #: seconds destroy_session waits for a session to go idle before deleting it
    idle_timeout_s: float = 10.0
    #: seconds between SIGTERM and SIGKILL when the server is stopped
    kill_grace_s: float = 5.0
    #: directory the sessions work in (default: the current directory)
    workdir: str | None = None
    #: give every session a fresh temporary copy of ``workdir_template`` (else of
    #: ``workdir``, else an empty directory)
    workdir_per_session: bool = False
    #: directory copied for each session when ``workdir_per_session`` is on
    workdir_template: str | None = None

    @classmethod
    def parse(
        cls, raw: Mapping[str, Any], where: str = "provider 'opencode'"
    ) -> OpenCodeOptions:
        """Validate a profile's options mapping; a bad one is a ConfigError naming the option."""
        fields = {f.name: f for f in attrs.fields(cls)}
        unknown = sorted(set(raw) - set(fields))
        if unknown:
            raise ConfigError(
                f"{where}: unknown option(s) {', '.join(unknown)}; expected "
                f"some of {', '.join(fields)}"
            )
        values: dict[str, Any] = {}
        for name, value in raw.items():
            if value is None:
                continue
            values[name] = _check(name, value, fields[name].default, where)
        return cls(**values)


def _check(name: str, value: Any, default: Any, where: str) -> Any:
    """An option's value, checked against the kind of its default."""
    here = f"{where}: option '{name}'"
    if isinstance(default, bool):
        return _flag(value, here)
    if isinstance(default, int):
        return _count(value, here)
    if isinstance(default, float):
        return _positive(value, here)
    if name in ("config", "mcp", "permission"):
        return _mapping(value, here)
    return _text(value, here)


def _flag(value: Any, here: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{here}: expected true or false, got {value!r}")
    return value


def _count(value: Any, here: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{here}: expected an integer >= 0, got {value!r}")
    return value


def _positive(value: Any, here: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{here}: expected a number > 0, got {value!r}")
    return float(value)


def _mapping(value: Any, here: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{here}: expected a mapping, got {type(value).__name__}")
    return dict(value)


def _text(value: Any, here: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{here}: expected a non-empty string, got {value!r}")
    return value


def find_binary(options: OpenCodeOptions) -> str:
    """The opencode program: ``options.binary``, then ``$OPENCODE_BIN``, then PATH; else
    one line saying how to install it."""
    if options.binary:
        path = Path(options.binary).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        raise ConfigError(
            f"provider 'opencode': option 'binary': {options.binary!r} is not "
            f"an executable file; {INSTALL_HINT}"
        )
    env = os.environ.get("OPENCODE_BIN")
    if env:
        if Path(env).is_file() and os.access(env, os.X_OK):
            return env
        raise ConfigError(
            f"provider 'opencode': OPENCODE_BIN={env!r} is not an executable file; {INSTALL_HINT}"
        )
    from ..agents import find_installed

    # Then .agents/ of a checkout, or the cache `profiler agents install` fills.
    found = shutil.which("opencode") or find_installed("opencode")
    if found:
        return found
    raise ConfigError(
        f"provider 'opencode': the opencode program was not found on PATH; {INSTALL_HINT}"
    )


def split_model(model: str) -> tuple[str, str]:
    """``"anthropic/claude-sonnet-4-5"`` -> (providerID, modelID)."""
    provider, sep, model_id = model.partition("/")
    if not sep or not provider or not model_id:
        raise ConfigError(
            f"provider 'opencode': model {model!r}: expected OpenCode's "
            "'providerID/modelID' (e.g. 'anthropic/claude-sonnet-4-5')"
        )
    return provider, model_id


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in: mappings merge key by key, anything else replaces."""
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def opencode_config(
    options: OpenCodeOptions, model: str, permissions: PermissionConfig
) -> dict[str, Any]:
    """The OpenCode config for one server: model, no updates or sharing, permissions,
    MCP servers, then ``options.config``."""
    split_model(model)
    config: dict[str, Any] = {
        "$schema": "https://opencode.ai/config.json",
        "model": model,
        "small_model": model,
        "autoupdate": False,
        "share": "disabled",
    }
    if permissions.auto_approve:
        config["permission"] = {key: "allow" for key in PERMISSION_KEYS}
    if options.permission:
        config = deep_merge(config, {"permission": options.permission})
    if options.mcp:
        config = deep_merge(config, {"mcp": options.mcp})
    return deep_merge(config, options.config)


def session_title(params: CreateSessionParams) -> str:
    """The title a session is given: OpenCode then makes no model call to write one."""
    return f"{params.scenario_id} #{params.iteration} ({params.mode})"
