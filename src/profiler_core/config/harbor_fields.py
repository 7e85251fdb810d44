"""The fields of a Harbor ``task.toml``, read one by one: each problem is one line
naming the file and the field.

What each field means is Harbor's (its ``TaskConfig``, docs/harbor.md "The task format").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..model import NetworkPolicy

__all__ = [
    "ENV_TEMPLATE",
    "expand_env",
    "has_templates",
    "milliseconds",
    "network_policy",
    "read_env",
    "size_mb",
    "strings",
    "strip_canary",
    "table",
    "text",
]

#: Harbor's ``${VAR}`` and ``${VAR:-default}`` in ``env`` values (resolved from the host
#: when the trial starts)
ENV_TEMPLATE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
#: Harbor's canary lines: an HTML or ``#`` comment that says "canary", at the top of an instruction
_CANARY_LINE = re.compile(r"^(<!--.*canary.*-->|#.*canary.*)$", re.IGNORECASE)
#: ``[*].network_mode`` values
NETWORK_MODES = ("public", "no-network", "allowlist")


def strip_canary(text_: str) -> str:
    """The instruction without its leading canary comment lines and the blank lines
    after them (Harbor's rule)."""
    lines = text_.split("\n")
    first = 0
    while first < len(lines) and _CANARY_LINE.match(lines[first].strip()):
        first += 1
    if first == 0:
        return text_
    while first < len(lines) and not lines[first].strip():
        first += 1
    return "\n".join(lines[first:])


def expand_env(
    templates: Mapping[str, str], environ: Mapping[str, str]
) -> dict[str, str]:
    """``templates`` with Harbor's ``${VAR}`` / ``${VAR:-default}`` taken from ``environ``.

    A variable that ``environ`` lacks and that has no default is a ``ConfigError``
    naming it and the key.
    """
    expanded: dict[str, str] = {}
    for key, value in templates.items():

        def one(match: re.Match[str], key: str = key) -> str:
            name, default = match.group(1), match.group(2)
            if name in environ:
                return environ[name]
            if default is not None:
                return default
            raise ConfigError(
                f"env {key}: ${{{name}}} is not set in the environment and has "
                f"no default (write ${{{name}:-default}})"
            )

        expanded[key] = ENV_TEMPLATE.sub(one, value)
    return expanded


def task_env(env: Mapping[str, str], templated: bool, where: str) -> dict[str, str]:
    """A task's env for a command now: its ``${VAR}`` templates expanded from this
    process's environment when it has any.

    A variable missing on the host is one ``ConfigError`` line naming ``where`` (e.g.
    ``[verifier].env``).
    """
    import os

    if not templated:
        return dict(env)
    try:
        return expand_env(env, os.environ)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def has_templates(env: Mapping[str, str]) -> bool:
    """Whether any value holds a ``${VAR}`` template."""
    return any(ENV_TEMPLATE.search(value) for value in env.values())


def table(
    data: Mapping[str, Any], name: str, path: Path, section: str | None = None
) -> dict[str, Any]:
    """``data[name]`` as a table (``{}`` when absent)."""
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(
            f"{path}: [{section or name}]: expected a table, got {type(value).__name__}"
        )
    return value


def text(values: Mapping[str, Any], key: str, path: Path, section: str) -> str | None:
    """A string field (None when absent)."""
    value = values.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(
            f"{path}: {section}.{key}: expected a string, got {value!r}"[:300]
        )
    return value


def strings(values: Mapping[str, Any], key: str, path: Path, section: str) -> list[str]:
    """A list of non-empty strings (``[]`` when absent)."""
    value = values.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(
            f"{path}: {section}.{key}: expected a list of strings, got {value!r}"[:300]
        )
    return value


def milliseconds(
    values: Mapping[str, Any],
    path: Path,
    section: str,
    default_ms: int,
    key: str = "timeout_sec",
) -> int:
    """A number of seconds > 0 as milliseconds (``default_ms`` when absent)."""
    value = values.get(key)
    if value is None:
        return default_ms
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(
            f"{path}: {section}.{key}: expected a number of seconds > 0, got {value!r}"[
                :300
            ]
        )
    return max(1, round(value * 1000))


def positive(
    values: Mapping[str, Any], key: str, path: Path, section: str
) -> float | None:
    """A number > 0 (None when absent)."""
    value = values.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(
            f"{path}: {section}.{key}: expected a number > 0, got {value!r}"[:300]
        )
    return value


def size_mb(
    values: Mapping[str, Any], key: str, path: Path, section: str
) -> int | None:
    """``<key>_mb`` (a number of MB), else Harbor's older ``<key>`` (``"2G"``,
    ``"512M"``, ``"1024K"``); None when neither."""
    given = positive(values, f"{key}_mb", path, section)
    if given is not None:
        return max(1, round(given))
    old = values.get(key)
    if old is None:
        return None
    match = (
        re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([GMK])\s*", old.upper())
        if isinstance(old, str)
        else None
    )
    if match is None:
        raise ConfigError(
            f"{path}: {section}.{key}: expected a size like '2G', '512M' (or "
            f"{key}_mb), got {old!r}"[:300]
        )
    number, unit = float(match.group(1)), match.group(2)
    return max(1, round(number * {"G": 1024, "M": 1, "K": 1 / 1024}[unit]))


def read_env(values: Mapping[str, Any], path: Path, section: str) -> dict[str, str]:
    """``<section>.env``: variable names to strings (numbers become strings), templates
    kept as written."""
    value = values.get("env", {})
    if not isinstance(value, dict) or not all(
        isinstance(v, (str, int, float)) and not isinstance(v, bool)
        for v in value.values()
    ):
        raise ConfigError(
            f"{path}: {section}.env: expected a table of variable names to strings, got {value!r}"[
                :300
            ]
        )
    for name, template in value.items():
        if (
            isinstance(template, str)
            and "${" in template
            and not _well_formed(template)
        ):
            raise ConfigError(
                f"{path}: {section}.env.{name}: expected ${{VAR}} or "
                f"${{VAR:-default}}, got {template!r}"[:300]
            )
    return {str(k): str(v) for k, v in value.items()}


def _well_formed(template: str) -> bool:
    """Every ``${`` starts a template Harbor resolves."""
    return ENV_TEMPLATE.sub("", template).count("${") == 0


def network_policy(
    values: Mapping[str, Any], path: Path, section: str, *, baseline: bool = False
) -> NetworkPolicy | None:
    """A phase's network policy (``network_mode``, ``allowed_hosts``; for the
    environment also ``allow_internet``).

    None when the section says nothing about it (a phase then inherits the
    environment's; the environment is public).
    ``allowed_hosts`` without a mode means ``allowlist``, as in Harbor.
    """
    mode = values.get("network_mode")
    if mode is not None and mode not in NETWORK_MODES:
        raise ConfigError(
            f"{path}: {section}.network_mode: expected one of "
            f"{', '.join(NETWORK_MODES)}, got {mode!r}"[:300]
        )
    hosts = _hosts(values, path, section)
    if hosts and mode not in (None, "allowlist"):
        raise ConfigError(
            f"{path}: {section}.allowed_hosts: only valid with network_mode = "
            f'"allowlist", got {mode!r}'
        )
    if hosts or mode is not None:
        return NetworkPolicy(mode=mode or "allowlist", allowed_hosts=tuple(hosts))
    allow = values.get("allow_internet") if baseline else None
    if allow is None:
        return None
    if not isinstance(allow, bool):
        raise ConfigError(
            f"{path}: {section}.allow_internet: expected true or false, got {allow!r}"[
                :300
            ]
        )
    return NetworkPolicy(mode="public" if allow else "no-network")


def _hosts(values: Mapping[str, Any], path: Path, section: str) -> list[str]:
    """``allowed_hosts``: host names, addresses or ranges, lower-cased, without a
    trailing dot, each once."""
    hosts = (
        strings(values, "allowed_hosts", path, section)
        if values.get("allowed_hosts") is not None
        else []
    )
    found: list[str] = []
    for host in hosts:
        name = host.strip().lower().rstrip(".")
        if not name or "://" in name or any(c.isspace() for c in name):
            raise ConfigError(
                f"{path}: {section}.allowed_hosts: expected host names or "
                f"addresses (not URLs), got {host!r}"[:300]
            )
        if name not in found:
            found.append(name)
    return found
