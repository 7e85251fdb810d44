"""A run under ``execution.stop: decided`` goes in rounds and stops when the answer is clear."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import trio
import yaml

from profiler_core.cli.run import print_summary
from profiler_core.config.loader import load_profile
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.runner import options_from_config, run_profile_suite
from profiler_core.storage.store import read_jsonl
from report_cases import row

SCENARIO = {"id": "s{}", "name": "S", "prompt": "Fix the failing test."}


def _profile(
    tmp_path: Path, *, skill: dict, stop: dict, execution: dict | None = None
) -> Path:
    (tmp_path / "scenarios").mkdir(exist_ok=True)
    for i in range(4):
        (tmp_path / "scenarios" / f"s{i}.json").write_text(
            json.dumps({**SCENARIO, "id": f"s{i}"})
        )
    profile = {
        "modes": {"baseline": {}, "skill": {"provider_overrides": skill}},
        "scenarios": {"path": "scenarios"},
        "provider": {
            "id": "simulated",
            "model": "sim-small",
            "options": {"seed": 3, "success_rate": 0.6},
        },
        "execution": {
            "concurrency": 3,
            "order": "interleaved",
            "warmup": False,
            "stop": stop,
            **(execution or {}),
        },
    }
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def _run(path: Path, **extra):
    manager = get_plugin_manager(entrypoints=False)
    options = options_from_config(
        load_profile(path, registry=manager.registry), manager, run_id="stop", **extra
    )
    return trio.run(run_profile_suite, options)


def _manifest(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "results" / "stop.manifest.json").read_text())


BIG_EFFECT = {"success_rate": 0.98, "cost_factor": 0.4, "time_factor": 0.4}


def test_a_clear_difference_stops_the_run_early_with_its_reason(tmp_path):
    path = _profile(
        tmp_path,
        skill=BIG_EFFECT,
        stop={"max_repetitions": 40, "metrics": ["cost", "wall_ms"]},
    )
    result = _run(path)
    stop = _manifest(tmp_path)["stop"]
    assert result.status == "completed" and stop["reason"] == "decided"
    assert 3 <= stop["repetitions"] < 40
    rows = read_jsonl(tmp_path / "results" / "stop.jsonl").rows
    # Every cell of the rounds the rule looked at is there; a few of the next round may
    # have finished too.
    assert {(r.mode, r.scenario_id, r.iteration) for r in rows} >= {
        (m, f"s{i}", it)
        for m in ("baseline", "skill")
        for i in range(4)
        for it in range(stop["repetitions"])
    }
    assert len(rows) < 2 * 4 * (stop["repetitions"] + 2)


def test_resuming_a_run_the_rule_stopped_runs_nothing_more(tmp_path):
    path = _profile(
        tmp_path, skill=BIG_EFFECT, stop={"max_repetitions": 40, "metrics": ["cost"]}
    )
    _run(path)
    before = (tmp_path / "results" / "stop.jsonl").read_text()
    again = _run(path, resume=True)
    assert (tmp_path / "results" / "stop.jsonl").read_text() == before
    assert (
        again.status == "completed"
        and _manifest(tmp_path)["stop"]["reason"] == "decided"
    )


def test_no_difference_runs_to_max_repetitions(tmp_path):
    path = _profile(
        tmp_path, skill={}, stop={"max_repetitions": 4, "metrics": ["success"]}
    )
    _run(path)
    assert _manifest(tmp_path)["stop"] == {
        **_manifest(tmp_path)["stop"],
        "reason": "max_repetitions",
        "repetitions": 4,
    }
    assert len(read_jsonl(tmp_path / "results" / "stop.jsonl").rows) == 2 * 4 * 4


def test_a_spent_budget_ends_it_with_reason_budget(tmp_path):
    path = _profile(
        tmp_path,
        skill={},
        stop={"max_repetitions": 30, "min_repetitions": 3},
        execution={"max_tokens": 2_000_000},
    )
    result = _run(path)
    manifest = _manifest(tmp_path)
    assert result.status == "budget_exhausted"
    assert (
        manifest["stop"]["reason"] == "budget" and manifest["stop"]["repetitions"] < 30
    )


def test_modes_one_after_another_also_go_round_by_round(tmp_path):
    """Without a provider factory the runner runs modes one at a time: each round is a
    stage per mode."""
    path = _profile(
        tmp_path, skill=BIG_EFFECT, stop={"max_repetitions": 40, "metrics": ["cost"]}
    )
    result = _run(path, provider_factory=None)
    stop = _manifest(tmp_path)["stop"]
    assert stop["reason"] == "decided" and stop["repetitions"] < 40
    rows = read_jsonl(tmp_path / "results" / "stop.jsonl").rows
    assert (
        len(rows) == 2 * 4 * stop["repetitions"]
    )  # one stage at a time: nothing of a later round started
    assert result.counts.completed == len(rows)


def test_resuming_a_run_its_budget_stopped_goes_on_with_a_raised_budget(tmp_path):
    """``reason: budget`` is not a verdict: resumed with more budget, the rounds
    continue until the rule ends them."""
    stop = {"max_repetitions": 8, "min_repetitions": 3}
    path = _profile(tmp_path, skill={}, stop=stop, execution={"max_tokens": 2_000_000})
    _run(path)
    first = len(read_jsonl(tmp_path / "results" / "stop.jsonl").rows)
    assert _manifest(tmp_path)["stop"]["reason"] == "budget" and first < 2 * 4 * 8
    path = _profile(tmp_path, skill={}, stop=stop, execution={"max_tokens": 10**12})
    result = _run(path, resume=True)
    rows = read_jsonl(tmp_path / "results" / "stop.jsonl").rows
    assert result.status == "completed" and _manifest(tmp_path)["stop"]["reason"] in {
        "decided",
        "max_repetitions",
    }
    assert len(rows) > first and len(
        {(r.mode, r.scenario_id, r.iteration) for r in rows}
    ) == len(rows)


def test_the_summary_table_counts_the_decisions_rows_and_labels_rows_in_flight(capsys):
    """15 rounds decided on, 2 cells of round 16 finished for mode "a": "60 +2", and a
    line that says what +2 is."""
    rows = [
        row(m, f"s{i}", it) for m in ("a", "b") for i in range(4) for it in range(15)
    ]
    rows += [row("a", "s0", 15), row("a", "s1", 15)]
    print_summary(rows, decided_rounds=15)
    out = capsys.readouterr().out
    cells = {
        line.split()[0]: line.split()[1:3]
        for line in out.splitlines()
        if line.split()[:1] in (["a"], ["b"])
    }
    assert (
        cells == {"a": ["60", "+2"], "b": ["60", cells["b"][1]]}
        and "+" not in cells["b"][1]
    )
    assert (
        "runs: the rows of the 15 rounds the stop rule decided on; +N: rows of "
        "later rounds in flight" in out
    )
    # Without a stop rule (or none in flight) the table counts every row and says nothing more.
    print_summary(rows)
    plain = capsys.readouterr().out
    assert "62" in plain.split("\n")[2] and "+N" not in plain


def test_the_cli_summary_after_a_stopped_run_matches_its_manifest(tmp_path):
    """The real CLI: each mode's runs cell is the decision's rows (4 scenarios x its
    rounds), rows in flight apart."""
    path = _profile(
        tmp_path, skill=BIG_EFFECT, stop={"max_repetitions": 40, "metrics": ["cost"]}
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "profiler_core", "run", str(path), "--run-id", "stop", "--no-report"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rounds = _manifest(tmp_path)["stop"]["repetitions"]
    rows = read_jsonl(tmp_path / "results" / "stop.jsonl").rows
    lines = {
        line.split()[0]: line.split()
        for line in done.stdout.splitlines()
        if line.split()[:1] in (["baseline"], ["skill"])
    }
    for mode in ("baseline", "skill"):
        later = sum(1 for r in rows if r.mode == mode and r.iteration >= rounds)
        assert lines[mode][1] == str(4 * rounds)
        assert (
            (lines[mode][2] == f"+{later}") if later else lines[mode][2].endswith("%")
        )
    in_flight = any(r.iteration >= rounds for r in rows)
    assert ("in flight when it stopped" in done.stdout) == in_flight
