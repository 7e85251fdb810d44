"""A real agent from PyPI that is none of the registry's three: mini-swe-agent (`mini`),
driven by the
`command` provider against the scripted model (issue 39).

mini-swe-agent calls its model through litellm (model `openai/NAME`: OpenAI chat completions at
`$OPENAI_API_BASE`) and runs each `bash` tool call it gets in a subshell of the
workspace; it ends when a
command prints `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`. Installed by
`.ci/install-mini-swe-agent` into
`.mini-venv/`; a missing `mini` fails under CI=true, skips on a developer's machine.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.binaries import ROOT, missing
from tests.scripted.agent_runs import profiler, rows, write_profile

from profiler_core.fakemodel import FakeModelServer, ToolCall, Usage

USAGE = Usage(input=210, output=17, cache_read=0)
PRICES = {"mini": {"input_per_mtok": 1, "output_per_mtok": 10}}
REAL_KEY = "sk-test-real-key-0123456789abcdef"
HINT = (
    "run `bash .ci/install-mini-swe-agent` (mini-swe-agent in .mini-venv/) or set "
    "PROFILER_MINI_BIN"
)


def mini_binary() -> Path:
    """The `mini` program: $PROFILER_MINI_BIN, else .mini-venv/bin/mini (fail in CI /
    skip locally)."""
    found = Path(
        os.environ.get("PROFILER_MINI_BIN") or ROOT / ".mini-venv" / "bin" / "mini"
    )
    if not found.is_file():
        missing("mini (mini-swe-agent)", HINT)
    return found


def test_mini_swe_agent_is_measured_from_the_wire(tmp_path, monkeypatch):
    mini = mini_binary()
    monkeypatch.setenv(
        "OPENAI_API_KEY", REAL_KEY
    )  # the recorder's to send; mini holds a placeholder
    script = [
        ToolCall(
            "bash", {"command": "echo hello > hello.txt && cat hello.txt"}, usage=USAGE
        ),
        ToolCall(
            "bash",
            {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"},
            usage=USAGE,
        ),
    ]
    checks = [
        {
            "id": "answered",
            "target": "output",
            "condition": {"type": "matches", "pattern": "(?s).*"},
        }
    ]
    with FakeModelServer(script, model="mini") as model:
        path = write_profile(
            tmp_path,
            provider="command",
            model="mini",
            modes={"plain": {}},
            checks=checks,
            timeout_ms=120_000,
            extensions={"prices": PRICES},
            options={
                "command": f"{mini} --yolo --exit-immediately --cost-limit 0 --model "
                f"openai/{{model}} --task {{prompt}} --output traj.json",
                "base_url": model.base_url,
                # No first-run questions, no price lookup for an unknown model,
                # litellm's price table from its package.
                "env": {
                    "MSWEA_CONFIGURED": "true",
                    "MSWEA_COST_TRACKING": "ignore_errors",
                    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                },
            },
        )
        done = profiler(
            tmp_path, "run", str(path), "--run-id", "mini", "--no-report", timeout=300
        )
        asked = model.chat_requests()
        keys = {r.auth for r in model.posts("/chat/completions")}
    assert done.returncode == 0, done.stderr[-2000:]
    [row] = rows(tmp_path, "mini")
    assert row.get("error") is None, row["error"]
    # Its two model calls reached the scripted model, through the recorder, with the key
    # the recorder holds.
    assert (
        len(asked) == 2
        and "Say hello using the shell." in str(asked[0]["messages"])
        and keys == {f"Bearer {REAL_KEY}"}
    )
    # The tokens are the wire's: the two answers' usage, as the model sent it.
    wire = row["extensions"]["wire"]
    assert (
        wire["calls"] == 2
        and row["tokens"]["input"] == 2 * 210
        and row["tokens"]["output"] == 2 * 17
    )
    assert row["extensions"]["cost_source"] == "wire" and row["cost"][
        "totalUsd"
    ] == pytest.approx((420 * 1 + 34 * 10) / 1e6)
    # Its tool calls, from the wire: the two bash calls, each answered in the next
    # request (the last one ends the run).
    assert [r["name"] for r in row["toolCalls"]["records"]] == ["bash", "bash"]
    # The first command's output went back to the model in its second request.
    assert "hello" in str(asked[1]["messages"][-1])
