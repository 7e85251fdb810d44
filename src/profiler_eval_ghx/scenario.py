"""Eval scenarios: one JSON file per GitHub task, loaded, checked and handed to the core runner.

A scenario file (camelCase, as in the original)::

    {"id": "issue-close-001", "name": "Close a stale issue", "description": "...",
     "prompt": "Close issue #{{issue_number}} in {{repo}} ...", "timeoutMs": 180000,
     "category": "issue", "difficulty": "basic", "tags": ["issue"],
     "fixture": {"repo": "my-org/eval-sandbox", "requires": ["issue"],
                 "bindings": {"issue_number": "issue.number"}},
     "assertions": {"checkpoints": [
       {"id": "closed", "description": "the issue is closed", "task": "issue.view",
        "input": {"owner": "{{owner}}", "name": "{{repo_name}}", "issueNumber": "{{issue_number}}"},
        "condition": {"type": "field_equals", "path": "state", "value": "CLOSED"}}]}}

The core runner knows only ``profiler_core.Scenario``: ``to_core_scenario`` puts
``category``, ``difficulty``, ``fixture`` and ``assertions`` (as their JSON) into
its ``extensions``, and ``from_core_scenario`` reads them back for the scorer and
the hooks. See docs/eval-ghx.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from profiler_core import (
    ConfigError,
    Scenario,
    ScenarioSets,
    from_json,
    structure,
    unstructure,
)
from profiler_core.conditions import Condition
from profiler_core.util.textcut import shown

__all__ = [
    "CATEGORIES",
    "DIFFICULTIES",
    "EXTENSION_KEYS",
    "ID_PATTERN",
    "SCENARIO_SETS_FILE",
    "Assertions",
    "Checkpoint",
    "EvalScenario",
    "Fixture",
    "GhxScenarioFormat",
    "ScenarioLoadError",
    "from_core_scenario",
    "load_core_scenarios",
    "load_scenarios",
    "read_scenario_file",
    "to_core_scenario",
]

#: Scenario ids: lowercase words joined by dashes, ending in a three-digit number
#: (``pr-review-002``).
ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*-\d{3}$")
CATEGORIES = ("pr", "issue", "workflow", "release", "repo")
DIFFICULTIES = ("basic", "intermediate", "advanced")
SCENARIO_SETS_FILE = "scenario-sets.json"
#: The keys of ``Scenario.extensions`` that carry the eval-specific parts.
EXTENSION_KEYS = ("category", "difficulty", "fixture", "assertions")

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class ScenarioLoadError(ConfigError):
    """One or more scenario files are wrong; ``problems`` holds one line per problem."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


# -- validators (messages name the camelCase key; serde folds it into the path) --------


def _key(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _non_empty(instance, attribute: attrs.Attribute, value) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(
            f"{_key(attribute.name)}: expected a non-empty string, got {value!r}"
        )


def _one_of(choices: tuple[str, ...]):
    def check(instance, attribute: attrs.Attribute, value) -> None:
        if value not in choices:
            raise ValueError(
                f"{_key(attribute.name)}: expected one of {', '.join(choices)}, got {value!r}"
            )

    return check


def _scenario_id(instance, attribute: attrs.Attribute, value) -> None:
    # fullmatch: `$` alone would let a trailing newline through
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise ValueError(
            "id: expected lowercase words joined by '-' ending in a 3-digit "
            f"number (e.g. pr-review-001), got {shown(value)}"
        )


def _positive(instance, attribute: attrs.Attribute, value) -> None:
    if value <= 0:
        raise ValueError(f"{_key(attribute.name)}: expected a value > 0, got {value!r}")


def _non_negative(instance, attribute: attrs.Attribute, value) -> None:
    if value < 0:
        raise ValueError(
            f"{_key(attribute.name)}: expected a value >= 0, got {value!r}"
        )


def _repo(instance, attribute: attrs.Attribute, value) -> None:
    if not _REPO.match(value):
        raise ValueError(f"repo: expected owner/name, got {value!r}")


# -- the model ---------------------------------------------------------------------------


def _bindings_name_required_fixtures(
    instance: Any, attribute: attrs.Attribute, value: dict[str, str]
) -> None:
    for var, target in value.items():
        head = target.split(".", 1)[0]
        if not head or head not in instance.requires:
            needed = ", ".join(instance.requires) or "nothing"
            raise ValueError(
                f"bindings: expected {var!r} to be a path starting with a "
                f"required fixture ({needed}), got {target!r}"
            )


def _one_strategy(instance: Any, attribute: attrs.Attribute, value: bool) -> None:
    if value and instance.reseed_per_iteration:
        raise ValueError(
            "seedPerIteration: expected reseedPerIteration or seedPerIteration, not both"
        )


@attrs.frozen(kw_only=True)
class Fixture:
    """What a scenario needs on GitHub: the repository, the fixtures by name, and its
    ``{{variables}}``."""

    repo: str = attrs.field(validator=_repo)
    requires: tuple[str, ...] = ()
    #: variable -> dotted path into the manifest's fixtures (``"pr.number"``,
    #: ``"issue.metadata.searchTerm"``)
    bindings: dict[str, str] = attrs.field(
        factory=dict, validator=_bindings_name_required_fixtures
    )
    reseed_per_iteration: bool = False
    seed_per_iteration: bool = attrs.field(default=False, validator=_one_strategy)


@attrs.frozen(kw_only=True)
class Checkpoint:
    """One check after the session: run capability ``task`` with ``input``, then test
    ``condition`` on its data."""

    id: str = attrs.field(validator=_non_empty)
    description: str = ""
    task: str = attrs.field(validator=_non_empty)
    input: dict[str, Any] = attrs.field(factory=dict)
    condition: Condition


def _unique_ids(
    instance: Any, attribute: attrs.Attribute, value: tuple[Checkpoint, ...]
) -> None:
    seen: set[str] = set()
    for index, checkpoint in enumerate(value):
        if checkpoint.id in seen:
            raise ValueError(
                f"checkpoints: expected unique ids, got {checkpoint.id!r} twice "
                f"(again at index {index})"
            )
        seen.add(checkpoint.id)


@attrs.frozen(kw_only=True)
class Assertions:
    """The checkpoints that decide success, plus informational expectations about the
    agent's tools."""

    checkpoints: tuple[Checkpoint, ...] = attrs.field(validator=_unique_ids)
    expected_tool_sequence: tuple[str, ...] | None = None
    expected_capabilities: tuple[str, ...] | None = None


@attrs.frozen(kw_only=True)
class EvalScenario:
    """A GitHub task for the agent: the core scenario's fields plus category,
    difficulty, fixture and assertions."""

    id: str = attrs.field(validator=_scenario_id)
    name: str = attrs.field(validator=_non_empty)
    description: str
    prompt: str = attrs.field(validator=_non_empty)
    timeout_ms: int = attrs.field(validator=_positive)
    allowed_retries: int = attrs.field(default=0, validator=_non_negative)
    tags: tuple[str, ...] = ()
    category: str = attrs.field(validator=_one_of(CATEGORIES))
    difficulty: str = attrs.field(validator=_one_of(DIFFICULTIES))
    fixture: Fixture | None = None
    assertions: Assertions


# -- to and from the core Scenario ---------------------------------------------------------


def to_core_scenario(scenario: EvalScenario) -> Scenario:
    """The scenario the core runner runs; the eval parts travel as JSON in ``extensions``."""
    data = unstructure(scenario)
    return Scenario(
        id=scenario.id,
        name=scenario.name,
        description=scenario.description,
        prompt=scenario.prompt,
        timeout_ms=scenario.timeout_ms,
        allowed_retries=scenario.allowed_retries,
        tags=scenario.tags,
        extensions={key: data[key] for key in EXTENSION_KEYS if key in data},
    )


def from_core_scenario(scenario: Scenario | EvalScenario) -> EvalScenario:
    """Recover the eval scenario from a core one (what the scorer and hooks receive);
    ``ConfigError`` if it is not one."""
    if isinstance(scenario, EvalScenario):
        return scenario
    extensions = scenario.extensions or {}
    missing = [
        key for key in ("category", "difficulty", "assertions") if key not in extensions
    ]
    if missing:
        raise ConfigError(
            f"scenario {scenario.id!r}: not an eval scenario (extensions lack "
            f"{', '.join(missing)}; "
            "load it with profiler_eval_ghx.scenario.load_scenarios)"
        )
    data = {
        "id": scenario.id,
        "name": scenario.name,
        "description": scenario.description,
        "prompt": scenario.prompt,
        "timeoutMs": scenario.timeout_ms,
        "allowedRetries": scenario.allowed_retries,
        "tags": list(scenario.tags),
        **{
            key: extensions[key]
            for key in EXTENSION_KEYS
            if extensions.get(key) is not None
        },
    }
    return structure(data, EvalScenario, source=f"scenario {scenario.id!r}")


class GhxScenarioFormat:
    """``scenarios.format: ghx``: a profile's scenarios are eval scenario files
    (camelCase, top-level ``assertions``)."""

    id = "ghx"

    def parse(self, data: dict[str, Any], source: str) -> Scenario:
        """The core scenario of one eval scenario file; a bad file names the file and the field."""
        return to_core_scenario(structure(data, EvalScenario, source=source))


# -- loading ---------------------------------------------------------------------------------


def read_scenario_file(path: Path) -> EvalScenario:
    """Read one scenario file; a problem raises ``ProfilerError`` naming the file and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    return from_json(text, EvalScenario, source=str(path))


def load_scenarios(
    folder: str | Path, *, ids: Iterable[str] | None = None, set_name: str | None = None
) -> list[EvalScenario]:
    """Load the scenario files of ``folder`` (the core's loader, ``ghx`` format), then
    pick ``ids`` or the set.

    Every problem (bad files, duplicate ids, ids of a set that no file has,
    unknown requested ids) is collected first and raised together as one
    ``ScenarioLoadError``, one line each.
    """
    from profiler_core.config import load_scenarios as load_folder
    from profiler_core.config import select_scenarios

    folder = Path(folder)
    if not folder.is_dir():
        raise ScenarioLoadError([f"{folder}: scenario folder does not exist"])
    found, sets, problems, unloadable = load_folder(
        folder, scenario_format=GhxScenarioFormat()
    )
    if not found and not problems:
        problems.append(f"{folder}: no scenario files (*.json) found")
    broken_sets = _broken_sets(folder, found, sets, unloadable, problems)
    ids = tuple(ids or ())
    picked, selection_problems = select_scenarios(
        found, sets, ids=ids or None, set_name=set_name, unloadable=unloadable
    )
    if (
        ids or set_name not in broken_sets
    ):  # a broken chosen set is already reported above
        problems += selection_problems
    if problems:
        raise ScenarioLoadError(problems)
    return [from_core_scenario(s) for s in picked]


def _broken_sets(
    folder: Path,
    found: list[Scenario],
    sets: ScenarioSets,
    unloadable: set[str],
    problems: list[str],
) -> set[str]:
    """The sets that name an id no file defines (a line each in ``problems``)."""
    # A set naming an id that no file defines is a typo waiting for the day someone runs
    # that set.
    if not found:
        return set()
    known = {s.id for s in found} | unloadable
    broken = set()
    for name, set_ids in sorted(sets.sets.items()):
        unknown = [i for i in set_ids if i not in known]
        if unknown:
            broken.add(name)
            problems.append(
                f"{folder / SCENARIO_SETS_FILE}: $['{name}']: unknown scenario "
                f"id(s) {', '.join(unknown)}"
            )
    return broken


def load_core_scenarios(
    folder: str | Path, *, ids: Iterable[str] | None = None, set_name: str | None = None
) -> list[Scenario]:
    """``load_scenarios`` as the core runner wants them (``RunOptions.scenarios``): eval
    parts in ``extensions``."""
    return [
        to_core_scenario(s) for s in load_scenarios(folder, ids=ids, set_name=set_name)
    ]
