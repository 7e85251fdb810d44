"""Harbor conformance, the task-parsing side: every rule of Harbor's task format read
into the trial model.

The task folders under ``tests/fixtures/harbor_conformance`` (one per rule) parse into the fields
the trial runtime reads; a folder that is not a valid task is left out with one line naming its
file and field, never refusing the dataset; ``scenarios.ids`` filters before anything is parsed.
The fixtures themselves are checked for real: each Dockerfile builds offline on the Debian base
image that ``.ci/build-base-image`` makes, and in a plain container laid out as Harbor lays out a
trial the oracle solutions pass and doing nothing fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from tests.binaries import in_ci
from tests.sandbox_runtimes import docker_answers, require

from profiler_core import from_json, to_json
from profiler_core.cli import cli
from profiler_core.config import harbor
from profiler_core.config.harbor import (
    expand_env,
    load_task,
    load_tasks,
    not_run_yet,
    strip_canary,
)
from profiler_core.errors import ConfigError
from profiler_core.model import NetworkPolicy, Scenario
from profiler_core.runner.task_images import base_images

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "harbor_conformance"
EXAMPLES = ROOT / "examples" / "tasks"
BASE_IMAGE = "localhost/agent-profiler-debian:bookworm"
GOOD = [
    "agent-user",
    "canary",
    "compose",
    "compose-yml-data",
    "env-workdir",
    "multi-step",
    "multi-step-separate",
    "reward-counts",
    "separate-verifier",
    "state-persists",
    "verifier-network",
]


def _load(name: str) -> Scenario:
    return load_task(FIXTURES / name, timeout_default_ms=1_000)


# -- the dataset: good folders load, the bad one is left out with one line
# ----------------------------------


def test_every_conformance_task_parses_and_the_bad_folder_is_left_out_with_one_line():
    scenarios, left_out, failed = load_tasks(FIXTURES, timeout_default_ms=1_000)
    assert sorted(s.id for s in scenarios) == GOOD
    assert failed == {"bad-timeout"}
    assert left_out == [
        f"{FIXTURES / 'bad-timeout' / 'task.toml'}: [agent].timeout_sec: "
        "expected a number of seconds > 0, got 'soon'"
    ]
    for scenario in scenarios:
        assert from_json(to_json(scenario), Scenario) == scenario


def test_scenarios_ids_filter_before_anything_is_parsed(monkeypatch):
    read: list[str] = []
    real = harbor.load_task

    def spy(task, **kwargs):
        read.append(task.name)
        return real(task, **kwargs)

    monkeypatch.setattr(harbor, "load_task", spy)
    scenarios, left_out, _ = load_tasks(
        FIXTURES, timeout_default_ms=1_000, only={"canary", "reward-counts"}
    )
    assert read == ["canary", "reward-counts"]  # bad-timeout is never opened
    assert [s.id for s in scenarios] == ["canary", "reward-counts"] and left_out == []


def _tasks(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "tasks"
    for name in names:
        shutil.copytree(FIXTURES / name, folder / name)
    return folder


def _profile(tmp_path: Path, **scenarios) -> Path:
    profile = {
        "modes": {"m": {"system_instructions": "x"}},
        "scenarios": {"path": "tasks", "format": "harbor", **scenarios},
        "provider": {"id": "simulated"},
        "scorer": {"id": "verify"},
        "execution": {"repetitions": 1, "warmup": False, "sandbox": "bwrap"},
    }
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def test_validate_lists_the_folders_it_left_out_and_accepts_the_rest(tmp_path):
    require("bwrap")
    folder = _tasks(tmp_path, "canary", "reward-counts", "bad-timeout")
    (folder / "not-toml").mkdir()
    (folder / "not-toml" / "task.toml").write_text("[agent\n")
    result = CliRunner().invoke(cli, ["validate", str(_profile(tmp_path))])
    assert result.exit_code == 0, result.output
    warnings = [
        line
        for line in result.output.splitlines()
        if line.startswith("warning: left out: ")
    ]
    assert warnings == [
        f"warning: left out: {folder / 'bad-timeout' / 'task.toml'}: "
        "[agent].timeout_sec: expected a number of seconds > 0, got 'soon'",
        f"warning: left out: {folder / 'not-toml' / 'task.toml'}: not valid "
        "TOML: Expected ']' at the end of a table declaration (at line 1, "
        "column 7)",
    ]
    assert "  scenarios:   2 (canary, reward-counts)" in result.output.splitlines()
    assert (
        "  left out:    2 scenario folder(s), one warning line each above"
        in result.output.splitlines()
    )
    assert "Traceback" not in result.output


def test_a_bad_folder_that_scenarios_ids_leave_out_says_nothing(tmp_path):
    require("bwrap")
    _tasks(tmp_path, "canary", "bad-timeout")
    result = CliRunner().invoke(
        cli, ["validate", str(_profile(tmp_path, ids=["canary"]))]
    )
    assert result.exit_code == 0, result.output
    assert "bad-timeout" not in result.output and "warning" not in result.output


def test_when_every_selected_folder_is_bad_the_profile_is_refused_with_their_lines(
    tmp_path,
):
    _tasks(tmp_path, "canary", "bad-timeout")
    result = CliRunner().invoke(
        cli, ["validate", str(_profile(tmp_path, ids=["bad-timeout"]))]
    )
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and errors[0].endswith(
        "[agent].timeout_sec: expected a number of seconds > 0, got 'soon'"
    ), result.output


def test_every_conformance_task_that_parses_runs():
    """Multi-step tasks, separate verifiers (a step's too) and compose tasks all run:
    none is left out."""
    reasons = {name: not_run_yet(_load(name)) for name in GOOD}
    assert reasons == {
        "agent-user": None,
        "canary": None,
        "compose-yml-data": None,
        "env-workdir": None,
        "reward-counts": None,
        "state-persists": None,
        "verifier-network": None,
        "compose": None,
        "multi-step": None,
        "multi-step-separate": None,
        "separate-verifier": None,
    }


# -- one rule each
# ---------------------------------------------------------------------------------------------


def test_environment_env_workdir_resources_and_a_case_insensitive_os():
    scenario = _load("env-workdir")
    env = scenario.environment
    assert env.env == {
        "GREETING": "${CONFORMANCE_GREETING:-hello}",
        "TARGET": "world",
    }  # templates kept for run time
    assert (
        env.workdir == "/work"
    )  # [environment].workdir over the Dockerfile's WORKDIR /app
    assert (
        env.cpus,
        env.memory_mb,
        env.storage_mb,
        env.os,
        env.network,
        env.compose,
    ) == (1, 512, 1024, "linux", None, None)
    assert env.dockerfile == str(
        FIXTURES / "env-workdir" / "environment" / "Dockerfile"
    )
    assert scenario.sandbox_paths == ("/tests", "/logs/verifier", "/solution", "/work")


def test_agent_and_verifier_users():
    scenario = _load("agent-user")
    assert (
        scenario.agent_user,
        scenario.verify[0].user,
        scenario.agent_policy,
        scenario.verify[0].policy,
    ) == ("agent", "root", None, None)


def test_canary_lines_never_reach_the_agent_and_steps_empty_is_one_step():
    scenario = _load("canary")
    assert scenario.prompt == "Write the word `seen` into `/app/answer.txt`.\n"
    assert (
        scenario.steps == ()
        and scenario.reward_strategy is None
        and len(scenario.verify) == 1
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("# terminal-bench-canary GUID 1234\n\nDo it.\n", "Do it.\n"),
        (
            "<!-- harbor-canary GUID 1234 -->\n# BENCHMARK DATA. CANARY GUID x\n\n\nDo it.",
            "Do it.",
        ),
        (
            "Do it.\n# canary GUID 1234\n",
            "Do it.\n# canary GUID 1234\n",
        ),  # only at the top, as Harbor
        ("# Title\nDo it.\n", "# Title\nDo it.\n"),  # a heading is not a canary
        ("  # canary GUID 1\nDo it.", "Do it."),
    ],
)
def test_strip_canary_follows_harbors_rule(text, expected):
    assert strip_canary(text) == expected


def test_an_instruction_that_is_only_a_canary_is_empty(tmp_path):
    task = _tasks(tmp_path, "canary") / "canary"
    (task / "instruction.md").write_text("# canary GUID 1\n\n")
    with pytest.raises(
        ConfigError, match=r"instruction\.md: empty \(the task's instruction"
    ):
        load_task(task, timeout_default_ms=1)


def test_docker_compose_yml_is_just_a_file_of_the_workspace():
    scenario = _load("compose-yml-data")
    assert scenario.environment.compose is None
    assert scenario.workspace.exclude == (
        "Dockerfile",
    )  # docker-compose.yml stays in the workspace


def test_a_compose_task_names_its_compose_file_and_keeps_it_out_of_the_workspace():
    scenario = _load("compose")
    assert scenario.environment.compose == str(
        FIXTURES / "compose" / "environment" / "docker-compose.yaml"
    )
    assert scenario.environment.dockerfile.endswith("compose/environment/Dockerfile")
    assert scenario.workspace.exclude == ("Dockerfile", "docker-compose.yaml")


def test_multi_step_tasks_read_each_step_from_its_folder():
    scenario = _load("multi-step")
    steps = FIXTURES / "multi-step" / "steps"
    assert (
        scenario.reward_strategy == "mean"
        and scenario.verify == ()
        and scenario.solution is None
    )
    write, extend = scenario.steps
    assert (write.name, write.timeout_ms, extend.name, extend.timeout_ms) == (
        "write",
        30_000,
        "extend",
        None,
    )
    assert write.prompt == (steps / "write" / "instruction.md").read_text()
    assert (
        scenario.prompt == write.prompt
    )  # no top-level instruction.md: the first step's
    assert write.verify[0].mounts == {"/tests": str(steps / "write" / "tests")}
    assert (write.verify[0].timeout_ms, extend.verify[0].timeout_ms) == (
        60_000,
        30_000,
    )  # [steps.verifier] over [verifier]
    assert write.solution.mounts == {"/solution": str(steps / "write" / "solution")}
    assert extend.solution.mounts == {"/solution": str(steps / "extend" / "solution")}
    assert "/tests" in scenario.sandbox_paths and "/solution" in scenario.sandbox_paths
    assert (write.min_reward, extend.min_reward) == ({"reward": 1.0}, None)
    assert (write.workdir_files, extend.workdir_files) == (
        None,
        str(steps / "extend" / "workdir"),
    )


def test_a_step_without_its_own_tests_or_solution_uses_the_tasks(tmp_path):
    task = _tasks(tmp_path, "multi-step") / "multi-step"
    shutil.move(task / "steps" / "extend" / "tests", task / "tests")
    shutil.move(task / "steps" / "extend" / "solution", task / "solution")
    extend = load_task(task, timeout_default_ms=1).steps[1]
    assert extend.verify[0].mounts == {
        "/tests": str(task / "tests")
    } and extend.solution.mounts == {"/solution": str(task / "solution")}
    assert extend.verify[0].base_mounts == {}  # the task's own tests/: nothing under it


def test_a_steps_own_tests_are_laid_over_the_tasks(tmp_path):
    """Harbor uploads the task's tests/ and then the step's own over it
    (src/harbor/verifier/verifier.py)."""
    task = _tasks(tmp_path, "multi-step") / "multi-step"
    (task / "tests").mkdir()
    (task / "tests" / "helper.sh").write_text("true\n")
    write, extend = load_task(task, timeout_default_ms=1).steps
    assert write.verify[0].mounts == {"/tests": str(task / "steps" / "write" / "tests")}
    assert (
        write.verify[0].base_mounts
        == extend.verify[0].base_mounts
        == {"/tests": str(task / "tests")}
    )


def test_a_multi_step_task_with_a_separate_step_verifier_runs(tmp_path):
    task = _tasks(tmp_path, "multi-step") / "multi-step"
    toml = task / "task.toml"
    toml.write_text(
        toml.read_text() + 'environment_mode = "separate"\n'
    )  # the last table: the extend step's [steps.verifier]
    scenario = load_task(task, timeout_default_ms=1)
    write, extend = scenario.steps
    assert write.verify[0].separate is None and extend.verify[0].separate is not None
    assert not_run_yet(scenario) is None


def test_a_separate_verifier_gets_its_own_environment_from_tests():
    scenario = _load("separate-verifier")
    [verifier] = scenario.verify
    assert verifier.separate.dockerfile == str(
        FIXTURES / "separate-verifier" / "tests" / "Dockerfile"
    )
    assert scenario.artifacts == ("/app/answer.txt",)


def test_a_verifier_environment_table_implies_separate(tmp_path):
    task = _tasks(tmp_path, "canary") / "canary"
    (task / "task.toml").write_text(
        '[verifier.environment]\ndocker_image = "verifier:1"\nallow_internet = false\n'
    )
    separate = load_task(task, timeout_default_ms=1).verify[0].separate
    assert (separate.image, separate.network) == (
        "verifier:1",
        NetworkPolicy(mode="no-network"),
    )


def test_templates_in_verifier_and_solution_env_are_kept_and_expanded_at_run_time():
    scenario = _load("verifier-network")
    verifier, solution = scenario.verify[0], scenario.solution
    assert (verifier.env, verifier.env_templates) == (
        {"INDEX_URL": "${CONFORMANCE_INDEX_URL}"},
        True,
    )
    assert (solution.env, solution.env_templates) == (
        {"ANSWER": "${CONFORMANCE_ANSWER:-42}"},
        True,
    )
    assert _load("canary").verify[0].env_templates is False
    assert expand_env(
        verifier.env, {"CONFORMANCE_INDEX_URL": "http://127.0.0.1:9/"}
    ) == {"INDEX_URL": "http://127.0.0.1:9/"}
    assert expand_env(solution.env, {}) == {"ANSWER": "42"}
    assert expand_env({"A": "x-${B:-}-${C}-$HOME"}, {"C": "c"}) == {"A": "x--c-$HOME"}
    with pytest.raises(ConfigError) as raised:
        expand_env(verifier.env, {})
    assert str(raised.value) == (
        "env INDEX_URL: ${CONFORMANCE_INDEX_URL} is not set in the environment "
        "and has no default (write ${CONFORMANCE_INDEX_URL:-default})"
    )


@pytest.mark.parametrize(
    "toml, field, expected",
    [
        (
            "[environment]\nallow_internet = false\n",
            "network",
            NetworkPolicy(mode="no-network"),
        ),
        (
            "[environment]\nallow_internet = true\n",
            "network",
            NetworkPolicy(mode="public"),
        ),
        (
            '[environment]\nallowed_hosts = ["PyPI.org.", "pypi.org", "files.pythonhosted.org"]\n',
            "network",
            NetworkPolicy(
                mode="allowlist", allowed_hosts=("pypi.org", "files.pythonhosted.org")
            ),
        ),
        (
            '[environment]\nnetwork_mode = "no-network"\nallow_internet = true\n',
            "network",
            NetworkPolicy(mode="no-network"),
        ),
        (
            '[agent]\nnetwork_mode = "no-network"\n',
            "agent_policy",
            NetworkPolicy(mode="no-network"),
        ),
        (
            '[verifier]\nnetwork_mode = "allowlist"\nallowed_hosts = ["127.0.0.1"]\n',
            "verifier_policy",
            NetworkPolicy(mode="allowlist", allowed_hosts=("127.0.0.1",)),
        ),
    ],
)
def test_network_policies_per_phase(tmp_path, toml, field, expected):
    task = _tasks(tmp_path, "canary") / "canary"
    (task / "task.toml").write_text(toml)
    scenario = load_task(task, timeout_default_ms=1)
    found = {
        "network": scenario.environment and scenario.environment.network,
        "agent_policy": scenario.agent_policy,
        "verifier_policy": scenario.verify[0].policy,
    }[field]
    assert found == expected


def test_older_memory_and_storage_sizes(tmp_path):
    task = _tasks(tmp_path, "canary") / "canary"
    (task / "task.toml").write_text('[environment]\nmemory = "2G"\nstorage = "512M"\n')
    environment = load_task(task, timeout_default_ms=1).environment
    assert (environment.memory_mb, environment.storage_mb) == (2048, 512)


# -- bad input: one line each, naming the file and the field
# -------------------------------------------------------


@pytest.mark.parametrize(
    "toml, expected",
    [
        (
            '[environment]\nnetwork_mode = "offline"\n',
            "[environment].network_mode: expected one of public, no-network, "
            "allowlist, got 'offline'",
        ),
        (
            '[environment]\nnetwork_mode = "public"\nallowed_hosts = ["a.b"]\n',
            "[environment].allowed_hosts: only valid with network_mode = "
            "\"allowlist\", got 'public'",
        ),
        (
            '[agent]\nallowed_hosts = ["https://pypi.org/simple"]\n',
            "[agent].allowed_hosts: expected host names or addresses (not URLs), got",
        ),
        (
            "[environment]\nallow_internet = 1\n",
            "[environment].allow_internet: expected true or false, got 1",
        ),
        (
            '[environment]\nworkdir = "app"\n',
            "[environment].workdir: expected an absolute path (not / and without ..), got 'app'",
        ),
        (
            '[environment]\nmemory = "lots"\n',
            "[environment].memory: expected a size like '2G', '512M' (or memory_mb), got 'lots'",
        ),
        (
            "[environment]\ncpus = 0\n",
            "[environment].cpus: expected a number > 0, got 0",
        ),
        (
            "[environment]\nos = 3\n",
            "[environment].os: expected linux or windows, got 3",
        ),
        (
            '[environment]\nenv = { A = "${oops" }\n',
            "[environment].env.A: expected ${VAR} or ${VAR:-default}, got '${oops'",
        ),
        (
            "[agent]\nuser = true\n",
            "[agent].user: expected a user name or id, got True",
        ),
        (
            '[verifier]\nenvironment_mode = "elsewhere"\n',
            "[verifier].environment_mode: expected shared or separate, got 'elsewhere'",
        ),
        (
            "[verifier]\nenvironment_mode = 'shared'\n[verifier.environment]\ndocker_image = 'x'\n",
            "[verifier].environment_mode: a shared verifier cannot have a [verifier.environment]",
        ),
        (
            'multi_step_reward_strategy = "best"\n[[steps]]\nname = "s"\n',
            "multi_step_reward_strategy: expected mean or final, got 'best'",
        ),
        ('steps = "s"\n', "[[steps]]: expected an array of tables, got 's'"),
        (
            '[[steps]]\nname = "../up"\n',
            "[[steps]] #1.name: expected a folder name under steps/",
        ),
        (
            '[[steps]]\nname = "s"\nmin_reward = "high"\n',
            "[[steps]] 's' min_reward: expected a number or a table of reward "
            "names to numbers, got 'high'",
        ),
        (
            'artifacts = ["/app/../etc"]\n',
            "artifacts: expected paths (or tables with a source path, without "
            "..), got '/app/../etc'",
        ),
    ],
)
def test_a_bad_field_is_one_line_naming_the_file_and_the_field(
    tmp_path, toml, expected
):
    task = _tasks(tmp_path, "canary") / "canary"
    (task / "task.toml").write_text(toml)
    with pytest.raises(ConfigError) as raised:
        load_task(task, timeout_default_ms=1)
    message = str(raised.value)
    assert message.startswith(f"{task / 'task.toml'}: {expected}"), message
    assert "\n" not in message


def test_a_step_whose_folder_or_instruction_is_missing_is_one_line(tmp_path):
    task = _tasks(tmp_path, "multi-step") / "multi-step"
    shutil.rmtree(task / "steps" / "extend")
    with pytest.raises(ConfigError) as raised:
        load_task(task, timeout_default_ms=1)
    assert (
        str(raised.value)
        == f"{task / 'steps' / 'extend'}: missing (the folder of the step 'extend' "
        "named in [[steps]])"
    )
    (task / "steps" / "extend").mkdir()
    with pytest.raises(
        ConfigError,
        match=r"steps/extend/instruction\.md: missing \(the task's instruction",
    ):
        load_task(task, timeout_default_ms=1)


def test_a_step_without_any_test_script_is_one_line(tmp_path):
    task = _tasks(tmp_path, "multi-step") / "multi-step"
    shutil.rmtree(task / "steps" / "write" / "tests")
    with pytest.raises(ConfigError) as raised:
        load_task(task, timeout_default_ms=1)
    assert str(raised.value) == (
        f"{task / 'steps' / 'write' / 'tests' / 'test.sh'} (or "
        f"{task / 'tests' / 'test.sh'}): missing (the task's verifier)"
    )


def test_the_new_fields_leave_the_json_of_existing_tasks_unchanged():
    data = json.loads(to_json(load_task(EXAMPLES / "fix-median", timeout_default_ms=1)))
    assert not {
        "steps",
        "artifacts",
        "agentUser",
        "agentPolicy",
        "rewardStrategy",
    } & set(data)
    assert set(data["environment"]) == {"dockerfile", "workdir", "buildTimeoutMs"}
    assert set(data["verify"][0]) == {
        "name",
        "command",
        "timeoutMs",
        "env",
        "files",
        "network",
        "mounts",
        "logsDir",
        "passedBy",
    }


# -- Dockerfiles: COPY --from is checked offline like FROM
# ------------------------------------------------------


def test_copy_from_an_image_is_a_base_image_but_not_from_a_stage(tmp_path):
    (tmp_path / "Dockerfile").write_text(
        "FROM localhost/a:1 AS build\nCOPY --from=build /x /x\nCOPY --from=0 /y /y\n"
        "COPY --chown=1 --from=localhost/b:2 /z /z\nCOPY --from=${IMG} /w "
        "/w\nCOPY plain /p\nFROM localhost/a:1\n"
    )
    assert base_images(tmp_path / "Dockerfile") == ["localhost/a:1", "localhost/b:2"]
    assert base_images(FIXTURES / "env-workdir" / "environment" / "Dockerfile") == [
        BASE_IMAGE
    ]


# -- the CI's base image and the fixtures on it, for real
# --------------------------------------------------------


def test_the_base_image_script_says_in_one_line_when_docker_cannot_run(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("dirname", "bash"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    done = subprocess.run(
        [str(bin_dir / "bash"), str(ROOT / ".ci" / "build-base-image")],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == (
        "build-base-image: docker cannot run here (no client or no daemon), so "
        "localhost/agent-profiler-debian:bookworm "
        "was not built; the Harbor conformance runs need it\n"
    )


def _base_image() -> None:
    """Docker with the base image; fails in CI (.ci/run builds it), skips on a
    developer's machine."""
    require("docker")
    if not docker_answers():
        pytest.skip("the Docker daemon does not answer")
    done = subprocess.run(
        ["docker", "image", "inspect", BASE_IMAGE],
        capture_output=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0:
        message = (
            f"{BASE_IMAGE} not found: run `bash .ci/build-base-image` (.ci/run does)"
        )
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.fixture(scope="module")
def images():
    """Each fixture's image, built offline (``--pull=false``) on the base image; removed
    afterwards."""
    _base_image()
    built: dict[str, str] = {}
    yield built
    if built:
        subprocess.run(
            ["docker", "image", "rm", "--force", *built.values()],
            capture_output=True,
            timeout=120,
            check=False,
        )


def _image(images: dict[str, str], context: Path) -> str:
    key = str(context)
    if key not in images:
        tag = f"localhost/agent-profiler-conformance-test:{uuid.uuid4().hex[:12]}"
        done = subprocess.run(
            ["docker", "build", "--pull=false", "-q", "-t", tag, str(context)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        images[key] = tag
    return images[key]


def test_the_base_image_is_debian_with_python3_and_bash(images):
    done = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            BASE_IMAGE,
            "bash",
            "-c",
            "python3 -c 'print(6 * 7)'; cat /etc/debian_version",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.splitlines()[0] == "42", done.stderr
    assert done.stdout.splitlines()[1].startswith("12.")  # bookworm


@pytest.mark.parametrize(
    "context",
    [
        "separate-verifier/tests",
        "multi-step/environment",
        "compose/environment",
        "compose/environment/web",
        "multi-step-separate/steps/check/tests",
    ],
)
def test_the_other_fixture_images_build_offline(images, context):
    _image(images, FIXTURES / context)


def _docker(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def _trial(images: dict[str, str], name: str, *, solve: bool) -> str:
    """One trial as Harbor lays it out, in a plain container: the oracle (or nothing),
    then the verifier; its reward."""
    scenario = _load(name)
    env = scenario.environment
    image = _image(images, Path(env.dockerfile).parent)
    container = f"agent-profiler-conformance-{uuid.uuid4().hex[:12]}"
    environ = expand_env(env.env, {})
    flags = [f"--env={k}={v}" for k, v in environ.items()] + (
        [f"--workdir={env.workdir}"] if env.workdir else []
    )
    started = _docker(
        "run",
        "-d",
        "--init",
        "--network=none",
        "--name",
        container,
        *flags,
        image,
        "sleep",
        "infinity",
    )
    assert started.returncode == 0, started.stderr
    try:
        _docker(
            "exec",
            container,
            "mkdir",
            "-p",
            "/logs/verifier",
            "/logs/agent",
            "/logs/artifacts",
        )
        if env.workdir:
            _docker("exec", container, "mkdir", "-p", env.workdir)
            if scenario.agent_user:
                _docker("exec", container, "chown", scenario.agent_user, env.workdir)
        if solve:
            assert (
                _docker(
                    "cp",
                    scenario.solution.mounts["/solution"],
                    f"{container}:/solution",
                ).returncode
                == 0
            )
            user = ["--user", scenario.agent_user] if scenario.agent_user else []
            solved = _docker("exec", *user, container, "bash", "/solution/solve.sh")
            assert solved.returncode == 0, solved.stdout + solved.stderr
        assert (
            _docker(
                "cp", scenario.verify[0].mounts["/tests"], f"{container}:/tests"
            ).returncode
            == 0
        )
        user = ["--user", scenario.verify[0].user] if scenario.verify[0].user else []
        _docker("exec", *user, container, "bash", "/tests/test.sh")
        reward = _docker(
            "exec",
            container,
            "bash",
            "-c",
            "cat /logs/verifier/reward.json 2>/dev/null || cat /logs/verifier/reward.txt",
        )
        return reward.stdout.strip()
    finally:
        _docker("rm", "--force", container)


@pytest.mark.parametrize(
    "name, passed, failed",
    [
        ("env-workdir", "1", "0"),
        ("agent-user", "1", "0"),
        ("canary", "1", "0"),
        ("compose-yml-data", "1", "0"),
        ("state-persists", "1", "0"),
        ("reward-counts", '{"passed": 4, "failed": 0}', '{"passed": 0, "failed": 4}'),
    ],
)
def test_a_fixtures_oracle_passes_it_and_doing_nothing_fails_it(
    images, name, passed, failed
):
    assert _trial(images, name, solve=True) == passed
    assert _trial(images, name, solve=False) == failed


def test_the_fixture_folders_are_executable_as_harbor_expects():
    scripts = [p for p in FIXTURES.rglob("*.sh")]
    assert scripts and all(os.access(p, os.X_OK) for p in scripts), [
        p for p in scripts if not os.access(p, os.X_OK)
    ]


def test_run_says_which_folders_it_left_out_before_it_starts(tmp_path):
    _tasks(tmp_path, "canary", "bad-timeout")
    result = CliRunner().invoke(cli, ["run", str(_profile(tmp_path)), "--dry-run"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    expected = (
        "warning: left out: "
        f"{tmp_path / 'tasks' / 'bad-timeout' / 'task.toml'}: "
        "[agent].timeout_sec: "
        "expected a number of seconds > 0, got 'soon'"
    )
    assert lines.count(expected) == 1, result.output
    assert not (tmp_path / "results").exists()


TERMINAL_BENCH_2 = """\
schema_version = "1.1"
artifacts = ["/app/out.txt", { source = "/var/log/app.log", service = "main" }]

[task]
name = "example/tb2-style"
keywords = ["file-operations"]
[[task.authors]]
name = "Someone"

[metadata]
difficulty = "medium"
expert_time_estimate_min = 30.0

[verifier]
timeout_sec = 900.0

[agent]
timeout_sec = 900.0

[environment]
build_timeout_sec = 600.0
docker_image = "example/tb2-style:20251031"
cpus = 1
memory_mb = 2048
storage_mb = 10240
gpus = 0
allow_internet = true
mcp_servers = []

[verifier.env]

[environment.env]

[solution.env]
"""


def test_a_terminal_bench_2_style_task_toml_reads_every_field_it_needs(tmp_path):
    task = _tasks(tmp_path, "canary") / "canary"
    (task / "task.toml").write_text(TERMINAL_BENCH_2)
    scenario = load_task(task, timeout_default_ms=1)
    env = scenario.environment
    assert (env.image, env.cpus, env.memory_mb, env.storage_mb, env.network) == (
        "example/tb2-style:20251031",
        1,
        2048,
        10240,
        NetworkPolicy(mode="public"),
    )
    assert (env.env, scenario.verify[0].env, scenario.solution.env) == ({}, {}, {})
    assert scenario.artifacts == ("/app/out.txt", "/var/log/app.log")
    assert (
        scenario.timeout_ms,
        scenario.verify[0].timeout_ms,
        scenario.verify[0].separate,
    ) == (900_000, 900_000, None)
    assert not_run_yet(scenario) is None


def test_an_unknown_id_is_compared_with_every_task_folder_not_only_the_selected_ones(
    tmp_path,
):
    _tasks(tmp_path, "canary", "reward-counts", "bad-timeout")
    result = CliRunner().invoke(
        cli, ["validate", str(_profile(tmp_path, ids=["canary", "reward-count"]))]
    )
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"Error: {tmp_path / 'profile.yaml'}: scenarios.ids: unknown scenario "
        "id(s) reward-count; did you mean 'reward-counts'? "
        "(found: bad-timeout, canary, reward-counts)",
        "1 problem(s) found",
    ]
