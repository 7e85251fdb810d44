"""Plugin manager: built-ins, entry points, duplicates, misspelt hooks, list-plugins."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import types

import pytest
from click.testing import CliRunner

from profiler_core import DuplicateComponentError, UnknownComponentError, hookimpl
from profiler_core import hookspecs
from profiler_core.plugins import get_plugin_manager


class _Providers:
    def __init__(self, component_id):
        self.component_id = component_id

    @hookimpl
    def profiler_register_providers(self):
        cid = self.component_id

        class P:
            id = cid

            def __init__(self, **options):
                self.options = options

        return [P]


def test_builtins_are_registered_and_marked(profiler_plugin_manager):
    infos = {i.name: i for i in profiler_plugin_manager.plugin_infos()}
    assert infos["core.modes"].builtin is True
    assert infos["core.modes"].components == {"mode_resolvers": ["config"]}


def test_registry_creates_components_with_options(profiler_plugin_manager):
    profiler_plugin_manager.register(_Providers("mine"), "mine")
    provider = profiler_plugin_manager.registry.create("providers", "mine", {"x": 1})
    assert provider.options == {"x": 1}


def test_unknown_component_suggests_the_nearest(profiler_plugin_manager):
    profiler_plugin_manager.register(_Providers("my-agent"), "mine")
    with pytest.raises(UnknownComponentError, match="did you mean 'my-agent'"):
        profiler_plugin_manager.registry.get("providers", "my-agnet")


def test_duplicate_ids_name_both_plugins(profiler_plugin_manager):
    profiler_plugin_manager.register(_Providers("dup"), "first")
    profiler_plugin_manager.register(_Providers("dup"), "second")
    with pytest.raises(DuplicateComponentError) as info:
        profiler_plugin_manager.registry
    assert "'first'" in str(info.value) and "'second'" in str(info.value)


def test_misspelt_hook_is_a_loud_error_naming_it(profiler_plugin_manager, capsys):
    class Typo:
        @hookimpl
        def profiler_befor_run(self, ctx):
            pass

    info = profiler_plugin_manager.register(Typo(), "typo")
    assert "profiler_befor_run" in info.error
    assert "did you mean 'profiler_before_run'" in info.error
    assert "typo" in capsys.readouterr().err
    # the broken plugin is not half-registered
    assert profiler_plugin_manager.pm.get_plugin("typo") is None


def test_hook_impl_may_take_a_subset_of_arguments(profiler_plugin_manager):
    seen = []

    class Partial:
        @hookimpl
        def profiler_before_mode(self, mode):
            seen.append(mode)

    profiler_plugin_manager.register(Partial(), "partial")
    for _name, call in profiler_plugin_manager.hookimpls("profiler_before_mode"):
        call(mode="m", run=None)
    assert seen == ["m"]


class _FakeEntryPoint:
    def __init__(self, name, value, loader, dist_name="agent-profiler-x", version="1.2.0"):
        self.name, self.value, self._loader = name, value, loader
        self.dist = types.SimpleNamespace(metadata={"Name": dist_name}, version=version)

    def load(self):
        return self._loader()


def _broken():
    raise ModuleNotFoundError("No module named 'requests'")


def test_failing_entry_point_is_reported_and_others_still_load(monkeypatch, capsys):
    good = types.ModuleType("good_plugin")

    @hookimpl
    def profiler_register_providers():
        class Agent:
            id = "good-agent"

        return [Agent]

    good.profiler_register_providers = profiler_register_providers
    eps = [_FakeEntryPoint("broken", "broken.plugin", _broken, "broken-plugin", "0.0.1"), _FakeEntryPoint("good", "good_plugin", lambda: good)]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps)
    manager = get_plugin_manager()
    infos = {i.name: i for i in manager.plugin_infos()}
    assert infos["broken"].error == "ModuleNotFoundError: No module named 'requests'"
    assert infos["broken"].distribution == "broken-plugin"
    assert infos["good"].components == {"providers": ["good-agent"]}
    assert "broken" in capsys.readouterr().err


def test_profiler_load_plugins_limits_entry_points(monkeypatch):
    eps = [_FakeEntryPoint("broken", "broken.plugin", _broken)]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps)
    monkeypatch.setenv("PROFILER_LOAD_PLUGINS", "")
    assert "broken" not in get_plugin_manager().plugins
    monkeypatch.setenv("PROFILER_LOAD_PLUGINS", "broken,other")
    assert "broken" in get_plugin_manager().plugins


def test_list_plugins_json_has_every_key(monkeypatch):
    from profiler_core import cli as cli_module

    eps = [_FakeEntryPoint("broken", "broken.plugin", _broken, "broken-plugin", "0.0.1")]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps)
    result = CliRunner().invoke(cli_module.cli, ["list-plugins", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    keys = {"name", "distribution", "version", "module", "builtin", "hooks", "components", "error"}
    assert all(set(item) == keys for item in data)
    assert [d["name"] for d in data] == sorted(d["name"] for d in data)
    broken = next(d for d in data if d["name"] == "broken")
    assert broken["error"].startswith("ModuleNotFoundError")
    human = CliRunner().invoke(cli_module.cli, ["list-plugins"])
    assert human.exit_code == 0
    assert "broken-plugin" in human.stdout and "ERROR ModuleNotFoundError" in human.stdout
    assert human.stdout.splitlines()[0].split() == ["NAME", "VERSION", "DISTRIBUTION", "PROVIDES"]


def test_every_hookspec_is_documented():
    names = [n for n in dir(hookspecs) if n.startswith("profiler_")]
    assert len(names) == 14
    for name in names:
        doc = getattr(hookspecs, name).__doc__ or ""
        assert len(doc.strip().splitlines()) >= 3, f"{name} needs a real docstring"


def test_import_profiler_core_is_cheap():
    code = (
        "import sys, profiler_core; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('numpy','matplotlib','scipy','trio','profiler_builtin_analyzers','profiler_eval_ghx')]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_errors_become_one_line_without_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core", "validate", str(tmp_path / "missing.yaml")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert "missing.yaml: profile not found" in result.stderr
