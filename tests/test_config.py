"""Profile loading: defaults, overrides, scenario selection, and one clear line per problem."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from profiler_core.config.loader import ProfileErrors, load_profile


def write_profile(
    tmp_path: Path,
    text: str,
    scenarios: dict[str, dict] | None = None,
    sets: dict | None = None,
) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir(exist_ok=True)
    for name, data in (
        scenarios
        if scenarios is not None
        else {
            "b-002.json": {"id": "b-002", "name": "B", "prompt": "do b"},
            "a-001.yaml": {
                "id": "a-001",
                "name": "A",
                "prompt": "do a",
                "timeoutMs": 5000,
            },
        }
    ).items():
        path = folder / name
        path.write_text(
            json.dumps(data)
            if name.endswith(".json")
            else "\n".join(f"{k}: {json.dumps(v)}" for k, v in data.items())
        )
    if sets is not None:
        (folder / "scenario-sets.json").write_text(json.dumps(sets))
    profile = tmp_path / "profile.yaml"
    profile.write_text(textwrap.dedent(text))
    return profile


MINIMAL = """
modes:
  baseline: {system_instructions: "Use the shell."}
  with_tool: {environment: {TOOL: "1"}}
scenarios: {path: scenarios}
"""


def test_defaults_and_relative_paths(tmp_path):
    config = load_profile(write_profile(tmp_path, MINIMAL))
    assert config.modes == ("baseline", "with_tool")
    assert config.mode_resolver.id == "config"
    assert [s.id for s in config.scenarios] == ["a-001", "b-002"]  # sorted by id
    assert (
        config.scenarios[0].timeout_ms == 5000
        and config.scenarios[1].timeout_ms == 120_000
    )
    assert config.execution.repetitions == 5 and config.execution.warmup is True
    assert config.output.results_dir == str((tmp_path / "results").resolve())
    assert config.provider.id == "simulated" and config.models == ("sim-small",)
    assert config.collectors is None and config.analyzers is None  # "all"


def test_cli_overrides_win_over_yaml(tmp_path):
    profile = write_profile(
        tmp_path, MINIMAL + "execution: {repetitions: 3, concurrency: 2}\n"
    )
    config = load_profile(
        profile,
        {
            "repetitions": 7,
            "skip_warmup": True,
            "modes": ["with_tool"],
            "scenario_ids": ["b-002"],
            "retries": 2,
        },
    )
    assert config.execution.repetitions == 7 and config.execution.concurrency == 2
    assert config.execution.warmup is False and config.execution.allowed_retries == 2
    assert config.modes == ("with_tool",)
    assert [s.id for s in config.scenarios] == ["b-002"]


def test_ids_win_over_set_and_keep_their_order(tmp_path):
    sets = {"core": ["b-002"], "all": ["b-002", "a-001"]}
    profile = write_profile(
        tmp_path,
        MINIMAL.replace("{path: scenarios}", "{path: scenarios, set: all}"),
        sets=sets,
    )
    assert [s.id for s in load_profile(profile).scenarios] == ["b-002", "a-001"]
    profile = write_profile(
        tmp_path,
        MINIMAL.replace(
            "{path: scenarios}", "{path: scenarios, set: all, ids: [a-001]}"
        ),
        sets=sets,
    )
    assert [s.id for s in load_profile(profile).scenarios] == ["a-001"]
    assert [
        s.id for s in load_profile(profile, {"scenario_set": "core"}).scenarios
    ] == ["b-002"]


def problems_of(path, overrides=None) -> list[str]:
    with pytest.raises(ProfileErrors) as info:
        load_profile(path, overrides)
    return info.value.problems


def test_unknown_key_names_file_path_and_nearest_key(tmp_path):
    profile = write_profile(tmp_path, MINIMAL + "exeuction: {repetitions: 2}\n")
    (problem,) = problems_of(profile)
    assert problem == f"{profile}: `exeuction`: unknown key; did you mean `execution`?"
    profile = write_profile(tmp_path, MINIMAL + "execution: {repetitons: 2}\n")
    assert (
        "`execution.repetitons`: unknown key; did you mean `execution.repetitions`?"
        in problems_of(profile)[0]
    )


def test_wrong_types_are_reported_all_at_once(tmp_path):
    profile = write_profile(
        tmp_path,
        MINIMAL
        + "execution: {repetitions: many, warmup: 3}\noutput: {log_level: loud}\n",
    )
    problems = problems_of(profile)
    assert len(problems) == 3
    assert any(
        "execution.repetitions: expected an integer >= 1, got 'many'" in p
        for p in problems
    )
    assert any("execution.warmup: expected true or false" in p for p in problems)
    assert any("output.log_level" in p for p in problems)


def test_missing_scenario_folder(tmp_path):
    profile = write_profile(
        tmp_path, MINIMAL.replace("{path: scenarios}", "{path: nowhere}")
    )
    (problem,) = problems_of(profile)
    assert "scenarios.path: scenario folder" in problem and "nowhere" in problem


def test_bad_scenario_file_names_file_and_field(tmp_path):
    profile = write_profile(
        tmp_path,
        MINIMAL,
        scenarios={
            "x.json": {"id": "x", "name": "X", "prompt": "p", "timeoutMs": "soon"}
        },
    )
    (problem,) = problems_of(profile)
    assert "x.json: $.timeoutMs: expected int" in problem


def test_unknown_ids_and_sets(tmp_path):
    profile = write_profile(
        tmp_path, MINIMAL.replace("{path: scenarios}", "{path: scenarios, ids: [zzz]}")
    )
    assert "unknown scenario id(s) zzz" in problems_of(profile)[0]
    profile = write_profile(
        tmp_path, MINIMAL.replace("{path: scenarios}", "{path: scenarios, set: nope}")
    )
    assert "unknown scenario set 'nope'" in problems_of(profile)[0]


def test_unknown_mode_override(tmp_path):
    profile = write_profile(tmp_path, MINIMAL)
    assert "unknown mode(s) nope" in problems_of(profile, {"modes": ["nope"]})[0]


def test_modes_as_list_need_a_resolver(tmp_path):
    profile = write_profile(tmp_path, "modes: [a, b]\nscenarios: {path: scenarios}\n")
    assert "mode_resolver: required" in problems_of(profile)[0]
    profile = write_profile(
        tmp_path,
        "modes: [a, b]\nscenarios: {path: scenarios}\nmode_resolver: {id: ghx}\n",
    )
    assert load_profile(profile).mode_resolver.id == "ghx"


def test_profile_hash_changes_with_meaning_not_concurrency(tmp_path):
    profile = write_profile(tmp_path, MINIMAL)
    base = load_profile(profile).profile_hash()
    assert load_profile(profile, {"concurrency": 8}).profile_hash() == base
    assert load_profile(profile, {"repetitions": 9}).profile_hash() != base


def test_invalid_yaml_is_one_line(tmp_path):
    profile = tmp_path / "p.yaml"
    profile.write_text("modes: [a\n")
    from profiler_core import ConfigError

    with pytest.raises(ConfigError, match="not valid YAML") as info:
        load_profile(profile)
    assert "\n" not in str(info.value)


def test_provider_section_needs_an_id(tmp_path):
    profile = write_profile(tmp_path, MINIMAL + "provider: {model: m}\n")
    assert "provider.id: required" in problems_of(profile)[0]
    profile = write_profile(tmp_path, MINIMAL + "provider:\n")
    assert "provider: expected a mapping" in problems_of(profile)[0]


def test_binary_profile_is_one_line(tmp_path):
    from profiler_core import ConfigError

    profile = tmp_path / "p.yaml"
    profile.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="not a text file"):
        load_profile(profile)


def test_mode_settings_of_the_wrong_type(tmp_path):
    profile = write_profile(
        tmp_path,
        "modes:\n  a: {environment: [X]}\n  b: {provider_overrides: "
        "[1]}\nscenarios: {path: scenarios}\n",
    )
    problems = problems_of(profile)
    assert any(
        "modes.a.environment: expected a mapping of names to strings" in p
        for p in problems
    )
    assert any("modes.b.provider_overrides: expected a mapping" in p for p in problems)


def test_problems_inside_a_list_keep_their_item_path(tmp_path):
    profile = write_profile(
        tmp_path,
        MINIMAL + "collectors: [cost, {id: ''}, 3, {id: tokens, option: {}}]\n",
    )
    problems = problems_of(profile)
    assert (
        f"{profile}: collectors[1].id: expected a non-empty string, got ''" in problems
    )
    assert (
        f"{profile}: collectors[2]: expected an id or {{id, options}}, got number 3"
        in problems
    )
    assert (
        f"{profile}: `collectors[3].option`: unknown key; did you mean `collectors[3].options`?"
        in problems
    )
    assert len(problems) == 3


def test_components_by_id_or_mapping_and_null_sections(tmp_path):
    text = MINIMAL + (
        "provider: {id: sim, model: m1, port: 8080, options: {seed: 3}}\nscorer: checks\n"
        "collectors: [cost, {id: tokens, options: {a: 1}}]\nanalyzers: all\n"
        "judge: {id: openai, model: gpt-x}\nexecution:\noutput:\n"
    )
    config = load_profile(write_profile(tmp_path, text))
    assert config.provider.id == "sim" and config.provider.options == {"seed": 3}
    assert (
        config.provider_model == "m1"
        and config.provider_port == 8080
        and config.models == ("m1",)
    )
    assert config.scorer.id == "checks" and config.analyzers is None
    assert [(c.id, c.options) for c in config.collectors] == [
        ("cost", {}),
        ("tokens", {"a": 1}),
    ]
    assert config.judge.options == {"model": "gpt-x"}
    assert config.execution.repetitions == 5 and config.output.log_level == "info"


def test_overrides_are_checked_like_the_profile(tmp_path):
    profile = write_profile(tmp_path, MINIMAL)
    problems = problems_of(profile, {"repetitions": 0, "concurrency": True})
    assert problems == [
        f"{profile}: --repetitions: expected an integer >= 1, got 0",
        f"{profile}: --concurrency: expected an integer >= 1, got True",
    ]


def test_missing_required_sections_say_what_they_hold(tmp_path):
    profile = write_profile(tmp_path, "models: [m]\n")
    assert problems_of(profile) == [
        f"{profile}: modes: required (a list of mode names, or a mapping of mode name -> settings)",
        f"{profile}: scenarios: required (a mapping with `path` and optionally `set` or `ids`)",
    ]


@pytest.mark.parametrize("text", ["", "# only a comment\n", "{}\n"])
def test_empty_profile_says_so(tmp_path, text):
    from profiler_core import ConfigError

    profile = tmp_path / "p.yaml"
    profile.write_text(text)
    with pytest.raises(ConfigError, match=r"p\.yaml: the profile is empty"):
        load_profile(profile)


def test_a_scenario_that_failed_to_load_is_not_also_an_unknown_id(tmp_path):
    scenarios = {
        "a-001.json": {"id": "a-001", "name": "A", "prompt": "do a"},
        "b-002.json": {"id": "b-002", "name": "B", "prompt": 3},
    }
    profile = write_profile(
        tmp_path,
        MINIMAL.replace(
            "{path: scenarios}", "{path: scenarios, ids: [a-001, b-002, c-003, zzz]}"
        ),
        scenarios,
    )
    (tmp_path / "scenarios" / "c-003.json").write_text("{not json")
    problems = problems_of(profile)
    assert len(problems) == 3, problems
    assert "b-002.json: $.prompt: expected str" in problems[0]
    assert "c-003.json: not valid JSON" in problems[1]
    assert problems[2].endswith(
        "scenarios.ids: unknown scenario id(s) zzz (found: a-001)"
    )


def test_empty_profile_through_the_cli(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "p.yaml").write_text("")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core", "validate", "p.yaml"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert (
        "p.yaml: the profile is empty" in result.stderr
        and "Traceback" not in result.stderr
    )
