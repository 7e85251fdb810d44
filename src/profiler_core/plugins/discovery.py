"""Installed plugins' entry points, cached by what is installed: a warm start skips
importlib.metadata.

Scanning entry points means importing ``importlib.metadata`` (with ``email``
and ``zipfile``) and reading every distribution's metadata: 3% of a
one-cell run's instructions (docs/plugins.md). The scan's result is kept
under the user's cache folder with a fingerprint of what it read: each
``sys.path`` folder's ``*.dist-info`` / ``*.egg-info`` names and the
modification time and size of each one's folder and ``entry_points.txt``
(of a zip file on ``sys.path``: its own).
Installing, upgrading or removing a distribution changes that fingerprint, so
the next start scans again; a start with the same fingerprint reads the cached
list (a few hundred ``stat`` calls and one small JSON file).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import sys
import zlib
from pathlib import Path
from typing import Any

#: Bumped when the cache file's layout changes: an older file is then ignored.
CACHE_FORMAT = 1
#: ``PROFILER_ENTRY_POINT_CACHE=0``: no cache file, importlib.metadata's own entry points.
CACHE_ENV = "PROFILER_ENTRY_POINT_CACHE"

_META_SUFFIXES = (".dist-info", ".egg-info")


class CachedDistribution:
    """The two facts the plugin manager reads from a distribution: its name and version."""

    __slots__ = ("metadata", "version")

    def __init__(self, name: str | None, version: str | None) -> None:
        self.metadata = {"Name": name}
        self.version = version


class CachedEntryPoint:
    """An entry point as ``importlib.metadata.EntryPoint`` shows it to the manager."""

    __slots__ = ("dist", "group", "name", "value")

    def __init__(
        self, name: str, value: str, group: str, dist: CachedDistribution | None
    ) -> None:
        self.name = name
        self.value = value
        self.group = group
        self.dist = dist

    def load(self) -> Any:
        """Import ``module[:attr.attr]`` (extras ignored), as ``EntryPoint.load`` does."""
        spec = self.value.split("[", 1)[0]
        module_name, _, attrs = spec.partition(":")
        module = importlib.import_module(module_name.strip())
        parts = [part for part in attrs.strip().split(".") if part]
        return functools.reduce(getattr, parts, module)

    def __repr__(self) -> str:
        return f"CachedEntryPoint(name={self.name!r}, value={self.value!r})"


def _stat_key(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def fingerprint(paths: list[str] | None = None) -> list[Any]:
    """What the scan depends on: each path entry's metadata folders with their mtimes and sizes."""
    out: list[Any] = []
    for entry in sys.path if paths is None else paths:
        folder = os.path.abspath(entry or ".")
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(_META_SUFFIXES))
        except NotADirectoryError:
            out.append([folder, _stat_key(folder)])  # a zip file: its stat is its state
            continue
        except OSError:
            continue  # a missing folder holds no distributions
        metas = []
        for name in names:
            meta = os.path.join(folder, name)
            points = os.path.join(meta, "entry_points.txt")
            metas.append([name, _stat_key(meta), _stat_key(points)])
        # Not the folder's own mtime: the current folder (on sys.path as '') changes at every
        # run's first write; what is installed in it shows in its metadata folders. A folder
        # without any installs nothing, so it stays out and a new working folder keeps the key.
        if metas:
            out.append([folder, metas])
    return out


def cache_file(group: str) -> Path:
    """Where ``group``'s scan is kept for this interpreter (one file per environment)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    env = zlib.crc32(f"{sys.prefix}\0{sys.executable}".encode()) & 0xFFFFFFFF
    safe_group = "".join(c if c.isalnum() or c in "-_" else "_" for c in group)
    return (
        Path(base) / "agent-profiler" / "entry-points" / f"{safe_group}-{env:08x}.json"
    )


def _scan(group: str) -> list[dict[str, str | None]]:
    import importlib.metadata  # the slow part this module exists to skip

    found: list[dict[str, str | None]] = []
    for ep in importlib.metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        found.append(
            {
                "name": ep.name,
                "value": ep.value,
                "distribution": dist.metadata["Name"] if dist is not None else None,
                "version": dist.version if dist is not None else None,
            }
        )
    return found


def _read_cache(path: Path, key: list[Any]) -> list[dict[str, Any]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
        return None
    if data.get("key") != key or not isinstance(data.get("entry_points"), list):
        return None
    return data["entry_points"]


def _write_cache(path: Path, key: list[Any], found: list[Any]) -> None:
    text = json.dumps({"format": CACHE_FORMAT, "key": key, "entry_points": found})
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(
            tmp, path
        )  # atomic: a concurrent start reads the old file or the new one
    except OSError:  # a read-only home only loses the speed-up
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def entry_points(group: str) -> list[Any]:
    """The installed entry points of ``group``, from the cache when nothing installed changed.

    With ``PROFILER_ENTRY_POINT_CACHE=0``: ``importlib.metadata``'s own entry
    points, exactly as before the cache (and what a test that replaces
    ``importlib.metadata.entry_points`` sees).
    """
    if os.environ.get(CACHE_ENV, "1") == "0":
        import importlib.metadata

        return list(importlib.metadata.entry_points(group=group))
    key = json.loads(json.dumps(fingerprint()))  # as it reads back from the file
    path = cache_file(group)
    found = _read_cache(path, key)
    if found is None:
        found = _scan(group)
        _write_cache(path, key, found)
    return [
        CachedEntryPoint(
            str(item["name"]),
            str(item["value"]),
            group,
            None
            if item.get("distribution") is None and item.get("version") is None
            else CachedDistribution(item.get("distribution"), item.get("version")),
        )
        for item in found
    ]
