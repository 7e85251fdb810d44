"""`--mode` with `modes:` as a list: the mode resolver decides which modes exist (issue 16.6)."""

from __future__ import annotations

import json
import textwrap

import pytest
import trio
import trio.testing

from profiler_core import ModeConfig, UnknownModeError, hookimpl
from profiler_core.config.loader import ProfileErrors, load_profile
from profiler_core.runner import run_profile_suite
from profiler_core.runner.build import options_from_config


class ThreeModes:
    """Knows modes a, b and c; the profile lists only a and b."""

    id = "three"

    def resolve(self, mode):
        if mode not in ("a", "b", "c"):
            raise UnknownModeError(f"unknown mode {mode!r} (known: a, b, c)")
        return ModeConfig(system_instructions=f"mode {mode}")


class Plugin:
    @hookimpl
    def profiler_register_mode_resolvers(self):
        return [ThreeModes]


@pytest.fixture
def profile(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s1.json").write_text(
        json.dumps({"id": "s1", "name": "S1", "prompt": "do"})
    )
    path = tmp_path / "profile.yaml"
    path.write_text(
        textwrap.dedent("""
        modes: [a, b]
        mode_resolver: {id: three}
        scenarios: {path: scenarios}
        provider: {id: simulated, model: sim-small, options: {time_scale: 0}}
        execution: {repetitions: 1, warmup: false}
        output: {session_export: false}
        analyzers: []
    """)
    )
    return path


def _run(config, manager):
    options = options_from_config(config, manager)
    return trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )


def test_a_mode_the_resolver_knows_runs(profile, profiler_plugin_manager):
    config = load_profile(profile, {"modes": ["c"]})
    assert config.modes == ("c",)
    profiler_plugin_manager.register(Plugin(), name="three")
    result = _run(config, profiler_plugin_manager)
    assert {r.mode for r in result.rows} == {"c"}


def test_a_mode_nobody_knows_fails_before_any_session(profile, profiler_plugin_manager):
    config = load_profile(profile, {"modes": ["zzz"]})
    profiler_plugin_manager.register(Plugin(), name="three")
    with pytest.raises(UnknownModeError, match="zzz"):
        _run(config, profiler_plugin_manager)


def test_a_mapping_still_names_unknown_modes_at_load(tmp_path, profile):
    profile.write_text(
        profile.read_text().replace(
            "modes: [a, b]\nmode_resolver: {id: three}", "modes: {a: {}, b: {}}"
        )
    )
    with pytest.raises(ProfileErrors, match="unknown mode"):
        load_profile(profile, {"modes": ["c"]})


def test_cli_mode_beyond_the_list_through_an_installed_resolver(tmp_path):
    """The same through `profiler run` in a subprocess, with the eval plugin's installed
    `eval` resolver."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s1.json").write_text(
        json.dumps({"id": "s1", "name": "S1", "prompt": "do"})
    )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        "modes: [ghx]\nmode_resolver: {id: eval}\nscenarios: {path: scenarios}\n"
        "execution: {repetitions: 1, warmup: false}\n"
    )
    profiler = Path(sys.executable).with_name("profiler")
    out = subprocess.run(
        [str(profiler), "run", str(profile), "--mode", "baseline", "--no-report"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    rows = [
        json.loads(line)
        for line in next((tmp_path / "results").glob("*.jsonl"))
        .read_text()
        .splitlines()
    ]
    assert {r["mode"] for r in rows} == {"baseline"}
    bad = subprocess.run(
        [str(profiler), "run", str(profile), "--mode", "nosuch", "--no-report"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        bad.returncode == 1
        and "nosuch" in bad.stderr
        and len(bad.stderr.strip().splitlines()) == 1
    )
