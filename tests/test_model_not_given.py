"""A model that was not given is unknown: never the simulator's, never priced from its
table (issue 16.3)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import trio
import trio.testing

from profiler_core.config.loader import load_profile
from profiler_core.runner import run_profile_suite
from profiler_core.runner.build import options_from_config
from profiler_core.testing import FakeProvider, fake_plugin

PROFILER = Path(sys.executable).with_name("profiler")


def _profile(tmp_path, provider):
    (tmp_path / "scenarios").mkdir(exist_ok=True)
    (tmp_path / "scenarios" / "s1.json").write_text(
        json.dumps({"id": "s1", "name": "S1", "prompt": "do"})
    )
    path = tmp_path / "profile.yaml"
    path.write_text(
        textwrap.dedent(f"""
        modes: {{a: {{}}}}
        scenarios: {{path: scenarios}}
        provider: {provider}
        execution: {{repetitions: 1, warmup: false}}
        analyzers: []
    """)
    )
    return path


def test_simulator_keeps_its_own_default(tmp_path):
    assert load_profile(_profile(tmp_path, "{id: simulated}")).models == ("sim-small",)


def test_third_party_provider_without_model_is_unknown_and_unpriced(
    tmp_path, profiler_plugin_manager
):
    config = load_profile(_profile(tmp_path, "{id: fake}"))
    assert config.models == ("",)
    # FakeProvider reports tokens but no cost: with no model there is nothing to price them with.
    profiler_plugin_manager.register(fake_plugin(provider=FakeProvider()), name="fake")
    options = options_from_config(config, profiler_plugin_manager)
    result = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    (row,) = result.rows
    assert row.tokens.total > 0
    assert row.extensions["cost_source"] == "unknown"
    assert row.model == ""


def test_validate_says_the_model_was_not_given(tmp_path):
    # opencode is a real installed plugin; with base_url it needs no binary to be validated.
    profile = _profile(
        tmp_path, '{id: opencode, options: {base_url: "http://127.0.0.1:9"}}'
    )
    out = subprocess.run(
        [str(PROFILER), "validate", str(profile)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "models:      (not given: the agent's own default)" in out.stdout
    assert "sim-small" not in out.stdout


def test_an_empty_profile_says_so(tmp_path):
    for text in ("", "# nothing yet\n", "{}\n"):
        path = tmp_path / "empty.yaml"
        path.write_text(text)
        out = subprocess.run(
            [str(PROFILER), "validate", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 1
        assert (
            out.stderr.strip()
            == f"Error: {path}: the profile is empty (it needs at least `modes` "
            "and `scenarios`; `profiler init` writes an example)"
        )


def test_a_broken_scenario_file_is_reported_once(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "good-001.json").write_text(
        json.dumps({"id": "good-001", "name": "G", "prompt": "p"})
    )
    (tmp_path / "scenarios" / "bad-001.json").write_text(
        json.dumps({"id": "bad-001", "name": "B", "prompt": "p", "timeoutMs": "soon"})
    )
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "modes: {a: {}}\nscenarios: {path: scenarios, ids: [good-001, bad-001]}\n"
    )
    out = subprocess.run(
        [str(PROFILER), "validate", str(profile)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert "bad-001.json" in out.stderr and "timeoutMs" in out.stderr
    assert "unknown scenario id" not in out.stderr
