"""The cached entry-point scan (plugins/discovery.py): same answer as
importlib.metadata, always fresh.

Each case installs or removes a distribution the way pip leaves it on disk (a
``*.dist-info`` folder with ``METADATA`` and ``entry_points.txt`` in a folder
on ``sys.path``) and asks again in the same process: the change must be seen
at once, never hidden by the cache.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_core.plugins import discovery
from profiler_core.util.version import installed_version

GROUP = "agent_profiler_test_discovery"
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty site folder first on sys.path, and a cache folder of the test's own."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(discovery.CACHE_ENV, raising=False)
    monkeypatch.syspath_prepend(str(folder))
    return folder


def _install(site: Path, dist: str, version: str, points: dict[str, str]) -> Path:
    meta = site / f"{dist}-{version}.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n"
    )
    lines = "".join(f"{name} = {value}\n" for name, value in points.items())
    (meta / "entry_points.txt").write_text(f"[{GROUP}]\n{lines}")
    return meta


def _seen(group: str = GROUP) -> list[tuple[str, str, str | None, str | None]]:
    return sorted(
        (
            ep.name,
            ep.value,
            ep.dist.metadata["Name"] if ep.dist else None,
            ep.dist.version if ep.dist else None,
        )
        for ep in discovery.entry_points(group)
    )


def _truth(group: str = GROUP) -> list[tuple[str, str, str | None, str | None]]:
    return sorted(
        (
            ep.name,
            ep.value,
            ep.dist.metadata["Name"] if ep.dist else None,
            ep.dist.version if ep.dist else None,
        )
        for ep in importlib.metadata.entry_points(group=group)
    )


def test_installed_plugins_match_importlib_metadata(site: Path) -> None:
    cold = _seen("agent_profiler")
    assert discovery.cache_file("agent_profiler").is_file()
    warm = _seen("agent_profiler")
    assert cold == warm == _truth("agent_profiler")
    assert any(name == "builtin_analyzers" for name, *_ in warm)


def test_install_upgrade_and_uninstall_are_seen_at_once(site: Path) -> None:
    assert _seen() == []
    first = _install(site, "first_plugin", "1.0", {"first": "first_mod:plugin"})
    assert _seen() == [("first", "first_mod:plugin", "first_plugin", "1.0")]
    assert _seen() == _truth()  # a warm read, after the cache was written
    _install(site, "second_plugin", "0.2", {"second": "second_mod"})
    assert [name for name, *_ in _seen()] == ["first", "second"]
    # An upgrade: pip removes the old folder and writes one with the new version.
    shutil.rmtree(first)
    _install(site, "first_plugin", "1.1", {"first": "first_mod:plugin2"})
    assert _seen()[0] == ("first", "first_mod:plugin2", "first_plugin", "1.1")
    shutil.rmtree(site / "second_plugin-0.2.dist-info")
    assert (
        _seen() == _truth() == [("first", "first_mod:plugin2", "first_plugin", "1.1")]
    )


def test_entry_points_file_edited_in_place_is_seen(site: Path) -> None:
    meta = _install(site, "edited", "1.0", {"a": "mod_a"})
    assert [name for name, *_ in _seen()] == ["a"]
    (meta / "entry_points.txt").write_text(f"[{GROUP}]\na = mod_a\nb = mod_b\n")
    assert [name for name, *_ in _seen()] == ["a", "b"]


def test_a_damaged_cache_file_is_scanned_again(site: Path) -> None:
    _install(site, "one", "1.0", {"one": "one_mod"})
    _seen()
    path = discovery.cache_file(GROUP)
    for damage in ("{not json", json.dumps({"format": 0}), "[]"):
        path.write_text(damage)
        assert _seen() == _truth()
        assert json.loads(path.read_text())["format"] == discovery.CACHE_FORMAT


def test_the_cache_can_be_turned_off(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(discovery.CACHE_ENV, "0")
    _install(site, "one", "1.0", {"one": "one_mod"})
    assert _seen() == _truth()
    assert not discovery.cache_file(GROUP).exists()
    # Off means importlib.metadata's answer itself: a test that replaces it is still obeyed.
    fake = [importlib.metadata.EntryPoint("fake", "fake_mod", GROUP)]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: fake)
    assert discovery.entry_points(GROUP) == fake


def test_an_unwritable_cache_folder_costs_only_the_speed(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    _install(site, "one", "1.0", {"one": "one_mod"})
    assert _seen() == _truth()


def test_load_imports_module_and_attribute(site: Path) -> None:
    (site / "disc_mod.py").write_text(
        "class Holder:\n    class Inner:\n        value = 42\n"
    )
    _install(
        site,
        "loadme",
        "1.0",
        {"whole": "disc_mod", "deep": "disc_mod:Holder.Inner [extra]"},
    )
    points = {ep.name: ep for ep in discovery.entry_points(GROUP)}
    assert points["whole"].load().__name__ == "disc_mod"
    assert points["deep"].load().value == 42


_CHILD = r"""
import sys
from profiler_core.plugins.discovery import entry_points
names = sorted(ep.name for ep in entry_points("agent_profiler"))
print(",".join(names), "importlib.metadata" in sys.modules)
"""


def test_a_warm_start_does_not_import_importlib_metadata(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop(discovery.CACHE_ENV, None)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SRC), env.get("PYTHONPATH")) if p
    )
    outputs = [
        subprocess.run(
            [sys.executable, "-c", _CHILD],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.split()
        for _ in range(2)
    ]
    (cold_names, cold_imported), (warm_names, warm_imported) = outputs
    assert cold_names == warm_names and "builtin_analyzers" in warm_names
    assert (cold_imported, warm_imported) == ("True", "False")


def test_installed_version_matches_importlib_metadata() -> None:
    dists = list(importlib.metadata.distributions())
    assert len(dists) > 10
    for dist in dists:
        name = dist.metadata["Name"]
        found = installed_version(name)
        assert found in (dist.version, None), name
    assert installed_version("agent-profiler") == importlib.metadata.version(
        "agent-profiler"
    )


def test_installed_version_follows_the_folder_first_on_sys_path(site: Path) -> None:
    assert installed_version("Some.Plugin") is None
    _install(site, "some_plugin", "2.0rc1", {"x": "x_mod"})
    assert installed_version("Some.Plugin") == "2.0rc1"
    assert installed_version("some-plugin") == importlib.metadata.version("some-plugin")


def test_a_folder_without_distributions_keeps_the_cache_warm(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(site, "one", "1.0", {"one": "one_mod"})
    before = _seen()
    # `python -m` puts the working folder first on sys.path; its writes change its mtime.
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.syspath_prepend(str(work))
    (work / "results.jsonl").write_text("{}\n")

    def no_scan(group: str) -> None:
        raise AssertionError("scanned again")

    monkeypatch.setattr(discovery, "_scan", no_scan)
    assert _seen() == before
