"""Paths built from data: run ids are checked, other ids become safe, distinct file names inside their folder.

Data never chooses where a file goes: a run id must be one plain path segment,
and scenario ids, modes and models are escaped so that two different ids never
share a file name and no id can leave its folder.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .errors import ConfigError

#: What a run id may contain (one path segment, no leading dot).
RUN_ID_RULE = "letters, digits, '.', '_' and '-' (not starting with '.'), at most 128 characters"
_RUN_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")

#: Characters kept as they are in file names (a leading "." excepted); everything else is %-escaped.
_PLAIN = re.compile(r"[^A-Za-z0-9._-]|^\.")
#: File-name budget: most file systems allow 255 bytes; leave room for "-iter-N.json" and a model.
_MAX_NAME = 80


def check_run_id(run_id: str) -> str:
    """``run_id`` when it is one safe path segment, else a ConfigError saying what is allowed."""
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        shown = run_id if len(str(run_id)) <= 60 else f"{str(run_id)[:57]}..."
        raise ConfigError(f"invalid run id {shown!r}: use {RUN_ID_RULE}")
    return run_id


def safe_name(text: str) -> str:
    """A file name for an id: injective (``a/b`` and ``a\\b`` differ), never ``.``/``..``, bounded in length.

    Letters, digits, ``.``, ``_`` and ``-`` stay; every other character (``%``
    and a leading ``.`` included) becomes ``%XX`` of its UTF-8 bytes, so distinct
    ids give distinct names and none is hidden or a parent folder. A name longer than the budget keeps a readable prefix and adds a hash
    of the whole id.
    """
    escaped = _PLAIN.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), text) or "%"
    if len(escaped) <= _MAX_NAME:
        return escaped
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    head = escaped[: _MAX_NAME - 17]
    # Do not cut an escape in half.
    head = head[: head.rfind("%")] if "%" in head[-2:] else head
    return f"{head}~{digest}"


def inside(folder: Path, path: Path) -> Path:
    """``path`` when it lies inside ``folder``, else a ConfigError (a last guard on data-built paths)."""
    root = folder.resolve()
    target = path.resolve()
    if target != root and root not in target.parents:
        raise ConfigError(f"{path}: refusing to write outside {folder}")
    return path
