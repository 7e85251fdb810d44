"""Run ids: sortable by start time, unique."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime


def new_run_id() -> str:
    """A sortable, unique run id: ``run_20261122T051500Z_3f9a``."""
    return (
        "run_"
        + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        + "_"
        + secrets.token_hex(2)
    )


__all__ = ["new_run_id"]
