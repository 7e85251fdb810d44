"""`scenarios.format`: plugins read scenario files in their own layout; the core keeps
sets, ids and checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from profiler_core import ConfigError, Scenario, hookimpl
from profiler_core.config.loader import load_profile
from profiler_core.plugins.manager import get_plugin_manager, set_default_plugin_manager

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "eval-ghx" / "eval.yaml"


class TicketFormat:
    id = "tickets"

    def parse(self, data, source):
        if "ticket" not in data:
            raise ConfigError(f"{source}: $.ticket: required")
        if data["ticket"] == "explode":
            raise KeyError("boom")
        if data["ticket"] == "wrong-type":
            return {"id": data["id"]}
        return Scenario(
            id=data["id"],
            name=data["id"],
            prompt=data["ticket"],
            extensions={"labels": data.get("labels", [])},
        )


class TicketPlugin:
    @hookimpl
    def profiler_register_scenario_formats(self):
        return [TicketFormat]


@pytest.fixture
def manager():
    manager = get_plugin_manager(
        entrypoints=True, plugins=[("tickets", TicketPlugin())]
    )
    set_default_plugin_manager(manager)
    yield manager
    set_default_plugin_manager(None)


def project(
    tmp_path: Path, files: dict[str, object], fmt: str | None = "tickets", **scenarios
) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_text(json.dumps(data))
    section = {"path": "scenarios", **scenarios}
    if fmt is not None:
        section["format"] = fmt
    profile = tmp_path / "profile.yaml"
    profile.write_text(json.dumps({"modes": {"plain": {}}, "scenarios": section}))
    return profile


def test_a_plugin_format_reads_the_files_and_the_core_selects(manager, tmp_path):
    files = {
        "a.json": {"id": "a-001", "ticket": "Fix the login page", "labels": ["ui"]},
        "b.json": {"id": "b-001", "ticket": "Close stale issues"},
        "scenario-sets.json": {"small": ["b-001"]},
    }
    config = load_profile(project(tmp_path, files))
    assert [(s.id, s.prompt, s.extensions["labels"]) for s in config.scenarios] == [
        ("a-001", "Fix the login page", ["ui"]),
        ("b-001", "Close stale issues", []),
    ]
    (tmp_path / "small").mkdir()
    only_set = load_profile(project(tmp_path / "small", files, set="small"))
    assert [s.id for s in only_set.scenarios] == ["b-001"]


def test_the_format_s_errors_and_the_core_s_checks_come_together(manager, tmp_path):
    files = {
        "a.json": {"id": "a-001", "ticket": "one"},
        "dup.json": {"id": "a-001", "ticket": "two"},
        "bad.json": {"id": "c-001"},
        "boom.json": {"id": "d-001", "ticket": "explode"},
        "odd.json": {"id": "e-001", "ticket": "wrong-type"},
    }
    with pytest.raises(ConfigError) as excinfo:
        load_profile(project(tmp_path, files))
    lines = str(excinfo.value).splitlines()
    assert any(line.endswith("bad.json: $.ticket: required") for line in lines), lines
    assert any(
        "boom.json: scenario format 'tickets' failed: KeyError: 'boom'" in line
        for line in lines
    ), lines
    assert any(
        "odd.json: scenario format 'tickets' returned dict, not a Scenario" in line
        for line in lines
    ), lines
    assert any(
        "dup.json: $.id: duplicate scenario id 'a-001'" in line for line in lines
    ), lines


def test_an_unknown_format_is_one_line_naming_the_key(manager, tmp_path):
    files = {"a.json": {"id": "a-001", "ticket": "one"}}
    with pytest.raises(ConfigError) as excinfo:
        load_profile(project(tmp_path, files, fmt="ticket"))
    message = str(excinfo.value)
    assert (
        "scenarios.format: unknown scenario format 'ticket'; did you mean 'tickets'?"
        in message
    )
    assert "a.json" not in message  # the files are not also read as the core layout


def test_without_a_format_the_core_layout_applies(manager, tmp_path):
    files = {"a.json": {"id": "a-001", "ticket": "one"}}
    with pytest.raises(
        ConfigError, match="ticket"
    ):  # the core layout has no `ticket` key
        load_profile(project(tmp_path, files, fmt=None))


def test_the_example_eval_config_loads_the_eval_scenarios():
    set_default_plugin_manager(None)
    config = load_profile(EXAMPLE)
    ids = [s.id for s in config.scenarios]
    assert len(ids) == 7 and "pr-threads-resolve-001" in ids
    close = next(s for s in config.scenarios if s.id == "issue-close-bug-001")
    assert close.extensions["category"] == "issue"
    assert close.extensions["fixture"]["requires"] == ["issue_bug_to_close"]
    assert close.extensions["assertions"]["checkpoints"][0]["task"] == "issue.view"
