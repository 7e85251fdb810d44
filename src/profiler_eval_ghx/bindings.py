"""Fill a scenario's ``{{variables}}`` from the fixture manifest.

Variables come from three places, later ones winning:

1. the manifest's repository ``owner/name`` (else the scenario's ``fixture.repo``):
   ``{{repo}}``, ``{{owner}}``, ``{{repo_name}}``;
2. the scenario's ``fixture.bindings``: ``{"pr_number": "pr.number"}`` is the dotted
   path ``number`` of the manifest fixture ``pr`` (JavaScript-like paths:
   ``pr.labels.0``, ``pr.labels.length``); a binding named ``repo`` holding
   ``owner/name`` also sets ``{{owner}}`` and ``{{repo_name}}``;
3. extra variables given by the caller (``{{run_id}}``, ``{{iteration}}``, ...).

They are replaced in the prompt and in every string of each checkpoint's
``input``; an input value that is exactly ``"{{x}}"`` becomes the raw value
(a number stays a number). An unknown variable or a path that leads nowhere is
a ``BindingError`` naming the scenario and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, overload

import attrs

from profiler_core import ProfilerError, Scenario, structure, unstructure
from profiler_core.conditions import PathError, resolve_path

from .manifest import FixtureManifest
from .scenario import Assertions, EvalScenario, Fixture

__all__ = [
    "VARIABLE",
    "BindingError",
    "bind_scenario",
    "binding_values",
    "fill",
    "template_variables",
    "unbound_variables",
]

#: ``{{name}}`` (spaces inside the braces allowed).
VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

#: Variables every scenario may use without a binding (derived from the repository).
REPO_VARIABLES = ("repo", "owner", "repo_name")


class BindingError(ProfilerError):
    """A scenario's variable cannot be filled (unknown name, or its manifest path leads nowhere)."""


def template_variables(value: Any) -> set[str]:
    """Every ``{{name}}`` in a string, or in the strings of a nested list / object."""
    if isinstance(value, str):
        return set(VARIABLE.findall(value))
    if isinstance(value, Mapping):
        return (
            set().union(*(template_variables(v) for v in value.values()))
            if value
            else set()
        )
    if isinstance(value, (list, tuple)):
        return set().union(*(template_variables(v) for v in value)) if value else set()
    return set()


def _split_repo(values: dict[str, Any], repo: Any) -> None:
    if isinstance(repo, str) and repo.count("/") == 1 and all(repo.split("/")):
        values["owner"], values["repo_name"] = repo.split("/")


def binding_values(
    scenario: EvalScenario | Scenario,
    manifest: FixtureManifest | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The value of every variable the scenario may use (see the module docstring for the order)."""
    values: dict[str, Any] = {}
    fixture = _fixture(scenario)
    # The manifest's repository is where the fixtures really are (a config may point
    # elsewhere than the file).
    repo = (
        manifest.repo
        if manifest is not None
        else fixture.repo
        if fixture is not None
        else None
    )
    if repo is not None:
        values["repo"] = repo
        _split_repo(values, repo)
    if fixture is not None and fixture.bindings:
        if manifest is None:
            raise BindingError(
                f"scenario {scenario.id}: fixture.bindings: no fixture manifest "
                "to bind from (seed the fixtures first)"
            )
        fixtures = unstructure(manifest)["fixtures"]
        for var, target in fixture.bindings.items():
            name, _, path = target.partition(".")
            if name not in fixtures:
                have = ", ".join(sorted(fixtures)) or "none"
                raise BindingError(
                    f"scenario {scenario.id}: fixture.bindings.{var}: fixture "
                    f"{name!r} is not in the manifest "
                    f"(seed {manifest.seed_id!r} has: {have})"
                )
            try:
                values[var] = resolve_path(fixtures[name], path)
            except PathError as exc:
                raise BindingError(
                    f"scenario {scenario.id}: fixture.bindings.{var}: {target!r}: {exc}"
                ) from None
            if var == "repo":
                _split_repo(values, values[var])
    values.update(extra or {})
    return values


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def fill(value: Any, values: Mapping[str, Any], where: str, *, raw: bool = True) -> Any:
    """Replace ``{{variables}}`` in ``value`` (a string, or strings nested in lists / objects).

    With ``raw``, a string that is exactly one ``{{x}}`` becomes x's value unchanged.
    """
    if isinstance(value, str):
        for name in VARIABLE.findall(value):
            if name not in values:
                known = ", ".join(sorted(values)) or "none"
                raise BindingError(
                    f"{where}: unknown variable {{{{{name}}}}} (known: {known})"
                )
        whole = VARIABLE.fullmatch(value)
        if raw and whole:
            return values[whole.group(1)]
        return VARIABLE.sub(lambda m: _text(values[m.group(1)]), value)
    if isinstance(value, Mapping):
        return {k: fill(v, values, f"{where}.{k}", raw=raw) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [fill(v, values, f"{where}[{i}]", raw=raw) for i, v in enumerate(value)]
    return value


def _fixture(scenario: EvalScenario | Scenario) -> Fixture | None:
    if isinstance(scenario, EvalScenario):
        return scenario.fixture
    raw = (scenario.extensions or {}).get("fixture")
    return (
        None
        if raw is None
        else structure(
            raw, Fixture, source=f"scenario {scenario.id}: extensions.fixture"
        )
    )


def _bind_assertions(
    scenario_id: str, assertions: Assertions, values: Mapping[str, Any]
) -> Assertions:
    checkpoints = tuple(
        attrs.evolve(
            c,
            input=fill(
                c.input,
                values,
                f"scenario {scenario_id}: assertions.checkpoints[{i}].input",
            ),
        )
        for i, c in enumerate(assertions.checkpoints)
    )
    return attrs.evolve(assertions, checkpoints=checkpoints)


@overload
def bind_scenario(
    scenario: EvalScenario,
    manifest: FixtureManifest | None,
    variables: Mapping[str, Any] | None = None,
) -> EvalScenario: ...
@overload
def bind_scenario(
    scenario: Scenario,
    manifest: FixtureManifest | None,
    variables: Mapping[str, Any] | None = None,
) -> Scenario: ...


def bind_scenario(
    scenario: EvalScenario | Scenario,
    manifest: FixtureManifest | None,
    variables: Mapping[str, Any] | None = None,
) -> EvalScenario | Scenario:
    """The scenario with its variables filled; a core ``Scenario`` comes back as one
    (other extensions kept).

    A core scenario needs no more than the parts it has: ``extensions.fixture``
    for the bindings, ``extensions.assertions`` for checkpoint inputs.
    """
    values = binding_values(scenario, manifest, variables)
    prompt = fill(scenario.prompt, values, f"scenario {scenario.id}: prompt", raw=False)
    if isinstance(scenario, EvalScenario):
        return attrs.evolve(
            scenario,
            prompt=prompt,
            assertions=_bind_assertions(scenario.id, scenario.assertions, values),
        )
    extensions = dict(scenario.extensions or {})
    if extensions.get("assertions") is not None:
        assertions = structure(
            extensions["assertions"],
            Assertions,
            source=f"scenario {scenario.id}: extensions.assertions",
        )
        extensions["assertions"] = unstructure(
            _bind_assertions(scenario.id, assertions, values)
        )
    return attrs.evolve(scenario, prompt=prompt, extensions=extensions)


def unbound_variables(
    scenario: EvalScenario, extra_names: tuple[str, ...] = ()
) -> list[str]:
    """Problems with the scenario's variables that can be seen without a manifest (for
    ``profiler eval check``)."""
    defined = set(REPO_VARIABLES) | set(extra_names)
    if scenario.fixture is not None:
        defined |= set(scenario.fixture.bindings)
    places: list[tuple[str, Any]] = [("prompt", scenario.prompt)]
    places += [
        (f"assertions.checkpoints[{i}].input", c.input)
        for i, c in enumerate(scenario.assertions.checkpoints)
    ]
    problems = []
    for where, value in places:
        for name in sorted(template_variables(value) - defined):
            problems.append(
                f"scenario {scenario.id}: {where}: unknown variable "
                f"{{{{{name}}}}} (bindings: {', '.join(sorted(defined))})"
            )
    return problems
