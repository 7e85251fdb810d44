"""Scenario ids are checked when scenario files are loaded: one line naming the file,
`$.id` and what is allowed (issue 15.8)."""

from __future__ import annotations

import json

import pytest
from tests.test_config import MINIMAL, problems_of, write_profile
from tests.test_eval_ghx_scenario import scenario_data

from profiler_core.config.loader import load_profile, load_scenarios
from profiler_core.errors import ProfilerError
from profiler_eval_ghx.scenario import read_scenario_file

ALLOWED = (
    "letters, digits, '.', '_' and '-' (not starting with '.'), at most 128 characters"
)


@pytest.mark.parametrize(
    "bad",
    ["a/b", "a\\b", "..", ".", ".hidden", "a b", "é", "a\x00b", "x" * 129, "id\n"],
)
def test_a_hostile_scenario_id_is_one_line_naming_file_field_and_rule(tmp_path, bad):
    profile = write_profile(
        tmp_path,
        MINIMAL,
        scenarios={"bad.json": {"id": bad, "name": "B", "prompt": "do"}},
    )
    (problem,) = problems_of(profile)
    path = tmp_path / "scenarios" / "bad.json"
    if "\x00" in bad:  # refused as the file is read: no NUL anywhere in a scenario
        assert problem == f"{path}: id: contains a NUL character"
    else:
        assert problem.startswith(f"{path}: $.id: expected {ALLOWED}, got ")
    assert "\n" not in problem and "unknown" not in problem


def test_a_good_scenario_next_to_a_bad_one_still_loads_and_the_bad_one_is_not_also_unknown(
    tmp_path,
):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "good.json").write_text(
        json.dumps({"id": "good-1.v2_x", "name": "G", "prompt": "do"})
    )
    (folder / "bad.json").write_text(
        json.dumps({"id": "../escape", "name": "B", "prompt": "do"})
    )
    scenarios, _, problems, broken = load_scenarios(folder)
    assert [s.id for s in scenarios] == ["good-1.v2_x"]
    assert len(problems) == 1 and "../escape" in problems[0] and broken == {"../escape"}
    profile = write_profile(
        tmp_path, MINIMAL.replace("{path: scenarios}", "{path: s, ids: [../escape]}")
    )
    assert len(problems_of(profile)) == 1


def test_a_megabyte_id_is_cut_in_the_message(tmp_path):
    profile = write_profile(
        tmp_path,
        MINIMAL,
        scenarios={"big.json": {"id": "a/" * 500_000, "name": "B", "prompt": "do"}},
    )
    (problem,) = problems_of(profile)
    assert len(problem) < 600 and "…(1000000 chars)" in problem


def test_plain_ids_still_load(tmp_path):
    config = load_profile(
        write_profile(
            tmp_path,
            MINIMAL,
            scenarios={"a.json": {"id": "A_b-1.2", "name": "A", "prompt": "do"}},
        )
    )
    assert [s.id for s in config.scenarios] == ["A_b-1.2"]


@pytest.mark.parametrize(
    "bad", ["pr-review-001\n", "../pr-001", "X" * 100_000 + "-001"]
)
def test_eval_scenario_ids_are_reported_the_same_way(tmp_path, bad):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario_data(id=bad)))
    with pytest.raises(ProfilerError) as info:
        read_scenario_file(path)
    message = str(info.value)
    assert message.startswith(
        f"{path}: $.id: expected lowercase words joined by '-' ending in a 3-digit number"
    )
    assert ", got " in message and len(message) < 600
