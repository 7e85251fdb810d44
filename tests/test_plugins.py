"""Plugin manager: built-ins, entry points, duplicates, misspelt hooks, list-plugins."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import types

import pytest
from click.testing import CliRunner

from profiler_core import (
    DuplicateComponentError,
    PluginLoadError,
    UnknownComponentError,
    hookimpl,
)
from profiler_core.plugins import hookspecs
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.testing import FakeProvider


class _Providers:
    def __init__(self, component_id):
        self.component_id = component_id

    @hookimpl
    def profiler_register_providers(self):
        cid = self.component_id

        class P(FakeProvider):
            id = cid

            def __init__(self, **options):
                super().__init__(provider_id=cid)
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
    registry = (
        profiler_plugin_manager.registry
    )  # still usable: the others are unaffected
    with pytest.raises(DuplicateComponentError) as info:
        registry.get("providers", "dup")
    assert "'first'" in str(info.value) and "'second'" in str(info.value)
    assert "dup" not in registry.ids("providers") and "simulated" in registry.ids(
        "providers"
    )
    infos = {i.name: i for i in profiler_plugin_manager.plugin_infos()}
    assert "registered twice" in infos["second"].error


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
    _, failures = profiler_plugin_manager.call_hook(
        "profiler_before_mode", mode="m", run=None
    )
    assert seen == ["m"] and failures == []


class _FakeEntryPoint:
    def __init__(
        self, name, value, loader, dist_name="agent-profiler-x", version="1.2.0"
    ):
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
        class Agent(FakeProvider):
            id = "good-agent"

        return [Agent]

    good.profiler_register_providers = profiler_register_providers
    eps = [
        _FakeEntryPoint("broken", "broken.plugin", _broken, "broken-plugin", "0.0.1"),
        _FakeEntryPoint("good", "good_plugin", lambda: good),
    ]
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

    eps = [
        _FakeEntryPoint("broken", "broken.plugin", _broken, "broken-plugin", "0.0.1")
    ]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps)
    result = CliRunner().invoke(cli_module.cli, ["list-plugins", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    keys = {
        "name",
        "distribution",
        "version",
        "module",
        "builtin",
        "hooks",
        "components",
        "error",
    }
    assert all(set(item) == keys for item in data)
    assert [d["name"] for d in data] == sorted(d["name"] for d in data)
    broken = next(d for d in data if d["name"] == "broken")
    assert broken["error"].startswith("ModuleNotFoundError")
    human = CliRunner().invoke(cli_module.cli, ["list-plugins"])
    assert human.exit_code == 0
    assert (
        "broken-plugin" in human.stdout and "ERROR ModuleNotFoundError" in human.stdout
    )
    assert human.stdout.splitlines()[0].split() == [
        "NAME",
        "VERSION",
        "DISTRIBUTION",
        "PROVIDES",
    ]


def test_every_hookspec_is_documented():
    names = [n for n in dir(hookspecs) if n.startswith("profiler_")]
    assert len(names) == 18  # profiler_report_sections: docs/reports.md
    for name in names:
        doc = getattr(hookspecs, name).__doc__ or ""
        assert len(doc.strip().splitlines()) >= 3, f"{name} needs a real docstring"


def test_import_profiler_core_is_cheap():
    code = (
        "import sys, profiler_core; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('numpy','matplotlib','scipy','trio','ray','profiler_builtin_analyzers','profiler_eval_ghx')]; "
        "print(','.join(bad))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


def test_errors_become_one_line_without_traceback(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "profiler_core",
            "validate",
            str(tmp_path / "missing.yaml"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert "missing.yaml: profile not found" in result.stderr


# -- the registry is built plugin by plugin, each component checked against its contract --


class _RaisingRegistration:
    @hookimpl
    def profiler_register_scorers(self):
        raise RuntimeError("cannot read my config")


def test_a_raising_registration_hook_marks_only_its_plugin(profiler_plugin_manager):
    profiler_plugin_manager.register(_RaisingRegistration(), "raiser")
    profiler_plugin_manager.register(_Providers("after-raiser"), "later")
    infos = {i.name: i for i in profiler_plugin_manager.plugin_infos()}
    assert (
        infos["raiser"].error
        == "profiler_register_scorers failed: RuntimeError: cannot read my config"
    )
    assert infos["raiser"].to_dict()["error"] == infos["raiser"].error
    # core's collectors and scorers, and the plugin registered after it, are unaffected
    assert infos["later"].components == {"providers": ["after-raiser"]}
    assert infos["core.collectors"].components["collectors"] == [
        "token",
        "latency",
        "cost",
        "tool_calls",
    ]
    assert infos["core.scorers.checks"].components == {"scorers": ["checks"]}
    assert infos["core.scorers.checks"].error is None


class _HalfProvider:
    id = "half"

    def init(self, config):
        pass


def test_a_component_missing_methods_is_refused_naming_plugin_component_and_methods(
    profiler_plugin_manager,
):
    class Half:
        @hookimpl
        def profiler_register_providers(self):
            return [_HalfProvider, FakeProvider]

    profiler_plugin_manager.register(Half(), "half-plugin")
    infos = {i.name: i for i in profiler_plugin_manager.plugin_infos()}
    expected = (
        "provider 'half' of plugin 'half-plugin' is refused: "
        "missing create_session, prompt, export_session, destroy_session, shutdown"
    )
    assert infos["half-plugin"].error == expected
    assert infos["half-plugin"].components == {
        "providers": ["fake"]
    }  # the complete one still registers
    registry = profiler_plugin_manager.registry
    assert "half" not in registry.ids("providers")
    with pytest.raises(PluginLoadError, match="missing create_session"):
        registry.create("providers", "half")


def test_register_callback_gives_an_id_without_building_the_component(
    profiler_plugin_manager,
):
    built = []

    def make_provider(**options):
        built.append(options)
        return FakeProvider(provider_id="by-callback")

    def make_nothing(**options):
        return object()

    class ByCallback:
        @hookimpl
        def profiler_register_providers(self, register):
            register(make_provider, id="by-callback")
            register(make_nothing, id="not-a-provider")

    profiler_plugin_manager.register(ByCallback(), "by-callback")
    registry = profiler_plugin_manager.registry
    assert {"by-callback", "not-a-provider"} <= set(registry.ids("providers"))
    assert built == []  # the id was learnt without constructing anything
    assert registry.create("providers", "by-callback", {"x": 1}).id == "by-callback"
    assert built == [{"x": 1}]
    # what a plain function builds is checked when it is built (profiler validate), not mid-run
    with pytest.raises(
        PluginLoadError,
        match="'not-a-provider' of plugin 'by-callback': the built object is missing init",
    ):
        registry.create("providers", "not-a-provider")


def test_a_factory_without_an_id_is_refused_with_a_hint(profiler_plugin_manager):
    class NoId:
        @hookimpl
        def profiler_register_scorers(self):
            return [lambda **options: None]

    profiler_plugin_manager.register(NoId(), "no-id")
    error = {i.name: i for i in profiler_plugin_manager.plugin_infos()}["no-id"].error
    assert "has no string `id`" in error and "register(factory, id=...)" in error


def test_list_plugins_shows_a_refused_component_on_its_plugin_row(monkeypatch):
    from profiler_core import cli as cli_module

    class Half:
        @hookimpl
        def profiler_register_providers(self):
            return [_HalfProvider]

    eps = [
        _FakeEntryPoint(
            "half", "half_plugin", lambda: Half(), "agent-profiler-half", "0.3.0"
        )
    ]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps)
    human = CliRunner().invoke(cli_module.cli, ["list-plugins"])
    assert human.exit_code == 0, human.output
    row = next(line for line in human.stdout.splitlines() if line.startswith("half "))
    assert (
        "agent-profiler-half" in row
        and "ERROR provider 'half' of plugin 'half' is refused: missing create_session"
        in row
    )
    assert any(
        line.startswith("core.modes (builtin)") and "mode_resolvers: config" in line
        for line in human.stdout.splitlines()
    )


def test_provides_lists_components_then_the_other_hooks():
    class Both:
        @hookimpl
        def profiler_register_scorers(self):
            return []

        @hookimpl
        def profiler_after_scenario(self, ctx):
            pass

        @hookimpl
        def profiler_before_run(self, ctx):
            pass

    class HooksOnly:
        @hookimpl
        def profiler_progress(self, event):
            pass

    manager = get_plugin_manager(
        entrypoints=False, plugins=[("both", Both()), ("hooks-only", HooksOnly())]
    )
    infos = {info.name: info for info in manager.plugin_infos()}
    assert infos["core.modes"].provides() == "mode_resolvers: config"
    assert (
        infos["both"].provides() == "hooks: after_scenario, before_run"
    )  # an empty registration shows no contract
    assert infos["hooks-only"].provides() == "hooks: progress"
    eval_row = get_plugin_manager().plugin_infos()
    ghx = next(info for info in eval_row if info.name == "eval_ghx").provides()
    assert ghx.startswith(
        "collectors: ghx; mode_resolvers: eval; scenario_formats: ghx; scorers: checkpoint; hooks: "
    )
    assert "before_run, before_scenario" in ghx


def test_a_third_party_import_format_registers_through_the_hook(
    profiler_plugin_manager, tmp_path
):
    from profiler_core.importers import check_format, formats, load_sessions

    path = tmp_path / "spans.json"
    path.write_text(
        '{"sessionId": "otel-1", "events": [], "turns": [], "summary": '
        '{"totalTurns": 0, "totalToolCalls": 0, "totalTokens": {"input": 3, '
        '"output": 4}, "totalDuration": 12}}'
    )

    class OtelImporter:
        """Stands in for an OpenTelemetry GenAI span export reader: reuses the trace reader."""

        id = "otel-genai"

        def load(self, path):
            from profiler_core.importers.trace import load

            return load(path)

    class OtelPlugin:
        @hookimpl
        def profiler_register_importers(self):
            return [OtelImporter]

    profiler_plugin_manager.register(OtelPlugin(), "otel")
    registry = profiler_plugin_manager.registry
    assert formats(registry) == (
        "anthropic",
        "atif",
        "claude-code",
        "codex",
        "openai",
        "opencode",
        "otel-genai",
        "trace",
    )
    assert check_format("otel-genai", registry) == "otel-genai"
    (session,) = load_sessions("otel-genai", path, registry)
    assert (
        session.result.metrics.tokens.output == 4
        and session.trace.session_id == "otel-1"
    )
    infos = {i.name: i for i in profiler_plugin_manager.plugin_infos()}
    assert infos["otel"].components == {"importers": ["otel-genai"]}
    assert (
        infos["core.importers"].builtin
        and len(infos["core.importers"].components["importers"]) == 7
    )  # openai, anthropic, claude-code, opencode, trace, codex, atif
    with pytest.raises(Exception, match="unknown transcript format 'otel-genia'"):
        check_format("otel-genia", registry)


def test_validate_reports_a_refused_provider_before_anything_runs(
    profiler_plugin_manager, tmp_path
):
    from profiler_core.config.loader import load_profile
    from profiler_core.runner import build_components

    class Half:
        @hookimpl
        def profiler_register_providers(self):
            return [_HalfProvider]

    profiler_plugin_manager.register(Half(), "half-plugin")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s1.json").write_text(
        '{"id": "s1", "name": "S1", "prompt": "do it"}'
    )
    (tmp_path / "profile.yaml").write_text(
        "modes: {plain: {}}\nscenarios: {path: scenarios}\nprovider: {id: "
        "half}\nscorer: {id: checks}\n"
    )
    _, problems = build_components(
        load_profile(tmp_path / "profile.yaml"), profiler_plugin_manager
    )
    assert problems == [
        f"{tmp_path / 'profile.yaml'}: provider.id: provider 'half' of plugin "
        "'half-plugin' is refused: "
        "missing create_session, prompt, export_session, destroy_session, shutdown"
    ]
