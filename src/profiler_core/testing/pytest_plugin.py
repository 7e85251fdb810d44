"""pytest fixtures for plugin authors: ``pytest_plugins = ["profiler_core.testing.pytest_plugin"]``."""

from __future__ import annotations

import pytest

from . import FakeProvider, FixedScorer


@pytest.fixture
def profiler_plugin_manager():
    """A fresh plugin manager with core's built-ins and no installed plugins; add yours with ``.register``."""
    from ..plugins import get_plugin_manager

    return get_plugin_manager(entrypoints=False)


@pytest.fixture
def fake_provider() -> FakeProvider:
    """An in-memory provider answering "done" instantly."""
    return FakeProvider()


@pytest.fixture
def fixed_scorer() -> FixedScorer:
    """A scorer that always passes one check."""
    return FixedScorer()
