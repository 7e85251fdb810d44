"""Shared fixtures: plugin-author fixtures from profiler_core.testing, paths to parity data."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["profiler_core.testing.pytest_plugin"]

ROOT = Path(__file__).resolve().parent.parent
PARITY = ROOT.parent / "shared" / "anchor-parity"


@pytest.fixture
def parity_dir() -> Path:
    """The TypeScript original's parity data (skips when shared/ is not beside the checkout)."""
    if not PARITY.is_dir():
        pytest.skip("shared/anchor-parity not found beside the checkout")
    return PARITY
