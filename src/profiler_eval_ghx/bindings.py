"""Fill a scenario's ``{{var}}`` placeholders from the fixture manifest (prompt and checkpoint inputs).

A binding names a dotted path into the manifest's ``fixtures``
(``"issue_number": "issue_bug_to_close.number"``); a fixture's ``repo``
(``owner/name``) also gives ``{{owner}}`` and ``{{repo_name}}``; extra
variables (``{{run_id}}``...) win over bindings. An input value that is
exactly ``"{{x}}"`` takes the raw value, so numbers stay numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from profiler_core import ProfilerError, Scenario
from profiler_core.conditions import PathError, resolve_path
from profiler_core.serde import unstructure

from .manifest import FixtureManifest

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class BindingError(ProfilerError):
    """A placeholder or binding that cannot be filled (names the scenario and the variable)."""


def variables_for(scenario: Scenario, manifest: FixtureManifest, extra: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario's variables: ``owner``/``repo_name`` of its repo, its bindings, then ``extra``."""
    fixture = (scenario.extensions or {}).get("fixture") or {}
    bindings = fixture.get("bindings") or {}
    repo = fixture.get("repo") or manifest.repo
    values: dict[str, Any] = {}
    if isinstance(repo, str) and "/" in repo:
        values["owner"], values["repo_name"] = repo.split("/", 1)
    fixtures = {name: unstructure(resource) for name, resource in manifest.fixtures.items()}
    for var, target in bindings.items():
        try:
            values[var] = resolve_path(fixtures, str(target))
        except PathError as exc:
            raise BindingError(f"scenario {scenario.id}: fixture.bindings.{var}: {target!r} is not in the manifest ({exc})") from None
    values.update(extra)
    return values


def fill(value: Any, variables: Mapping[str, Any], where: str) -> Any:
    """``value`` with placeholders filled: strings, and strings inside lists and objects."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value.strip())
        if whole:
            return _lookup(whole.group(1), variables, where)  # the raw value: numbers stay numbers
        return _PLACEHOLDER.sub(lambda m: str(_lookup(m.group(1), variables, where)), value)
    if isinstance(value, list):
        return [fill(v, variables, where) for v in value]
    if isinstance(value, Mapping):
        return {k: fill(v, variables, f"{where}.{k}") for k, v in value.items()}
    return value


def _lookup(name: str, variables: Mapping[str, Any], where: str) -> Any:
    if name not in variables:
        known = ", ".join(sorted(variables)) or "none"
        raise BindingError(f"{where}: unknown variable {{{{{name}}}}} (known: {known})")
    return variables[name]


def bind_scenario(scenario: Scenario, manifest: FixtureManifest, extra: Mapping[str, Any]) -> Scenario:
    """The scenario with its prompt and checkpoint inputs filled in for this manifest."""
    variables = variables_for(scenario, manifest, extra)
    where = f"scenario {scenario.id}: prompt"
    # The prompt is text: even a prompt that is one placeholder becomes a string.
    prompt = _PLACEHOLDER.sub(lambda m: str(_lookup(m.group(1), variables, where)), scenario.prompt)
    ext = dict(scenario.extensions or {})
    assertions = ext.get("assertions")
    if isinstance(assertions, Mapping) and isinstance(assertions.get("checkpoints"), list):
        checkpoints = [
            {**cp, "input": fill(cp.get("input") or {}, variables, f"scenario {scenario.id}: checkpoint {cp.get('id')}.input")}
            for cp in assertions["checkpoints"]
        ]
        ext["assertions"] = {**assertions, "checkpoints": checkpoints}
    return attrs.evolve(scenario, prompt=prompt, extensions=ext)
