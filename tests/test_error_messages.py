"""Error lines: `validate` refuses what `run` refuses, long values are cut, JSON errors
read "at line" (issue 15.13)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from profiler_core.config.loader import load_profile
from profiler_core.errors import ProfilerError
from profiler_core.model import ProfileRow
from profiler_core.storage.serde import from_json
from profiler_core.util.textcut import cut, shown

PROFILER = Path(sys.executable).with_name("profiler")


def _project(tmp_path: Path, profile: str) -> Path:
    (tmp_path / "scenarios").mkdir(exist_ok=True)
    (tmp_path / "scenarios" / "s1.json").write_text(
        '{"id": "s1", "name": "S", "prompt": "do"}'
    )
    (tmp_path / "profile.yaml").write_text(textwrap.dedent(profile))
    return tmp_path / "profile.yaml"


def _profiler(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(PROFILER), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


BAD_OVERRIDE = """
    modes:
      a: {}
      b: {provider_overrides: {bogus_option: 1}}
    scenarios: {path: scenarios}
    execution: {repetitions: 1, warmup: false}
"""


@pytest.mark.slow
def test_validate_refuses_a_provider_override_that_run_refuses(tmp_path):
    _project(tmp_path, BAD_OVERRIDE)
    validate = _profiler(["validate", "profile.yaml"], tmp_path)
    assert validate.returncode == 1
    (line, count) = validate.stderr.splitlines()
    assert line.startswith(
        "Error: profile.yaml: modes.b.provider_overrides: provider "
        "'simulated': unknown option(s) bogus_option"
    )
    assert count == "1 problem(s) found"
    run = _profiler(
        ["run", "profile.yaml", "--no-report", "--progress", "none"], tmp_path
    )
    assert "unknown option(s) bogus_option" in run.stderr


@pytest.mark.slow
def test_validate_accepts_good_overrides(tmp_path):
    _project(tmp_path, BAD_OVERRIDE.replace("bogus_option: 1", "success_rate: 0.5"))
    validate = _profiler(["validate", "profile.yaml"], tmp_path)
    assert validate.returncode == 0, validate.stderr


def test_a_megabyte_value_in_a_profile_is_cut(tmp_path):
    profile = _project(
        tmp_path, "modes: [a]\nmode_resolver: config\nscenarios: {path: scenarios}\n"
    )
    profile.write_text(
        profile.read_text()
        + f"execution: {{repetitions: {json.dumps('9' * 1_000_000)}}}\n"
    )
    with pytest.raises(ProfilerError) as info:
        load_profile(profile)
    message = str(info.value)
    assert (
        "execution.repetitions" in message
        and len(message) < 1000
        and "chars)" in message
    )


def test_a_megabyte_value_in_a_row_is_cut():
    row = {"runId": "r", "iteration": "x" * 1_000_000}
    with pytest.raises(ProfilerError) as info:
        from_json(json.dumps(row), ProfileRow, source="rows.jsonl:1")
    assert len(str(info.value)) < 2000


@pytest.mark.slow
def test_the_cli_never_echoes_a_megabyte(tmp_path):
    _project(
        tmp_path,
        f"modes: [a]\nscenarios: {{path: scenarios}}\nmode_resolver: {{id: {'z' * 1_000_000}}}\n",
    )
    out = _profiler(["validate", "profile.yaml"], tmp_path)
    assert out.returncode == 1 and len(out.stderr) < 3000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": "abc', "Unterminated string at line 1 column 7"),
        ('{"a" 1}', "Expecting ':' delimiter at line 1 column 6"),
        (
            '{"a": "a\x01"}',
            "Invalid control character at line 1 column 9",
        ),  # json says "... character at"
    ],
)
def test_json_errors_read_at_line_once(tmp_path, text, expected):
    with pytest.raises(ProfilerError) as info:
        from_json(text, ProfileRow, source="f.jsonl")
    assert expected in str(info.value) and "at at" not in str(info.value)
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "bad.json").write_text(text)
    profile = tmp_path / "profile.yaml"
    profile.write_text("modes: {a: {}}\nscenarios: {path: scenarios}\n")
    with pytest.raises(ProfilerError) as info:
        load_profile(profile)
    assert expected in str(info.value) and "at at" not in str(info.value)


def test_cut_and_shown():
    assert cut("abc") == "abc" and cut("x" * 300) == "x" * 200 + "…(300 chars)"
    assert shown("x" * 1000).endswith("…(1000 chars)") and len(shown("x" * 1000)) < 230
    assert shown(10**400) == "an integer of 401 digits"
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    assert len(shown(nested)) < 100  # no RecursionError either


class _AsyncResolver:
    """A plugin's resolver whose ``resolve`` is a coroutine: validate asks it under trio."""

    id = "async-modes"

    async def resolve(self, mode):
        from profiler_core.errors import UnknownModeError
        from profiler_core.model import ModeConfig

        if mode == "gone":
            raise UnknownModeError("unknown mode 'gone'")
        overrides = {"bogus_option": 1} if mode == "b" else {}
        return ModeConfig(provider_overrides=overrides)


@pytest.mark.parametrize("resolver_kind", ["sync", "async"])
def test_mode_problems_are_the_same_from_a_sync_and_an_async_resolver(
    tmp_path, resolver_kind
):
    from profiler_core.config.modes import ConfigModeResolver
    from profiler_core.plugins.manager import get_plugin_manager
    from profiler_core.runner.build import mode_problems

    manager = get_plugin_manager(entrypoints=False)
    config = load_profile(
        _project(tmp_path, BAD_OVERRIDE.replace("b: {", "gone: {}\n      b: {")),
        registry=manager.registry,
    )
    if resolver_kind == "sync":
        resolver = ConfigModeResolver(
            {"a": {}, "b": {"provider_overrides": {"bogus_option": 1}}}
        )
    else:
        resolver = _AsyncResolver()
    problems = mode_problems(config, manager, resolver)
    assert len(problems) == 2, problems
    unknown, override = (p.split(": ", 1)[1] for p in problems)
    assert unknown.startswith("modes: unknown mode 'gone'")
    assert override.startswith(
        "modes.b.provider_overrides: provider 'simulated': unknown option(s) bogus_option"
    )
