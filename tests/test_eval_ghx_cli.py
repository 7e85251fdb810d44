"""`profiler eval` in a subprocess, against the GitHub stand-in on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from github_standin import MAIN_TOKEN, GitHubStandIn

REPO = "octo/eval-sandbox"
PROFILER = Path(sys.executable).with_name("profiler")

pytestmark = pytest.mark.slow


@pytest.fixture
def standin():
    with GitHubStandIn() as server:
        yield server


def profiler(*args, server=None, cwd=None, token=MAIN_TOKEN):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GH_TOKEN", "GITHUB_TOKEN", "GITHUB_API_URL")
    }
    if server is not None:
        env["GITHUB_API_URL"] = server.url
    if token:
        env["GH_TOKEN"] = token
    return subprocess.run(
        [str(PROFILER), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def write_project(tmp: Path, scenarios: dict[str, dict], **fixtures) -> Path:
    (tmp / "scenarios").mkdir()
    for sid, fixture in scenarios.items():
        scenario = {
            "id": sid,
            "name": sid,
            "prompt": "Do the GitHub task.",
            "extensions": {"fixture": fixture},
        }
        (tmp / "scenarios" / f"{sid}.json").write_text(json.dumps(scenario))
    settings = {"repo": REPO, "manifest": "fixtures/latest.json", **fixtures}
    profile = {
        "modes": {"ghx": {}, "baseline": {}},
        "scenarios": {"path": "scenarios"},
        "provider": {
            "id": "simulated",
            "model": "sim-small",
            "options": {"seed": 1, "time_scale": 0.0001},
        },
        "execution": {"repetitions": 1, "warmup": False},
        "extensions": {"fixtures": settings},
    }
    path = tmp / "eval.yaml"
    path.write_text(json.dumps(profile))  # JSON is YAML
    return path


def test_fixture_seed_status_reset_cleanup(standin, tmp_path):
    manifest = tmp_path / "m.json"
    seeded = profiler(
        "eval",
        "fixture",
        "seed",
        "--repo",
        REPO,
        "--manifest",
        str(manifest),
        "--name",
        "issue",
        "--name",
        "pr",
        server=standin,
    )
    assert seeded.returncode == 0, seeded.stderr
    assert (
        "issue                    issue #1" in seeded.stdout
        and "pr                       pr #2  branch ghx-eval/" in seeded.stdout
    )
    data = json.loads(manifest.read_text())
    assert (
        set(data["fixtures"]) == {"issue", "pr"}
        and MAIN_TOKEN not in manifest.read_text()
    )

    ok = profiler(
        "eval", "fixture", "status", "--manifest", str(manifest), server=standin
    )
    assert ok.returncode == 0 and ok.stdout.count(" ok") == 2, ok.stdout

    branch = data["fixtures"]["pr"]["branch"]
    standin.repo(REPO).refs[branch] = standin.repo(REPO).add_commit(
        "agent", standin.repo(REPO).refs[branch], {}
    )
    moved = profiler(
        "eval", "fixture", "status", "--manifest", str(manifest), server=standin
    )
    assert (
        moved.returncode == 1
        and "PROBLEM  branch moved" in moved.stdout
        and "fixture reset" in moved.stderr
    )
    reset = profiler(
        "eval",
        "fixture",
        "reset",
        "--repo",
        REPO,
        "--manifest",
        str(manifest),
        server=standin,
    )
    assert reset.returncode == 0 and f"branch {branch} -> " in reset.stdout
    assert (
        profiler(
            "eval", "fixture", "status", "--manifest", str(manifest), server=standin
        ).returncode
        == 0
    )

    dry = profiler(
        "eval",
        "fixture",
        "cleanup",
        "--repo",
        REPO,
        "--manifest",
        str(manifest),
        "--dry-run",
        server=standin,
    )
    assert dry.stdout.splitlines() == [
        "would close issue #1",
        "would close pr #2",
        f"would delete branch {branch}",
    ]
    assert all(i["state"] == "open" for i in standin.repo(REPO).issues.values())
    done = profiler(
        "eval",
        "fixture",
        "cleanup",
        "--repo",
        REPO,
        "--manifest",
        str(manifest),
        server=standin,
    )
    assert done.returncode == 0 and all(
        i["state"] == "closed" for i in standin.repo(REPO).issues.values()
    )


def test_cleanup_all_by_label(standin, tmp_path):
    profiler(
        "eval",
        "fixture",
        "seed",
        "--repo",
        REPO,
        "--manifest",
        str(tmp_path / "m.json"),
        "--name",
        "issue_bug_to_close",
        server=standin,
    )
    # A user's issue without the label stays open.
    user = profiler(
        "eval",
        "fixture",
        "seed",
        "--repo",
        REPO,
        "--manifest",
        str(tmp_path / "n.json"),
        "--name",
        "issue",
        server=standin,
    )
    assert user.returncode == 0
    standin.repo(REPO).issues[2]["_labels"] = []
    result = profiler(
        "eval", "fixture", "cleanup", "--all", "--repo", REPO, server=standin
    )
    assert result.returncode == 0 and result.stdout.splitlines() == ["close issue #1"]
    assert standin.repo(REPO).issues[2]["state"] == "open"


def test_errors_are_one_line(standin, tmp_path):
    no_token = profiler(
        "eval",
        "fixture",
        "status",
        "--manifest",
        str(tmp_path / "m.json"),
        server=standin,
        token=None,
    )
    assert no_token.returncode == 1 and "Traceback" not in no_token.stderr
    assert "fixture manifest not found" in no_token.stderr
    seeded = profiler(
        "eval",
        "fixture",
        "seed",
        "--repo",
        REPO,
        "--manifest",
        str(tmp_path / "m.json"),
        "--name",
        "issue",
        server=standin,
        token=None,
    )
    assert (
        seeded.returncode == 1
        and seeded.stderr.strip()
        == "Error: no GitHub token: set GH_TOKEN (or GITHUB_TOKEN)"
    )
    standin.fail_next(
        "POST", r"/issues$", 403, message="Resource not accessible by integration"
    )
    denied = profiler(
        "eval",
        "fixture",
        "seed",
        "--repo",
        REPO,
        "--manifest",
        str(tmp_path / "m.json"),
        "--name",
        "issue",
        server=standin,
    )
    assert denied.returncode == 1
    assert (
        denied.stderr.strip()
        == "Error: fixture 'issue': POST /repos/octo/eval-sandbox/issues: HTTP "
        "403 Resource not accessible by integration"
    )
    unknown = profiler(
        "eval", "fixture", "seed", "--repo", REPO, "--name", "wiki_page", "--dry-run"
    )
    assert (
        unknown.returncode == 1 and "fixture 'wiki_page': no seeder" in unknown.stderr
    )


def test_check_reports_every_problem(standin, tmp_path):
    config = write_project(
        tmp_path,
        {
            "bad-001": {"requires": ["release_v1"], "bindings": {}},
            "bad-002": {"requires": ["issue"], "bindings": {"n": "pr.number"}},
        },
        reseed_between_modes="yes",
    )
    result = profiler("eval", "check", str(config))
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert any(
        "extensions.fixtures.reseed_between_modes: expected true or false, got 'yes'"
        in e
        for e in errors
    )
    assert any("scenario bad-001: fixture 'release_v1': no seeder" in e for e in errors)
    assert any(
        "scenario bad-002: fixture.bindings.n: 'pr.number' names fixture 'pr', "
        "which is not in fixture.requires" in e
        for e in errors
    )
    assert "3 problem(s) found" in result.stderr


def test_check_and_run_with_fixtures(standin, tmp_path):
    config = write_project(tmp_path, {"close-issue-001": {"requires": ["issue"]}})
    missing = profiler("eval", "check", str(config))
    assert missing.returncode == 1 and "fixture manifest not found" in missing.stderr
    run = profiler(
        "eval", "run", str(config), "--no-report", cwd=tmp_path, server=standin
    )
    assert (
        run.returncode == 1
        and "missing fixtures: issue" in run.stderr
        and "profiler eval fixture seed --repo octo/eval-sandbox" in run.stderr
    )
    seed = profiler("eval", "fixture", "seed", "--config", str(config), server=standin)
    assert seed.returncode == 0 and (tmp_path / "fixtures" / "latest.json").is_file(), (
        seed.stderr
    )
    checked = profiler("eval", "check", str(config))
    assert checked.returncode == 0 and "fixtures:    issue" in checked.stdout, (
        checked.stderr
    )
    run = profiler(
        "eval",
        "run",
        str(config),
        "--no-report",
        "--run-id",
        "r1",
        cwd=tmp_path,
        server=standin,
    )
    assert run.returncode == 0, run.stderr
    rows = (tmp_path / "results" / "r1.jsonl").read_text().splitlines()
    assert len(rows) == 2  # two modes x one scenario x one repetition
    resumed = profiler(
        "eval",
        "run",
        str(config),
        "--no-report",
        "--resume",
        "r1",
        cwd=tmp_path,
        server=standin,
    )
    assert (
        resumed.returncode == 0 and "resuming: 2 cells already done" in resumed.stdout
    )


def test_check_names_what_is_wrong_with_the_manifest(tmp_path):
    config = write_project(tmp_path, {"close-issue-001": {"requires": ["issue"]}})
    manifest = tmp_path / "fixtures" / "latest.json"
    manifest.parent.mkdir()
    manifest.write_text(
        json.dumps(
            {
                "seedId": "s1",
                "createdAt": "2026-01-01T00:00:00Z",
                "repo": REPO,
                "fixtures": {
                    "pr": {"type": "pr", "number": 2, "repo": REPO, "branch": "b"}
                },
            }
        )
    )
    lacking = profiler("eval", "check", str(config))
    assert lacking.returncode == 1
    assert (
        f"Error: {manifest}: missing fixtures issue (profiler eval fixture seed --config {config})"
        in lacking.stderr
    )
    manifest.write_text("{")
    broken = profiler("eval", "check", str(config))
    assert (
        broken.returncode == 1
        and f"Error: {manifest}" in broken.stderr
        and "1 problem(s) found" in broken.stderr
    )
    profile = json.loads(config.read_text())
    del profile["extensions"]
    config.write_text(json.dumps(profile))
    unset = profiler("eval", "check", str(config))
    assert unset.returncode == 1
    assert (
        f"Error: {config}: extensions.fixtures: required, scenarios need fixtures (issue)"
        in unset.stderr
    )
    profile["extensions"] = {
        "fixtures": {"manifest": "fixtures/latest.json"}
    }  # no repo: the manifest's would not do
    config.write_text(json.dumps(profile))
    no_repo = profiler("eval", "check", str(config))
    assert no_repo.returncode == 1
    assert (
        f"Error: {config}: extensions.fixtures.repo: required, the sandbox "
        "repository (owner/name) the fixtures live in" in no_repo.stderr
    )
