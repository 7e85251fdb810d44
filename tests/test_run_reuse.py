"""`profiler run --reuse RUN`: unchanged cells take the earlier run's rows (identical),
only changed cells run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROFILER = [sys.executable, "-m", "profiler_core"]

PROFILE = """\
modes:
  baseline:
    system_instructions: "You are a coding agent."
  with_skill:
    system_instructions: "{skill}"
    provider_overrides: {{mean_turns: 4, success_rate: 0.95}}
scenarios:
  path: scenarios
  set: core
provider:
  id: simulated
  model: sim-small
  options: {{seed: 7, mean_turns: 7, success_rate: 0.7, time_scale: 0.0005}}
scorer: {{id: checks}}
execution:
  repetitions: 2
  concurrency: 4
  warmup: false
output:
  results_dir: results
  reports_dir: reports
  session_export: true
"""


def _rows(folder: Path, run_id: str) -> dict[tuple, dict]:
    lines = (folder / "results" / f"{run_id}.jsonl").read_text().splitlines()
    return {
        (r["mode"], r["scenarioId"], r["iteration"]): r for r in map(json.loads, lines)
    }


def _run(folder: Path, run_id: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PROFILER, "run", "profile.yaml", "--run-id", run_id, "--progress", "none", "--no-report", *args],
                          cwd=folder, capture_output=True, text=True, timeout=300)  # fmt: skip


def _manifest(folder: Path, run_id: str) -> dict:
    return json.loads((folder / "results" / f"{run_id}.manifest.json").read_text())


@pytest.fixture
def folder(tmp_path) -> Path:
    shutil.copytree(ROOT / "examples" / "demo" / "scenarios", tmp_path / "scenarios")
    (tmp_path / "profile.yaml").write_text(
        PROFILE.format(skill="Use the repo-navigation skill.")
    )
    return tmp_path


def test_a_changed_mode_reruns_only_its_own_cells(folder):
    first = _run(folder, "first")
    assert first.returncode == 0, first.stderr
    before = _rows(folder, "first")
    assert _manifest(folder, "first")["cellFingerprints"]
    # Change one mode: its cells must run again; the baseline's are unchanged.
    (folder / "profile.yaml").write_text(
        PROFILE.format(skill="Use the repo-navigation skill before editing.")
    )
    second = _run(folder, "second", "--reuse", "first")
    assert second.returncode == 0, second.stderr
    assert "reused " in second.stdout
    after = _rows(folder, "second")
    assert set(after) == set(before)
    reused = {k for k, r in after.items() if k[0] == "baseline"}
    for key in reused:  # identical rows, only the run id is the new run's
        assert {**after[key], "runId": "first"} == before[key]
    for key in set(after) - reused:  # ran again: new sessions
        assert after[key]["startedAt"] > before[key]["completedAt"]
    manifest = _manifest(folder, "second")
    cells = {
        (c["mode"], c["scenarioId"], c["iteration"])
        for c in manifest["reused"]["cells"]
    }
    assert manifest["reused"]["fromRun"] == "first" and cells == reused
    # the reused cells' traces came along: the viewer and `analyze` read them from the new run
    store = folder / "reports" / "second" / "sessions" / "traces.jsonl"
    traced = {
        (d["mode"], d["scenarioId"], d["iteration"])
        for d in map(json.loads, store.read_text().splitlines())
    }
    assert traced == set(after)


def test_an_unchanged_profile_runs_nothing_and_a_scenario_change_reruns_that_scenario(
    folder,
):
    assert _run(folder, "first").returncode == 0
    before = _rows(folder, "first")
    same = _run(folder, "same", "--reuse", "first")
    assert same.returncode == 0, same.stderr
    assert {
        k: {**r, "runId": "first"} for k, r in _rows(folder, "same").items()
    } == before
    assert len(_manifest(folder, "same")["reused"]["cells"]) == len(before)
    # Edit one scenario's file: only its cells run again, in both modes.
    path = next((folder / "scenarios").glob("fix-parser-test*.json"))
    doc = json.loads(path.read_text())
    doc["prompt"] += " Keep the change small."
    path.write_text(json.dumps(doc))
    edited = _run(folder, "edited", "--reuse", "first")
    assert edited.returncode == 0, edited.stderr
    cells = {
        (c["mode"], c["scenarioId"])
        for c in _manifest(folder, "edited")["reused"]["cells"]
    }
    assert cells and all(s != doc["id"] for _m, s in cells)
    assert {s for _m, s in cells} == {k[1] for k in before} - {doc["id"]}


def test_reuse_of_an_unknown_run_or_with_resume_is_one_line(folder):
    out = _run(folder, "x", "--reuse", "nope")
    assert (
        out.returncode != 0
        and out.stderr.startswith("Error: --reuse nope")
        and len(out.stderr.strip().splitlines()) == 1
    )


def test_a_harbor_tasks_test_file_is_part_of_its_cells_fingerprint(tmp_path):
    from profiler_core.config.loader import load_profile
    from profiler_core.runner.reuse import cell_fingerprints

    shutil.copytree(
        ROOT / "examples" / "tasks",
        tmp_path / "tasks",
        ignore=shutil.ignore_patterns("results", "reports"),
    )
    profile = tmp_path / "tasks" / "profile.yaml"
    before = cell_fingerprints(load_profile(profile, {}))
    test = tmp_path / "tasks" / "fix-median" / "tests" / "test_stats.py"
    test.write_text(test.read_text() + "\n# one more line\n")
    after = cell_fingerprints(load_profile(profile, {}))
    changed = {json.loads(k)[2] for k in before if before[k] != after[k]}
    assert changed == {"fix-median"} and len(before) == 3
