"""Modes overlap (issue 18.1) and cells start in the profile's order (issue 16.16)."""

from __future__ import annotations

import os

import pytest
import trio
import trio.testing

from profiler_core import ModeConfig, Scenario, hookimpl
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.runner.schedule import order_cells
from profiler_core.testing import FakeProvider, FixedScorer


class Timed(FakeProvider):
    """Records when each prompt ran, in which mode, and the process environment it saw."""

    def __init__(self, log, **kw):
        super().__init__(latency_s=1.0, **kw)
        self.log = log

    async def prompt(self, handle, text, timeout_ms=None):
        params, _ = self._params[handle.session_id]
        start = trio.current_time()
        env_seen = os.environ.get("MODE_VAR")
        result = await super().prompt(handle, text, timeout_ms)
        self.log.append((params.mode, start, trio.current_time(), env_seen, id(self)))
        return result


class HookLog:
    def __init__(self):
        self.calls = []

    @hookimpl
    def profiler_before_mode(self, mode):
        self.calls.append(("before", mode, trio.current_time()))

    @hookimpl
    def profiler_after_mode(self, mode):
        self.calls.append(("after", mode, trio.current_time()))


def _run(tmp_path, manager, *, factory=None, provider=None, **kw):
    base = dict(
        provider=provider or (factory() if factory else FakeProvider()),
        provider_factory=factory,
        scorer=FixedScorer(),
        scenarios=[
            Scenario(id=f"s{i}", name=f"S{i}", prompt="do") for i in range(1, 6)
        ],
        modes={
            "a": ModeConfig(environment={"MODE_VAR": "a"}),
            "b": ModeConfig(environment={"MODE_VAR": "b"}),
        },
        repetitions=2,
        warmup=False,
        concurrency=8,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    base.update(kw)
    options = RunOptions(**base)
    options.plugin_manager = manager
    return trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )


def test_cells_of_two_modes_run_at_once_each_instance_with_its_own_environment(
    tmp_path, profiler_plugin_manager
):
    log, instances = [], []

    def factory():
        instances.append(Timed(log))
        return instances[-1]

    hooks = HookLog()
    before = dict(os.environ)
    result = _run(tmp_path, profiler_plugin_manager, factory=factory, hooks=[hooks])
    assert len(result.rows) == 20 and all(r.success for r in result.rows)
    assert dict(os.environ) == before
    # The process environment was never changed: no prompt saw a mode's variable.
    assert {env for *_, env, _ in log} == {None}
    # Each (model, mode) had its own instance, initialised with its own mode's environment only.
    initialised = [p for p in instances if p.configs]
    assert sorted(
        (p.configs[0].mode, p.configs[0].environment["MODE_VAR"]) for p in initialised
    ) == [("a", "a"), ("b", "b")]
    assert all(len(p.configs) == 1 for p in initialised)
    by_instance = {}
    for mode, *_, ident in log:
        by_instance.setdefault(ident, set()).add(mode)
    assert sorted(map(sorted, by_instance.values())) == [["a"], ["b"]]
    # Overlap: some b cell started before the last a cell ended.
    a_end = max(end for mode, _, end, *_ in log if mode == "a")
    b_start = min(start for mode, start, *_ in log if mode == "b")
    assert b_start < a_end
    # before_mode precedes the mode's first cell, after_mode follows its last.
    for mode in ("a", "b"):
        starts = [s for m, s, *_ in log if m == mode]
        ends = [e for m, _, e, *_ in log if m == mode]
        (b_t,) = [t for kind, m, t in hooks.calls if kind == "before" and m == mode]
        (a_t,) = [t for kind, m, t in hooks.calls if kind == "after" and m == mode]
        assert b_t <= min(starts) and a_t >= max(ends)
    # Every instance was shut down.
    assert all(("shutdown",) in p.calls for p in initialised)
    # Rows still come in (model, mode, scenario, iteration) order.
    assert [(r.mode, r.scenario_id, r.iteration) for r in result.rows] == sorted(
        (r.mode, r.scenario_id, r.iteration) for r in result.rows
    )


def test_without_a_factory_modes_run_one_after_another(
    tmp_path, profiler_plugin_manager
):
    log = []
    result = _run(tmp_path, profiler_plugin_manager, provider=Timed(log))
    assert len(result.rows) == 20
    a_end = max(end for mode, _, end, *_ in log if mode == "a")
    b_start = min(start for mode, start, *_ in log if mode == "b")
    assert b_start >= a_end
    # ...and the mode's environment is applied to the process while it runs, as before.
    assert {(mode, env) for mode, _, _, env, _ in log} == {("a", "a"), ("b", "b")}


def test_needs_process_env_keeps_the_serial_behaviour(
    tmp_path, profiler_plugin_manager
):
    log = []

    def factory():
        provider = Timed(log)
        provider.needs_process_env = True
        return provider

    _run(tmp_path, profiler_plugin_manager, factory=factory)
    a_end = max(end for mode, _, end, *_ in log if mode == "a")
    assert min(start for mode, start, *_ in log if mode == "b") >= a_end
    assert {(mode, env) for mode, _, _, env, _ in log} == {("a", "a"), ("b", "b")}


@pytest.mark.parametrize("order", ["interleaved", "shuffled"])
def test_order_decides_which_cells_start_first(
    tmp_path, profiler_plugin_manager, order
):
    log = []
    result = _run(
        tmp_path,
        profiler_plugin_manager,
        factory=lambda: Timed(log),
        concurrency=1,
        order=order,
        order_seed=7,
    )
    modes_in_start_order = [
        mode for mode, *_ in sorted(log, key=lambda entry: entry[1])
    ]
    if order == "interleaved":
        assert modes_in_start_order == ["a", "b"] * 10
    else:
        assert (
            modes_in_start_order != ["a"] * 10 + ["b"] * 10
            and sorted(modes_in_start_order) == ["a"] * 10 + ["b"] * 10
        )
    assert len(result.rows) == 20


def test_order_cells_is_deterministic_and_complete():
    cells = [
        (model, mode, f"s{s}", i)
        for model in ("m1", "m2")
        for mode in ("a", "b")
        for s in range(3)
        for i in range(2)
    ]
    assert order_cells(cells, ["a", "b"], "blocked") == cells
    inter = order_cells(cells, ["a", "b"], "interleaved")
    assert sorted(inter) == sorted(cells) and [c[1] for c in inter[:4]] == [
        "a",
        "b",
        "a",
        "b",
    ]
    assert [c[0] for c in inter] == ["m1"] * 12 + [
        "m2"
    ] * 12  # models stay one after another
    shuffled = order_cells(cells, ["a", "b"], "shuffled", seed=3)
    assert shuffled == order_cells(cells, ["a", "b"], "shuffled", seed=3) != cells
    assert sorted(shuffled) == sorted(cells)
    with pytest.raises(ValueError, match="execution.order"):
        order_cells(cells, ["a", "b"], "random")


def test_profile_order_is_validated(tmp_path):
    from profiler_core.config.loader import ProfileErrors, load_profile

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s1.json").write_text(
        '{"id": "s1", "name": "S1", "prompt": "do"}'
    )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        "modes: {a: {}}\nscenarios: {path: scenarios}\nexecution: {order: random}\n"
    )
    with pytest.raises(
        ProfileErrors,
        match="execution.order: expected one of blocked, interleaved, shuffled",
    ):
        load_profile(profile)
    profile.write_text(
        "modes: {a: {}}\nscenarios: {path: scenarios}\nexecution: {order: interleaved, seed: 3}\n"
    )
    config = load_profile(profile)
    assert (config.execution.order, config.execution.seed) == ("interleaved", 3)
