"""Shared fixtures: plugin-author fixtures from profiler_core.testing, the parity data of the TypeScript original."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["profiler_core.testing.pytest_plugin"]

ROOT = Path(__file__).resolve().parent.parent
#: The original's parity data, in the repository (tests/fixtures/anchor-parity/README.md).
PARITY = ROOT / "tests" / "fixtures" / "anchor-parity"


@pytest.fixture
def parity_dir() -> Path:
    """The TypeScript original's parity data (tests/fixtures/anchor-parity)."""
    return PARITY
