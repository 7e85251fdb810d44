"""GitHub failures reach the terminal as single lines without githubkit's traceback or
the token (issue 31.15)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from github_standin import MAIN_TOKEN, GitHubStandIn
from profiler_eval_ghx.github import GitHubClient, GitHubError

REPO = "octo/eval-sandbox"
PROFILER = Path(sys.executable).with_name("profiler")


@pytest.fixture
def standin():
    with GitHubStandIn() as server:
        yield server


def seed(server, manifest):
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")}
    env.update(GITHUB_API_URL=server.url, GH_TOKEN=MAIN_TOKEN)
    return subprocess.run(
        [
            str(PROFILER),
            "eval",
            "fixture",
            "seed",
            "--repo",
            REPO,
            "--manifest",
            str(manifest),
            "--name",
            "issue",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_a_retried_5xx_is_one_line_without_a_traceback(standin, tmp_path):
    standin.fail_next("POST", r"/issues$", 502, message="upstream hiccup")
    result = seed(standin, tmp_path / "m.json")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "githubkit" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        "GitHub: Server error encountered for request POST "
    ) and line.endswith("HTTP 502 upstream hiccup; retrying")


@pytest.mark.slow
def test_a_token_echoed_by_the_server_is_masked(standin, tmp_path):
    standin.fail_next(
        "POST",
        r"/issues$",
        422,
        message=f"Validation Failed: bad credential {MAIN_TOKEN} for this repo",
    )
    result = seed(standin, tmp_path / "m.json")
    assert result.returncode == 1
    assert MAIN_TOKEN not in result.stderr + result.stdout
    assert result.stderr.strip() == (
        f"Error: fixture 'issue': POST /repos/{REPO}/issues: HTTP 422 "
        "Validation Failed: bad credential [REDACTED] for this repo"
    )


def test_the_client_masks_its_own_token_even_outside_the_environment(
    standin, monkeypatch
):
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    client = GitHubClient(MAIN_TOKEN, base_url=standin.url, max_retries=0)
    standin.fail_next("GET", r"/labels", 500, message=f"echo {MAIN_TOKEN}")
    with pytest.raises(GitHubError) as info:
        trio.run(lambda: client.rest("GET", f"/repos/{REPO}/labels"))
    assert MAIN_TOKEN not in str(info.value) and str(info.value).endswith(
        "HTTP 500 echo [REDACTED]"
    )


def test_a_5xx_while_reading_labels_before_a_reset_is_one_masked_line_and_no_write(
    standin, tmp_path, monkeypatch
):
    from click.testing import CliRunner

    from profiler_core.cli import cli
    from profiler_eval_ghx import cli as eval_cli
    from profiler_eval_ghx.fixtures import seed_fixtures, write_manifest

    client = GitHubClient(
        MAIN_TOKEN, base_url=standin.url, max_retries=0
    )  # githubkit's back-off is tested above; here only the last answer counts
    manifest = write_manifest(
        trio.run(lambda: seed_fixtures(client, REPO, ["issue"], seed_id="s")),
        tmp_path / "m.json",
    )
    monkeypatch.setattr(eval_cli, "_client", lambda: client)
    standin.fail_next(
        "GET", r"/issues/\d+$", 503, message=f"unavailable for {MAIN_TOKEN}"
    )
    before = len(standin.log)
    result = CliRunner().invoke(
        cli,
        ["eval", "fixture", "reset", "--repo", REPO, "--manifest", str(manifest)],
        env={"GH_TOKEN": None},
    )
    assert (
        result.exit_code == 1
        and "Traceback" not in result.output
        and MAIN_TOKEN not in result.output
    )
    assert result.output.splitlines() == [
        "Error: fixture 'issue': issue #1 cannot be read: GET "
        f"/repos/{REPO}/issues/1: HTTP 503 unavailable for [REDACTED]"
    ]
    assert [r[:3] for r in standin.log[before:]] == [
        ("GET", f"/repos/{REPO}/issues/1", 503)
    ]  # the read failed: no write followed
