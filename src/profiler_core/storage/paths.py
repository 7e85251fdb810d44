"""Paths built from data: run ids are checked, other ids become safe, distinct file
names inside their folder.

Data never chooses where a file goes: a run id must be one plain path segment,
and scenario ids, modes and models are escaped so that two different ids never
share a file name and no id can leave its folder.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import re
import stat
from pathlib import Path
from typing import IO, Any

from ..errors import ConfigError, StoreError
from ..util.textcut import shown

#: What a run id may contain (one path segment, no leading dot).
RUN_ID_RULE = (
    "letters, digits, '.', '_' and '-' (not starting with '.'), at most 128 characters"
)
_RUN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")

#: What a scenario id in a scenario file may contain (checked when scenarios are loaded).
SCENARIO_ID_RULE = RUN_ID_RULE

#: Characters kept as they are in file names (a leading "." excepted); everything else is %-escaped.
_PLAIN = re.compile(r"[^A-Za-z0-9._-]|^\.")
#: File-name budget: most file systems allow 255 bytes; leave room for "-iter-N.json" and a model.
_MAX_NAME = 80


def check_run_id(run_id: str) -> str:
    """``run_id`` when it is one safe path segment, else a ConfigError saying what is allowed."""
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise ConfigError(f"invalid run id {shown(run_id, 60)}: use {RUN_ID_RULE}")
    return run_id


def scenario_id_problem(scenario_id: str) -> str | None:
    """Why ``scenario_id`` is not allowed in a scenario file (``expected ..., got
    ...``), or None when it is."""
    if isinstance(scenario_id, str) and _RUN_ID.fullmatch(scenario_id):
        return None
    return f"expected {SCENARIO_ID_RULE}, got {shown(scenario_id)}"


def safe_name(text: str) -> str:
    """A file name for an id: injective (``a/b`` and ``a\\b`` differ), never
    ``.``/``..``, bounded in length.

    Letters, digits, ``.``, ``_`` and ``-`` stay; every other character (``%``
    and a leading ``.`` included) becomes ``%XX`` of its UTF-8 bytes, so distinct
    ids give distinct names and none is hidden or a parent folder. A name longer than
    the budget keeps a readable prefix and adds a hash
    of the whole id.
    """
    escaped = (
        _PLAIN.sub(
            lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), text
        )
        or "%"
    )
    if len(escaped) <= _MAX_NAME:
        return escaped
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    head = escaped[: _MAX_NAME - 17]
    # Do not cut an escape in half.
    head = head[: head.rfind("%")] if "%" in head[-2:] else head
    return f"{head}~{digest}"


def inside(folder: Path, path: Path) -> Path:
    """``path`` when it lies inside ``folder``, else a ConfigError (a last guard on
    data-built paths)."""
    root = folder.resolve()
    target = path.resolve()
    if target != root and root not in target.parents:
        raise ConfigError(f"{path}: refusing to write outside {folder}")
    return path


# -- output files ---------------------------------------------------------------

#: open(2) flags of each mode (``w`` truncates only after the checks; ``r+`` creates a missing file)
_OUTPUT_FLAGS = {
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "w": os.O_WRONLY | os.O_CREAT,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    "r+": os.O_RDWR | os.O_CREAT,
}
# O_NONBLOCK: opening a FIFO planted at the name must fail, not wait for a reader (no
# effect on files).
_NO_SURPRISES = (
    getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)
)


def open_output(
    path: Path,
    mode: str = "a",
    *,
    encoding: str | None = "utf-8",
    newline: str | None = None,
    buffering: int = -1,
) -> IO[Any]:
    """Open an output file for writing without following a symbolic link at its name.

    ``mode`` is ``a``, ``w``, ``x`` or ``r+`` (``b`` for bytes). A symbolic link
    (even a dangling one), a FIFO or device, or a file with other hard links at
    ``path`` is refused with a ``StoreError`` naming it, before anything is
    written or truncated: data and planted links never choose where the run writes.
    """
    binary = "b" in mode
    base = mode.replace("b", "")
    try:
        fd = os.open(path, _OUTPUT_FLAGS[base] | _NO_SURPRISES, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (
            exc.errno == errno.EEXIST and os.path.islink(path)
        ):
            raise StoreError(
                f"{path}: is a symbolic link; refusing to write through it (remove it)"
            ) from None
        if exc.errno == errno.ENXIO:
            raise StoreError(
                f"{path}: is not a regular file; refusing to write to it"
            ) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StoreError(f"{path}: is not a regular file; refusing to write to it")
        if info.st_nlink > 1:
            raise StoreError(
                f"{path}: has {info.st_nlink - 1} other hard link(s); refusing "
                "to write to it (writing would change them)"
            )
        if base == "w":
            os.ftruncate(fd, 0)
        if binary:
            return os.fdopen(fd, mode, buffering=buffering)
        return os.fdopen(
            fd, mode, buffering=buffering, encoding=encoding, newline=newline
        )
    except BaseException:
        os.close(fd)
        raise


def write_output_text(path: Path, text: str) -> None:
    """Replace ``path``'s content with ``text`` (UTF-8) through :func:`open_output`."""
    with open_output(path, "w") as f:
        f.write(text)


def refuse_links(*paths: Path) -> None:
    """Refuse (``StoreError``) when any of ``paths`` is a symbolic link: for writers
    that open files by name."""
    for path in paths:
        if os.path.islink(path):
            raise StoreError(
                f"{path}: is a symbolic link; refusing to write through it (remove it)"
            )


_tmp_counter = itertools.count()


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so readers see the old or the new content, never half of it."""
    # A name unique to this process and call (cheaper than mkstemp's random retries, same safety).
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{next(_tmp_counter)}.tmp")
    try:
        try:
            f = open_output(tmp, "x")
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            f = open_output(tmp, "x")
        with f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
