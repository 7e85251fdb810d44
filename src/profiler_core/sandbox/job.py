"""What a caller asks to run confined: the command, its environment, its folders, what
it may reach."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from ..model.record import Record

__all__ = ["Job", "Mount"]


def _absolute(value: Path | str) -> Path:
    return Path(value).absolute()


def _optional_absolute(value: Path | str | None) -> Path | None:
    return None if value is None else _absolute(value)


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _ports(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(values)


def _paths(values: Iterable[Path | str]) -> tuple[Path, ...]:
    return tuple(_absolute(p) for p in values)


def _mounts(values: Iterable[Mount]) -> tuple[Mount, ...]:
    return tuple(values)


def _environment(values: Mapping[str, str]) -> dict[str, str]:
    return dict(values)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Mount(Record):
    """A host path shown inside the sandbox (at ``target``, default the same path),
    read-only unless ``writable``."""

    source: Path = attrs.field(converter=_absolute)
    target: Path | None = attrs.field(default=None, converter=_optional_absolute)
    writable: bool = False

    @property
    def inside(self) -> Path:
        """Where it appears inside."""
        return self.target or self.source


@attrs.frozen(kw_only=True, eq=False)
class Job:
    """One program to run confined (an agent session, ``opencode serve``, a verifier's command)."""

    #: the command; its first word is looked up on the ``PATH`` of ``env`` inside the sandbox
    argv: tuple[str, ...] = attrs.field(converter=_strings)
    #: the whole environment of the program: nothing of the caller's own is added (but see ``home``)
    env: dict[str, str] = attrs.field(converter=_environment)
    #: the only writable host folder (besides ``home`` and ``tmp``); at the same path
    #: inside, the working directory
    workspace: Path = attrs.field(converter=_absolute)
    #: the program's HOME (writable; ``$HOME`` is set to it when ``env`` has none);
    #: None: a fresh one, removed after
    home: Path | None = attrs.field(default=None, converter=_optional_absolute)
    #: its TMPDIR (writable; ``$TMPDIR`` likewise); None: a fresh one, removed after
    tmp: Path | None = attrs.field(default=None, converter=_optional_absolute)
    #: model endpoint URLs it must reach with ``network: model`` (``http://127.0.0.1:PORT``, ``https://host``)
    endpoints: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    #: ports it listens on inside that the caller connects to from the host (``opencode serve``)
    publish: tuple[int, ...] = attrs.field(default=(), converter=_ports)
    #: more host paths to show inside (e.g. an agent installed under the hidden home, a
    #: verifier's tests)
    mounts: tuple[Mount, ...] = attrs.field(default=(), converter=_mounts)
    #: more host paths to hide (e.g. the folder holding the other sessions' workspaces)
    hide: tuple[Path, ...] = attrs.field(default=(), converter=_paths)
    #: the container image for this job (a task's own); None: the settings' image
    image: str | None = None
    #: a short label for container names and temporary folders
    name: str = "session"
