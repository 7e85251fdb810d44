"""A mode's environment variables, applied to this process and restored exactly."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager


@contextmanager
def mode_environment(environment: Mapping[str, str]) -> Iterator[None]:
    """Apply a mode's environment variables and restore the previous values exactly."""
    saved = {key: os.environ.get(key) for key in environment}
    try:
        os.environ.update({k: str(v) for k, v in environment.items()})
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


__all__ = ["mode_environment"]
