"""`profiler run` with the `opencode` provider: the real opencode binary against the
scripted model server.

Each test runs the CLI in a subprocess and checks, by PID, that no opencode
process outlives it.
"""

from __future__ import annotations

import itertools
import json
import os

import pytest
from tests.binaries import agent_binary
from tests.opencode_helpers import (
    ProfilerRun,
    model_config,
    read_rows,
    run_id_of,
    wait_until,
    write_profile,
)
from tests.stored_traces import stored_trace

from profiler_core.fakemodel import Fail, FakeModelServer, Hang, tool_then_text

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def opencode_bin():
    return agent_binary("opencode", "OPENCODE_BIN")


def first_then(first, then):
    """A script: ``first`` for the first chat request, ``then(body)`` for every later one."""
    counter = itertools.count()
    return lambda body: first if next(counter) == 0 else then(body)


def test_two_modes_end_to_end(tmp_path, opencode_bin):
    modes = {
        "terse": {"system_instructions": "MODE-TERSE: answer tersely."},
        "chatty": {
            "system_instructions": "MODE-CHATTY: explain.",
            "environment": {"PROFILER_TEST_MARK": "chatty-env"},
        },
    }
    with FakeModelServer(
        tool_then_text(command="echo hello $PROFILER_TEST_MARK")
    ) as model:
        profile = write_profile(tmp_path, model.base_url, opencode_bin, modes=modes)
        run = ProfilerRun(["run", str(profile)], cwd=tmp_path)
        code, out, err = run.wait()
        assert code == 0, err
        rows = read_rows(tmp_path)
        requests = model.chat_requests()
    assert [r["mode"] for r in rows] == ["terse", "chatty"]
    for row in rows:
        assert (
            row.get("error") is None
            and row["completionReason"] == "stop"
            and row["success"]
        )
        # Two model calls of 120 prompt tokens (40 cached) and 15 completion tokens
        # each, net of cache.
        assert row["tokens"] == {
            "input": 160,
            "output": 30,
            "reasoning": 0,
            "cacheRead": 80,
            "cacheWrite": 0,
            "total": 270,
            "active": 190,
        }
        # Priced by OpenCode from the configured model prices: 2 x (80 x 1 + 40 x 0.5 +
        # 15 x 2) / 1e6.
        assert row["cost"]["totalUsd"] == pytest.approx(0.00026)
        assert row["extensions"]["cost_source"] == "provider"
        (call,) = row["toolCalls"]["records"]
        assert call["name"] == "bash" and call["success"] and call["durationMs"] > 0
        assert (
            row["extensions"]["latency_tools_ms"] > 0
            and row["extensions"]["latency_model_ms"] > 0
        )
        assert row["checkpointsPassed"] == 1 and row["agentTurns"] == 2
    # The mode's system instructions reached the model, and the mode's environment the
    # agent's shell.
    systems = [r["messages"][0]["content"] for r in requests]
    assert (
        sum("MODE-TERSE" in s for s in systems) == 2
        and sum("MODE-CHATTY" in s for s in systems) == 2
    )
    run_id = run_id_of(out)
    traces = {
        f"{mode}-iter-0": stored_trace(tmp_path / "reports", "echo-hello", mode)
        for mode in ("terse", "chatty")
    }
    outputs = {
        stem: [e["output"] for e in t["events"] if e["type"] == "tool_call"]
        for stem, t in traces.items()
    }
    assert outputs == {
        "terse-iter-0": ["hello\n"],
        "chatty-iter-0": ["hello chatty-env\n"],
    }
    bundles = [
        json.loads(line)
        for line in (tmp_path / "results" / f"{run_id}.analysis.jsonl")
        .read_text()
        .splitlines()
    ]
    assert len(bundles) == 2
    assert set(bundles[0]["results"]) == {
        "reasoning",
        "strategy",
        "efficiency",
        "tool-pattern",
        "error",
    }
    assert (tmp_path / "reports" / run_id / "report.html").is_file() and (
        tmp_path / "reports" / run_id / "report.md"
    ).is_file()
    assert len(run.servers) == 2, "one opencode server per mode"
    assert run.leftovers() == []


def test_model_500_gives_a_quick_error_row(tmp_path, opencode_bin):
    with FakeModelServer(Fail(500, "scripted overload")) as model:
        profile = write_profile(
            tmp_path, model.base_url, opencode_bin, options={"max_model_retries": 1}
        )
        run = ProfilerRun(["run", str(profile), "--no-report"], cwd=tmp_path)
        run.wait()
        attempts = len(model.chat_requests())
    (row,) = read_rows(tmp_path)
    assert row["completionReason"] == "error" and row["errorCode"] == "provider_error"
    assert "scripted overload" in row["error"] and "max_model_retries=1" in row["error"]
    # OpenCode's back-off is ~2 s, then ~4 s: giving up after the second failure is far
    # below the 90 s timeout.
    assert attempts == 2
    assert row["timing"]["wallMs"] < 30_000
    assert run.leftovers() == []


def test_model_error_fails_fast_and_unpriced_models_are_priced_by_the_profile(
    tmp_path, opencode_bin
):
    modes = {
        "refused": {"system_instructions": "MODE-REFUSED"},
        # provider_overrides reach this mode's server: its OpenCode config carries no prices.
        "unpriced": {"system_instructions": "MODE-UNPRICED", "provider_overrides": {}},
    }
    happy = tool_then_text()

    def script(body):
        refused = "MODE-REFUSED" in body["messages"][0]["content"]
        return Fail(401, "scripted: invalid api key") if refused else happy(body)

    with FakeModelServer(script) as model:
        modes["unpriced"]["provider_overrides"] = {
            "config": model_config(model.base_url, priced=False)
        }
        prices = {
            "local/scripted": {
                "input_per_mtok": 3,
                "output_per_mtok": 10,
                "cache_read_per_mtok": 1,
            }
        }
        profile = write_profile(
            tmp_path,
            model.base_url,
            opencode_bin,
            modes=modes,
            extensions={"prices": prices},
        )
        run = ProfilerRun(["run", str(profile), "--no-report"], cwd=tmp_path)
        run.wait()
        refused_requests = [
            r
            for r in model.chat_requests()
            if "MODE-REFUSED" in r["messages"][0]["content"]
        ]
    refused, unpriced = read_rows(tmp_path)
    # A non-retryable model error ends the session at once (info.error), with the
    # endpoint's message.
    assert refused["completionReason"] == "error" and "model error" in refused["error"]
    assert "scripted: invalid api key" in refused["error"]
    assert len(refused_requests) == 1
    assert refused["timing"]["wallMs"] < 30_000
    # OpenCode reports $0 without prices: the profile's prices apply to the wire
    # recorder's calls, and the row says so.
    assert (
        unpriced.get("error") is None
        and unpriced["extensions"]["cost_source"] == "wire"
    )
    # The wire's tokens equal OpenCode's own report.
    wire = unpriced["extensions"]["wire"]
    assert (
        "mismatch" not in wire
        and wire["tokens"]["total"] == unpriced["tokens"]["total"]
        and wire["calls"] >= 2
    )
    assert unpriced["cost"]["totalUsd"] == pytest.approx(
        (160 * 3 + 80 * 1 + 30 * 10) / 1e6
    )
    assert run.leftovers() == []


def test_hung_model_times_out_then_the_next_iteration_works(tmp_path, opencode_bin):
    with FakeModelServer(first_then(Hang(), tool_then_text())) as model:
        # 10 s: once, in a full suite, the second session also ran past a 6 s timeout (OpenCode
        # recovering from the aborted first one under load); alone it takes ~2 s.
        profile = write_profile(
            tmp_path,
            model.base_url,
            opencode_bin,
            timeout_ms=10_000,
            execution={"repetitions": 2},
        )
        run = ProfilerRun(["run", str(profile), "--no-report"], cwd=tmp_path)
        run.wait()
    first, second = read_rows(tmp_path)
    assert first["completionReason"] == "timeout" and first["errorCode"] == "timeout"
    assert (
        second.get("error") is None
        and second["success"]
        and second["tokens"]["input"] == 160
    )
    assert run.leftovers() == []


def test_killed_server_errors_in_flight_rows_and_the_next_mode_starts_a_new_server(
    tmp_path, opencode_bin
):
    modes = {
        "first": {"system_instructions": "first"},
        "second": {"system_instructions": "second"},
    }
    with FakeModelServer(first_then(Hang(), tool_then_text())) as model:
        profile = write_profile(tmp_path, model.base_url, opencode_bin, modes=modes)
        run = ProfilerRun(["run", str(profile), "--no-report"], cwd=tmp_path)
        # The first mode's session is waiting on the model: kill its server.
        wait_until(
            lambda: model.chat_requests() and run.servers,
            what="the first model request",
        )
        killed = run.servers[0]
        os.kill(killed, 9)
        run.wait()
    first, second = read_rows(tmp_path)
    assert first["mode"] == "first" and first["completionReason"] == "error"
    assert f"pid {killed}, exited with status -9" in first["error"], first["error"]
    assert (
        second["mode"] == "second" and second.get("error") is None and second["success"]
    )
    assert len(run.servers) == 2 and run.servers[1] != killed
    assert run.leftovers() == []


def test_missing_binary_is_one_line_and_exit_1(tmp_path):
    profile = write_profile(tmp_path, "http://127.0.0.1:9/v1", tmp_path / "no-opencode")
    run = ProfilerRun(["run", str(profile)], cwd=tmp_path)
    code, _, err = run.wait()
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "no-opencode" in lines[0] and "npm install -g opencode-ai" in lines[0]
    assert run.servers == []


def test_unknown_model_stops_the_run_with_one_line(tmp_path, opencode_bin):
    with FakeModelServer(tool_then_text()) as model:
        profile = write_profile(tmp_path, model.base_url, opencode_bin)
        run = ProfilerRun(
            ["run", str(profile), "--model", "local/nosuch", "--no-report"],
            cwd=tmp_path,
        )
        code, _, err = run.wait()
        assert model.chat_requests() == []
    assert code == 1
    (line,) = [line for line in err.splitlines() if line.startswith("Error:")]
    assert "model 'local/nosuch' is not available" in line and "local: scripted" in line
    assert run.servers and run.leftovers() == []


def test_ctrl_c_exits_130_leaves_nothing_and_resume_completes(tmp_path, opencode_bin):
    with FakeModelServer(first_then(Hang(), tool_then_text())) as model:
        profile = write_profile(
            tmp_path, model.base_url, opencode_bin, execution={"repetitions": 2}
        )
        run = ProfilerRun(["run", str(profile), "--no-report"], cwd=tmp_path)
        wait_until(lambda: model.chat_requests(), what="the first model request")
        run.interrupt()
        code, out, err = run.wait()
        assert code == 130, err
        assert "--resume" in err
        assert run.servers and run.leftovers() == []
        run_id = run_id_of(out)
        resumed = ProfilerRun(
            ["run", str(profile), "--resume", run_id, "--no-report"], cwd=tmp_path
        )
        code, out, err = resumed.wait()
    assert code == 0, err
    rows = read_rows(tmp_path)
    assert sorted(r["iteration"] for r in rows) == [0, 1]
    assert all(r["success"] for r in rows)
    assert resumed.leftovers() == []


def test_concurrency_4_runs_6_sessions_on_one_server(tmp_path, opencode_bin):
    # 6: two sessions wait for a slot that a finished one frees (each session ~1 s of CPU)
    template = tmp_path / "template"
    template.mkdir()
    (template / "marker.txt").write_text("from the template\n")
    with FakeModelServer(tool_then_text(command="cat marker.txt && pwd")) as model:
        profile = write_profile(
            tmp_path,
            model.base_url,
            opencode_bin,
            options={"workdir_per_session": True, "workdir_template": str(template)},
            execution={"repetitions": 6, "concurrency": 4},
        )
        run = ProfilerRun(["run", str(profile), "--no-report"], cwd=tmp_path)
        code, _, err = run.wait()
    assert code == 0, err
    rows = read_rows(tmp_path)
    assert len(rows) == 6 and len({r["sessionId"] for r in rows}) == 6
    assert all(r["success"] and r["tokens"]["total"] == 270 for r in rows)
    traces = [
        stored_trace(tmp_path / "reports", "echo-hello", r["mode"], r["iteration"])
        for r in rows
    ]
    outputs = [
        next(e["output"] for e in t["events"] if e["type"] == "tool_call")
        for t in traces
    ]
    assert all(o.startswith("from the template\n") for o in outputs)
    assert len({o.splitlines()[1] for o in outputs}) == 6, (
        "each session has its own working directory"
    )
    assert len(run.servers) == 1
    assert run.leftovers() == []


def test_a_model_endpoint_that_is_down_stops_the_run_before_the_first_session_naming_the_url(
    tmp_path, opencode_bin
):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    # One warm-up and the first of two cells: OpenCode says "Cannot connect to API", naming no URL.
    profile = write_profile(
        tmp_path,
        url,
        opencode_bin,
        options={"max_model_retries": 0},
        execution={"repetitions": 2, "warmup": True},
        analyzers=[],
    )
    run = ProfilerRun(
        ["run", str(profile), "--no-report", "--progress", "none"], cwd=tmp_path
    )
    code, _, err = run.wait()
    assert code == 1, err
    errors = [line for line in err.splitlines() if line.startswith("Error:")]
    # The model provider's baseURL is opened once before any session (runner.endpoint).
    assert (
        len(errors) == 1
        and f"model endpoint {url} is not reachable: connection refused" in errors[0]
    ), err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("results/*.jsonl"))  # no cell was attempted
    assert run.leftovers() == []


def test_the_named_endpoint_is_the_models_provider_then_the_vendors():
    from profiler_core.providers.opencode.config import OpenCodeOptions
    from profiler_core.providers.opencode.provider import model_endpoint

    config = {
        "provider": {
            "other": {"options": {"baseURL": "http://other"}},
            "local": {"options": {"baseURL": "http://127.0.0.1:9/v1"}},
        }
    }
    assert (
        model_endpoint(OpenCodeOptions.parse({"config": config}), "local/scripted")
        == "http://127.0.0.1:9/v1"
    )
    assert (
        model_endpoint(
            OpenCodeOptions.parse({"config": config}), "anthropic/claude-sonnet-4-5"
        )
        == "https://api.anthropic.com"
    )
    assert "'acme'" in model_endpoint(OpenCodeOptions.parse({}), "acme/m1")
