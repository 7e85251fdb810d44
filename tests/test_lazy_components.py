"""Components registered by name (``register("package.module:Class", id=...)``): known
by id, imported on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

from profiler_core import PluginLoadError, hookimpl
from profiler_core.plugins.builtins import BUILTIN_COMPONENTS
from profiler_core.plugins.manager import builtin_plugin_name, get_plugin_manager

AGENT_MODULE = """
IMPORTED = True

class Agent:
    id = "ignored-the-registered-id-wins"
    def __init__(self, **options):
        self.options = options
    def init(self, config): ...
    def create_session(self, params): ...
    def prompt(self, handle, text, timeout_ms=None): ...
    def export_session(self, handle): ...
    def destroy_session(self, handle): ...
    def shutdown(self): ...

class Broken:
    id = "broken"
    def init(self, config): ...
"""


class _ByName:
    def __init__(self, *entries):
        self.entries = entries

    @hookimpl
    def profiler_register_providers(self, register):
        for target, component_id in self.entries:
            register(target, id=component_id)


@pytest.fixture
def lazy_module(tmp_path, monkeypatch):
    (tmp_path / "lazy_agent_mod.py").write_text(AGENT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("lazy_agent_mod", None)
    yield "lazy_agent_mod"
    sys.modules.pop("lazy_agent_mod", None)


def test_listed_by_id_without_importing_then_built_on_first_use(lazy_module):
    manager = get_plugin_manager(
        entrypoints=False,
        plugins=[("lazy", _ByName((f"{lazy_module}:Agent", "lazy-agent")))],
    )
    infos = {i.name: i for i in manager.plugin_infos()}
    assert (
        infos["lazy"].components == {"providers": ["lazy-agent"]}
        and infos["lazy"].error is None
    )
    assert "lazy-agent" in manager.registry.ids("providers")
    assert lazy_module not in sys.modules  # listed, not imported
    agent = manager.registry.create("providers", "lazy-agent", {"x": 1})
    assert agent.options == {"x": 1} and lazy_module in sys.modules
    assert (
        manager.registry.get("providers", "lazy-agent").factory
        is sys.modules[lazy_module].Agent
    )


def test_a_broken_name_is_one_error_naming_component_plugin_and_target(lazy_module):
    manager = get_plugin_manager(
        entrypoints=False,
        plugins=[
            (
                "lazy",
                _ByName(
                    ("no_such_module_anywhere:Agent", "ghost"),
                    (f"{lazy_module}:Broken", "half"),
                ),
            )
        ],
    )
    with pytest.raises(
        PluginLoadError,
        match=r"provider 'ghost' of plugin 'lazy' cannot be loaded from "
        r"'no_such_module_anywhere:Agent': ModuleNotFoundError",
    ):
        manager.registry.create("providers", "ghost")
    with pytest.raises(
        PluginLoadError,
        match=r"provider 'half' of plugin 'lazy' is refused: missing .*prompt",
    ):
        manager.registry.create("providers", "half")


@pytest.mark.parametrize(
    ("target", "component_id"),
    [("lazy_agent_mod.Agent", "x"), ("lazy_agent_mod:Agent", None)],
)
def test_a_name_needs_module_attribute_and_an_id(
    lazy_module, target, component_id, capsys
):
    manager = get_plugin_manager(
        entrypoints=False, plugins=[("lazy", _ByName((target, component_id)))]
    )
    infos = {i.name: i for i in manager.plugin_infos()}
    assert "needs the form 'package.module:attribute' and an id" in infos["lazy"].error
    assert "x" not in manager.registry.ids("providers")


def test_built_in_analyzers_and_eval_components_are_registered_by_name_with_their_own_ids():
    from profiler_builtin_analyzers.plugin import ANALYZERS_BY_NAME

    manager = get_plugin_manager()
    for name in ANALYZERS_BY_NAME:
        info = manager.registry.get("analyzers", name)
        assert isinstance(info.source, str)
        assert info.factory.name == name  # the registered id is the class's own name
    for contract, component_id in (("scorers", "checkpoint"), ("collectors", "ghx"),
                                   ("mode_resolvers", "eval"), ("scenario_formats", "ghx")):  # fmt: skip
        info = manager.registry.get(contract, component_id)
        assert isinstance(info.source, str) and info.factory.id == component_id


def test_built_in_plugins_implement_registration_hooks_only():
    # They are registered after the entry points, when first needed: that changes no hook's call
    # order only as long as no built-in implements a lifecycle or command hook.
    import importlib

    from profiler_core.plugins.manager import BUILTIN_PLUGINS, CONTRACTS, PluginManager

    registration_hooks = {c.hook for c in CONTRACTS.values()}
    manager = PluginManager()
    manager.load_builtins()
    for name in BUILTIN_PLUGINS:
        info = manager.plugins[builtin_plugin_name(name)]
        assert info.hooks and set(info.hooks) <= registration_hooks, (name, info.hooks)
    # A module of the table is registered through its table entry, never itself: a hook
    # implemented in it would silently never be called.
    for name in BUILTIN_COMPONENTS:
        module = importlib.import_module(name)
        hooks = [
            attr
            for attr in dir(module)
            if manager.pm.parse_hookimpl_opts(module, attr) is not None
        ]
        assert hooks == [], (
            f"{name} implements {hooks}: add its components to plugins/builtins.py instead"
        )


@pytest.mark.parametrize("module", sorted(BUILTIN_COMPONENTS))
def test_the_table_of_built_ins_names_each_class_by_its_own_id(module):
    """``plugins/builtins.py`` registers by name: each class exists, carries that id and
    keeps its contract."""
    import importlib

    from profiler_core.plugins.contracts import CONTRACTS, missing_methods

    contract, components = BUILTIN_COMPONENTS[module]
    loaded = importlib.import_module(module)
    for component_id, attribute in components:
        factory = getattr(loaded, attribute)
        assert getattr(factory, CONTRACTS[contract].id_attr) == component_id
        assert missing_methods(factory, contract) == []


def test_listing_the_plugins_imports_no_built_in_component():
    code = (
        "import sys\n"
        "from profiler_core.plugins.manager import get_plugin_manager\n"
        "from profiler_core.plugins.builtins import BUILTIN_COMPONENTS\n"
        "infos = get_plugin_manager(entrypoints=False).plugin_infos()\n"
        "assert len(infos) == len(BUILTIN_COMPONENTS) + 1, [i.name for i in infos]\n"
        "print(sorted(m for m in BUILTIN_COMPONENTS if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_built_ins_come_first_and_load_when_the_plugin_list_is_asked_for():
    manager = get_plugin_manager(entrypoints=False, plugins=[("extra", _ByName())])
    assert [name for name, _ in manager.pm.list_name_plugin()] == [
        "extra"
    ]  # no built-in registered yet
    names = list(manager.plugins)
    assert (
        names[-1] == "extra"
        and all(n.startswith("core.") for n in names[:-1])
        and len(names) > 5
    )
