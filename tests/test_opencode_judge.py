"""The ``opencode`` judge provider: the llm-judge scorer's questions answered by the
real OpenCode, on a scripted
model served from 127.0.0.1, with the server started once per run and stopped when the run ends."""

from __future__ import annotations

import json
import math

import pytest
import trio
from tests.binaries import agent_binary
from tests.opencode_helpers import START_TIMEOUT_S, model_config

from profiler_core.config.loader import load_profile
from profiler_core.errors import ConfigError
from profiler_core.fakemodel import FakeModelServer, Text, Usage
from profiler_core.judges.opencode import OpenCodeJudge
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.runner import options_from_config, run_profile_suite
from profiler_core.util.processes import process_alive

pytestmark = pytest.mark.slow

RUBRIC = {
    "criteria": [
        {"id": "correct", "description": "The answer names the failing test"},
        {"id": "tested", "description": "The agent ran the tests"},
    ]
}
VERDICTS = {
    "verdicts": [
        {"id": "correct", "passed": True, "reasoning": "It names test_parse_date."},
        {"id": "tested", "passed": False, "reasoning": "No test run in the trace."},
    ]
}
PROMPT, CACHED, COMPLETION = 1200, 400, 90
USAGE = Usage(input=PROMPT - CACHED, cache_read=CACHED, output=COMPLETION)


def test_the_judge_runs_through_opencode_once_per_run(tmp_path):
    binary = agent_binary("opencode", "OPENCODE_BIN")
    (tmp_path / "scenarios").mkdir()
    for sid in ("fix-001", "fix-002"):
        data = {
            "id": sid,
            "name": sid,
            "prompt": f"task {sid}",
            "extensions": {"rubric": RUBRIC},
        }
        (tmp_path / "scenarios" / f"{sid}.json").write_text(json.dumps(data))
    with FakeModelServer(
        Text(json.dumps(VERDICTS), usage=USAGE), model="scripted"
    ) as model:
        profile = {
            "modes": {"plain": {}},
            "scenarios": {"path": "scenarios"},
            "scorer": {"id": "llm-judge"},
            "judge": {
                "id": "opencode",
                "model": "local/scripted",
                "options": {
                    "binary": str(binary),
                    "start_timeout_s": START_TIMEOUT_S,
                    "config": model_config(model.base_url),
                },
            },
            "analyzers": [],
            "execution": {"repetitions": 2, "warmup": False, "concurrency": 2},
        }
        (tmp_path / "profile.yaml").write_text(json.dumps(profile))
        manager = get_plugin_manager(entrypoints=False)
        options = options_from_config(
            load_profile(tmp_path / "profile.yaml", registry=manager.registry), manager
        )
        judge = options.scorer.judge
        assert (
            isinstance(judge, OpenCodeJudge) and judge.server is None
        )  # nothing starts before the run
        servers: list[int] = []
        started = judge.init

        async def init() -> None:
            await started()
            if judge.server is not None and judge.server.pid not in servers:
                servers.append(judge.server.pid)

        judge.init = init  # type: ignore[method-assign]
        result = trio.run(run_profile_suite, options)
        requests = model.chat_requests()

    rows = list(result.rows)
    assert (
        len(rows) == 4 and len(servers) == 1
    )  # four questions, one server for the run
    assert (
        judge.server is None and judge.client is None and not process_alive(servers[0])
    )  # stopped at the run's end
    assert len(requests) == 4
    assert all(
        "The answer names the failing test" in r["messages"][0]["content"]
        for r in requests
    )
    for row in rows:
        assert (row.checkpoints_passed, row.checkpoints_total, row.success) == (
            1,
            2,
            False,
        )
        assert (
            row.extensions["judge_calls"] == 1
            and row.extensions["judge_cost_source"] == "provider"
        )
        # OpenCode's own bill for the scripted usage at the configured prices (USD per
        # million tokens).
        cost = ((PROMPT - CACHED) * 1.0 + CACHED * 0.5 + COMPLETION * 2.0) / 1e6
        assert math.isclose(row.extensions["judge_cost_usd"], cost, rel_tol=1e-9)
        assert (
            row.extensions["judge_tokens_input"] == PROMPT
            and row.extensions["judge_tokens_output"] == COMPLETION
        )


def test_bad_judge_options_are_one_line(tmp_path):
    binary = agent_binary("opencode", "OPENCODE_BIN")
    with pytest.raises(
        ConfigError,
        match=r"judge 'opencode': options.model: expected OpenCode's providerID/modelID",
    ):
        OpenCodeJudge(binary=str(binary))
    with pytest.raises(
        ConfigError, match=r"judge 'opencode': unknown option\(s\) workdir"
    ):
        OpenCodeJudge(model="local/scripted", binary=str(binary), workdir=".")
    with pytest.raises(
        ConfigError,
        match=r"judge 'opencode': option 'binary': '/nowhere/opencode' is not an executable",
    ):
        OpenCodeJudge(model="local/scripted", binary="/nowhere/opencode")
