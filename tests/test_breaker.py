"""A run whose agent cannot work stops after its first sessions instead of trying every cell."""

from __future__ import annotations

import pytest
import trio

from profiler_core import ModeConfig, Scenario
from profiler_core.errors import ProfilerError
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.storage.store import read_jsonl
from profiler_core.testing import Fail, FakeProvider, FixedScorer


class AgentLike(FakeProvider):
    """A provider whose ``base_url`` is a model endpoint, as the agent providers say."""

    endpoint_check = True


def _run(
    tmp_path, manager, script, *, warmup, repetitions=6, scenarios=("s",), **extra
):
    options = RunOptions(
        provider=AgentLike(script=script),
        scorer=FixedScorer(),
        scenarios=[Scenario(id=s, name=s.upper(), prompt="p") for s in scenarios],
        **extra,
        modes={"a": ModeConfig()},
        repetitions=repetitions,
        warmup=warmup,
        run_id="b",
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = manager
    return trio.run(run_profile_suite, options)


def _rows(tmp_path):
    return read_jsonl(tmp_path / "results" / "b.jsonl").rows


def test_warm_up_and_first_cell_failing_alike_stop_the_run(
    tmp_path, profiler_plugin_manager
):
    with pytest.raises(
        ProfilerError,
        match="the warm-up and the first session failed the same way.*connection refused",
    ):
        _run(
            tmp_path,
            profiler_plugin_manager,
            lambda params, attempt: Fail(
                f"connection refused (port {params.iteration + 7000})"
            ),
            warmup=True,
        )
    assert len(_rows(tmp_path)) == 1


def test_without_a_warm_up_three_first_cells_failing_alike_stop_the_run(
    tmp_path, profiler_plugin_manager
):
    with pytest.raises(ProfilerError, match="the first 3 sessions failed the same way"):
        _run(tmp_path, profiler_plugin_manager, lambda params, attempt: Fail("502 from the gateway"), warmup=False,
             repetitions=2, scenarios=("s", "t", "u"))  # fmt: skip
    assert len(_rows(tmp_path)) == 3


def test_one_scenario_that_always_fails_does_not_stop_the_run(
    tmp_path, profiler_plugin_manager
):
    """The warm-up runs the first scenario: its failure and the same scenario's first
    cells are that scenario's."""

    def script(params, attempt):
        return (
            Fail("pytest: 3 failed (tests/test_app.py)")
            if params.scenario_id == "broken"
            else None
        )

    result = _run(
        tmp_path,
        profiler_plugin_manager,
        script,
        warmup=True,
        repetitions=4,
        scenarios=("broken", "fine"),
    )
    rows = _rows(tmp_path)
    assert result.status == "completed" and len(rows) == 8
    assert {r.scenario_id for r in rows if r.error} == {"broken"}


def test_one_scenario_failing_alike_on_a_refused_connection_stops_the_run(
    tmp_path, profiler_plugin_manager
):
    """An error about the endpoint needs no second scenario: no scenario makes a
    connection refused."""
    with pytest.raises(
        ProfilerError,
        match="the first 3 sessions failed the same way.*Connection refused",
    ):
        _run(
            tmp_path,
            profiler_plugin_manager,
            lambda params, attempt: Fail("API error: Connection refused"),
            warmup=False,
        )
    assert len(_rows(tmp_path)) == 3


def test_the_same_failure_in_a_second_scenario_stops_the_run_after_the_warm_up(
    tmp_path, profiler_plugin_manager
):
    with pytest.raises(
        ProfilerError, match="the warm-up and the first 2 sessions failed the same way"
    ):
        _run(tmp_path, profiler_plugin_manager, lambda params, attempt: Fail("502 from the gateway"), warmup=True,
             repetitions=1, scenarios=("s", "t", "u"))  # fmt: skip
    assert len(_rows(tmp_path)) == 2


def test_a_down_model_endpoint_is_one_line_before_the_first_session(
    tmp_path, profiler_plugin_manager
):
    """A forgotten fake model: the endpoint is opened once, refused, and no session starts."""
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    calls = []
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(
        ProfilerError,
        match=rf"model endpoint {url} is not reachable: connection refused",
    ):
        _run(tmp_path, profiler_plugin_manager, lambda params, attempt: calls.append(params), warmup=True,
             provider_options={"base_url": url})  # fmt: skip
    assert calls == [] and not (tmp_path / "results" / "b.jsonl").exists()


def test_the_endpoint_is_named_without_its_password_and_only_for_providers_that_say_it_is_one(
    tmp_path, profiler_plugin_manager
):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://bob:pa55-word@127.0.0.1:{port}/v1?key=query-secret"
    with pytest.raises(
        ProfilerError,
        match=rf"model endpoint http://127.0.0.1:{port}/v1 is not reachable",
    ) as caught:
        _run(
            tmp_path,
            profiler_plugin_manager,
            lambda params, attempt: None,
            warmup=False,
            provider_options={"base_url": url},
        )
    assert "pa55-word" not in str(caught.value) and "query-secret" not in str(
        caught.value
    )
    # A provider that does not say its base_url is a model endpoint: not checked, the run goes on.
    options = RunOptions(
        provider=FakeProvider(), scorer=FixedScorer(), scenarios=[Scenario(id="s", name="S", prompt="p")], modes={"a": ModeConfig()},
        repetitions=1, warmup=False, run_id="c", results_dir=str(tmp_path / "results"), reports_dir=str(tmp_path / "reports"),
        provider_options={"base_url": url},
    )  # fmt: skip
    options.plugin_manager = profiler_plugin_manager
    assert trio.run(run_profile_suite, options).status == "completed"


def test_a_listening_model_endpoint_and_the_simulated_provider_pass_the_check(
    tmp_path, profiler_plugin_manager
):
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        result = _run(tmp_path, profiler_plugin_manager, lambda params, attempt: None, warmup=False, repetitions=2,
                      provider_options={"config": {"provider": {"fake": {"options": {"baseURL": url}}}}})  # fmt: skip
    assert result.status == "completed" and len(_rows(tmp_path)) == 2


@pytest.mark.parametrize(
    "script",
    [
        lambda params, attempt: Fail(
            ["model overloaded", "tool crashed"][params.iteration % 2]
        ),  # failures that differ
        lambda params, attempt: (
            None if params.iteration == 1 else Fail("down")
        ),  # one session worked
    ],
)
def test_failures_that_differ_or_a_session_that_worked_do_not_stop_it(
    tmp_path, profiler_plugin_manager, script
):
    result = _run(tmp_path, profiler_plugin_manager, script, warmup=False)
    assert result.status == "completed" and len(_rows(tmp_path)) == 6


def test_timeouts_without_a_failed_warm_up_are_measured_not_stopped(
    tmp_path, profiler_plugin_manager
):
    from profiler_core.testing import Hang

    options = RunOptions(
        provider=FakeProvider(script=lambda params, attempt: Hang()),
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s", name="S", prompt="p", timeout_ms=50)],
        modes={"a": ModeConfig()},
        repetitions=4,
        warmup=False,
        run_id="b",
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    result = trio.run(run_profile_suite, options)
    assert (
        result.status == "completed"
        and [r.error_code for r in _rows(tmp_path)] == ["timeout"] * 4
    )


def test_fail_fast_false_attempts_every_cell(tmp_path, profiler_plugin_manager):
    options = RunOptions(
        provider=FakeProvider(
            script=lambda params, attempt: Fail("502 from the gateway")
        ),
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s", name="S", prompt="p")],
        modes={"a": ModeConfig()},
        repetitions=6,
        warmup=True,
        fail_fast=False,
        run_id="b",
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    assert (
        trio.run(run_profile_suite, options).status == "completed"
        and len(_rows(tmp_path)) == 6
    )


def test_concurrent_cells_meeting_the_stop_raise_one_error(
    tmp_path, profiler_plugin_manager
):
    """Cells running side by side all trip the breaker: the user gets the first stop,
    not a group of repeats."""
    options = RunOptions(
        provider=FakeProvider(script=lambda params, attempt: Fail("502 from the gateway")), scorer=FixedScorer(),
        scenarios=[Scenario(id="s", name="S", prompt="p"), Scenario(id="t", name="T", prompt="p")], modes={"a": ModeConfig()},
        repetitions=12, warmup=False,
        concurrency=4, run_id="b", results_dir=str(tmp_path / "results"), reports_dir=str(tmp_path / "reports"),
    )  # fmt: skip
    options.plugin_manager = profiler_plugin_manager
    with pytest.raises(
        ProfilerError, match=r"the first \d+ sessions failed the same way"
    ):
        trio.run(run_profile_suite, options)
    assert 3 <= len(_rows(tmp_path)) < 24
