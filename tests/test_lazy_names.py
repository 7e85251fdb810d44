"""Each lazy package lists its public names once, in ``_LAZY`` (docs/architecture.md, Start-up).

Its ``__getattr__`` is built from that table, and its ``TYPE_CHECKING`` imports and
``__all__`` are written from it by ``python -m profiler_core._lazy_gen``: these tests fail
when the written block is stale, a name is listed twice, or a listed name does not load.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_core import _lazy_gen

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("package", _lazy_gen.PACKAGES)
def test_the_written_names_match_the_table(package):
    assert _lazy_gen.written(package) == _lazy_gen.render(package), (
        f"{_lazy_gen.init_file(package)}: stale; run python -m profiler_core._lazy_gen"
    )


@pytest.mark.parametrize("package", _lazy_gen.PACKAGES)
def test_each_name_is_listed_once_and_loads(package):
    module = importlib.import_module(package)
    listed = [name for names in module._LAZY.values() for name in names]
    eager = list(getattr(module, "_EAGER", ()))
    names = listed + eager
    assert sorted(names) == sorted(set(names)), f"{package}: a name listed twice"
    for name in eager:
        assert name in vars(module) or name == "__version__", f"{package}.{name}"
    for name in listed:
        assert getattr(module, name) is not None, f"{package}.{name}"
    assert set(module.__all__) == set(names)
    with pytest.raises(AttributeError, match=f"{package!r} has no attribute 'Nope'"):
        _ = module.Nope


def test_a_name_added_to_a_table_makes_the_block_stale(monkeypatch):
    """The check above can fail: one more name in ``_LAZY`` changes what is written."""
    model = importlib.import_module("profiler_core.model")
    table = {**model._LAZY, "session": (*model._LAZY["session"], "Extra")}
    monkeypatch.setattr(model, "_LAZY", table)
    rendered = _lazy_gen.render("profiler_core.model")
    assert rendered != _lazy_gen.written("profiler_core.model")
    assert '    "Extra",\n' in rendered and "        Extra,\n" in rendered


def test_the_writer_rewrites_a_stale_block(tmp_path):
    """``python -m profiler_core._lazy_gen`` puts back a block edited by hand (in a copy)."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "profiler_core", copy / "profiler_core")
    init = copy / "profiler_core" / "wire" / "__init__.py"
    original = init.read_text(encoding="utf-8")
    init.write_text(original.replace('    "api_of",\n]', "]"), encoding="utf-8")
    env = {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"}
    check = [sys.executable, "-m", "profiler_core._lazy_gen", "--check"]
    stale = subprocess.run(check, env=env, capture_output=True, text=True, timeout=60)
    assert stale.returncode == 1 and "wire/__init__.py: stale" in stale.stdout
    fix = [sys.executable, "-m", "profiler_core._lazy_gen"]
    subprocess.run(fix, env=env, check=True, capture_output=True, timeout=60)
    assert init.read_text(encoding="utf-8") == original
