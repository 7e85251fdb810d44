"""ATIF both ways: the ``atif`` importer, and ``profiler traces export --format atif``
writing files Harbor's model accepts.

Harbor (Python >= 3.12) cannot be installed beside this package (3.11), so the
exported files are validated against Harbor's trajectory model written out as
JSON Schema (fixtures/atif/trajectory.schema.json, from harbor 0.26.0's
``src/harbor/models/trajectories``), plus the model's validators no schema can
express (``harbor_rules``).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from tests.harbor_jobs import harbor_problems, harbor_python

from profiler_core import ReasoningEvent
from profiler_core.errors import ValidationError
from profiler_core.importers import load_sessions
from profiler_core.importers.atif import check_trajectory

PROFILER = Path(sys.executable).with_name("profiler")
FIXTURES = Path(__file__).parent / "fixtures"
SCHEMA = json.loads((FIXTURES / "atif" / "trajectory.schema.json").read_text())
TRAJECTORY = (
    FIXTURES
    / "harbor_jobs"
    / "job-a"
    / "hello-world__Kq3vT9a"
    / "agent"
    / "trajectory.json"
)


def harbor_rules(trajectory: dict) -> list[str]:
    """The ``model_validator``s of Harbor's Trajectory: sequential step ids, results
    naming a call of their step."""
    problems = []
    for index, step in enumerate(trajectory["steps"]):
        if step["step_id"] != index + 1:
            problems.append(f"steps[{index}].step_id: expected {index + 1}")
        ids = {call["tool_call_id"] for call in step.get("tool_calls") or ()}
        for result in (step.get("observation") or {}).get("results", ()):
            if (
                result.get("source_call_id") is not None
                and result["source_call_id"] not in ids
            ):
                problems.append(
                    f"steps[{index}]: source_call_id "
                    f"{result['source_call_id']!r} names no tool call"
                )
    return problems


def valid_for_harbor(trajectory: dict) -> list[str]:
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(trajectory)
    ]
    return errors + harbor_rules(trajectory)


def test_the_schema_accepts_harbors_own_shape_and_refuses_what_the_model_refuses():
    good = json.loads(TRAJECTORY.read_text())
    assert valid_for_harbor(good) == []
    for breaks in (
        lambda t: t["steps"][1].update(
            tool_calls=[]
        ),  # an agent-only field on a user step
        lambda t: t["agent"].pop("version"),
        lambda t: t["steps"][2].update(surprise=1),  # extra="forbid"
        lambda t: t["steps"][3].update(step_id=9),
        lambda t: t.update(schema_version="ATIF-v2.0"),
        lambda t: t["steps"][2]["observation"]["results"][0].update(
            source_call_id="nope"
        ),
    ):
        broken = copy.deepcopy(good)
        breaks(broken)
        assert valid_for_harbor(broken), broken
        assert check_trajectory(broken), (
            broken
        )  # the importer refuses what Harbor refuses


def test_atif_import_maps_steps_calls_observations_and_metrics():
    (session,) = load_sessions("atif", TRAJECTORY)
    assert session.prompt.startswith("Create a file called hello.txt")
    assert session.model == "claude-sonnet-4-5"
    assert (
        session.trace.summary.total_turns == 3
    )  # the agent steps; system and user steps are not turns
    calls = session.result.metrics.tool_calls
    assert [c.name for c in calls] == [
        "bash_command",
        "bash_command",
        "mark_task_complete",
    ] and all(c.success for c in calls)
    # final_metrics win: prompt tokens include the cached ones
    tokens = session.result.metrics.tokens
    assert (tokens.input, tokens.cache_read, tokens.output) == (5961 - 3776, 3776, 197)
    assert (
        session.result.metrics.cost.total_usd == pytest.approx(0.0101)
        and session.cost_source == "provider"
    )
    # per-step metrics: one model response each
    assert [m.tokens.output for m in session.result.metrics.model_calls] == [96, 61, 40]
    reasoning = [e for e in session.trace.events if isinstance(e, ReasoningEvent)]
    assert (
        reasoning[0].content == "The task asks for hello.txt in the working directory."
    )


def test_unknown_version_and_invalid_trajectory_are_one_line_naming_the_file(tmp_path):
    data = json.loads(TRAJECTORY.read_text())
    future = tmp_path / "future.json"
    future.write_text(json.dumps({**data, "schema_version": "ATIF-v2.0"}))
    with pytest.raises(ValidationError) as info:
        load_sessions("atif", future)
    assert (
        str(info.value)
        == f"{future}: $.schema_version: unknown ATIF version 'ATIF-v2.0'; this "
        "profiler reads ATIF-v1.0 to ATIF-v1.8"
    )
    data["steps"][2]["tool_calls"][0]["arguments"] = "echo hi"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(
        ValidationError,
        match=r"bad.json: \$\.steps\[2\]\.tool_calls\[0\]\.arguments: expected "
        r"object, got a string",
    ):
        load_sessions("atif", bad)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The demo profile run once, its traces exported as ATIF."""
    root = tmp_path_factory.mktemp("atif")
    assert (
        subprocess.run(
            [str(PROFILER), "init", "demo"], cwd=root, capture_output=True, timeout=60
        ).returncode
        == 0
    )
    demo = root / "demo"
    run = subprocess.run(
        [
            str(PROFILER),
            "run",
            "profile.yaml",
            "--repetitions",
            "2",
            "--run-id",
            "r1",
            "--no-report",
        ],
        cwd=demo,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    out = subprocess.run(
        [str(PROFILER), "traces", "export", "r1", "--format", "atif", "--out", "atif"],
        cwd=demo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    files = sorted((demo / "atif").rglob("*.json"))
    assert files and f"Wrote {len(files)} ATIF trajectories" in out.stdout
    return demo, files


def test_every_exported_file_validates_against_harbors_model(exported):
    _, files = exported
    for path in files:
        trajectory = json.loads(path.read_text())
        assert trajectory["schema_version"] == "ATIF-v1.7"
        assert valid_for_harbor(trajectory) == [], path


def test_exported_trajectories_import_back_with_the_same_calls_and_turns(exported):
    demo, files = exported
    original = {}
    for line in (
        (demo / "reports" / "r1" / "sessions" / "traces.jsonl").read_text().splitlines()
    ):
        record = json.loads(line)
        original[(record["scenarioId"], record["mode"], record["iteration"])] = record[
            "trace"
        ]
    for path in files:
        (session,) = load_sessions("atif", path)
        extra = json.loads(path.read_text())["agent"]["extra"]
        trace = original[(extra["scenario_id"], extra["mode"], extra["iteration"])]
        calls = [e for e in trace["events"] if e["type"] == "tool_call"]
        assert [c.name for c in session.result.metrics.tool_calls] == [
            c["name"] for c in calls
        ]
        assert [c.success for c in session.result.metrics.tool_calls] == [
            c["success"] for c in calls
        ]
        assert session.trace.summary.total_turns == trace["summary"]["totalTurns"]
        assert (
            session.result.metrics.tokens.output
            == trace["summary"]["totalTokens"]["output"]
            + trace["summary"]["totalTokens"]["reasoning"]
        )


def test_every_exported_file_validates_with_harbors_own_model(exported):
    python = harbor_python()
    _, files = exported
    assert harbor_problems(python, files) == []
