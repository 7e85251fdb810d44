"""Fuzzing the profile loader and `profiler validate`: any profile or scenario file
gives a config or one
ProfilerError line per problem, never another exception (issue 15.12)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from tests.fuzzing import FUZZ, dumps, mutated, mutated_text

from profiler_core.cli import cli
from profiler_core.config.loader import load_profile
from profiler_core.errors import ProfilerError

DEMO = Path(__file__).parent.parent / "examples" / "demo"
PROFILE_TEXT = (DEMO / "profile.yaml").read_text(encoding="utf-8")
PROFILE = yaml.safe_load(PROFILE_TEXT)
SCENARIO_FILES = sorted(
    p for p in (DEMO / "scenarios").iterdir() if p.name != "scenario-sets.json"
)


@st.composite
def hostile_project(draw: st.DrawFn) -> tuple[str, str | None, str | None]:
    """(profile text, scenario file name, scenario text): the demo with hostile values
    or damaged text."""
    kind = draw(
        st.sampled_from(
            ["profile-values", "profile-text", "scenario-values", "scenario-text"]
        )
    )
    profile_text, name, scenario_text = (
        PROFILE_TEXT.replace("time_scale: 0.002", "time_scale: 0"),
        None,
        None,
    )
    if kind == "profile-values":
        profile_text = dumps(draw(mutated(PROFILE)))  # JSON is YAML
    elif kind == "profile-text":
        profile_text = draw(mutated_text(PROFILE_TEXT))
    else:
        source = draw(st.sampled_from(SCENARIO_FILES))
        name = source.name
        text = source.read_text(encoding="utf-8")
        scenario_text = (
            dumps(draw(mutated(json.loads(text))))
            if kind == "scenario-values"
            else draw(mutated_text(text))
        )
    return profile_text, name, scenario_text


def _one_line_each(message: str) -> None:
    assert message and "Traceback" not in message
    assert all(len(line) < 1000 for line in message.splitlines()), message[:3000]


@FUZZ
@given(project=hostile_project())
def test_a_hostile_profile_or_scenario_loads_or_is_refused_in_lines(project):
    profile_text, name, scenario_text = project
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(DEMO / "scenarios", folder / "scenarios")
        if name is not None:
            (folder / "scenarios" / name).write_text(
                scenario_text, encoding="utf-8", errors="surrogatepass"
            )
        profile = folder / "profile.yaml"
        profile.write_text(profile_text, encoding="utf-8", errors="surrogatepass")
        try:
            load_profile(profile)
        except ProfilerError as exc:
            _one_line_each(str(exc))
        result = CliRunner().invoke(cli, ["validate", str(profile)])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exc_info
        )
        assert result.exit_code in (0, 1), result.output
        if result.exit_code == 1:
            _one_line_each(result.stderr)
