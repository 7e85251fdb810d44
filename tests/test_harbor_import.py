"""`profiler import harbor JOB_DIR...`: Harbor job folders (written after Harbor's
models) become runs the rest of the tool reads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.harbor_jobs import FIXTURES, harbor_problems, harbor_python, write_job

PROFILER = Path(sys.executable).with_name("profiler")
JOB_A, JOB_OLD, JOB_KILLED = (
    FIXTURES / "job-a",
    FIXTURES / "job-old",
    FIXTURES / "job-killed",
)


def profiler(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(PROFILER), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )


def rows(path: Path) -> dict[tuple[str, str], dict]:
    return {
        (r["mode"], r["scenarioId"]): r
        for r in map(json.loads, path.read_text().splitlines())
    }


def test_a_row_per_trial_with_the_verifier_tokens_cost_phases_and_exceptions(tmp_path):
    out = profiler("import", "harbor", JOB_A, "--out", "results/a.jsonl", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    got = rows(tmp_path / "results" / "a.jsonl")
    assert set(got) == {
        ("terminus-2", "hello-world"),
        ("terminus-2", "fix-permissions"),
        ("terminus-2", "count-lines"),
    }
    passed, failed, timed_out = (
        got["terminus-2", "hello-world"],
        got["terminus-2", "fix-permissions"],
        got["terminus-2", "count-lines"],
    )
    # the verifier: reward 1 passes, reward 0 fails, both with Harbor's reward and a
    # verify:harbor check
    assert (
        passed["success"],
        passed["reward"],
        passed["checkpointDetails"][0]["id"],
    ) == (True, 1.0, "verify:harbor")
    assert (failed["success"], failed["reward"], failed.get("error")) == (
        False,
        0.0,
        None,
    )
    assert (
        "1 failed, 1 passed" in failed["checkpointDetails"][0]["actual"]
    )  # verifier/test-stdout.txt
    # tokens and cost from agent_result (n_input_tokens include the cached ones)
    assert passed["model"] == "claude-sonnet-4-5"
    assert (
        passed["tokens"]["input"],
        passed["tokens"]["cacheRead"],
        passed["tokens"]["output"],
    ) == (5961 - 3776, 3776, 197)
    assert (
        passed["cost"]["totalUsd"] == 0.0101
        and passed["extensions"]["cost_source"] == "provider"
    )
    # timing: the trial's wall time and one segment per phase
    assert passed["extensions"]["latency_agent_ms"] == pytest.approx(
        22174.218
    )  # 10:00:09.071271 -> 10:00:31.245489
    assert {
        "latency_environment_setup_ms",
        "latency_agent_setup_ms",
        "latency_verifier_ms",
    } <= set(passed["extensions"])
    assert passed["timing"]["wallMs"] == pytest.approx(
        40316.76
    )  # started_at -> finished_at
    # an exception is an error row with its type and message
    assert (
        timed_out["error"]
        == "AgentTimeoutError: Agent execution timed out after 600.0 seconds"
    )
    assert (
        timed_out["completionReason"],
        timed_out["success"],
        timed_out.get("reward"),
    ) == ("timeout", False, None)
    # the ATIF trajectory is the trace
    trace = json.loads(
        (
            tmp_path / "results" / "sessions" / "hello-world" / "terminus-2-iter-0.json"
        ).read_text()
    )
    assert (
        trace["summary"]["totalTurns"] == 3 and trace["summary"]["totalToolCalls"] == 3
    )
    calls = [e for e in trace["events"] if e["type"] == "tool_call"]
    assert calls[1]["input"] == {
        "keystrokes": "cat hello.txt\n",
        "duration": 0.1,
    } and calls[1]["output"].startswith("Hello, world!")


def test_an_older_job_imports_with_one_line_naming_what_it_lacked(tmp_path):
    out = profiler("import", "harbor", JOB_OLD, "--out", "old.jsonl", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if "job-old" in line]
    assert len(lines) == 1
    assert (
        "verifier_result.rewards" in lines[0]
        and "phase timings" in lines[0]
        and "agent/trajectory.json" in lines[0]
    )
    got = rows(tmp_path / "old.jsonl")
    assert (
        got["terminus", "hello-world"]["reward"],
        got["terminus", "hello-world"]["success"],
    ) == (1.0, True)
    assert got["terminus", "count-lines"]["tokens"]["input"] == 3001
    manifest = json.loads((tmp_path / "old.manifest.json").read_text())
    assert any("verifier_result.rewards" in w for w in manifest["warnings"])


def test_a_killed_job_imports_what_finished_and_names_what_did_not(tmp_path):
    out = profiler("import", "harbor", JOB_KILLED, "--out", "k.jsonl", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert set(rows(tmp_path / "k.jsonl")) == {
        ("oracle", "hello-world"),
        ("oracle", "fix-permissions"),
    }
    said = [line for line in out.stderr.splitlines() if "did not finish" in line]
    assert (
        len(said) == 1
        and "count-lines__Ll9Ww3d" in said[0]
        and "1 trial(s) have no result" in said[0]
    )


def _broken(tmp_path: Path) -> dict[str, Path]:
    """Four bad inputs: a folder that is no job, a file, a trial result that is not
    JSON, a trajectory Harbor's model refuses."""
    empty = tmp_path / "not-a-job"
    empty.mkdir()
    bad_json = tmp_path / "bad-json"
    shutil.copytree(JOB_A, bad_json)
    (bad_json / "fix-permissions__P8xWm2c" / "result.json").write_text(
        '{"task_name": "fix-permissions", '
    )
    bad_traj = tmp_path / "bad-trajectory"
    shutil.copytree(JOB_A, bad_traj)
    traj = bad_traj / "hello-world__Kq3vT9a" / "agent" / "trajectory.json"
    data = json.loads(traj.read_text())
    data["steps"][3]["step_id"] = 7
    traj.write_text(json.dumps(data))
    return {
        "empty": empty,
        "file": JOB_A / "config.json",
        "json": bad_json,
        "trajectory": bad_traj,
    }


def test_bad_input_is_one_line_each_naming_the_file_and_nothing_is_written(tmp_path):
    bad = _broken(tmp_path)
    out = profiler(
        "import", "harbor", JOB_A, *bad.values(), "--out", "r.jsonl", cwd=tmp_path
    )
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 4, out.stderr
    assert "not-a-job: not a Harbor job folder" in errors[0]
    assert "config.json: not a folder" in errors[1]
    assert "bad-json/fix-permissions__P8xWm2c/result.json: not valid JSON" in errors[2]
    assert (
        "hello-world__Kq3vT9a/agent/trajectory.json: not a valid ATIF "
        "trajectory: $.steps[3].step_id: expected 4" in errors[3]
    )
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_as_mode_needs_one_name_per_job(tmp_path):
    out = profiler(
        "import",
        "harbor",
        JOB_A,
        JOB_OLD,
        "--as-mode",
        "x",
        "--out",
        "r.jsonl",
        cwd=tmp_path,
    )
    assert (
        out.returncode == 2
        and "--as-mode given 1 time(s) for 2 job folder(s)" in out.stderr
    )


@pytest.fixture(scope="module")
def two_jobs(tmp_path_factory):
    """A job and a rerun of it whose agent costs twice as much and solves as often: two
    imported runs."""
    root = tmp_path_factory.mktemp("harbor-compare")
    tasks = ["hello-world", "fix-permissions", "count-lines", "sort-csv"]
    base = write_job(root / "jobs" / "base", tasks=tasks, attempts=6, seed=1)
    dear = write_job(
        root / "jobs" / "dear", tasks=tasks, attempts=6, seed=2, cost_scale=2.0
    )
    for name, job in (("base", base), ("dear", dear)):
        out = profiler(
            "import",
            "harbor",
            job,
            "--as-mode",
            "terminus",
            "--out",
            f"results/{name}.jsonl",
            cwd=root,
        )
        assert out.returncode == 0, out.stderr
    return root


def test_report_reads_an_imported_job(two_jobs):
    out = profiler(
        "report", "results/base.jsonl", "--out", "reports/base", cwd=two_jobs
    )
    assert out.returncode == 0, out.stderr
    report = (two_jobs / "reports" / "base" / "report.md").read_text()
    assert "terminus" in report and "sort-csv" in report


def test_compare_of_two_imported_jobs_gives_a_verdict(two_jobs):
    dearer = profiler(
        "compare",
        "results/base.jsonl",
        "results/dear.jsonl",
        "--fail-on",
        "cost:+10%",
        "--json",
        cwd=two_jobs,
    )
    assert dearer.returncode == 1, (
        dearer.stdout + dearer.stderr
    )  # twice the cost: the gate regressed
    cheaper = profiler(
        "compare",
        "results/dear.jsonl",
        "results/base.jsonl",
        "--fail-on",
        "cost:+10%",
        cwd=two_jobs,
    )
    assert cheaper.returncode == 0, cheaper.stdout + cheaper.stderr


def test_two_jobs_as_two_modes_of_one_run(two_jobs, tmp_path):
    out = profiler(
        "import",
        "harbor",
        two_jobs / "jobs" / "base",
        two_jobs / "jobs" / "dear",
        "--as-mode",
        "baseline",
        "--as-mode",
        "with_skill",
        "--out",
        "both.jsonl",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    modes = [
        json.loads(line)["mode"]
        for line in (tmp_path / "both.jsonl").read_text().splitlines()
    ]
    assert modes.count("baseline") == modes.count("with_skill") == 24
    exported = profiler("export", "both.jsonl", "--to", "both.duckdb", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr


def test_plan_reads_two_imported_jobs_as_its_pilot(two_jobs, tmp_path):
    out = profiler(
        "import",
        "harbor",
        two_jobs / "jobs" / "base",
        two_jobs / "jobs" / "dear",
        "--as-mode",
        "baseline",
        "--as-mode",
        "with_skill",
        "--out",
        "results/pilot.jsonl",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    (tmp_path / "scenarios").mkdir()
    for task in ("hello-world", "fix-permissions", "count-lines", "sort-csv"):
        (tmp_path / "scenarios" / f"{task}.json").write_text(
            json.dumps({"id": task, "name": task, "prompt": "-"})
        )
    (tmp_path / "profile.yaml").write_text(
        "modes: {baseline: {}, with_skill: {}}\nscenarios: {path: "
        "scenarios}\nprovider: {id: simulated, model: claude-sonnet-4-5}\n"
    )
    plan = profiler("plan", "profile.yaml", "--pilot", "pilot", cwd=tmp_path)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "from pilot pilot (48 sessions)" in plan.stdout
    assert any(
        line.split()[:4] == ["with_skill", "vs", "baseline", "cost"]
        for line in plan.stdout.splitlines()
    )


def test_a_multi_step_trial_sums_its_steps_and_named_rewards_become_metrics(tmp_path):
    job = tmp_path / "multi"
    shutil.copytree(JOB_A, job)
    result_file = job / "hello-world__Kq3vT9a" / "result.json"
    data = json.loads(result_file.read_text())
    usage = lambda n_in, n_out, usd: {  # noqa: E731
        "n_input_tokens": n_in,
        "n_cache_tokens": 0,
        "n_output_tokens": n_out,
        "cost_usd": usd,
    }
    data.update(
        agent_result=None,
        verifier_result=None,
        step_results=[
            {
                "step_name": "build",
                "agent_result": usage(1000, 100, 0.01),
                "verifier_result": None,
            },
            {
                "step_name": "test",
                "agent_result": usage(2000, 50, 0.02),
                "verifier_result": {"rewards": {"reward": 0.5, "tests_passed": 7}},
            },
        ],
    )
    result_file.write_text(json.dumps(data))
    out = profiler("import", "harbor", job, "--out", "m.jsonl", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    row = rows(tmp_path / "m.jsonl")["terminus-2", "hello-world"]
    assert (
        row["tokens"]["input"],
        row["tokens"]["output"],
        row["cost"]["totalUsd"],
    ) == (3000, 150, 0.03)
    assert (
        row["reward"],
        row["success"],
        row["extensions"]["reward_tests_passed"],
    ) == (0.5, False, 7.0)
    assert "multi-step trials" in out.stderr


def test_the_fixtures_and_generated_jobs_validate_with_harbors_own_models(tmp_path):
    python = harbor_python()
    generated = write_job(tmp_path / "generated", tasks=["a", "b"], attempts=2)
    files = [
        p
        for folder in (FIXTURES, generated)
        for p in folder.rglob("*.json")
        if p.name != "config.json"
    ]
    assert len(files) > 20
    assert harbor_problems(python, files) == []
    broken = tmp_path / "broken.json"
    broken.write_text(
        json.dumps(
            {
                **json.loads(
                    (JOB_A / "hello-world__Kq3vT9a" / "result.json").read_text()
                ),
                "agent_info": {"name": "x"},
            }
        )
    )
    assert harbor_problems(
        python, [broken]
    )  # the check can fail: agent_info.version is required


def test_a_job_killed_before_any_trial_finished_says_so_and_writes_nothing(tmp_path):
    job = tmp_path / "early"
    (job / "count-lines__Ll9Ww3d").mkdir(parents=True)
    shutil.copy(
        JOB_A / "config.json", job / "config.json"
    )  # Harbor writes the job's config.json first
    shutil.copy(
        JOB_KILLED / "count-lines__Ll9Ww3d" / "config.json",
        job / "count-lines__Ll9Ww3d" / "config.json",
    )
    out = profiler("import", "harbor", job, "--out", "e.jsonl", cwd=tmp_path)
    assert out.returncode == 1
    assert (
        "early: the job did not finish: 1 trial(s) have no result (imported "
        "the 0 that finished): count-lines__Ll9Ww3d" in out.stderr
    )
    assert (
        "Error: the job folders hold no finished trial; nothing written" in out.stderr
    )
    assert not (tmp_path / "e.jsonl").exists()
