"""Shared fixtures: plugin-author fixtures from profiler_core.testing, the parity data of the TypeScript original."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["profiler_core.testing.pytest_plugin"]

ROOT = Path(__file__).resolve().parent.parent
#: The original's parity data, in the repository (tests/fixtures/anchor-parity/README.md).
PARITY = ROOT / "tests" / "fixtures" / "anchor-parity"


EXAMPLES = ROOT / "examples"


def _listing(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


@pytest.fixture(autouse=True)
def _examples_stay_untouched():
    """No test writes into examples/: a test running the demo runs a copy (issue 31.20)."""
    before = _listing(EXAMPLES)
    yield
    added = sorted(_listing(EXAMPLES) - before)
    assert not added, f"the test wrote into examples/: {added[:5]}"


@pytest.fixture
def parity_dir() -> Path:
    """The TypeScript original's parity data (tests/fixtures/anchor-parity)."""
    return PARITY
