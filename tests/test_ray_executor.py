"""``execution.executor: ray``: cells as tasks on a local Ray cluster that ``profiler
run`` starts itself.

Each test runs ``profiler run`` in a subprocess (its own driver and cluster,
ended with it), on the simulated provider, and looks at what it wrote. Each run
gets a temporary folder of its own: its cluster's processes are told apart by
it from those of a test running beside it (pytest-xdist).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from tests.scripted.agent_runs import wait_for

pytestmark = pytest.mark.slow

PROFILER = [sys.executable, "-m", "profiler_core"]
#: Fields that differ between two runs of the same cells whatever executes them.
PER_RUN = {"runId", "startedAt", "completedAt", "sessionId", "timing"}


@pytest.fixture(autouse=True)
def ray_installed():
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(
                "ray is not installed: the test extra installs it (pip install -e '.[test]')"
            )
        pytest.skip("ray is not installed")


@pytest.fixture
def ray_tmp():
    """$TMPDIR of this test's runs: a short path (Ray's sockets need one), where its
    cluster keeps its files."""
    folder = Path(tempfile.mkdtemp(prefix="pr-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def in_tmp(tmp: Path) -> dict[str, str]:
    """The environment of a run whose temporary files (Ray's included) go under ``tmp``."""
    return {**os.environ, "TMPDIR": str(tmp)}


def write_profile(
    folder: Path,
    *,
    executor: str,
    time_scale: float = 0.0,
    repetitions: int = 2,
    retries: int = 0,
) -> Path:
    """The demo's scenarios on the simulated provider, two modes."""
    subprocess.run(
        [*PROFILER, "init", str(folder / "demo")], check=True, capture_output=True
    )
    profile = yaml.safe_load((folder / "demo" / "profile.yaml").read_text())
    profile["provider"]["options"]["time_scale"] = time_scale
    profile["execution"] = {
        "repetitions": repetitions,
        "concurrency": 2,
        "warmup": False,
        "allowed_retries": retries,
        "executor": executor,
        "ray": {"num_cpus_per_cell": 0.5},
    }
    path = folder / "demo" / f"{executor}.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def run(
    profile: Path, *args: str, tmp: Path, timeout: float = 240
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*PROFILER, "run", str(profile), "--progress", "none", "--no-report", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=profile.parent,
        env=in_tmp(tmp),
    )


def rows_of(folder: Path, run_id: str) -> list[dict]:
    path = folder / "demo" / "results" / f"{run_id}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def cell(row: dict) -> tuple:
    return (row["model"], row["mode"], row["scenarioId"], row["iteration"])


def ray_processes(tmp: Path) -> dict[int, str]:
    """Ray's own processes (workers show as ``ray::...``) of the clusters started with
    $TMPDIR ``tmp``, by PID."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if (
            command.startswith("ray::")
            or "raylet" in command
            or "gcs_server" in command
        ) and holds_file_in(int(entry), tmp):
            found[int(entry)] = command
    return found


def holds_file_in(pid: int, folder: Path) -> bool:
    """Whether the process has a file under ``folder`` open (every process of a Ray
    cluster keeps its log there)."""
    prefix = f"{folder}/"
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(prefix):
                return True
        except OSError:
            continue
    return False


def test_ray_rows_equal_local_rows_field_by_field(tmp_path, ray_tmp):
    local = run(
        write_profile(tmp_path, executor="local"), "--run-id", "here", tmp=ray_tmp
    )
    assert local.returncode == 0, local.stderr
    (tmp_path / "r").mkdir()
    remote = run(
        write_profile(tmp_path / "r", executor="ray"), "--run-id", "there", tmp=ray_tmp
    )
    assert remote.returncode == 0, remote.stderr
    here = {cell(r): r for r in rows_of(tmp_path, "here")}
    there = {cell(r): r for r in rows_of(tmp_path / "r", "there")}
    assert len(here) == 20 and here.keys() == there.keys()
    for key, row in here.items():
        other = there[key]
        assert set(row) == set(other)
        for field in sorted(set(row) - PER_RUN):
            assert row[field] == other[field], f"{key}: {field}"
    assert (
        wait_for(lambda: not ray_processes(ray_tmp), 30, "the local cluster to stop")
        is True
    )


EXAMPLE_TASKS = Path(__file__).resolve().parent.parent / "examples" / "tasks"


def run_example_tasks(folder: Path, executor: str, ray_tmp: Path) -> list[dict]:
    """The example Harbor tasks once each, by the oracle, in bwrap trials, on ``executor``."""
    shutil.copytree(EXAMPLE_TASKS, folder)
    profile = yaml.safe_load((folder / "profile.yaml").read_text())
    profile["provider"] = {"id": "oracle", "model": "none"}
    profile["execution"].update(
        repetitions=1, executor=executor, ray={"num_cpus_per_cell": 0.5}
    )
    (folder / "profile.yaml").write_text(yaml.safe_dump(profile))
    done = run(folder / "profile.yaml", "--run-id", executor, tmp=ray_tmp)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    path = folder / "results" / f"{executor}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def untimed(value):
    """``value`` without its measured times (``*_ms``, ``*Ms`` keys): they differ from
    run to run."""
    if isinstance(value, dict):
        return {
            k: untimed(v) for k, v in value.items() if not k.endswith(("_ms", "Ms"))
        }
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def verdicts(row: dict) -> list[tuple[str, bool]]:
    return [(c["id"], c["passed"]) for c in row["checkpointDetails"]]


def test_a_harbor_task_is_one_trial_on_a_ray_worker_as_on_the_driver(tmp_path, ray_tmp):
    from tests.sandbox_runtimes import require

    require("bwrap")
    here = {cell(r): r for r in run_example_tasks(tmp_path / "l", "local", ray_tmp)}
    there = {cell(r): r for r in run_example_tasks(tmp_path / "r", "ray", ray_tmp)}
    assert len(here) == 3 and here.keys() == there.keys()
    for key, row in there.items():
        assert row.get("error") is None and row["reward"] == 1, row
        for field in sorted(set(row) - PER_RUN - {"checkpointDetails"}):
            assert untimed(row[field]) == untimed(here[key][field]), f"{key}: {field}"
        # a verifier's output names its own time ("Ran 3 tests in 0.001s"): its verdicts match
        assert verdicts(row) == verdicts(here[key]) == [("verify:tests", True)], key
        # only a trial keeps what its verifier wrote under /logs/verifier, per cell
        kept = tmp_path / "r" / "reports" / "ray" / "verifier" / key[2]
        assert (kept / "baseline-iter-0" / "reward.txt").read_text().strip() == "1"
    assert (
        wait_for(lambda: not ray_processes(ray_tmp), 30, "the local cluster to stop")
        is True
    )


def test_a_killed_worker_gives_an_error_attempt_and_the_retry_completes_the_cell(
    tmp_path, ray_tmp
):
    profile = write_profile(
        tmp_path, executor="ray", time_scale=0.03, repetitions=2, retries=1
    )
    process = subprocess.Popen(
        [
            *PROFILER,
            "run",
            str(profile),
            "--run-id",
            "kill",
            "--progress",
            "none",
            "--no-report",
            "--allow-errors",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=profile.parent,
        env=in_tmp(ray_tmp),
    )
    try:
        busy = wait_for(
            lambda: [
                p
                for p, c in ray_processes(ray_tmp).items()
                if c.startswith("ray::run_cell")
            ],
            120,
            "a busy worker",
        )
        os.kill(busy[0], signal.SIGKILL)  # by its own PID
        _, stderr = process.communicate(timeout=240)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, stderr
    rows = rows_of(tmp_path, "kill")
    assert sorted(cell(r) for r in rows) == sorted(
        {cell(r) for r in rows}
    )  # every cell once
    assert len(rows) == 20 and all(r.get("error") is None for r in rows)
    retried = [r for r in rows if r.get("attempts", 1) == 2]
    assert retried, "no cell was retried after its worker died"
    assert "retrying" in stderr and "ray worker failed" in stderr
    assert (
        wait_for(lambda: not ray_processes(ray_tmp), 30, "the local cluster to stop")
        is True
    )


def test_ctrl_c_stops_the_cluster_and_resume_completes_every_cell_once(
    tmp_path, ray_tmp
):
    profile = write_profile(tmp_path, executor="ray", time_scale=0.03, repetitions=2)
    process = subprocess.Popen(
        [
            *PROFILER,
            "run",
            str(profile),
            "--run-id",
            "intr",
            "--progress",
            "none",
            "--no-report",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=profile.parent,
        env=in_tmp(ray_tmp),
    )
    results = tmp_path / "demo" / "results" / "intr.jsonl"
    try:
        wait_for(
            lambda: results.exists() and len(results.read_text().splitlines()) >= 2,
            120,
            "two rows",
        )
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130, stderr
    first = rows_of(tmp_path, "intr")
    assert 2 <= len(first) < 20
    wait_for(
        lambda: not ray_processes(ray_tmp), 30, "the local cluster to stop after Ctrl-C"
    )

    resumed = run(profile, "--resume", "intr", tmp=ray_tmp)
    assert resumed.returncode == 0, resumed.stderr
    rows = rows_of(tmp_path, "intr")
    assert len(rows) == 20 and len({cell(r) for r in rows}) == 20
    assert rows[: len(first)] == first  # what was written before stays as it was


#: Runs ``profiler ARGS`` with Ray made unimportable, as on a machine without the extra.
WITHOUT_RAY = """
import sys
class NoRay:
    def find_spec(self, name, path=None, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, NoRay())
from profiler_core.cli import main
main(sys.argv[1:])
"""


def test_validate_says_when_the_ray_extra_is_missing(tmp_path):
    profile = write_profile(tmp_path, executor="ray")
    ok = subprocess.run(
        [*PROFILER, "validate", str(profile)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    missing = subprocess.run(
        [sys.executable, "-c", WITHOUT_RAY, "validate", str(profile)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 1
    assert (
        f"Error: {profile}: execution.executor: ray needs Ray installed: pip "
        "install 'agent-profiler[ray]'" in missing.stderr
    )
    assert "Traceback" not in missing.stderr
    run = subprocess.run(
        [sys.executable, "-c", WITHOUT_RAY, "run", str(profile), "--progress", "none"],
        capture_output=True,
        text=True,
        check=False,
        cwd=profile.parent,
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert (
        run.stderr.strip().splitlines()[-1]
        == "Error: execution.executor: ray needs Ray installed: pip install 'agent-profiler[ray]'"
    )
    assert not list(
        (profile.parent / "results").glob("*")
    )  # refused before anything was written


def test_ray_with_opencode_leaves_no_server_and_no_folder_when_the_driver_is_interrupted(
    tmp_path, ray_tmp
):
    """Workers run `opencode serve`; Ctrl-C on the driver mid-session must end every
    server and remove its home."""
    from tests.binaries import agent_binary
    from tests.opencode_helpers import write_profile as write_opencode_profile
    from tests.scripted.agent_runs import MARK, marked_processes, new_mark

    from profiler_core.fakemodel import FakeModelServer, Hang

    binary, mark = agent_binary("opencode", "OPENCODE_BIN"), new_mark()
    with FakeModelServer(Hang(), model="scripted") as model:
        profile = write_opencode_profile(
            tmp_path,
            model.base_url,
            binary,
            modes={"plain": {"environment": {MARK: mark}}},
            execution={
                "executor": "ray",
                "repetitions": 2,
                "concurrency": 2,
                "ray": {"num_cpus_per_cell": 0.5},
            },
        )
        # The run's own temporary folder (a short path: Ray's sockets need one): the
        # folders left are looked for there.
        process = subprocess.Popen(
            [
                *PROFILER,
                "run",
                str(profile),
                "--run-id",
                "ray-oc",
                "--progress",
                "none",
                "--no-report",
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=in_tmp(ray_tmp),
        )
        try:
            wait_for(lambda: model.chat_requests(), 180, "a session's model request")
            servers = wait_for(
                lambda: marked_processes(mark), 30, "the workers' opencode servers"
            )
            process.send_signal(signal.SIGINT)
            process.wait(timeout=180)
        finally:
            process.kill()
            process.wait()
    assert wait_for(
        lambda: not marked_processes(mark), 60, "the opencode servers to end"
    ), servers
    left = {p.name for p in ray_tmp.glob("profiler-*")}
    assert not {
        name
        for name in left
        if name.startswith(("profiler-opencode-", "profiler-ws-", "profiler-ray-"))
    }, left
    assert (
        wait_for(lambda: not ray_processes(ray_tmp), 60, "the local cluster to stop")
        is True
    )


def test_a_worker_masks_the_drivers_secrets_and_its_own(monkeypatch):
    import pickle

    from profiler_core.model import ModeConfig, RunContext, Scenario
    from profiler_core.runner.executors.ray import CellSpec, _redactor
    from profiler_core.util.redact import Redactor

    driver = Redactor(environ={}, extra_values=["driver-secret-0123456789abcdef"])
    scenario = Scenario(id="s", name="s", prompt="p")
    spec = CellSpec(
        profile_path="profile.yaml",
        overrides={},
        run_ctx=RunContext(
            run_id="r", modes=["m"], scenarios=[scenario], repetitions=1
        ),
        model="x",
        mode="m",
        mode_config=ModeConfig(),
        scenario=scenario,
        iteration=0,
        attempt=1,
        redactor=driver,
    )
    # a key only the worker's machine holds
    monkeypatch.setenv("WORKER_API_KEY", "worker-secret-0123456789abcdef")
    masked = _redactor(pickle.loads(pickle.dumps(spec)))(
        "driver-secret-0123456789abcdef and worker-secret-0123456789abcdef"
    )
    assert "driver-secret" not in masked and "worker-secret" not in masked, masked
