"""Eval scenarios: the file format, every problem reported at once, selection, and the
trip through core's Scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiler_core import ProfilerError, Scenario
from profiler_core.scorers.conditions import Custom, FieldEquals
from profiler_eval_ghx.scenario import (
    EvalScenario,
    ScenarioLoadError,
    from_core_scenario,
    load_scenarios,
    read_scenario_file,
    to_core_scenario,
)

EXAMPLES = (
    Path(__file__).resolve().parent.parent / "examples" / "eval-ghx" / "scenarios"
)


def scenario_data(**changes) -> dict:
    data = {
        "id": "issue-close-001",
        "name": "Close an issue",
        "description": "close it",
        "prompt": "Close issue #{{issue_number}} in {{owner}}/{{repo_name}}",
        "timeoutMs": 60000,
        "category": "issue",
        "difficulty": "basic",
        "fixture": {
            "repo": "acme/sandbox",
            "requires": ["issue"],
            "bindings": {"issue_number": "issue.number"},
        },
        "assertions": {
            "checkpoints": [
                {
                    "id": "closed",
                    "description": "the issue is closed",
                    "task": "issue.view",
                    "input": {
                        "owner": "{{owner}}",
                        "name": "{{repo_name}}",
                        "issueNumber": "{{issue_number}}",
                    },
                    "condition": {
                        "type": "field_equals",
                        "path": "state",
                        "value": "CLOSED",
                    },
                }
            ]
        },
    }
    data.update(changes)
    return data


def write(folder: Path, name: str, data) -> Path:
    path = folder / name
    path.write_text(
        data if isinstance(data, str) else json.dumps(data), encoding="utf-8"
    )
    return path


def test_a_scenario_file_reads_with_its_defaults(tmp_path):
    scenario = read_scenario_file(write(tmp_path, "a.json", scenario_data()))
    assert scenario.id == "issue-close-001"
    assert scenario.allowed_retries == 0 and scenario.tags == ()
    assert scenario.fixture.requires == ("issue",)
    assert (
        scenario.fixture.reseed_per_iteration is False
        and scenario.fixture.seed_per_iteration is False
    )
    checkpoint = scenario.assertions.checkpoints[0]
    assert checkpoint.condition == FieldEquals(path="state", value="CLOSED")
    assert scenario.assertions.expected_tool_sequence is None


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        (
            {"id": "Issue_Close"},
            "$.id: expected lowercase words joined by '-' ending in a 3-digit number",
        ),
        ({"id": "issue-close-1"}, "$.id: expected lowercase words"),
        ({"timeoutMs": 0}, "$.timeoutMs: expected a value > 0, got 0"),
        ({"timeoutMs": "60s"}, "$.timeoutMs: expected int"),
        ({"allowedRetries": -1}, "$.allowedRetries: expected a value >= 0, got -1"),
        (
            {"category": "pull"},
            "$.category: expected one of pr, issue, workflow, release, repo, got 'pull'",
        ),
        (
            {"difficulty": "hard"},
            "$.difficulty: expected one of basic, intermediate, advanced, got 'hard'",
        ),
        ({"tags": "issue"}, "$.tags: expected a list"),
        ({"prmopt": "x"}, "$: unknown field(s): prmopt"),
        (
            {"fixture": {"repo": "sandbox"}},
            "$.fixture.repo: expected owner/name, got 'sandbox'",
        ),
        (
            {
                "fixture": {
                    "repo": "a/b",
                    "requires": ["pr"],
                    "bindings": {"n": "issue.number"},
                }
            },
            "$.fixture.bindings: expected 'n' to be a path starting with a "
            "required fixture (pr), got 'issue.number'",
        ),
        (
            {
                "fixture": {
                    "repo": "a/b",
                    "reseedPerIteration": True,
                    "seedPerIteration": True,
                }
            },
            "$.fixture.seedPerIteration: expected reseedPerIteration or seedPerIteration, not both",
        ),
        ({"assertions": {}}, "$.assertions.checkpoints: required field missing"),
        (
            {
                "assertions": {
                    "checkpoints": [
                        {
                            "id": "c",
                            "description": "",
                            "task": "issue.view",
                            "condition": {"type": "feild_equals"},
                        }
                    ]
                }
            },
            "$.assertions.checkpoints[0].condition.type: expected a condition type",
        ),
        (
            {
                "assertions": {
                    "checkpoints": [
                        {
                            "id": "c",
                            "description": "",
                            "task": "",
                            "condition": {"type": "non_empty"},
                        }
                    ]
                }
            },
            "$.assertions.checkpoints[0].task: expected a non-empty string",
        ),
    ],
)
def test_a_bad_field_is_one_line_naming_file_and_field(tmp_path, changes, fragment):
    path = write(tmp_path, "bad.json", scenario_data(**changes))
    with pytest.raises(ProfilerError) as info:
        read_scenario_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert fragment in message
    assert "\n" not in message and "Traceback" not in message


def test_duplicate_checkpoint_ids_are_refused(tmp_path):
    checkpoint = scenario_data()["assertions"]["checkpoints"][0]
    path = write(
        tmp_path,
        "dup.json",
        scenario_data(assertions={"checkpoints": [checkpoint, checkpoint]}),
    )
    with pytest.raises(
        ProfilerError,
        match=r"\$\.assertions\.checkpoints: expected unique ids, got 'closed' twice",
    ):
        read_scenario_file(path)


def test_every_bad_file_is_reported_at_once(tmp_path):
    write(tmp_path, "a-good.json", scenario_data())
    bad_json = write(tmp_path, "b-broken.json", "{not json")
    bad_field = write(
        tmp_path, "c-bad.json", scenario_data(id="issue-other-002", timeoutMs=-5)
    )
    duplicate = write(tmp_path, "d-dup.json", scenario_data())
    write(tmp_path, "notes.txt", "ignored: not json")
    with pytest.raises(ScenarioLoadError) as info:
        load_scenarios(tmp_path)
    problems = info.value.problems
    assert len(problems) == 3
    assert problems[0].startswith(f"{bad_json}: not valid JSON (")
    assert problems[1].startswith(f"{bad_field}: $.timeoutMs: expected a value > 0")
    assert (
        problems[2]
        == f"{duplicate}: $.id: duplicate scenario id 'issue-close-001' (also in "
        f"{tmp_path / 'a-good.json'})"
    )
    assert str(info.value) == "\n".join(problems)


def test_scenario_sets_select_in_their_order_and_ids_win(tmp_path):
    for number in ("001", "002", "003"):
        write(tmp_path, f"s{number}.json", scenario_data(id=f"issue-close-{number}"))
    write(
        tmp_path, "scenario-sets.json", {"late": ["issue-close-003", "issue-close-001"]}
    )
    assert [s.id for s in load_scenarios(tmp_path)] == [
        "issue-close-001",
        "issue-close-002",
        "issue-close-003",
    ]
    assert [s.id for s in load_scenarios(tmp_path, set_name="late")] == [
        "issue-close-003",
        "issue-close-001",
    ]
    picked = load_scenarios(tmp_path, ids=["issue-close-002"], set_name="late")
    assert [s.id for s in picked] == ["issue-close-002"]


def test_unknown_ids_sets_and_set_members_are_problems(tmp_path):
    write(tmp_path, "a.json", scenario_data())
    write(
        tmp_path,
        "scenario-sets.json",
        {"main": ["issue-close-001"], "typo": ["issue-clsoe-001"]},
    )
    with pytest.raises(ScenarioLoadError) as info:
        load_scenarios(tmp_path, ids=["issue-close-001"])
    assert info.value.problems == (
        f"{tmp_path / 'scenario-sets.json'}: $['typo']: unknown scenario id(s) issue-clsoe-001",
    )
    write(tmp_path, "scenario-sets.json", {"main": ["issue-close-001"]})
    with pytest.raises(
        ScenarioLoadError,
        match=r"unknown scenario id\(s\) pr-nope-001 \(found: issue-close-001\)",
    ):
        load_scenarios(tmp_path, ids=["issue-close-001", "pr-nope-001"])
    with pytest.raises(
        ScenarioLoadError,
        match=r"unknown scenario set 'mian'; did you mean 'main'\? \(sets: main\)",
    ):
        load_scenarios(tmp_path, set_name="mian")


def test_a_bad_sets_file_and_a_missing_folder_are_reported(tmp_path):
    write(tmp_path, "a.json", scenario_data())
    write(tmp_path, "scenario-sets.json", {"main": "issue-close-001"})
    with pytest.raises(
        ScenarioLoadError, match=r"scenario-sets.json: \$\['main'\]: expected a list"
    ):
        load_scenarios(tmp_path)
    with pytest.raises(ScenarioLoadError, match="scenario folder does not exist"):
        load_scenarios(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(
        ScenarioLoadError, match=r"no scenario files \(\*\.json\) found"
    ):
        load_scenarios(empty)


def test_core_scenario_carries_the_eval_parts_in_extensions_and_back(tmp_path):
    data = scenario_data(tags=["issue"], allowedRetries=2)
    data["assertions"]["checkpoints"].append(
        {
            "id": "custom",
            "description": "",
            "task": "issue.view",
            "condition": {"type": "custom", "scorer": "mine", "options": {"k": 1}},
        }
    )
    scenario = read_scenario_file(write(tmp_path, "a.json", data))
    core = to_core_scenario(scenario)
    assert isinstance(core, Scenario)
    assert (core.id, core.timeout_ms, core.allowed_retries, core.tags) == (
        "issue-close-001",
        60000,
        2,
        ("issue",),
    )
    assert sorted(core.extensions) == [
        "assertions",
        "category",
        "difficulty",
        "fixture",
    ]
    # extensions are plain camelCase JSON: what a results row or a trace file would hold
    assert core.extensions["fixture"]["bindings"] == {"issue_number": "issue.number"}
    assert core.extensions["assertions"]["checkpoints"][0]["condition"] == {
        "type": "field_equals",
        "path": "state",
        "value": "CLOSED",
    }
    json.dumps(core.extensions)
    back = from_core_scenario(core)
    assert back == scenario
    assert back.assertions.checkpoints[1].condition == Custom(
        scorer="mine", options={"k": 1}
    )


def test_a_plain_core_scenario_is_not_an_eval_scenario():
    with pytest.raises(
        ProfilerError,
        match=r"scenario 'x': not an eval scenario \(extensions lack category, "
        r"difficulty, assertions",
    ):
        from_core_scenario(Scenario(id="x", name="x", prompt="p"))


def test_the_shipped_examples_load():
    scenarios = load_scenarios(EXAMPLES, set_name="default")
    assert len(scenarios) >= 6
    assert {"issue", "pr", "workflow"} <= {s.category for s in scenarios}
    tasks = {c.task for s in scenarios for c in s.assertions.checkpoints}
    assert {
        "issue.view",
        "issue.comments.list",
        "pr.reviews.list",
        "pr.threads.list",
        "issue.relations.prs.list",
    } <= tasks
    assert all(isinstance(s, EvalScenario) and s.fixture is not None for s in scenarios)
    every_file = {p.stem for p in EXAMPLES.glob("*.json")} - {"scenario-sets"}
    assert {s.id for s in scenarios} == every_file


def test_core_scenarios_for_the_runner():
    from profiler_eval_ghx.scenario import load_core_scenarios

    core = load_core_scenarios(EXAMPLES, set_name="smoke")
    assert [s.id for s in core] == ["issue-comment-marker-001"]
    assert isinstance(core[0], Scenario) and core[0].extensions["category"] == "issue"
