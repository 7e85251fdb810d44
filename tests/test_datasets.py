"""Harbor datasets by name: a registry file, git repositories the test makes (file://
URLs), the cache keyed by commit.

Offline: every repository is a local one, every URL ``file://``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from tests.sandbox_runtimes import require
from tests.scripted.agent_runs import profiler, rows

from profiler_core.config.datasets import dataset_folders, parse_ref, read_registry
from profiler_core.errors import ConfigError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "tasks"


def git(*args: str, cwd: Path) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "PATH": "/usr/bin:/bin",
    }
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A task repository with two commits (v1: fix-median; v2: also add-cli-flag,
    fix-median's prompt changed) and a registry."""
    repo = tmp_path / "tasks-repo"
    (repo / "tasks").mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=repo)
    shutil.copytree(EXAMPLES / "fix-median", repo / "tasks" / "fix-median")
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "v1", cwd=repo)
    v1 = git("rev-parse", "HEAD", cwd=repo)
    shutil.copytree(EXAMPLES / "add-cli-flag", repo / "tasks" / "add-cli-flag")
    (repo / "tasks" / "fix-median" / "instruction.md").write_text(
        "Version two of the prompt.\n"
    )
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "v2", cwd=repo)
    v2 = git("rev-parse", "HEAD", cwd=repo)
    url = repo.as_uri()
    task = lambda name, commit: {  # noqa: E731
        "name": name,
        "git_url": url,
        "git_commit_id": commit,
        "path": f"tasks/{name}",
    }
    registry = tmp_path / "registry.json"
    registry.write_text(
        json.dumps(
            [
                {
                    "name": "mini",
                    "version": "1.0",
                    "description": "one task",
                    "tasks": [task("fix-median", v1)],
                    "metrics": [],
                },
                {
                    "name": "mini",
                    "version": "2.0",
                    "description": "two tasks",
                    "tasks": [task("fix-median", v2), task("add-cli-flag", v2)],
                },
                {
                    "name": "local",
                    "version": "head",
                    "description": "a task beside the registry",
                    "tasks": [
                        {"name": "fix-median", "path": "tasks-repo/tasks/fix-median"}
                    ],
                },
            ]
        )
    )
    cache = tmp_path / "cache"
    monkeypatch.setenv("PROFILER_DATASETS_DIR", str(cache))
    return {
        "repo": repo,
        "registry": registry,
        "cache": cache,
        "v1": v1,
        "v2": v2,
        "root": tmp_path,
    }


def test_a_dataset_resolves_to_its_tasks_at_their_commit_cached_by_commit(world):
    dataset, folders = dataset_folders("mini@1.0", str(world["registry"]))
    assert [f.name for f in folders] == [
        "fix-median"
    ] and dataset.description == "one task"
    assert (
        folders[0].parent.parent.name == world["v1"]
    )  # <cache>/<repo>/<commit>/tasks/fix-median
    assert "Version two" not in (folders[0] / "instruction.md").read_text()
    _, newer = dataset_folders(
        "mini@2.0", world["registry"].as_uri()
    )  # a file:// URL works as a path does
    assert [f.name for f in newer] == ["fix-median", "add-cli-flag"]
    assert (newer[0] / "instruction.md").read_text() == "Version two of the prompt.\n"
    # A commit never changes: the cached checkout is used, the repository not asked again.
    shutil.rmtree(world["repo"])
    _, again = dataset_folders("mini@1.0", str(world["registry"]))
    assert again == folders
    _, latest = dataset_folders(
        "mini", str(world["registry"])
    )  # no version: the highest
    assert latest == newer


def test_bad_references_and_registries_are_one_line(world, tmp_path):
    with pytest.raises(
        ConfigError,
        match=r"dataset 'mini' has no version '3.0' in .*registry.json \(it has: 1.0, 2.0\)",
    ):
        dataset_folders("mini@3.0", str(world["registry"]))
    with pytest.raises(ConfigError, match=r"dataset 'nope' is not in the registry"):
        dataset_folders("nope@1", str(world["registry"]))
    with pytest.raises(ConfigError, match="expected NAME@VERSION"):
        parse_ref("mini@")
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            [
                {
                    "name": "x",
                    "version": "1",
                    "tasks": [
                        {"name": "t", "path": "../../etc", "git_url": "file:///nowhere"}
                    ],
                }
            ]
        )
    )
    with pytest.raises(
        ConfigError,
        match=r"bad.json: \[0\].tasks\[0\].path: '../../etc' must stay inside its repository",
    ):
        read_registry(bad)
    gone = tmp_path / "gone.json"
    gone.write_text(
        json.dumps(
            [
                {
                    "name": "x",
                    "version": "1",
                    "tasks": [
                        {
                            "name": "t",
                            "path": "t",
                            "git_url": (tmp_path / "no-repo").as_uri(),
                            "git_commit_id": "ab" * 20,
                        }
                    ],
                }
            ]
        )
    )
    with pytest.raises(ConfigError, match=r"task 't': git fetch failed"):
        dataset_folders("x@1", str(gone))
    assert not any(
        p.name.startswith(".") for p in world["cache"].rglob("*") if p.is_dir()
    )  # no half-fetched checkout left


def test_datasets_list_shows_what_a_registry_offers(world):
    out = profiler(
        world["root"], "datasets", "list", "--registry", str(world["registry"])
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["DATASET", "TASKS", "DESCRIPTION"]
    assert [line.split()[:2] for line in lines[1:]] == [
        ["local@head", "1"],
        ["mini@1.0", "1"],
        ["mini@2.0", "2"],
    ]


def test_a_profile_runs_a_dataset_by_name(world):
    require("bwrap")
    profile = yaml.safe_load((EXAMPLES / "profile.yaml").read_text())
    profile["scenarios"] = {
        "dataset": "mini@1.0",
        "registry": "registry.json",
    }  # relative to the profile's folder
    (world["root"] / "profile.yaml").write_text(yaml.safe_dump(profile))
    done = profiler(
        world["root"],
        "run",
        "profile.yaml",
        "--provider",
        "oracle",
        "--repetitions",
        "1",
        "--run-id",
        "named",
        "--no-report",
    )
    assert done.returncode == 0, done.stderr
    assert {r["scenarioId"]: r["success"] for r in rows(world["root"], "named")} == {
        "fix-median": True
    }
    # --dataset (and --registry) on the command line replace the profile's
    done = profiler(
        world["root"],
        "run",
        "profile.yaml",
        "--provider",
        "oracle",
        "--repetitions",
        "1",
        "--run-id",
        "v2",
        "--dataset",
        "mini@2.0",
        "--registry",
        str(world["registry"]),
        "--no-report",
    )
    assert done.returncode == 0, done.stderr
    assert {r["scenarioId"]: r["success"] for r in rows(world["root"], "v2")} == {
        "fix-median": True,
        "add-cli-flag": True,
    }
