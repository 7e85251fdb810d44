"""Hooks are called through pluggy: order, tryfirst/trylast, wrappers, async results,
per-plugin isolation."""

from __future__ import annotations

import pytest
import trio
import trio.lowlevel

from profiler_core import HookError, Scenario, hookimpl
from profiler_core.model import BeforeScenarioContext
from profiler_core.runner.hooks import HookCaller


class Named:
    """A before_mode implementation that appends its name to a shared log."""

    def __init__(self, name, log, fail=False):
        self.name, self.log, self.fail = name, log, fail

    @hookimpl
    def profiler_before_mode(self, mode):
        self.log.append(self.name)
        if self.fail:
            raise RuntimeError(f"{self.name} broke")


def call(manager, hook, **kwargs):
    caller = HookCaller(manager)
    result = trio.run(lambda: caller.call(hook, **kwargs))
    return caller, result


def test_pluggy_order_last_registered_first(profiler_plugin_manager):
    log = []
    for name in ("a", "b", "c"):
        profiler_plugin_manager.register(Named(name, log), name)
    call(profiler_plugin_manager, "profiler_before_mode", mode="m", run=None)
    assert log == [
        "c",
        "b",
        "a",
    ]  # pluggy's rule (as pytest): the most recent registration runs first


def test_tryfirst_and_trylast(profiler_plugin_manager):
    log = []

    class First:
        @hookimpl(tryfirst=True)
        def profiler_before_mode(self, mode):
            log.append("first")

    class Last:
        @hookimpl(trylast=True)
        def profiler_before_mode(self, mode):
            log.append("last")

    profiler_plugin_manager.register(First(), "first")
    profiler_plugin_manager.register(Named("plain-1", log), "plain-1")
    profiler_plugin_manager.register(Last(), "last")
    profiler_plugin_manager.register(Named("plain-2", log), "plain-2")
    call(profiler_plugin_manager, "profiler_before_mode", mode="m", run=None)
    assert log == ["first", "plain-2", "plain-1", "last"]


def test_new_style_wrapper_sees_and_may_change_the_results(profiler_plugin_manager):
    seen = []

    class Answer:
        @hookimpl
        def profiler_before_scenario(self, ctx):
            return Scenario(id="s", name="inner", prompt="inner")

    class Wrap:
        @hookimpl(wrapper=True)
        def profiler_before_scenario(self, ctx):
            seen.append("before")
            result = yield
            seen.append(result.name)
            return Scenario(id="s", name="wrapped", prompt="wrapped")

    profiler_plugin_manager.register(Answer(), "answer")
    profiler_plugin_manager.register(Wrap(), "wrap")
    caller = HookCaller(profiler_plugin_manager)
    ctx = BeforeScenarioContext(
        scenario=Scenario(id="s", name="s", prompt="p"),
        mode="m",
        model="x",
        iteration=0,
        run=None,
    )
    result = trio.run(lambda: caller.first_result("profiler_before_scenario", ctx=ctx))
    assert seen == ["before", "inner"]
    assert (
        result.name == "wrapped"
    )  # not the generator object the old loop took as the result
    assert caller.errors == []


def test_a_raising_implementation_is_recorded_and_the_others_still_run(
    profiler_plugin_manager,
):
    log = []
    profiler_plugin_manager.register(Named("a", log), "a")
    profiler_plugin_manager.register(Named("b", log, fail=True), "b")
    profiler_plugin_manager.register(Named("c", log), "c")
    caller, _ = call(
        profiler_plugin_manager, "profiler_before_mode", mode="m", run=None
    )
    assert log == ["c", "b", "a"]
    assert [(e.hook, e.plugin, e.message) for e in caller.errors] == [
        ("profiler_before_mode", "b", "RuntimeError: b broke")
    ]


def test_a_raising_wrapper_is_recorded_and_the_call_goes_on(profiler_plugin_manager):
    log = []

    class BadWrapper:
        @hookimpl(wrapper=True)
        def profiler_before_mode(self, mode):
            raise ValueError("wrapper setup failed")
            yield  # pragma: no cover

    class BadTeardown:
        @hookimpl(wrapper=True)
        def profiler_before_mode(self, mode):
            yield
            raise ValueError("wrapper teardown failed")

    profiler_plugin_manager.register(Named("a", log), "a")
    profiler_plugin_manager.register(BadWrapper(), "bad-wrapper")
    profiler_plugin_manager.register(BadTeardown(), "bad-teardown")
    caller, _ = call(
        profiler_plugin_manager, "profiler_before_mode", mode="m", run=None
    )
    assert log == ["a"]
    assert sorted((e.plugin, e.message) for e in caller.errors) == [
        ("bad-teardown", "ValueError: wrapper teardown failed"),
        ("bad-wrapper", "ValueError: wrapper setup failed"),
    ]


def test_async_implementations_are_awaited_and_their_failures_recorded(
    profiler_plugin_manager,
):
    log = []

    class AsyncOk:
        @hookimpl
        async def profiler_before_mode(self, mode):
            await trio.lowlevel.checkpoint()
            log.append("async-ok")

    class AsyncBad:
        @hookimpl
        async def profiler_before_mode(self, mode):
            await trio.lowlevel.checkpoint()
            raise KeyError("late")

    profiler_plugin_manager.register(AsyncOk(), "ok")
    profiler_plugin_manager.register(AsyncBad(), "bad")
    caller, _ = call(
        profiler_plugin_manager, "profiler_before_mode", mode="m", run=None
    )
    assert log == ["async-ok"]
    assert [(e.plugin, e.message) for e in caller.errors] == [
        ("bad", "KeyError: 'late'")
    ]


def test_firstresult_skips_a_failing_implementation(profiler_plugin_manager):
    class Fails:
        @hookimpl(tryfirst=True)
        def profiler_before_scenario(self, ctx):
            raise RuntimeError("fixture reset failed")

    class Replaces:
        @hookimpl
        def profiler_before_scenario(self, ctx):
            return Scenario(id="s", name="replaced", prompt="p")

    profiler_plugin_manager.register(Replaces(), "replaces")
    profiler_plugin_manager.register(Fails(), "fails")
    caller = HookCaller(profiler_plugin_manager)
    ctx = BeforeScenarioContext(
        scenario=Scenario(id="s", name="s", prompt="p"),
        mode="m",
        model="x",
        iteration=0,
        run=None,
    )
    result = trio.run(lambda: caller.first_result("profiler_before_scenario", ctx=ctx))
    assert result.name == "replaced"
    assert [e.plugin for e in caller.errors] == ["fails"]


@pytest.mark.parametrize("is_async", [False, True])
def test_fatal_call_names_the_plugin(profiler_plugin_manager, is_async):
    class Precondition:
        if is_async:

            @hookimpl
            async def profiler_before_run(self, ctx):
                raise RuntimeError("fixtures missing")
        else:

            @hookimpl
            def profiler_before_run(self, ctx):
                raise RuntimeError("fixtures missing")

    profiler_plugin_manager.register(Precondition(), "precondition")
    caller = HookCaller(profiler_plugin_manager)
    with pytest.raises(
        HookError,
        match="plugin 'precondition': profiler_before_run failed: fixtures missing",
    ):
        trio.run(lambda: caller.call_fatal("profiler_before_run", ctx=None))


def test_outside_an_isolated_call_pluggy_semantics_are_untouched(
    profiler_plugin_manager,
):
    profiler_plugin_manager.register(Named("b", [], fail=True), "b")
    with pytest.raises(RuntimeError, match="b broke"):
        profiler_plugin_manager.hook.profiler_before_mode(mode="m", run=None)


def test_call_hook_isolates_synchronous_hooks(profiler_plugin_manager):
    log = []
    profiler_plugin_manager.register(Named("a", log, fail=True), "a")
    profiler_plugin_manager.register(Named("b", log), "b")
    _, failures = profiler_plugin_manager.call_hook(
        "profiler_before_mode", mode="m", run=None
    )
    assert log == ["b", "a"]
    assert [(name, str(exc)) for name, exc in failures] == [("a", "a broke")]


def test_progress_is_synchronous_and_failures_recorded(profiler_plugin_manager):
    events = []

    class Progress:
        @hookimpl
        def profiler_progress(self, event):
            events.append(event)
            raise OSError("terminal gone")

    profiler_plugin_manager.register(Progress(), "progress")
    caller = HookCaller(profiler_plugin_manager)
    caller.call_sync("profiler_progress", event="e1")
    assert events == ["e1"]
    assert [(e.plugin, e.message) for e in caller.errors] == [
        ("progress", "OSError: terminal gone")
    ]


def test_isolation_leaves_pluggys_records_as_registered(profiler_plugin_manager):
    """Isolation goes through pluggy's public registration: each HookImpl's function is
    the registered object's."""
    named = Named("a", [])
    profiler_plugin_manager.register(named, "a")
    registered = profiler_plugin_manager.pm.get_plugin("a")
    for impl in profiler_plugin_manager.pm.hook.profiler_before_mode.get_hookimpls():
        assert impl.function is getattr(impl.plugin, impl.function.__name__)
    impl = next(
        i
        for i in profiler_plugin_manager.pm.hook.profiler_before_mode.get_hookimpls()
        if i.plugin_name == "a"
    )
    assert impl.plugin is registered and registered.plugin is named
    assert impl.argnames == (
        "mode",
    )  # read through functools.wraps: `self` is bound, `run` not taken


def test_callers_call_one_plugin_at_a_time_in_pluggys_order(profiler_plugin_manager):
    log = []
    profiler_plugin_manager.register(Named("a", log), "a")
    profiler_plugin_manager.register(Named("b", log, fail=True), "b")
    names = []
    for name, caller in profiler_plugin_manager.callers("profiler_before_mode"):
        names.append(name)
        if name == "b":
            with pytest.raises(RuntimeError, match="b broke"):
                caller(mode="m", run=None)
        else:
            caller(mode="m", run=None)
    assert names[:2] == ["b", "a"] and log == ["b", "a"]
