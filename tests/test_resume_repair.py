"""Resume repairs what a crash between writes leaves, and the run's folders have one writer."""

from __future__ import annotations

import json

import pytest
import trio

from profiler_core import ModeConfig, Scenario, SessionAnalysisBundle, to_json
from profiler_core.errors import StoreError
from profiler_core.providers.simulated import SimulatedProvider
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.runner.run import Run
from profiler_core.scorers.checks import ChecksScorer
from profiler_core.storage.store import RunLock, RunPaths, read_jsonl


def _options(tmp_path, manager, analyzers=(), **kw):
    base = dict(
        provider=SimulatedProvider(),
        scorer=ChecksScorer(),
        scenarios=[Scenario(id=f"s{i}", name="S", prompt="fix it") for i in range(2)],
        modes={"a": ModeConfig()},
        repetitions=2,
        warmup=False,
        analyzers=list(analyzers),
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        run_id="r",
    )
    base.update(kw)
    options = RunOptions(**base)
    options.plugin_manager = manager
    return options


def _analyzers(manager):
    from profiler_builtin_analyzers import ANALYZERS

    return [factory() for factory in ANALYZERS]


def test_resume_analyses_again_the_cells_a_crash_left_without_analysis(
    tmp_path, profiler_plugin_manager
):
    analyzers = _analyzers(profiler_plugin_manager)
    trio.run(run_profile_suite, _options(tmp_path, profiler_plugin_manager, analyzers))
    analysis = tmp_path / "results" / "r.analysis.jsonl"
    lines = analysis.read_text().splitlines(keepends=True)
    assert len(lines) == 4
    analysis.write_text(
        "".join(lines[:-1])
    )  # killed between the last row and its analysis
    lost = json.loads(lines[-1])
    result = trio.run(
        run_profile_suite,
        _options(tmp_path, profiler_plugin_manager, analyzers, resume=True),
    )
    bundles = read_jsonl(analysis, cls=SessionAnalysisBundle).rows
    cells = {(b.model, b.mode, b.scenario_id, b.iteration) for b in bundles}
    assert (
        len(bundles) == 4
        and (lost["model"], lost["mode"], lost["scenarioId"], lost["iteration"])
        in cells
    )
    repaired = next(
        b
        for b in bundles
        if b.iteration == lost["iteration"] and b.scenario_id == lost["scenarioId"]
    )
    assert (
        json.loads(to_json(repaired))["results"] == lost["results"]
    )  # the same analysis the lost line held
    manifest = json.loads((tmp_path / "results" / "r.manifest.json").read_text())
    assert any("analysed 1 recorded cell(s) again" in w for w in manifest["warnings"])
    assert result.counts.completed == 4


def test_a_run_of_the_same_id_writing_the_same_reports_folder_is_refused(
    tmp_path, profiler_plugin_manager
):
    held = RunLock(RunPaths(tmp_path / "reports", "r"))
    held.acquire()  # another run of id r, with another results folder, writes reports/r/ right now
    try:
        with pytest.raises(StoreError, match="is being written by process"):
            trio.run(
                Run(
                    _options(
                        tmp_path,
                        profiler_plugin_manager,
                        results_dir=str(tmp_path / "other-results"),
                    )
                ).execute_all
            )
    finally:
        held.release()
    assert not (tmp_path / "reports" / "r" / "sessions").exists()
