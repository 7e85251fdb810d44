"""Settings over a profile: ``profiler run --set KEY=VALUE``, the original's environment
names, and model labels."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from profiler_core.config.loader import load_profile
from profiler_core.config.settings import ENVIRONMENT_SETTINGS
from profiler_core.errors import ConfigError
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.storage.store import read_jsonl, read_manifest

PROFILE = """
modes:
  base: {system_instructions: "Use the shell."}
  tool: {system_instructions: "Use the tool."}
models: [{id: sim-small, label: small}, sim-large]
scenarios: {path: scenarios}
analyzers: []
execution: {repetitions: 2, warmup: true}
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in ENVIRONMENT_SETTINGS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def profile(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "a.json").write_text(
        json.dumps({"id": "a-001", "name": "A", "prompt": "do a"})
    )
    path = tmp_path / "profile.yaml"
    path.write_text(textwrap.dedent(PROFILE))
    return path


def run(*args):
    from profiler_core.cli import cli

    return CliRunner().invoke(
        cli, ["run", *map(str, args)], obj=get_plugin_manager(entrypoints=False)
    )


def test_set_changes_any_key_and_the_manifest_records_it(profile):
    result = run(
        profile,
        "--set",
        "execution.repetitions=1",
        "--set",
        "execution.warmup=false",
        "--set",
        "models[1].label=large",
        "--no-report",
    )
    assert result.exit_code == 0, result.output
    manifest = read_manifest(next((profile.parent / "results").glob("*.manifest.json")))
    assert manifest.repetitions == 1
    assert manifest.overrides["settings"] == {
        "execution.repetitions": "1",
        "execution.warmup": "false",
        "models[1].label": "large",
    }
    assert manifest.overrides["model_labels"] == {
        "sim-small": "small",
        "sim-large": "large",
    }
    rows = read_jsonl(
        next(
            p
            for p in (profile.parent / "results").glob("*.jsonl")
            if "analysis" not in p.name
        )
    ).rows
    assert len(rows) == 2 * 2 * 1 and {r.model for r in rows} == {
        "sim-small",
        "sim-large",
    }  # rows keep the ids
    summary = result.output.splitlines()
    assert any(line.startswith("small ") for line in summary) and any(
        line.startswith("large ") for line in summary
    )  # labels


def test_the_recorded_settings_are_applied_again_on_resume(profile):
    first = load_profile(profile, {"settings": {"execution.repetitions": "3"}})
    again = load_profile(profile, dict(first.overrides))
    assert (
        again.execution.repetitions == 3
        and again.profile_hash() == first.profile_hash()
    )


def test_a_bad_value_is_the_files_own_error_saying_where_it_came_from(profile):
    result = run(profile, "--set", "execution.repetitions=zero")
    assert result.exit_code == 1
    assert (
        "profile.yaml: execution.repetitions: expected an integer >= 1, got "
        "'zero' (from --set execution.repetitions=zero)" in result.output
    )
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (
            "execution.repetitons=2",
            "`execution.repetitons`: unknown key; did you mean `execution.repetitions`?",
        ),
        ("repetitions", "--set 'repetitions': expected KEY=VALUE"),
        ("execution..x=1", "is not a profile key"),
        ("execution.repetitions=[1", "the value is not valid YAML"),
        (
            "modes.base.system_instructions.x=1",
            "`modes.base.system_instructions` is str",
        ),
        # a key under a list (not an item of it) was an AttributeError traceback
        ("models.x.y=1", "`models` is a list in the profile, not a mapping"),
    ],
)
def test_malformed_settings_are_one_line(profile, setting, expected):
    result = run(profile, "--set", setting)
    assert result.exit_code == 1 and expected in result.output, result.output
    assert (
        len([line for line in result.output.splitlines() if line.startswith("Error:")])
        == 1
    )


def test_the_originals_environment_names(profile, monkeypatch):
    monkeypatch.setenv("PROFILER_REPETITIONS", "4")
    monkeypatch.setenv("PROFILER_WARMUP", "false")
    monkeypatch.setenv("PROFILER_LOG_LEVEL", "debug")
    monkeypatch.setenv("PROFILER_MODES", "tool")
    monkeypatch.setenv("EVAL_MODEL", "sim-medium")
    monkeypatch.setenv("EVAL_PROVIDER_ID", "simulated")
    monkeypatch.setenv("EVAL_PROVIDER_PORT", "4100")
    config = load_profile(profile)
    assert config.execution.repetitions == 4 and config.execution.warmup is False
    assert config.output.log_level == "debug" and config.modes == ("tool",)
    assert config.models == ("sim-medium", "sim-large")
    assert (
        config.overrides["model_labels"]["sim-medium"] == "small"
    )  # the first model's id changes, its label stays
    assert (config.provider.id, config.provider_port) == ("simulated", 4100)
    assert config.overrides["environment"]["PROFILER_REPETITIONS"] == "4"


def test_set_wins_over_the_environment_which_wins_over_the_file(profile, monkeypatch):
    assert load_profile(profile).execution.repetitions == 2
    monkeypatch.setenv("PROFILER_REPETITIONS", "4")
    assert load_profile(profile).execution.repetitions == 4
    assert (
        load_profile(
            profile, {"settings": {"execution.repetitions": "6"}}
        ).execution.repetitions
        == 6
    )


def test_a_recorded_environment_is_used_instead_of_the_processs(profile, monkeypatch):
    # A resumed run, or a worker process loading the profile again, applies what the run
    # started with.
    monkeypatch.setenv("PROFILER_REPETITIONS", "9")
    assert (
        load_profile(
            profile, {"environment": {"PROFILER_REPETITIONS": "4"}}
        ).execution.repetitions
        == 4
    )


def test_eval_model_without_models_sets_the_providers_model(tmp_path, monkeypatch):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "a.json").write_text(
        json.dumps({"id": "a-001", "name": "A", "prompt": "do a"})
    )
    (tmp_path / "p.yaml").write_text(
        "modes: {base: {}}\nscenarios: {path: scenarios}\n"
    )
    monkeypatch.setenv("EVAL_MODEL", "sim-large")
    config = load_profile(tmp_path / "p.yaml")
    assert config.models == ("sim-large",) and config.provider_model == "sim-large"


def test_a_bad_environment_value_names_the_variable(profile, monkeypatch):
    monkeypatch.setenv("PROFILER_WARMUP", "maybe")
    with pytest.raises(
        ConfigError,
        match=r"execution\.warmup: expected true or false, got 'maybe' \(from "
        r"PROFILER_WARMUP=maybe\)",
    ):
        load_profile(profile)


def test_model_labels_are_accepted_and_must_name_one_model(profile):
    config = load_profile(profile)
    assert config.models == ("sim-small", "sim-large") and config.overrides[
        "model_labels"
    ] == {"sim-small": "small"}
    with pytest.raises(
        ConfigError, match=r"models\[1\]: 'small' already names model 'sim-small'"
    ):
        load_profile(profile, {"settings": {"models[1].label": "small"}})
    with pytest.raises(ConfigError, match=r"models\[0\]\.id: required"):
        load_profile(profile, {"settings": {"models[0]": "{label: x}"}})


def test_the_report_shows_model_labels(profile):
    assert (
        run(
            profile,
            "--set",
            "execution.repetitions=1",
            "--set",
            "execution.warmup=false",
        ).exit_code
        == 0
    )
    summary = json.loads(
        next((profile.parent / "reports").glob("*/data/summary.json")).read_text()
    )
    text = json.dumps(summary)
    assert '"small"' in text and "sim-small" not in text and "sim-large" in text
