"""Harbor task directories (``scenarios: {format: harbor}``), the ``oracle`` provider
and the example tasks, in bwrap.

The example tasks (``examples/tasks``) must pass their own verifiers when the
oracle runs their reference solutions, and fail them under the simulated
agent, which only *says* it fixed things. Bad tasks are one line each, naming
the file and the field.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from tests.sandbox_runtimes import require
from tests.scripted.agent_runs import profiler, rows

from profiler_core import from_json, to_json
from profiler_core.cli import cli
from profiler_core.config.harbor import load_task
from profiler_core.model import Scenario, VerifierSpec
from profiler_core.runner.hidden import hidden_from_agents

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "tasks"
EXAMPLE_IDS = ["add-cli-flag", "fix-median", "repair-backup-script"]


# -- the mapping ------------------------------------------------------------------


def test_a_harbor_task_becomes_a_scenario():
    task = EXAMPLES / "fix-median"
    scenario = load_task(task, timeout_default_ms=99_000)
    assert (scenario.id, scenario.name, scenario.timeout_ms) == (
        "fix-median",
        "agent-profiler/fix-median",
        300_000,
    )
    assert scenario.prompt == (task / "instruction.md").read_text()
    assert scenario.tags == ("python", "bugfix")
    assert scenario.extensions["harbor"]["metadata"] == {
        "difficulty": "easy",
        "category": "programming",
    }
    assert scenario.workspace.path == str(
        task / "environment"
    ) and scenario.workspace.exclude == ("Dockerfile",)
    assert scenario.environment.dockerfile == str(task / "environment" / "Dockerfile")
    assert (scenario.environment.workdir, scenario.environment.build_timeout_ms) == (
        "/app",
        120_000,
    )
    [verifier] = scenario.verify
    assert (verifier.command, verifier.timeout_ms, verifier.passed_by) == (
        "bash /tests/test.sh",
        60_000,
        "reward",
    )
    assert (
        verifier.mounts == {"/tests": str(task / "tests")}
        and verifier.logs_dir == "/logs/verifier"
    )
    assert scenario.solution.command == "bash /solution/solve.sh"
    assert scenario.solution.mounts == {"/solution": str(task / "solution")}
    assert load_task(EXAMPLES / "add-cli-flag", timeout_default_ms=1).verify[0].env == {
        "GREET_NAME": "Ada"
    }
    assert from_json(to_json(scenario), Scenario) == scenario


def test_task_toml_defaults_and_the_older_layout(tmp_path):
    task = _task(
        tmp_path,
        toml='version = "1.0"\n[metadata]\ntags = ["old"]\ncreated = 2024-05-01\n',
        solve=None,
    )
    scenario = load_task(task, timeout_default_ms=45_000)
    assert (
        scenario.timeout_ms == 45_000 and scenario.verify[0].timeout_ms == 600_000
    )  # the profile's; Harbor's
    assert (
        scenario.tags == ("old",)
        and scenario.extensions["harbor"]["metadata"]["created"] == "2024-05-01"
    )
    assert (
        scenario.environment is None and scenario.solution is None
    )  # no Dockerfile, no solve.sh


def test_verifiers_without_the_new_fields_keep_their_json():
    data = json.loads(to_json(VerifierSpec(name="t", command="true")))
    assert set(data) == {"name", "command", "timeoutMs", "env", "files", "network"}


# -- bad input: one line each -----------------------------------------------------------


def _task(
    root: Path,
    name: str = "task-a",
    *,
    toml: str = "[agent]\ntimeout_sec = 30\n",
    test: str = "echo 1 > /logs/verifier/reward.txt\n",
    solve: str | None = "true\n",
) -> Path:
    task = root / "tasks" / name
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text(toml)
    (task / "instruction.md").write_text("Do the thing.\n")
    (task / "environment" / "data.txt").write_text("data\n")
    (task / "tests" / "test.sh").write_text(test)
    if solve is not None:
        (task / "solution").mkdir()
        (task / "solution" / "solve.sh").write_text(solve)
    return task


def _profile(
    root: Path, *, sandbox: str = "bwrap", provider: str = "simulated", **execution
) -> Path:
    profile = {
        "modes": {"m": {"system_instructions": "x"}},
        "scenarios": {"path": "tasks", "format": "harbor"},
        "provider": {"id": provider},
        "scorer": {"id": "verify"},
        "execution": {
            "repetitions": 1,
            "warmup": False,
            "sandbox": sandbox,
            **execution,
        },
    }
    path = root / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def _break_instruction(task: Path) -> str:
    (task / "instruction.md").unlink()
    return f"{task / 'instruction.md'}: missing (the task's instruction"


def _break_toml(task: Path) -> str:
    (task / "task.toml").write_text("[agent\ntimeout_sec = 1\n")
    return f"{task / 'task.toml'}: not valid TOML: "


def _break_timeout(task: Path) -> str:
    (task / "task.toml").write_text('[agent]\ntimeout_sec = "soon"\n')
    return (
        f"{task / 'task.toml'}: [agent].timeout_sec: expected a number of seconds > "
        "0, got 'soon'"
    )


def _break_workspace(task: Path) -> str:
    outside = task.parent.parent / "outside"
    outside.mkdir()
    shutil.rmtree(task / "environment")
    (task / "environment").symlink_to(outside)
    return (
        f"{task / 'environment'}: leads outside the task folder {task} (to {outside})"
    )


def _break_tests(task: Path) -> str:
    (task / "tests" / "test.sh").unlink()
    return f"{task / 'tests' / 'test.sh'}: missing (the task's verifier)"


def _terminal_bench(task: Path) -> str:
    (task / "task.toml").unlink()
    (task / "task.yaml").write_text("instruction: do it\n")
    return f"{task / 'task.yaml'}: a Terminal-Bench task; convert it with `harbor tasks migrate`"


def _bad_name(task: Path) -> str:
    task.rename(task.parent / "bad name")
    return (
        f"{task.parent / 'bad name'}: the folder's name is the scenario id: "
        "expected letters, digits"
    )


@pytest.mark.parametrize(
    "breaks",
    [
        _break_instruction,
        _break_toml,
        _break_timeout,
        _break_workspace,
        _break_tests,
        _terminal_bench,
        _bad_name,
    ],
)
def test_a_bad_task_is_one_line_naming_its_file_and_field(tmp_path, breaks):
    expected = breaks(_task(tmp_path))
    result = CliRunner().invoke(cli, ["validate", str(_profile(tmp_path))])
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and errors[0].startswith(f"Error: {expected}"), (
        result.output
    )
    assert "Traceback" not in result.output


def test_harbor_tasks_without_a_sandbox_are_refused_before_anything_runs(tmp_path):
    _task(tmp_path)
    path = _profile(tmp_path, sandbox="none")
    expected = (
        f"Error: {path}: execution.sandbox: none cannot run task-a: their "
        "commands use /tests, /logs/verifier, /solution, "
        "which exist only inside a sandbox (set execution.sandbox to bwrap, docker or podman)"
    )
    for command in ("validate", "run"):
        result = CliRunner().invoke(cli, [command, str(path)])
        assert result.exit_code == 1 and expected in result.output.splitlines(), (
            result.output
        )
    assert not (tmp_path / "results").exists()
    assert not Path("/logs/verifier").exists() and not Path("/tests/test.sh").exists()


# -- runs in bwrap --------------------------------------------------------------------


@pytest.fixture(scope="module")
def examples(tmp_path_factory) -> Path:
    """A copy of examples/tasks (its results and reports then stay in the copy)."""
    require("bwrap")
    folder = tmp_path_factory.mktemp("harbor") / "tasks"
    shutil.copytree(EXAMPLES, folder)
    return folder


def test_the_oracle_passes_every_example_tasks_verifier(examples):
    done = profiler(
        examples,
        "run",
        "profile.yaml",
        "--provider",
        "oracle",
        "--repetitions",
        "1",
        "--run-id",
        "oracle",
        "--no-report",
        "--progress",
        "none",
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = {row["scenarioId"]: row for row in rows(examples, "oracle")}
    assert sorted(found) == EXAMPLE_IDS
    for row in found.values():
        assert (
            row["provider"] == "oracle"
            and row["success"]
            and row["reward"] == 1.0
            and not row.get("error")
        ), row
        assert row["tokens"]["total"] == 0 and row["toolCalls"]["total"] == 1
        assert [
            (d["id"], d["passed"], d["expected"]) for d in row["checkpointDetails"]
        ] == [("verify:tests", True, "reward 1")]
    traces = [
        json.loads(line)
        for line in (examples / "reports" / "oracle" / "sessions" / "traces.jsonl")
        .read_text()
        .splitlines()
    ]
    calls = [
        e for t in traces for e in t["trace"]["events"] if e["type"] == "tool_call"
    ]
    assert len(calls) == 3 and {c["input"]["command"] for c in calls} == {
        "bash /solution/solve.sh"
    }


def test_the_simulated_agent_says_it_is_done_but_fails_every_verifier(examples):
    done = profiler(
        examples,
        "run",
        "profile.yaml",
        "--run-id",
        "sim",
        "--no-report",
        "--progress",
        "none",
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = rows(examples, "sim")
    assert (
        sorted({row["scenarioId"] for row in found}) == EXAMPLE_IDS and len(found) == 6
    )
    for row in found:
        # A verified failure: not an error, the reward is 0.
        assert not row["success"] and not row.get("error") and row["reward"] == 0.0, row
        assert [(d["id"], d["passed"]) for d in row["checkpointDetails"]] == [
            ("verify:tests", False)
        ]
    # bwrap does not build the Dockerfile: said once per task, however many sessions it has.
    warnings = [
        line for line in done.stderr.splitlines() if "Dockerfile is not applied" in line
    ]
    assert sorted(w.split("'")[1] for w in warnings) == EXAMPLE_IDS
    kept = (
        examples / "reports" / "sim" / "workspaces" / "fix-median" / "baseline-iter-0"
    )
    assert sorted(p.name for p in kept.iterdir()) == [
        "stats.py"
    ]  # the environment's files, not its Dockerfile


def test_verifier_and_solution_failures_are_errors_of_their_own(tmp_path):
    require("bwrap")
    _task(tmp_path, "hangs", toml="[verifier]\ntimeout_sec = 1\n", test="sleep 600\n")
    _task(tmp_path, "unsolved", solve=None)
    _task(tmp_path, "silent", test="echo tests ran\n")
    _task(tmp_path, "exit-one", test="echo 1 > /logs/verifier/reward.txt; exit 1\n")
    _task(tmp_path, "bad-solution", solve="echo broken; exit 3\n")
    path = _profile(tmp_path, provider="oracle")
    done = profiler(
        tmp_path,
        "run",
        str(path),
        "--run-id",
        "r",
        "--no-report",
        "--progress",
        "none",
        "--allow-errors",
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    found = {row["scenarioId"]: row for row in rows(tmp_path, "r")}
    assert (found["hangs"]["errorCode"], found["hangs"]["error"]) == (
        "verifier_error",
        "verifier 'tests' timed out after 1 s",
    )
    assert found["unsolved"]["errorCode"] == "provider_error"
    assert (
        "scenario 'unsolved' has no reference solution (a Harbor task's solution/solve.sh)"
        in found["unsolved"]["error"]
    )
    assert (
        found["silent"]["errorCode"] == "verifier_error"
        and "wrote no reward" in found["silent"]["error"]
        # what it said last, for the verifier that ends early without one
        and found["silent"]["error"].endswith("; its output ended 'tests ran'")
    )
    # Harbor judges by the reward: test.sh's exit status means nothing.
    assert found["exit-one"]["success"] and not found["exit-one"].get("error")
    assert found["bad-solution"]["errorCode"] == "session_error"
    assert found["bad-solution"]["error"].startswith(
        "the reference solution exited 3: broken"
    )


def test_a_scenario_file_may_use_mounts_a_reward_and_a_solution_too(tmp_path):
    """The same pieces without Harbor's layout: paths relative to the scenario file,
    checked to stay inside its folder."""
    require("bwrap")
    scenarios = tmp_path / "scenarios"
    for folder in ("repo", "checks", "answer"):
        (scenarios / folder).mkdir(parents=True)
    (scenarios / "repo" / "value.txt").write_text("1\n")
    (scenarios / "checks" / "check.sh").write_text(
        '[ "$(cat value.txt)" = 2 ] && echo 1 > /out/reward.txt || echo 0 > /out/reward.txt\n'
    )
    (scenarios / "answer" / "set.sh").write_text("echo 2 > value.txt\n")
    scenario = {
        "id": "set-two",
        "name": "Set two",
        "prompt": "Write 2 into value.txt.",
        "workspace": {"path": "repo"},
        "verify": [
            {
                "name": "check",
                "command": "bash /checks/check.sh",
                "mounts": {"/checks": "checks"},
                "logsDir": "/out",
                "passedBy": "reward",
            }
        ],
        "solution": {"command": "bash /answer/set.sh", "mounts": {"/answer": "answer"}},
    }
    (scenarios / "set-two.json").write_text(json.dumps(scenario))
    profile = {
        "modes": {"m": {}},
        "scenarios": {"path": "scenarios"},
        "provider": {"id": "oracle"},
        "scorer": {"id": "verify"},
        "execution": {"repetitions": 1, "warmup": False, "sandbox": "bwrap"},
    }
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    done = profiler(
        tmp_path,
        "run",
        str(path),
        "--run-id",
        "s",
        "--no-report",
        "--progress",
        "none",
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = rows(tmp_path, "s")
    assert row["success"] and row["reward"] == 1.0, row
    assert (
        scenarios / "repo" / "value.txt"
    ).read_text() == "1\n"  # the original is never changed

    scenario["verify"][0]["mounts"] = {"/checks": "../elsewhere"}
    (tmp_path / "elsewhere").mkdir()
    (scenarios / "set-two.json").write_text(json.dumps(scenario))
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 1
    assert (
        f"Error: {scenarios / 'set-two.json'}: $.verify[0].mounts./checks: "
        "'../elsewhere' is outside the scenario folder" in result.output
    )


# -- what an agent must not read ------------------------------------------------------------


def test_the_runner_hides_the_tasks_tests_and_solution_and_the_runs_folders_from_agents():
    task = EXAMPLES / "fix-median"
    hidden = hidden_from_agents(
        [load_task(task, timeout_default_ms=1)], "results", "reports"
    )
    expected = (
        (task / "tests").resolve(),
        (task / "solution").resolve(),
        Path("results").resolve(),
        Path("reports").resolve(),
    )
    assert hidden[:4] == expected
    # and the git folders of the checkout holding the tasks (their history holds the
    # tests too), when there is one
    assert all(p.name == ".git" or "/.git" in str(p) for p in hidden[4:]), hidden[4:]


@pytest.fixture
def outside_tmp():
    """A folder neither under /tmp (bwrap gives a fresh one, which hides everything
    there anyway) nor the home."""
    folder = Path(tempfile.mkdtemp(prefix="profiler-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


_PROBE = """\
(
attempt() {{ if cat "$1" > /dev/null 2>&1; then echo "read $1"; else echo "refused $1"; fi; }}
attempt value.txt
attempt {secret}
attempt {checks}
attempt {answer}
attempt {old_rows}
attempt {kept}
attempt {manifest}
attempt /answer/probe.sh
echo "beside me:" $(ls -A ..)
) > probe.txt
"""


def _git_repo(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "value.txt").write_text("1\n")
    for args in (
        ["init", "-q"],
        ["add", "."],
        [
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "-m",
            "one",
        ],
    ):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def test_an_agent_in_bwrap_cannot_read_hidden_tests_the_solution_or_the_runs_records(
    outside_tmp,
):
    """The oracle's solution runs where an agent would: it must not reach any answer at
    its host path."""
    require("bwrap")
    root = outside_tmp
    scenarios = root / "scenarios"
    for folder in ("hidden", "checks", "answer"):
        (scenarios / folder).mkdir(parents=True)
    _git_repo(
        scenarios / "repo"
    )  # cloned through the run's cache, which no agent should see either
    (scenarios / "hidden" / "test_secret.py").write_text("SECRET = 1\n")
    (scenarios / "checks" / "check.sh").write_text(
        "grep -q SECRET test_secret.py && test -f /checks/check.sh\n"
    )
    (root / "results").mkdir()
    (root / "results" / "older.jsonl").write_text("{}\n")  # an earlier run's rows
    kept = root / "reports" / "older" / "workspaces" / "probe" / "m-iter-0"
    kept.mkdir(parents=True)
    (kept / "solved.py").write_text(
        "print('a session solved it')\n"
    )  # another session's kept workspace
    paths = dict(
        secret=scenarios / "hidden" / "test_secret.py",
        checks=scenarios / "checks" / "check.sh",
        answer=scenarios / "answer" / "probe.sh",
        old_rows=root / "results" / "older.jsonl",
        kept=kept / "solved.py",
        manifest=root / "results" / "r.manifest.json",
    )
    (scenarios / "answer" / "probe.sh").write_text(_PROBE.format(**paths))
    scenario = {
        "id": "probe",
        "name": "Probe",
        "prompt": "Look around.",
        "workspace": {"git": "repo"},
        "verify": [
            {
                "name": "tests",
                "command": "bash /checks/check.sh",
                "files": {"test_secret.py": "hidden/test_secret.py"},
                "mounts": {"/checks": "checks"},
            }
        ],
        "solution": {
            "command": "bash /answer/probe.sh",
            "mounts": {"/answer": "answer"},
        },
    }
    (scenarios / "probe.json").write_text(json.dumps(scenario))
    profile = {
        "modes": {"m": {}},
        "scenarios": {"path": "scenarios"},
        "provider": {"id": "oracle"},
        "scorer": {"id": "verify"},
        "execution": {"repetitions": 1, "warmup": False, "sandbox": "bwrap"},
        "output": {"keep_workspaces": "all"},
    }
    (root / "profile.yaml").write_text(yaml.safe_dump(profile))
    done = profiler(
        root,
        "run",
        "profile.yaml",
        "--run-id",
        "r",
        "--no-report",
        "--progress",
        "none",
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = rows(root, "r")
    assert row["success"] and not row.get("error"), (
        row
    )  # the verifier still got its file copied in, and its mount
    probe = (
        (root / "reports" / "r" / "workspaces" / "probe" / "m-iter-0" / "probe.txt")
        .read_text()
        .splitlines()
    )
    assert probe[0] == "read value.txt" and probe[-2] == "read /answer/probe.sh", (
        probe
    )  # its own workspace, its own mount
    assert probe[1:-2] == [
        f"refused {paths[key]}"
        for key in ("secret", "checks", "answer", "old_rows", "kept", "manifest")
    ], probe
    # Beside its workspace, nothing: not the clone cache, not another session's folder.
    assert probe[-1].startswith("beside me: probe-") and len(probe[-1].split()) == 3, (
        probe
    )
