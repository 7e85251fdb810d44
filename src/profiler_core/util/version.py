"""The installed version of agent-profiler: its dist-info folder's name, else its
metadata, on first use."""

from __future__ import annotations

import functools
import os
import re
import sys

#: The distribution whose metadata holds the version (pyproject.toml is its one source).
DISTRIBUTION = "agent-profiler"


@functools.cache
def version() -> str:
    """agent-profiler's version (``0+unknown`` from a source tree that was never installed)."""
    found = installed_version(DISTRIBUTION)  # the folder's name: no importlib.metadata
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"


def _normal(name: str) -> str:
    """A distribution name as metadata folders spell it (PEP 503, runs of ``-_.`` as ``_``)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def installed_version(distribution: str) -> str | None:
    """``distribution``'s version from its ``name-version.dist-info`` folder, first on sys.path.

    The wheel format names the folder after the metadata's ``Version``, so this
    is ``importlib.metadata.version`` without reading metadata files. None when
    no such folder is found (an ``.egg-info``, or not installed): ask
    ``importlib.metadata`` then.
    """
    wanted = _normal(distribution)
    for entry in sys.path:
        try:
            names = os.listdir(os.path.abspath(entry or "."))
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            dist, sep, found = name[: -len(".dist-info")].partition("-")
            if sep and found and _normal(dist) == wanted:
                return found
    return None
