"""A trial's artifacts under Docker: ``/logs/artifacts`` and the task's declared paths
land in the run's reports.

The oracle's solution writes into ``/logs/artifacts`` and a declared path of
the working folder; the row names both, report.md and report.html link them.
Directly on a trial: a declared link and a link inside the artifacts folder
are refused, a missing path is skipped, and a path over the size bound is
not copied. Under ``CI=true`` a Docker daemon that cannot start fails these.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
import trio
from tests.sandbox_runtimes import docker_daemon
from tests.scripted.agent_runs import run_tasks

from profiler_core.model import SandboxSettings
from profiler_core.sandbox.containers import HOST_IMAGE

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("containers")]


@pytest.fixture(scope="module")
def docker(tmp_path_factory):
    """A Docker daemon."""
    with docker_daemon(tmp_path_factory.mktemp("dockerd")):
        yield
        from profiler_core.environments.containers import wait_removed

        wait_removed()


def _task(root: Path) -> None:
    task = root / "tasks" / "arts"
    (task / "environment").mkdir(parents=True)
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {HOST_IMAGE}\nWORKDIR /app\n"
    )
    (task / "instruction.md").write_text("Leave notes.\n")
    (task / "solution").mkdir()
    (task / "solution" / "solve.sh").write_text(
        "#!/bin/bash\necho answered > /logs/artifacts/answer.txt\n"
        "mkdir -p /app/out && echo '# notes' > /app/out/notes.md\n"
    )
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text(
        "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"
    )
    (task / "task.toml").write_text(
        'schema_version = "1.1"\nartifacts = ["out/notes.md", "never-made.txt"]\n'
        '[task]\nname = "arts/arts"\n[agent]\ntimeout_sec = 60.0\n'
        "[verifier]\ntimeout_sec = 60.0\n"
    )


def test_artifacts_are_kept_named_on_the_row_and_linked_in_the_reports(
    docker, tmp_path
):
    _task(tmp_path)
    run_id, found = run_tasks(tmp_path, {"id": "oracle", "model": "none"})
    (row,) = found
    assert row.get("error") is None and row["reward"] == 1, row
    cell = "artifacts/arts/baseline-iter-0"
    assert row["extensions"]["artifacts"] == [
        f"{cell}/answer.txt",
        f"{cell}/notes.md",
    ]
    reports = tmp_path / "reports" / run_id
    assert (reports / cell / "answer.txt").read_text() == "answered\n"
    assert (reports / cell / "notes.md").read_text() == "# notes\n"
    markdown = (reports / "report.md").read_text()
    assert "## Artifacts" in markdown
    assert f"[answer.txt]({cell}/answer.txt)" in markdown
    page = (reports / "report.html").read_text()
    assert f'<a href="{cell}/notes.md">notes.md</a>' in page


def test_links_are_refused_missing_paths_skipped_and_size_bounded(
    docker, tmp_path, monkeypatch
):
    from profiler_core.environments.containers import DockerEnvironment
    from profiler_core.runner import trial_artifacts
    from profiler_core.runner.trial import Trials, start_trial, stop_trial

    monkeypatch.setattr(trial_artifacts, "MAX_BYTES", 1 << 20)
    env = types.SimpleNamespace(
        dockerfile=None,
        image=HOST_IMAGE,
        workdir="/work",
        env={},
        cpus=None,
        memory_mb=None,
        network=None,
    )
    scenario = types.SimpleNamespace(
        id="direct",
        environment=env,
        verify=(),
        setup=(),
        timeout_ms=60_000,
        artifacts=("out/kept.txt", "/work/to-passwd", "missing.txt", "big.bin"),
    )
    settings = SandboxSettings(
        sandbox="docker", network="full", image=HOST_IMAGE, host_toolchain=True
    )
    trials = Trials(DockerEnvironment(), settings, tmp_path / "reports", "direct")
    run = trio.run(start_trial, trials, scenario, settings, "direct")
    try:
        made = trio.run(
            lambda: run.exec(
                [
                    "sh",
                    "-c",
                    "mkdir -p /work/out && echo kept > /work/out/kept.txt && "
                    "ln -s /etc/passwd /work/to-passwd && echo mine > /logs/artifacts/mine.txt && "
                    "mkdir /logs/artifacts/sub && ln -s /etc/passwd /logs/artifacts/sub/leak && "
                    "head -c 2000000 /dev/zero > /work/big.bin",
                ],
                timeout_s=60,
                user="0",
            )
        )
        assert made.ok, made.output
        keep = trials.artifacts_dir / "direct"
        files = trio.run(
            trial_artifacts.collect_artifacts, run, keep, trials.artifacts_dir.parent
        )
    finally:
        trio.run(stop_trial, run)
    assert files == [
        "artifacts/direct/kept.txt",
        "artifacts/direct/mine.txt",
    ]
    left = sorted(p.relative_to(keep).as_posix() for p in keep.rglob("*"))
    assert left == [
        "kept.txt",
        "mine.txt",
        "sub",
    ]  # no link, no big file, nothing missing
    assert not any(p.is_symlink() for p in keep.rglob("*"))
