"""`profiler eval run` end to end: real OpenCode, a scripted model, the GitHub stand-in.

The scripted model closes the scenario's issue through a `ghx` command in the
shell when it is in the `ghx` mode (it recognises that mode's SKILL.md in the
system prompt), and does nothing in the `baseline` mode. The `ghx` on PATH is a
small program written below that calls the stand-in's REST API, so the change
is real GitHub-API state that the checkpoint scorer then reads back.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from binaries import agent_binary
from github_standin import MAIN_TOKEN, GitHubStandIn
from opencode_helpers import START_TIMEOUT_S, ProfilerRun, model_config, read_rows
from profiler_core.fakemodel import (
    FakeModelServer,
    Reply,
    Text,
    ToolCall,
    has_tool_result,
)

pytestmark = pytest.mark.slow

REPO = "octo/eval-sandbox"
SKILL_MARKER = "ghx-skill-7f3a"

#: `ghx run issue.close --input JSON`: closes the issue through the API that GITHUB_API_URL names.
GHX_PROGRAM = """\
import json, os, sys, urllib.request
_, command, task, flag, raw = sys.argv
assert (command, task, flag) == ("run", "issue.close", "--input"), sys.argv
data = json.loads(raw)
url = f"{os.environ['GITHUB_API_URL']}/repos/{data['owner']}/{data['name']}/issues/{data['issueNumber']}"
request = urllib.request.Request(url, method="PATCH", data=json.dumps({"state": "closed"}).encode(),
                                 headers={"Authorization": f"Bearer {os.environ['GH_TOKEN']}",
                                          "Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=10) as answer:
    issue = json.load(answer)
print(json.dumps({"ok": True, "data": {"number": issue["number"], "state": issue["state"]}}))
"""

SCENARIO = {
    "id": "issue-close-001",
    "name": "Close the issue",
    "description": "Close the seeded issue.",
    "prompt": "Close issue #{{issue_number}} in {{owner}}/{{repo_name}}.",
    "timeoutMs": 90_000,
    "category": "issue",
    "difficulty": "basic",
    "fixture": {
        "repo": REPO,
        "requires": ["issue"],
        "bindings": {"issue_number": "issue.number"},
        "seedPerIteration": True,
    },
    "assertions": {
        "checkpoints": [
            {
                "id": "issue-closed",
                "description": "the issue is closed",
                "task": "issue.view",
                "input": {
                    "owner": "{{owner}}",
                    "name": "{{repo_name}}",
                    "issueNumber": "{{issue_number}}",
                },
                "condition": {
                    "type": "field_equals",
                    "path": "state",
                    "value": "CLOSED",
                },
            }
        ]
    },
}


def agent_script(body: dict[str, Any]) -> Reply:
    """Close the issue with ghx in the ghx mode; answer without acting otherwise."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    system = " ".join(
        str(m.get("content")) for m in messages if m.get("role") == "system"
    )
    if SKILL_MARKER not in system:
        return Text("I would rather not touch GitHub.")
    if has_tool_result(body):
        return Text("Done: the issue is closed.")
    prompt = " ".join(
        str(m.get("content")) for m in messages if m.get("role") == "user"
    )
    number = int(re.search(r"issue #(\d+)", prompt).group(1))
    owner, name = REPO.split("/")
    payload = json.dumps({"owner": owner, "name": name, "issueNumber": number})
    return ToolCall(
        "bash",
        {
            "command": f"ghx run issue.close --input '{payload}'",
            "description": "Close the issue",
        },
    )


def write_project(folder: Path, base_url: str, binary: Path) -> Path:
    """An eval project: one ghx-format scenario, modes ghx and baseline, fixtures seeded
    when missing."""
    (folder / "scenarios").mkdir()
    (folder / "scenarios" / "issue-close-001.json").write_text(json.dumps(SCENARIO))
    config = {
        "modes": ["ghx", "baseline"],
        "mode_resolver": {"id": "eval"},
        "scenarios": {"path": "scenarios", "format": "ghx"},
        "provider": {
            "id": "opencode",
            "model": "local/scripted",
            "options": {
                "binary": str(binary),
                "start_timeout_s": START_TIMEOUT_S,
                "config": model_config(base_url),
            },
        },
        "scorer": {"id": "checkpoint"},
        "execution": {"repetitions": 1, "warmup": False},
        "extensions": {
            "fixtures": {
                "repo": REPO,
                "manifest": "fixtures/latest.json",
                "seed_if_missing": True,
            }
        },
    }
    path = folder / "eval.yaml"
    path.write_text(json.dumps(config, indent=2))  # JSON is YAML
    return path


def install_ghx(folder: Path) -> Path:
    """A `ghx` program in ``folder/bin`` and a SKILL.md the scripted model recognises."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    ghx = bin_dir / "ghx"
    ghx.write_text(f"#!{sys.executable}\n{GHX_PROGRAM}")
    ghx.chmod(0o755)
    (folder / "SKILL.md").write_text(
        f"Use `ghx run TASK --input JSON` for GitHub work. ({SKILL_MARKER})\n"
    )
    return bin_dir


def test_one_mode_closes_the_issue_and_the_other_does_not(tmp_path):
    binary = agent_binary("opencode", "OPENCODE_BIN")
    with GitHubStandIn((REPO,)) as github, FakeModelServer(agent_script) as model:
        config = write_project(tmp_path, model.base_url, binary)
        env = {
            "GITHUB_API_URL": github.url,
            "GH_TOKEN": MAIN_TOKEN,
            "GHX_BIN_DIR": str(install_ghx(tmp_path)),
            "GHX_SKILL_MD": str(tmp_path / "SKILL.md"),
        }
        run = ProfilerRun(
            ["eval", "run", str(config), "--run-id", "e2e", "--progress", "none"],
            cwd=tmp_path,
            env=env,
        )
        status, _out, err = run.wait()
        assert status == 0, err[-3000:]
        assert run.leftovers() == []

        rows = {row["mode"]: row for row in read_rows(tmp_path)}
        assert set(rows) == {"ghx", "baseline"}
        ghx, baseline = rows["ghx"], rows["baseline"]
        assert ghx["success"] is True and ghx.get("error") is None, ghx
        assert baseline["success"] is False and baseline.get("error") is None, baseline
        # The scorer read GitHub back: closed after the ghx session, still open after
        # the baseline one.
        assert [d["actual"] for d in ghx["checkpointDetails"]] == ["CLOSED"]
        assert [d["actual"] for d in baseline["checkpointDetails"]] == ["OPEN"]

        # The close came from the agent's tool call: the first PATCH of an issue precedes the first
        # checkpoint read (GraphQL); the iterations' own clean-up closes come after scoring.
        log = github.requests()
        patches = [
            i
            for i, r in enumerate(log)
            if r[0] == "PATCH" and "/issues/" in r[1] and r[2] == 200
        ]
        reads = [
            i for i, r in enumerate(log) if r[0] == "POST" and r[1].endswith("/graphql")
        ]
        assert patches and reads and patches[0] < reads[0], log

        # How each mode reached GitHub: one ghx capability through the shell vs. nothing at all.
        assert [c["name"] for c in ghx["toolCalls"]["records"]] == ["bash"]
        assert ghx["extensions"]["ghx.capabilities_used"] == 1
        assert ghx["extensions"]["ghx.bash_commands"] == 0
        assert all(
            baseline["extensions"][f"ghx.{name}"] == 0
            for name in (
                "capabilities_used",
                "gh_cli_commands",
                "bash_commands",
                "mcp_tools_invoked",
                "file_ops",
                "other_tools",
            )
        )

        report = (tmp_path / "reports" / "e2e" / "report.md").read_text()
        assert re.search(
            r"^\| ghx\.capabilities_used \| 1 \| 0 \|", report, re.MULTILINE
        ), report
        assert re.search(
            r"^\| issue-closed \| the issue is closed \| 100\.0% \(1/1\) \| 0\.0% \(0/1\) \|",
            report,
            re.MULTILINE,
        )
