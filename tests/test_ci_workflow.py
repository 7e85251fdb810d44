"""The GitHub Actions workflow of docs/ci.md, run here: its `run:` steps exactly as
written, on the demo profile.

Steps that use an action (checkout, comment, upload) cannot run here; the test
checks that the files they are given exist. `pip install` is the only `run:`
step left out (this environment has the package installed already).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CI_DOC = ROOT / "docs" / "ci.md"
#: The values of the workflow's expressions in this test.
EXPRESSIONS = {"github.event.pull_request.number": "7"}


def _workflow() -> dict:
    blocks = re.findall(r"```yaml\n(.*?)```", CI_DOC.read_text(), flags=re.S)
    found = [b for b in blocks if b.startswith("# .github/workflows/agent-profile.yml")]
    assert len(found) == 1, "docs/ci.md should hold the workflow in one yaml block"
    return yaml.safe_load(found[0])


def _baseline_command() -> str:
    commands = re.findall(
        r"^profiler run profiler/profile\.yaml --run-id baseline .*$",
        CI_DOC.read_text(),
        flags=re.M,
    )
    assert len(commands) == 1
    return commands[0]


def _expand(text: str) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1).strip()
        assert name in EXPRESSIONS, (
            f"the workflow uses an expression this test does not know: {name}"
        )
        return EXPRESSIONS[name]

    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def _bash(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    # GitHub runs `run:` with `bash -e {0}`.
    return subprocess.run(
        ["bash", "-e", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def run_job(workdir: Path) -> tuple[bool, str, list[dict]]:
    """Run the job's steps like the runner would: (job passed, everything printed, the
    `uses:` steps that would run)."""
    job = _workflow()["jobs"]["profile"]
    base_env = dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    )
    failed, log, actions = False, [], []
    for step in job["steps"]:
        condition = str(step.get("if", "success()"))
        if failed and "always()" not in condition:
            continue
        if "uses" in step:
            actions.append(step)
            continue
        command = step["run"]
        if command.strip().startswith("pip install"):
            continue
        env = dict(
            base_env, **{k: _expand(str(v)) for k, v in (step.get("env") or {}).items()}
        )
        assert "${{" not in command, (
            "expressions belong in a step's env, so the command runs anywhere"
        )
        done = _bash(command, workdir, env)
        log.append(f"$ {step.get('name', command)}\n{done.stdout}{done.stderr}")
        failed = failed or done.returncode != 0
    return not failed, "\n".join(log), actions


def _check_action_inputs(workdir: Path, actions: list[dict]) -> None:
    """The files the comment and upload actions would read exist (and the JUnit files parse)."""
    names = [a["uses"].split("@")[0] for a in actions]
    assert (
        "marocchino/sticky-pull-request-comment" in names
        and "actions/upload-artifact" in names
    )
    for action in actions:
        paths = str((action.get("with") or {}).get("path", "")).split()
        for path in paths:
            assert (workdir / path).exists(), (
                f"{action['uses']}: {path} was not written"
            )
            if path.endswith(".xml"):
                assert ET.parse(workdir / path).getroot().tag == "testsuites"


@pytest.fixture(scope="module")
def with_baseline(tmp_path_factory):
    """A repository with the demo profile in profiler/ and its baseline committed as
    profiler/baseline.jsonl."""
    root = tmp_path_factory.mktemp("repo")
    profiler = str(Path(sys.executable).with_name("profiler"))
    subprocess.run(
        [profiler, "init", "profiler"],
        cwd=root,
        check=True,
        capture_output=True,
        timeout=60,
    )
    env = dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    )
    done = _bash(_baseline_command(), root, env)
    assert done.returncode == 0, done.stderr
    assert (root / "profiler" / "baseline.jsonl").is_file()
    shutil.rmtree(
        root / "profiler" / "results"
    )  # a checkout holds the committed baseline, not the run's files
    shutil.rmtree(root / "profiler" / "reports")
    return root


@pytest.fixture
def project(with_baseline, tmp_path):
    """A fresh checkout of that repository."""
    shutil.copytree(with_baseline, tmp_path / "repo")
    return tmp_path / "repo"


def test_an_unchanged_agent_passes_with_the_inconclusive_warning(project):
    passed, log, actions = run_job(project)
    assert passed, log
    # 50 rows per mode cannot rule out a 10-point fall of the success rate: said, not
    # passed silently.
    assert "::warning::agent profile: inconclusive" in log
    comment = (project / "compare.md").read_text()
    assert (
        comment.startswith("## agent-profiler: ⚠️ inconclusive")
        and "`cost:+10%` | +0.0%" in comment
    )
    _check_action_inputs(project, actions)
    assert (project / "profiler" / "reports" / "pr-7" / "report.html").is_file()


def test_a_dearer_agent_fails_the_check_and_still_comments(project):
    profile = project / "profiler" / "profile.yaml"
    # The pull request makes the agent take more turns without the skill: more tokens,
    # time and money.
    text = profile.read_text()
    assert "    mean_turns: 7\n" in text
    profile.write_text(text.replace("    mean_turns: 7\n", "    mean_turns: 12\n"))
    passed, log, actions = run_job(project)
    assert not passed, log
    comment = (project / "compare.md").read_text()
    assert comment.startswith("## agent-profiler: ❌ regression")
    assert re.search(
        r"\| baseline \| `cost:\+10%` \| \+\d+\.\d% \| .* \| ❌ regression \|", comment
    ), comment
    _check_action_inputs(project, actions)
    gates = [
        c
        for c in ET.parse(project / "compare-junit.xml").getroot().iter("testcase")
        if c.get("classname") == "agent-profiler.gates"
    ]
    assert any(
        c.get("name") == "baseline: cost:+10%" and c.find("failure") is not None
        for c in gates
    )
