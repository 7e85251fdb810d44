"""Helpers for testing plugins and profiles: the contract checks, fakes and a fresh plugin manager.

``check_provider``, ``check_scorer``, ``check_collector``, ``check_analyzer``
and ``check_mode_resolver`` run a component through the real runner and assert
its contract (see :mod:`profiler_core.testing.contract`); ``check_importer``,
``check_scenario_format`` and ``check_judge_provider`` call the components used
outside a session on samples and on bad input
(:mod:`profiler_core.testing.contract_standalone`); ``check_environment`` starts
one real trial of an environment kind and drives it
(:mod:`profiler_core.testing.contract_environment`); ``check_report_section``
writes a real report with a report-section plugin registered
(:mod:`profiler_core.testing.contract_report`). Plugin authors opt into
the fixtures with::

    pytest_plugins = ["profiler_core.testing.pytest_plugin"]
"""

from __future__ import annotations

from .contract import (
    ContractError,
    check_analyzer,
    check_collector,
    check_mode_resolver,
    check_provider,
    check_scorer,
    check_trace,
)
from .contract_environment import check_environment
from .contract_report import check_report_section
from .contract_standalone import (
    check_importer,
    check_judge_provider,
    check_scenario_format,
)
from .fakes import Fail, FakeProvider, FixedScorer, Hang, fake_plugin, simple_trace
from .importcost import check_plugin_import_cost

__all__ = [
    "ContractError",
    "Fail",
    "FakeProvider",
    "FixedScorer",
    "Hang",
    "check_analyzer",
    "check_collector",
    "check_environment",
    "check_importer",
    "check_judge_provider",
    "check_mode_resolver",
    "check_plugin_import_cost",
    "check_provider",
    "check_report_section",
    "check_scenario_format",
    "check_scorer",
    "check_trace",
    "fake_plugin",
    "simple_trace",
]
