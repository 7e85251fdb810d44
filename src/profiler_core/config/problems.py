"""A profile's problems: collected one line each (``<file>: <key path>: <what was expected>``)."""

from __future__ import annotations

import difflib
import typing
from typing import Any

import attrs
import cattrs

from ..errors import ConfigError
from ..storage.serde import iter_errors, structure_detailed
from ..util.textcut import LIMIT, cut
from .schema import REQUIRED_HINTS


class Problems:
    """Collects every problem of a profile before failing."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[str] = []

    def add(self, key: str, message: str) -> None:
        # cut: an offending value may be a megabyte long
        self.items.append(
            cut(
                f"{self.source}: {key}: {message}"
                if key
                else f"{self.source}: {message}",
                2 * LIMIT,
            )
        )

    def add_structuring(
        self, exc: BaseException, prefix: tuple[str | int, ...]
    ) -> None:
        """One line per problem of a detailed cattrs failure, its key path under ``prefix``."""
        for path, problem in iter_errors(exc, prefix):
            if isinstance(problem, cattrs.ForbiddenExtraKeysError):
                for key in sorted(problem.extra_fields):
                    self.unknown_key(
                        path, key, tuple(a.name for a in attrs.fields(problem.cl))
                    )
            elif isinstance(problem, KeyError):
                hint = REQUIRED_HINTS.get(path)
                self.add(dotted(path), f"required ({hint})" if hint else "required")
            else:
                self.add(dotted(path), str(problem))

    def unknown_key(
        self, path: tuple[str | int, ...], key: Any, allowed: tuple[str, ...]
    ) -> None:
        """An unknown key, with the nearest known one when there is one."""
        prefix = dotted(path) + "." if path else ""
        hint = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
        if hint:
            self.add(
                f"`{prefix}{key}`", f"unknown key; did you mean `{prefix}{hint[0]}`?"
            )
        else:
            self.add(
                f"`{prefix}{key}`",
                f"unknown key (expected one of: {', '.join(allowed)})",
            )

    def raise_if_any(self) -> None:
        if self.items:
            raise ProfileErrors(self.items)


class ProfileErrors(ConfigError):
    """One or more problems in a profile; ``problems`` has one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            "\n".join(self.problems) if len(self.problems) > 1 else self.problems[0]
        )


def dotted(path: tuple[str | int, ...]) -> str:
    """``("collectors", 0, "id")`` -> ``collectors[0].id``."""
    text = ""
    for part in path:
        text += (
            f"[{part}]"
            if isinstance(part, int)
            else (f".{part}" if text else str(part))
        )
    return text


FAILED = object()


def structure_section(
    value: Any, type_: Any, path: tuple[str | int, ...], problems: Problems
) -> Any:
    """``value`` structured as ``type_`` by the converter, or ``FAILED`` with its
    problems recorded."""
    try:
        return structure_detailed(value, type_)
    except Exception as exc:  # noqa: BLE001 - cattrs and validators raise many kinds
        problems.add_structuring(exc, path)
        return FAILED


def did_you_mean(unknown: typing.Sequence[str], known: typing.Iterable[str]) -> str:
    """``; did you mean 'x'?`` for names typed wrong (each with its closest known name),
    or ``""``."""
    choices = sorted(known)
    pairs = [
        (name, hint[0])
        for name in unknown
        if (hint := difflib.get_close_matches(name, choices, n=1))
    ]
    if not pairs:
        return ""
    if len(unknown) == 1:
        return f"; did you mean {pairs[0][1]!r}?"
    return (
        "; did you mean "
        + ", ".join(f"{right!r} for {wrong!r}" for wrong, right in pairs)
        + "?"
    )
