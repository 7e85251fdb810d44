"""A plugin's attributes are scanned once (issue 44): pluggy's registration reads an
IsolatedPlugin's hooks from that scan, with the answers pluggy's own lookup gives."""

from __future__ import annotations

import pluggy

from profiler_core import hookimpl
from profiler_core.plugins.isolation import (
    IsolatedPlugin,
    ScannedPluginManager,
    scan_hook_impls,
)
from profiler_core.plugins.manager import PluginManager
from profiler_core.plugins.markers import PROJECT_NAME


class _Plugin:
    """Hooks of each kind a plugin may have: plain, wrapper, old-style hookwrapper,
    registration; and attributes that are not hooks."""

    not_a_hook = 3

    @hookimpl
    def profiler_before_run(self, ctx):
        return None

    @hookimpl(wrapper=True)
    def profiler_before_mode(self, mode, run):
        return (yield)

    @hookimpl(hookwrapper=True)
    def profiler_before_scenario(self, ctx):
        yield

    @hookimpl
    def profiler_register_providers(self, register):
        return None

    def helper(self):
        return None


def test_an_isolated_plugins_options_are_pluggys_own():
    plain = pluggy.PluginManager(PROJECT_NAME)
    scanned = ScannedPluginManager(PROJECT_NAME)
    plugin = _Plugin()
    isolated = IsolatedPlugin(plugin, "p", scan_hook_impls(plain, plugin))
    names = dir(isolated)
    assert {n for n in names if scanned.parse_hookimpl_opts(isolated, n)} == {
        "profiler_before_run",
        "profiler_before_mode",
        "profiler_before_scenario",
        "profiler_register_providers",
    }
    for name in names:
        assert scanned.parse_hookimpl_opts(isolated, name) == plain.parse_hookimpl_opts(
            isolated, name
        ), name


def test_registering_asks_pluggys_lookup_only_of_the_plugin_itself(monkeypatch):
    asked: list[str] = []
    parse = pluggy.PluginManager.parse_hookimpl_opts

    def counting(self, plugin, name):
        asked.append(type(plugin).__name__)
        return parse(self, plugin, name)

    monkeypatch.setattr(pluggy.PluginManager, "parse_hookimpl_opts", counting)
    manager = PluginManager()
    info = manager.register(_Plugin(), "p")
    assert info.load_error is None
    assert info.hooks == [
        "profiler_before_mode",
        "profiler_before_run",
        "profiler_before_scenario",
        "profiler_register_providers",
    ]
    assert set(asked) == {
        "_Plugin"
    }  # the scan; the IsolatedPlugin's hooks came from it
    assert len(manager.hook.profiler_before_run.get_hookimpls()) == 1


class _DictPlugin(dict):
    """A plugin deriving from a built-in type, with a hook of its own."""

    @hookimpl
    def profiler_before_run(self, ctx):
        return None


def _namespace_plugin():
    import types

    return types.SimpleNamespace(
        profiler_register_providers=hookimpl(lambda register: None), other=1
    )


def _full_scan(pm, plugin):
    """scan_hook_impls without its shortcut: pluggy asked of every attribute."""
    found = {}
    for attr in dir(plugin):
        method = getattr(plugin, attr)
        opts = pm.parse_hookimpl_opts(plugin, attr)
        if opts is not None and callable(method):
            found[attr] = opts
    return found


def test_the_scan_skips_only_what_built_in_types_define(monkeypatch):
    pm = pluggy.PluginManager(PROJECT_NAME)
    for plugin in (_Plugin(), _DictPlugin(), _namespace_plugin()):
        expected = _full_scan(pm, plugin)
        asked: list[str] = []
        parse = pluggy.PluginManager.parse_hookimpl_opts

        def counting(self, plugin, name, asked=asked, parse=parse):
            asked.append(name)
            return parse(self, plugin, name)

        with monkeypatch.context() as patch:
            patch.setattr(pluggy.PluginManager, "parse_hookimpl_opts", counting)
            scanned = scan_hook_impls(pm, plugin)
        assert {name: opts for name, (_, opts) in scanned.items()} == expected
        assert expected  # each has a hook
        # object's and dict's own attributes were not looked up
        assert "__init__" not in asked and "__eq__" not in asked, type(plugin)
