"""Profile and scenario files as plain data, refused in one line when hostile.

Python's parsers raise more than their documented errors on adversarial input:
deep nesting is a ``RecursionError``, an integer of more than 4300 digits a
``ValueError``. And some values parse but break later steps: a NUL character
in a path or an argument, an integer no JSON reader or numpy column can hold.
Everything here becomes a ``ConfigError`` naming the file and the key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError
from .serde import json_error

#: Deeper data is refused (real profiles and scenarios nest a handful of levels).
MAX_DEPTH = 64
#: More values than this once YAML aliases are expanded is refused ("billion laughs").
MAX_NODES = 1_000_000
#: Integers must fit in 64 bits (JSON readers, numpy columns).
INT_RANGE = (-(2**63), 2**63 - 1)


def read_data_file(path: Path) -> Any:
    """Parse a ``.json`` file as JSON, anything else as YAML, and check the result with
    :func:`check_plain`."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"{path}: not a text file (expected UTF-8 "
            f"{'JSON' if path.suffix == '.json' else 'YAML'})"
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    return parse_text(text, path, json_syntax=path.suffix == ".json")


def parse_text(text: str, source: Path | str, *, json_syntax: bool = False) -> Any:
    """Parse ``text`` (JSON or YAML) into checked plain data; every failure is one
    ConfigError line."""
    kind = "JSON" if json_syntax else "YAML"
    try:
        data = json.loads(text) if json_syntax else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: not valid JSON ({json_error(exc)})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML ({yaml_problem(exc)})") from None
    except RecursionError:
        raise ConfigError(
            f"{source}: not usable {kind}: nested too deeply (at most {MAX_DEPTH} levels)"
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise ConfigError(
            f"{source}: not usable {kind}: {str(exc).split(';')[0]}"
        ) from None
    check_plain(data, source)
    return data


def yaml_problem(exc: yaml.YAMLError) -> str:
    """``found unhashable key at line 3``: PyYAML's problem and where."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem} at line {mark.line + 1}" if mark else problem


def check_plain(data: Any, source: Path | str) -> None:
    """Refuse data nested deeper than MAX_DEPTH, bigger than MAX_NODES once YAML aliases
    are expanded,
    referring to itself, holding integers beyond 64 bits or strings with NUL or lone surrogates.

    Iterative, and each shared (aliased) container is visited once, so neither
    deep nor "billion laughs" input costs more than its size in the file.
    """
    done: dict[
        int, tuple[int, int]
    ] = {}  # id -> (depth below, expanded size) of a finished container
    open_ids: set[int] = set()
    stack: list[tuple[Any, str, bool]] = [(data, "", False)]
    while stack:
        value, where, leaving = stack.pop()
        key = where or "(top level)"
        if not isinstance(value, dict | list):
            _check_scalar(value, source, key)
            continue
        ident = id(value)
        children = (
            list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        )
        if leaving:
            open_ids.discard(ident)
            done[ident] = _measure(children, done, source, key)
            continue
        if ident in open_ids:
            raise ConfigError(
                f"{source}: {key}: refers to itself (a YAML alias inside its own anchor)"
            )
        if ident in done:
            continue
        if len(open_ids) > MAX_DEPTH:
            raise ConfigError(
                f"{source}: {key}: nested too deeply (at most {MAX_DEPTH} levels)"
            )
        open_ids.add(ident)
        stack.append((value, where, True))
        for k, v in children:
            if isinstance(k, str) and ("\x00" in k or not _encodable(k)):
                raise ConfigError(
                    f"{source}: {key}: a key contains a NUL character or a lone surrogate"
                )
            child = (
                f"{where}[{k}]"
                if isinstance(value, list)
                else (f"{where}.{k}" if where else str(k))
            )
            stack.append((v, child, False))


def _measure(
    children: list[tuple[Any, Any]],
    done: dict[int, tuple[int, int]],
    source: Path | str,
    key: str,
) -> tuple[int, int]:
    """(depth, expanded size) of a container whose children are finished; too deep or
    too large is refused."""
    below = [done.get(id(v), (0, 1)) for _, v in children]
    depth = 1 + max((d for d, _ in below), default=0)
    size = 1 + sum(n for _, n in below)
    if depth > MAX_DEPTH:
        raise ConfigError(
            f"{source}: {key}: nested too deeply (at most {MAX_DEPTH} levels)"
        )
    if size > MAX_NODES:
        raise ConfigError(
            f"{source}: {key}: too large once its aliases are expanded (over {MAX_NODES} values)"
        )
    return depth, size


def _check_scalar(value: Any, source: Path | str, key: str) -> None:
    """Refuse an integer beyond 64 bits and a string with a NUL character or a lone surrogate."""
    if isinstance(value, bool):
        return
    if isinstance(value, int) and not INT_RANGE[0] <= value <= INT_RANGE[1]:
        raise ConfigError(
            f"{source}: {key}: integer out of range (at most 64 bits, got about "
            f"{int(value.bit_length() * 0.30103) + 1} digits)"
        )
    if isinstance(value, str):
        if "\x00" in value:
            raise ConfigError(f"{source}: {key}: contains a NUL character")
        if not value.isascii() and not _encodable(value):
            raise ConfigError(
                f"{source}: {key}: contains a lone surrogate (\\ud800-\\udfff), not text"
            )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
