"""An async implementation of the firstresult ``before_scenario`` cannot silence the
plugins after it (issue 31.6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import trio
import trio.lowlevel

from profiler_core import Scenario, hookimpl
from profiler_core.model import BeforeScenarioContext
from profiler_core.runner.hooks import HookCaller
from test_plugin_wheel import _distribution, _wheel

CTX = BeforeScenarioContext(
    scenario=Scenario(id="s", name="s", prompt="p"),
    mode="m",
    model="x",
    iteration=0,
    run=None,
)


class Plugin:
    """A before_scenario implementation, sync or async, that logs its call and returns
    ``answer``."""

    def __init__(self, name, log, answer=None, fail=False):
        self.name, self.log, self.answer, self.fail = name, log, answer, fail

    def _result(self):
        self.log.append(self.name)
        if self.fail:
            raise RuntimeError(f"{self.name} broke")
        return (
            None
            if self.answer is None
            else Scenario(id="s", name=self.answer, prompt="p")
        )


class Sync(Plugin):
    @hookimpl
    def profiler_before_scenario(self, ctx):
        return self._result()


class Async(Plugin):
    @hookimpl
    async def profiler_before_scenario(self, ctx):
        await trio.lowlevel.checkpoint()
        return self._result()


def first(manager):
    caller = HookCaller(manager)
    return caller, trio.run(
        lambda: caller.first_result("profiler_before_scenario", ctx=CTX)
    )


def test_an_async_none_passes_to_the_next_implementation(profiler_plugin_manager):
    log = []
    # Registration order a, b, c, d: pluggy calls d, c, b, a.
    profiler_plugin_manager.register(Sync("a", log, answer="from-a"), "a")
    profiler_plugin_manager.register(Sync("b", log), "b")
    profiler_plugin_manager.register(Async("c", log), "c")
    profiler_plugin_manager.register(Async("d", log), "d")
    caller, result = first(profiler_plugin_manager)
    assert log == ["d", "c", "b", "a"]  # each called once, in pluggy's order
    assert result.name == "from-a" and caller.errors == []


def test_an_async_answer_stops_the_search(profiler_plugin_manager):
    log = []
    profiler_plugin_manager.register(Sync("a", log, answer="from-a"), "a")
    profiler_plugin_manager.register(Async("b", log, answer="from-b"), "b")
    profiler_plugin_manager.register(Sync("c", log), "c")
    _, result = first(profiler_plugin_manager)
    assert log == ["c", "b"] and result.name == "from-b"


def test_a_failing_async_implementation_is_recorded_and_the_next_still_answers(
    profiler_plugin_manager,
):
    log = []
    profiler_plugin_manager.register(Sync("a", log, answer="from-a"), "a")
    profiler_plugin_manager.register(Async("b", log, fail=True), "b")
    caller, result = first(profiler_plugin_manager)
    assert log == ["b", "a"] and result.name == "from-a"
    assert [(e.plugin, e.message) for e in caller.errors] == [
        ("b", "RuntimeError: b broke")
    ]


def test_all_none_gives_none(profiler_plugin_manager):
    log = []
    profiler_plugin_manager.register(Async("a", log), "a")
    profiler_plugin_manager.register(Async("b", log), "b")
    assert first(profiler_plugin_manager)[1] is None and log == ["b", "a"]


COUNTING_PLUGIN = """
import os

from profiler_core import hookimpl


@hookimpl
def profiler_before_scenario(ctx):
    with open(os.environ["COUNT_FILE"], "a") as out:
        out.write(__name__ + "\\n")
"""


@pytest.mark.slow
def test_plugins_on_both_sides_of_eval_ghx_in_entry_point_order_are_called(tmp_path):
    """``advplug`` sorts before ``eval_ghx`` (called after it), ``zz_advplug`` after
    (called before it)."""
    site = tmp_path / "site"
    for name in ("advplug", "zz_advplug"):
        source = _distribution(
            tmp_path,
            f"agent-profiler-{name.replace('_', '-')}",
            "0.1.0",
            f"agent_profiler_{name}",
            COUNTING_PLUGIN,
        )
        with zipfile.ZipFile(_wheel(source, tmp_path / "wheels")) as wheel:
            wheel.extractall(
                site
            )  # an unpacked wheel is an installed distribution: its entry point is real
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        json.dumps(
            {
                "modes": {"a": {}},
                "scenarios": {
                    "path": str(
                        Path(__file__).resolve().parent.parent
                        / "examples"
                        / "demo"
                        / "scenarios"
                    )
                },
                "provider": {
                    "id": "simulated",
                    "model": "sim-small",
                    "options": {"seed": 1, "time_scale": 0},
                },
                "execution": {"repetitions": 2, "warmup": False},
                "analyzers": [],
                "output": {
                    "results_dir": str(tmp_path / "results"),
                    "reports_dir": str(tmp_path / "reports"),
                },
            }
        )
    )
    counts = tmp_path / "calls.txt"
    env = {k: v for k, v in os.environ.items() if k != "PROFILER_LOAD_PLUGINS"}
    env.update(PYTHONPATH=str(site), COUNT_FILE=str(counts))
    listed = subprocess.run(
        [str(Path(sys.executable).with_name("profiler")), "list-plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    names = [p["name"] for p in json.loads(listed.stdout)]
    assert {"advplug", "eval_ghx", "zz_advplug"} <= set(names), listed.stderr
    run = subprocess.run(
        [
            str(Path(sys.executable).with_name("profiler")),
            "run",
            str(profile),
            "--no-report",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    (results,) = (tmp_path / "results").glob("*.jsonl")
    n = len(results.read_text().splitlines())
    calls = counts.read_text().splitlines()
    assert n > 0
    assert calls.count("agent_profiler_zz_advplug") == n
    assert (
        calls.count("agent_profiler_advplug") == n
    )  # 0 before the fix: eval_ghx's coroutine ended the search
