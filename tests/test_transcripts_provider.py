"""The ``transcripts`` provider: recorded sessions replayed through the runner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import trio
import trio.testing
from tests.stored_traces import stored_trace

from profiler_core import ConfigError, ModeConfig, Scenario, SessionTrace, from_json
from profiler_core.metrics.collectors import (
    CostCollector,
    TokenCollector,
    ToolCallCollector,
)
from profiler_core.providers import transcripts
from profiler_core.providers.transcripts import TranscriptsProvider
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FixedScorer

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


def scenario(sid: str) -> Scenario:
    return Scenario(id=sid, name=sid, prompt="(replayed)")


def run(
    tmp_path, manager, provider, scenarios, *, repetitions=1, modes=("recorded",), **kw
):
    options = RunOptions(
        provider=provider,
        scorer=FixedScorer(),
        scenarios=scenarios,
        modes={m: ModeConfig() for m in modes},
        repetitions=repetitions,
        warmup=kw.pop("warmup", False),
        collectors=[TokenCollector(), CostCollector(), ToolCallCollector()],
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        plugin_manager=manager,
        **kw,
    )
    return trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )


@pytest.fixture
def recordings(tmp_path, monkeypatch) -> Path:
    """A folder with two Claude Code sessions; the current directory is tmp_path (files
    resolve against it)."""
    folder = tmp_path / "rec"
    shutil.copytree(FIXTURES / "claude-code", folder)
    monkeypatch.chdir(tmp_path)
    return folder


def test_replays_the_session_named_after_each_scenario(
    tmp_path, recordings, profiler_plugin_manager
):
    provider = TranscriptsProvider(format="claude-code", files=["rec/*.jsonl"])
    result = run(
        tmp_path,
        profiler_plugin_manager,
        provider,
        [scenario("fix-dst-test"), scenario("api-error")],
        modes=("a", "b"),
        warmup=True,
        concurrency=2,
        models=["claude-sonnet-4-5-20250929"],
    )
    assert result.status == "completed" and len(result.rows) == 4
    by_cell = {(r.mode, r.scenario_id): r for r in result.rows}
    dst = by_cell[("a", "fix-dst-test")]
    assert dst.session_id == "5f0c2b9e-7d4a-4c1e-9a3b-2e8f6d1c4a70"
    assert (
        dst.tokens.cache_read == 108_129
        and dst.tool_calls.total == 6
        and dst.tool_calls.failed == 2
    )
    assert dst.timing.wall_ms == pytest.approx(34_213.0) and dst.agent_turns == 6
    # The importer's price is left to the cost collector, which prices the tokens with
    # the row's model.
    assert (
        dst.extensions["tokens_total"] == dst.tokens.total
        and dst.extensions["cost_source"] == "computed"
    )
    assert (
        dst.cost.total_usd == pytest.approx(dst.extensions["cost_total_usd"])
        and dst.cost.total_usd > 0
    )
    api = by_cell[("b", "api-error")]
    assert (
        api.session_id == "9c7e4d21-3b5a-4f8e-a1c6-7d2e9f0b3a58"
        and api.completion_reason == "error"
    )
    # A recorded API error is an error row that keeps what the session measured.
    assert (
        not api.success
        and api.error_code == "session_error"
        and "API Error" in api.error
    )
    assert api.tokens.total > 0 and api.agent_turns > 0
    trace = stored_trace(tmp_path / "reports", "fix-dst-test", "a")
    assert from_json(json.dumps(trace), SessionTrace).summary.total_tool_calls == 6
    assert provider._live == {}  # every replay was destroyed


def test_unmatched_scenario_replays_sessions_in_order_and_errors_when_exhausted(
    tmp_path, recordings, profiler_plugin_manager
):
    provider = TranscriptsProvider(
        format="claude-code",
        files=[str(recordings / "fix-dst-test.jsonl"), "rec/api-error.jsonl"],
    )
    result = run(
        tmp_path, profiler_plugin_manager, provider, [scenario("bugfix")], repetitions=3
    )
    first, second, third = result.rows
    assert first.session_id.startswith("5f0c2b9e") and second.session_id.startswith(
        "9c7e4d21"
    )
    assert (
        third.error is not None
        and "no recorded session left for scenario 'bugfix' iteration 2" in third.error
    )
    assert "2 session(s) match" in third.error


def test_cycle_reuses_sessions(tmp_path, recordings, profiler_plugin_manager):
    provider = TranscriptsProvider(
        format="claude-code", files=["rec/*.jsonl"], on_exhausted="cycle"
    )
    result = run(
        tmp_path,
        profiler_plugin_manager,
        provider,
        [scenario("fix-dst-test")],
        repetitions=3,
    )
    assert [r.session_id[:8] for r in result.rows] == ["5f0c2b9e"] * 3
    assert all(r.error is None for r in result.rows)


def test_openai_runs_match_by_scenario_id(
    tmp_path, monkeypatch, profiler_plugin_manager
):
    monkeypatch.chdir(FIXTURES)
    provider = TranscriptsProvider(format="openai", files=["openai/*"])
    assert [s.session_id for s in provider.pool("refund-001")] == [
        "thread_7f3e2a",
        "thread_91c4b0",
    ]
    assert [s.session_id for s in provider.pool("overdue-invoice")] == ["thread_c02d9e"]
    result = run(
        tmp_path,
        profiler_plugin_manager,
        provider,
        [scenario("refund-001")],
        repetitions=2,
    )
    assert [r.session_id for r in result.rows] == ["thread_7f3e2a", "thread_91c4b0"]
    assert (
        result.rows[0].tokens.cache_read == 4608
        and result.rows[1].completion_reason == "error"
    )


def test_a_session_belongs_to_the_scenario_its_file_names_or_the_scenario_option(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURES / "openai" / "refund-001.jsonl", tmp_path / "runs.jsonl")
    provider = TranscriptsProvider(format="openai", files=["runs.jsonl"])
    assert [provider.scenario_of(s) for s in provider.sessions] == [
        "refund-001",
        "refund-001",
    ]
    assert len(provider.pool("refund-001")) == 2
    shutil.copy(FIXTURES / "claude-code" / "api-error.jsonl", tmp_path / "runs.jsonl")
    named = TranscriptsProvider(
        format="claude-code", files=["runs.jsonl"], scenario="support"
    )
    assert [named.scenario_of(s) for s in named.sessions] == ["support"]
    with pytest.raises(ConfigError, match="option 'scenario': expected a scenario id"):
        TranscriptsProvider(format="claude-code", files=["runs.jsonl"], scenario="")


def test_time_scale_really_waits(tmp_path, recordings, profiler_plugin_manager):
    provider = TranscriptsProvider(
        format="claude-code", files=["rec/fix-dst-test.jsonl"], time_scale=0.5
    )

    async def main():
        options = RunOptions(
            provider=provider,
            scorer=FixedScorer(),
            scenarios=[scenario("fix-dst-test")],
            modes={"m": ModeConfig()},
            repetitions=1,
            warmup=False,
            results_dir=str(tmp_path / "r"),
            reports_dir=str(tmp_path / "p"),
            plugin_manager=profiler_plugin_manager,
        )
        start = trio.current_time()
        await run_profile_suite(options)
        return trio.current_time() - start

    elapsed = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert elapsed == pytest.approx(34.213 * 0.5)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"format": "csv", "files": ["rec/*.jsonl"]},
            "unknown transcript format 'csv'",
        ),
        (
            {"format": "claude-code", "files": ["rec/*.json"]},
            "'rec/*.json' matched no file",
        ),
        (
            {"format": "claude-code", "files": ["rec/missing.jsonl"]},
            "'rec/missing.jsonl': file not found",
        ),
        ({"format": "claude-code", "files": []}, "expected a non-empty list"),
        (
            {"format": "claude-code", "files": ["rec/*.jsonl"], "on_exhausted": "wrap"},
            "expected 'error' or 'cycle'",
        ),
        (
            {"format": "claude-code", "files": ["rec/*.jsonl"], "time_scale": -1},
            "expected a number >= 0",
        ),
    ],
)
def test_bad_options_are_config_errors(recordings, options, message):
    with pytest.raises(
        ConfigError, match=message.replace("*", r"\*").replace("(", r"\(")
    ):
        TranscriptsProvider(**options)


def test_a_bad_recording_fails_when_the_provider_is_built(recordings):
    (recordings / "zz-broken.jsonl").write_text(
        '{"type":"user","message":{"role":"user","content":"hi"}}\n{"type":"assist'
    )
    with pytest.raises(ConfigError, match=r"zz-broken.jsonl:2: truncated last line"):
        TranscriptsProvider(format="claude-code", files=["rec/*.jsonl"])


def test_registered_as_a_provider_and_built_from_a_profile(
    tmp_path, recordings, profiler_plugin_manager
):
    from profiler_core.config.loader import load_profile
    from profiler_core.runner import options_from_config

    manager = profiler_plugin_manager
    if "transcripts" not in manager.registry.ids("providers"):
        manager.register(transcripts, "core.providers.transcripts")
    assert "transcripts" in manager.registry.ids("providers")
    profile = tmp_path / "profile.yaml"
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "fix-dst-test.json").write_text(
        json.dumps(
            {"id": "fix-dst-test", "name": "DST bug", "prompt": "Fix the DST test"}
        )
    )
    profile.write_text(
        "modes: {replay: {system_instructions: ''}}\n"
        "scenarios: {path: scenarios}\n"
        "provider: {id: transcripts, model: claude-sonnet-4-5, options: "
        "{format: claude-code, files: ['rec/*.jsonl']}}\n"
        "scorer: {id: checks}\n"
        "execution: {repetitions: 1, warmup: false}\n"
        f"output: {{results_dir: {tmp_path / 'results'}, reports_dir: {tmp_path / 'reports'}}}\n"
    )
    config = load_profile(profile)
    options = options_from_config(config, manager)
    assert isinstance(options.provider, TranscriptsProvider)
    result = trio.run(run_profile_suite, options)
    (row,) = result.rows
    assert (
        row.provider == "transcripts"
        and row.tokens.cache_write == 6838
        and row.error is None
    )
