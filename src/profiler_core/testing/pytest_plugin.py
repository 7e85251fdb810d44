"""pytest fixtures for plugin authors: ``pytest_plugins = ["profiler_core.testing.pytest_plugin"]``.

The contract checks come as fixtures that keep the runs' files under the
test's ``tmp_path``::

    def test_my_provider_keeps_the_contract(check_provider):
        check_provider(MyProvider, endpoint="http://127.0.0.1:8080")
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from . import contract, contract_standalone
from .fakes import FakeProvider, FixedScorer


@pytest.fixture
def profiler_plugin_manager():
    """A fresh plugin manager with core's built-ins and no installed plugins; add yours
    with ``.register``."""
    from ..plugins.manager import get_plugin_manager

    return get_plugin_manager(entrypoints=False)


@pytest.fixture
def fake_provider() -> FakeProvider:
    """An in-memory provider answering "done" instantly."""
    return FakeProvider()


@pytest.fixture
def fixed_scorer() -> FixedScorer:
    """A scorer that always passes one check."""
    return FixedScorer()


def _in(tmp_path: Path, check: Callable[..., Any], name: str) -> Callable[..., Any]:
    return functools.partial(check, workdir=tmp_path / f"contract-{name}")


@pytest.fixture
def check_provider(tmp_path: Path) -> Callable[..., Any]:
    """``check_provider(factory, **options)``: run a session provider through the runner
    and assert its contract."""
    return _in(tmp_path, contract.check_provider, "provider")


@pytest.fixture
def check_scorer(tmp_path: Path) -> Callable[..., Any]:
    """``check_scorer(factory, scenarios=..., **options)``: assert a scorer's contract
    through the runner."""
    return _in(tmp_path, contract.check_scorer, "scorer")


@pytest.fixture
def check_collector(tmp_path: Path) -> Callable[..., Any]:
    """``check_collector(factory, **options)``: assert a collector's contract through the runner."""
    return _in(tmp_path, contract.check_collector, "collector")


@pytest.fixture
def check_analyzer(tmp_path: Path) -> Callable[..., Any]:
    """``check_analyzer(factory, **options)``: assert an analyzer's contract through the runner."""
    return _in(tmp_path, contract.check_analyzer, "analyzer")


@pytest.fixture
def check_mode_resolver(tmp_path: Path) -> Callable[..., Any]:
    """``check_mode_resolver(factory, modes=[...], **options)``: assert a mode
    resolver's contract."""
    return _in(tmp_path, contract.check_mode_resolver, "mode-resolver")


@pytest.fixture
def check_importer() -> Callable[..., Any]:
    """``check_importer(factory, samples=[path, ...], **options)``: load samples and bad
    files, assert the contract."""
    return contract_standalone.check_importer


@pytest.fixture
def check_scenario_format() -> Callable[..., Any]:
    """``check_scenario_format(factory, samples=[{...}, ...], **options)``: parse
    samples and broken ones, assert the contract."""
    return contract_standalone.check_scenario_format


@pytest.fixture
def check_judge_provider() -> Callable[..., Any]:
    """``check_judge_provider(factory, requests=[...], **options)``: ask the judge,
    assert its answers' contract."""
    return contract_standalone.check_judge_provider


@pytest.fixture
def check_environment() -> Callable[..., Any]:
    """``check_environment(factory, spec=None)``: start one real trial, drive it, assert
    the contract (the ``check()`` line when it cannot run)."""
    from . import contract_environment

    return contract_environment.check_environment


@pytest.fixture
def check_report_section() -> Callable[..., Any]:
    """``check_report_section(plugin, results=None)``: a real report with the plugin, checked."""
    from . import contract_report

    return contract_report.check_report_section
