"""A profile whose scenarios carry checkpoints must be scored by a scorer that reads
them (one line otherwise)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from profiler_core.config.loader import load_profile
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.scorers.coverage import scenario_keys_of

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "eval-ghx"


@pytest.fixture
def eval_profile(tmp_path):
    """The example eval's scenarios under a profile that needs no agent, token or
    GitHub: only the scorer varies."""
    shutil.copytree(EXAMPLE / "scenarios", tmp_path / "scenarios")

    def write(scorer: object | None) -> Path:
        profile = {
            "modes": {"plain": {}},
            "scenarios": {"path": "scenarios", "format": "ghx", "set": "default"},
        }
        if scorer is not None:
            profile["scorer"] = scorer
        path = tmp_path / "eval.yaml"
        path.write_text(json.dumps(profile))
        return path

    return write


def invoke(*args):
    from profiler_core.cli import cli

    return CliRunner().invoke(cli, list(map(str, args)), obj=get_plugin_manager())


def test_the_example_eval_scores_by_its_checkpoints():
    config = load_profile(EXAMPLE / "eval.yaml", registry=get_plugin_manager().registry)
    assert config.scorer.id == "checkpoint"


@pytest.mark.parametrize("command", [["validate"], ["eval", "check"]])
def test_checkpoints_under_a_scorer_that_ignores_them_are_refused(
    eval_profile, command
):
    path = eval_profile(
        None
    )  # no scorer: the `checks` scorer, which would call every task done (0 of 0 checks)
    result = invoke(*command, path)
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: {path}: scorer: 7 scenario(s) carry `assertions`, which scorer 'checks' ignores "
        "(it is scored by 'checkpoint'): set `scorer: {id: checkpoint}`"
    ]


def test_the_checkpoint_scorer_passes_and_a_composite_that_holds_it_too(eval_profile):
    assert invoke("validate", eval_profile({"id": "checkpoint"})).exit_code == 0
    composite = {
        "id": "composite",
        "options": {"scorers": [{"id": "checkpoint"}, {"id": "checks"}]},
    }
    assert invoke("validate", eval_profile(composite)).exit_code == 0


def test_scorers_say_what_they_score_by():
    registry = get_plugin_manager().registry
    assert scenario_keys_of(registry.get("scorers", "checks").factory) == ("checks",)
    assert scenario_keys_of(registry.get("scorers", "llm-judge").factory) == ("rubric",)
    assert scenario_keys_of(registry.get("scorers", "checkpoint").factory) == (
        "assertions",
    )
