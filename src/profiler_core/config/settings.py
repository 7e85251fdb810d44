"""Settings laid over a profile before it is validated: the original's environment names
and ``--set KEY=VALUE``.

Precedence, lowest first: the profile file, the environment
(``PROFILER_REPETITIONS``, ``PROFILER_WARMUP``, ``PROFILER_LOG_LEVEL``,
``PROFILER_MODES``, ``EVAL_MODEL``, ``EVAL_PROVIDER_ID``,
``EVAL_PROVIDER_PORT``), then ``profiler run --set``. A value is read as YAML
(``3`` is a number, ``false`` a flag, ``[a, b]`` a list) and lands on the
profile's data, which is then validated as if the file had said it: a wrong
value gets the file's own one-line error, naming where it came from. See
docs/profiles.md.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import yaml

from ..errors import ConfigError
from ..model.record import Record

__all__ = ["ENVIRONMENT_SETTINGS", "Settings", "gather_settings", "parse_setting"]

#: The original's environment names and the profile key each one sets.
ENVIRONMENT_SETTINGS: dict[str, str] = {
    "PROFILER_REPETITIONS": "execution.repetitions",
    "PROFILER_WARMUP": "execution.warmup",
    "PROFILER_LOG_LEVEL": "output.log_level",
    "PROFILER_MODES": "modes",  # comma-separated: which modes run (as --mode does)
    # the first model's id; provider.model when the profile lists no models
    "EVAL_MODEL": "models[0]",
    "EVAL_PROVIDER_ID": "provider.id",
    "EVAL_PROVIDER_PORT": "provider.port",
}

#: What an absent section holds when a setting goes into it (a profile without
#: `provider` runs the simulator).
_SECTION_DEFAULTS: dict[str, Any] = {"provider": {"id": "simulated"}}

#: Sections whose short form is a bare id (`scorer: checks`), and lists whose items may
#: be one (`models: [gpt-4.1]`).
_SHORT_SECTIONS = frozenset({"provider", "scorer", "judge", "mode_resolver"})
_SHORT_ITEMS = frozenset({"models", "collectors", "analyzers"})

_SEGMENT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_-]*)(?P<indexes>(?:\[\d+\])*)$")


@attrs.frozen(repr=False, eq=False)
class Settings(Record):
    """What the environment and ``--set`` put over a profile, and where each key's value
    came from."""

    #: the profile's data with the settings applied
    data: dict[str, Any]
    #: dotted key -> "--set KEY=VALUE" / "PROFILER_X=VALUE", for error messages
    origins: dict[str, str]
    #: modes to run, from PROFILER_MODES (a selection, as --mode is)
    modes: tuple[str, ...] = ()


def parse_setting(text: str) -> tuple[str, str]:
    """``"execution.repetitions=3"`` -> (key, raw value); one line naming the setting
    when it is malformed."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(
            f"--set {text!r}: expected KEY=VALUE, e.g. --set execution.repetitions=3"
        )
    _path(key, f"--set {text}")
    return key, value


def gather_settings(
    data: Mapping[str, Any],
    *,
    settings: Mapping[str, str] | Sequence[tuple[str, str]] = (),
    environ: Mapping[str, str],
) -> Settings:
    """``data`` with the environment's values, then each ``--set``, applied (the input
    is not changed)."""
    result = copy.deepcopy(dict(data))
    origins: dict[str, str] = {}
    modes: tuple[str, ...] = ()
    for name, key in ENVIRONMENT_SETTINGS.items():
        raw = environ.get(name)
        if raw is None or raw.strip() == "":
            continue
        origin = f"{name}={raw}"
        if name == "PROFILER_MODES":
            modes = tuple(m.strip() for m in raw.split(",") if m.strip())
        elif name == "EVAL_MODEL":
            origins[_set_model(result, raw.strip())] = origin
        else:
            _assign(result, key, _value(raw, origin), origin)
            origins[key] = origin
    pairs = settings.items() if isinstance(settings, Mapping) else settings
    for key, raw in pairs:
        origin = f"--set {key}={raw}"
        _assign(result, key, _value(raw, origin), origin)
        origins[key] = origin
    return Settings(data=result, origins=origins, modes=modes)


def _value(raw: str, origin: str) -> Any:
    try:
        return yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0]
        raise ConfigError(
            f"{origin}: the value is not valid YAML ({problem})"
        ) from None


def _set_model(data: dict[str, Any], model: str) -> str:
    """EVAL_MODEL: the first model's id (its label kept), or ``provider.model`` when the
    profile lists no models."""
    models = data.get("models")
    if isinstance(models, list) and models:
        first = models[0]
        models[0] = {**first, "id": model} if isinstance(first, dict) else model
        return "models[0]"
    provider = data.get("provider")
    if not isinstance(provider, dict):
        provider = (
            {"id": provider} if isinstance(provider, str) else {"id": "simulated"}
        )
        data["provider"] = provider
    provider["model"] = model
    return "provider.model"


def _path(key: str, origin: str) -> list[str | int]:
    """``models[0].label`` -> ["models", 0, "label"]; anything else is one line naming
    the setting."""
    path: list[str | int] = []
    for segment in key.split("."):
        match = _SEGMENT.match(segment)
        if match is None:
            raise ConfigError(
                f"{origin}: `{key}` is not a profile key (expected names joined "
                "by dots, e.g. execution.repetitions)"
            )
        path.append(match["name"])
        path.extend(int(i) for i in re.findall(r"\[(\d+)\]", match["indexes"]))
    return path


def _assign(data: dict[str, Any], key: str, value: Any, origin: str) -> None:
    """Put ``value`` at ``key``, making the mappings on the way; a scalar or a short
    list in the way is one line."""
    path = _path(key, origin)
    if path[0] not in data and path[0] in _SECTION_DEFAULTS and len(path) > 1:
        data[path[0]] = copy.deepcopy(_SECTION_DEFAULTS[path[0]])
    node: Any = data
    for depth in range(len(path) - 1):
        part = path[depth]
        if isinstance(part, int):
            node = _into_item(node, part, path, depth, origin)
        else:
            node = _into_key(node, path, depth, origin)
    _put(node, path, value, key, origin)


def _into_item(
    node: Any, part: int, path: list[str | int], depth: int, origin: str
) -> Any:
    """The list item ``part`` (at ``path[depth]``) of ``node``; a short item becomes a mapping."""
    nxt = path[depth + 1]
    if not isinstance(node, list) or part >= len(node):
        raise ConfigError(
            f"{origin}: `{_dotted(path[: depth + 1])}`: the profile has no such list item"
        )
    item = node[part]
    if item is None:
        node[part] = {}
    elif isinstance(item, str) and isinstance(nxt, str) and path[0] in _SHORT_ITEMS:
        # `models[0].label` on `models: [gpt-4.1]`: the short form becomes a mapping
        node[part] = {"id": item}
    elif not isinstance(item, (dict, list)):
        raise ConfigError(
            f"{origin}: `{_dotted(path[: depth + 1])}` is {type(item).__name__} "
            f"{item!r} in the profile, not a mapping"
        )
    return node[part]


def _into_key(node: Any, path: list[str | int], depth: int, origin: str) -> Any:
    """The value at key ``path[depth]`` of ``node``, made when missing."""
    part, nxt = path[depth], path[depth + 1]
    if not isinstance(node, dict):
        raise ConfigError(
            f"{origin}: `{_dotted(path[:depth])}` is a list in the profile, not a mapping"
        )
    child = node.get(part)
    if child is None:
        child = node[part] = [] if isinstance(nxt, int) else {}
    elif (
        isinstance(child, str) and isinstance(nxt, str) and _short_section(path, depth)
    ):
        # `scorer: checks` is short for `scorer: {id: checks}`
        child = node[part] = {"id": child}
    elif not isinstance(child, (dict, list)):
        raise ConfigError(
            f"{origin}: `{_dotted(path[: depth + 1])}` is "
            f"{type(child).__name__} {child!r} in the profile, not a mapping"
        )
    return child


def _short_section(path: list[str | int], depth: int) -> bool:
    return depth == 0 and path[0] in _SHORT_SECTIONS


def _put(node: Any, path: list[str | int], value: Any, key: str, origin: str) -> None:
    """Set the last part of ``path``: a list item (or one past the end), or a key."""
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last > len(node):
            raise ConfigError(f"{origin}: `{key}`: the profile has no such list item")
        node[last : last + 1] = [value]
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise ConfigError(
            f"{origin}: `{_dotted(path[:-1])}` is a list in the profile, not a mapping"
        )


def _dotted(path: Sequence[str | int]) -> str:
    text = ""
    for part in path:
        text += (
            f"[{part}]"
            if isinstance(part, int)
            else (f".{part}" if text else str(part))
        )
    return text
