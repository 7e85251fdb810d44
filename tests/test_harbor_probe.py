"""What an installed Harbor says of itself: ``profiler agents list`` shows its agents,
``validate`` its environments' missing credentials.

Both ask Harbor's own interpreter (providers/harbor_probe.py); the answers are checked
against Harbor's own CLI
(``harbor agents list --json``) and against variables set and unset here. Needs Harbor
(``bash .ci/install-harbor``):
in CI a missing one fails the test, elsewhere it skips.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml
from tests.scripted.agent_runs import profiler
from tests.test_harbor_provider import OFFLINE_IMAGE, harbor_program, write_task


def harbors_own_agent_names() -> list[str]:
    done = subprocess.run(
        [str(harbor_program()), "agents", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def test_agents_list_shows_the_agents_harbor_itself_lists(tmp_path):
    harbor = harbor_program()
    own = harbors_own_agent_names()
    out = profiler(tmp_path, "agents", "list", "--harbor", str(harbor))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = [i for i, line in enumerate(lines) if line.startswith("Harbor ")]
    assert len(head) == 1, out.stdout
    version = subprocess.run(
        [str(harbor), "--version"], capture_output=True, text=True, timeout=120
    ).stdout.split()[-1]
    assert (
        lines[head[0]]
        == f"Harbor {version} ({harbor}): {len(own)} agents, run through provider "
        "'harbor' (option agent):"
    )
    shown = [name for line in lines[head[0] + 1 :] for name in line.strip().split(", ")]
    assert shown == own and {"oracle", "nop", "terminus-2"} <= set(shown)


def test_agents_list_json_has_one_object_per_harbor_agent_with_every_key(tmp_path):
    out = profiler(
        tmp_path, "agents", "list", "--json", "--harbor", str(harbor_program())
    )
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert (
        len({tuple(r) for r in records}) == 1
    )  # the same keys, in the same order, on every object
    harbor = [r for r in records if r["provider"] == "harbor"]
    assert [r["harborAgent"] for r in harbor] == harbors_own_agent_names()
    assert all(r["name"] == f"harbor:{r['harborAgent']}" for r in harbor)


def test_agents_list_says_in_one_line_when_harbor_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("PROFILER_HARBOR", str(tmp_path / "no-venv" / "harbor"))
    out = profiler(tmp_path, "agents", "list")
    assert out.returncode == 0, out.stderr
    harbor = [line for line in out.stdout.splitlines() if "Harbor" in line]
    assert harbor == [
        f"Harbor: not found ('{tmp_path / 'no-venv' / 'harbor'}'; --harbor or "
        "$PROFILER_HARBOR names its program): its agents run "
        "through provider 'harbor' once it is installed in a Python >= 3.12 "
        "(bash .ci/install-harbor)"
    ]


def _profile(folder, environment: str) -> None:
    write_task(folder / "tasks" / "hello-file", OFFLINE_IMAGE)
    (folder / "profile.yaml").write_text(
        yaml.safe_dump(
            {
                "modes": {"solved": {}},
                "scenarios": {"path": "tasks", "format": "harbor"},
                "provider": {
                    "id": "harbor",
                    "options": {
                        "agent": "oracle",
                        "environment": environment,
                        "harbor": str(harbor_program()),
                    },
                },
                "execution": {"sandbox": "bwrap"},
            }
        )
    )


@pytest.mark.parametrize(
    ("environment", "variables", "says"),
    [
        (
            "e2b",
            {"E2B_API_KEY": "e2b-test-key"},
            "E2B requires E2B_API_KEY to be set. Please set this environment "
            "variable and try again.",
        ),
        (
            "daytona",
            {"DAYTONA_API_KEY": "daytona-test-key"},
            "Daytona requires either DAYTONA_API_KEY, or both "
            "DAYTONA_JWT_TOKEN and DAYTONA_ORGANIZATION_ID",
        ),
        (
            "modal",
            {"MODAL_TOKEN_ID": "id", "MODAL_TOKEN_SECRET": "secret"},
            "Modal requires authentication. Run 'modal token new'",
        ),
    ],
)
def test_validate_says_in_one_line_when_the_environment_lacks_its_credentials(
    tmp_path, monkeypatch, environment, variables, says
):
    _profile(tmp_path, environment)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.modal.toml
    for name in (
        "E2B_API_KEY",
        "DAYTONA_API_KEY",
        "DAYTONA_JWT_TOKEN",
        "DAYTONA_ORGANIZATION_ID",
        "MODAL_TOKEN_ID",
        "MODAL_TOKEN_SECRET",
    ):
        monkeypatch.delenv(name, raising=False)
    out = profiler(tmp_path, "validate", "profile.yaml")
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    prefix = (
        "Error: profile.yaml: provider.id: provider 'harbor': environment "
        f"'{environment}' is not ready: {says}"
    )
    assert len(errors) == 1 and errors[0].startswith(prefix), out.stderr
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 2, (
        out.stderr
    )  # the line and the count, nothing else
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    again = profiler(tmp_path, "validate", "profile.yaml")
    assert "is not ready" not in again.stdout + again.stderr, again.stderr


def test_validate_names_an_unknown_environment_with_harbors_list(tmp_path):
    _profile(tmp_path, "dokcer")
    out = profiler(tmp_path, "validate", "profile.yaml")
    assert out.returncode == 1
    assert (
        "environment 'dokcer' is not ready: unknown Harbor environment 'dokcer' (known: "
        in out.stderr
        and ", docker, " in out.stderr
    )


def test_a_harbor_program_whose_interpreter_has_no_harbor_is_one_line(tmp_path):
    import sys

    fake = tmp_path / "bin" / "harbor"
    fake.parent.mkdir()
    fake.write_text(
        f"#!{sys.executable}\nraise SystemExit('not Harbor')\n"
    )  # a console script of an interpreter without Harbor
    fake.chmod(0o755)
    out = profiler(tmp_path, "agents", "list", "--harbor", str(fake))
    assert out.returncode == 0, out.stderr
    harbor = [line for line in out.stdout.splitlines() if line.startswith("Harbor")]
    assert len(harbor) == 1 and harbor[0].startswith(
        f"Harbor: {fake}: {sys.executable} could not ask Harbor (is it "
        "installed there, and >= 0.26?): "
    )
    assert "PackageNotFoundError" in harbor[0]


def test_validate_checks_the_environment_a_mode_picks_through_its_overrides(
    tmp_path, monkeypatch
):
    _profile(tmp_path, "podman")
    profile = yaml.safe_load((tmp_path / "profile.yaml").read_text())
    profile["modes"]["remote"] = {"provider_overrides": {"environment": "e2b"}}
    (tmp_path / "profile.yaml").write_text(yaml.safe_dump(profile))
    monkeypatch.delenv("E2B_API_KEY", raising=False)
    out = profiler(tmp_path, "validate", "profile.yaml")
    assert out.returncode == 1
    assert [line for line in out.stderr.splitlines() if line.startswith("Error:")] == [
        "Error: profile.yaml: modes.remote.provider_overrides: provider "
        "'harbor': environment 'e2b' is not ready: "
        "E2B requires E2B_API_KEY to be set. Please set this environment variable and try again."
    ]
