"""At one repetition pass@1, pass@k and pass^k are the same number: the report shows it
once (issue 16.11)."""

from __future__ import annotations

import re

import pytest
import trio
import trio.testing

from profiler_core import ModeConfig, Scenario
from profiler_core.report import write_report
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer


def _report(tmp_path, manager, repetitions):
    options = RunOptions(
        provider=FakeProvider(),
        scorer=FixedScorer(),
        scenarios=[Scenario(id=f"s{i}", name=f"S{i}", prompt="do") for i in (1, 2)],
        modes={"a": ModeConfig(), "b": ModeConfig()},
        repetitions=repetitions,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = manager
    result = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    results = tmp_path / "results" / f"{result.run_id}.jsonl"
    paths = write_report(results, tmp_path / "out", parallel=False)
    return paths.md.read_text(), paths.html.read_text()


def _modes_header(markdown: str) -> str:
    section = markdown.split("## Modes", 1)[1]
    return next(line for line in section.splitlines() if line.startswith("| Mode"))


@pytest.mark.parametrize(
    ("repetitions", "columns"), [(1, ["pass@1"]), (3, ["pass@1", "pass@3", "pass^3"])]
)
def test_pass_columns(tmp_path, profiler_plugin_manager, repetitions, columns):
    markdown, html = _report(tmp_path, profiler_plugin_manager, repetitions)
    assert re.findall(r"pass[@^]\d", _modes_header(markdown)) == columns
    assert sorted(set(re.findall(r"<dt>(pass[@^]\d)</dt>", html))) == sorted(columns)
