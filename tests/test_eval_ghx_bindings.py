"""Bindings: {{variables}} from the fixture manifest into the prompt and the checkpoint inputs."""

from __future__ import annotations

import pytest

from profiler_core import ProfilerError, Scenario
from profiler_core.storage.serde import structure
from profiler_eval_ghx.bindings import (
    BindingError,
    bind_scenario,
    binding_values,
    template_variables,
    unbound_variables,
)
from profiler_eval_ghx.manifest import FixtureManifest
from profiler_eval_ghx.scenario import (
    EvalScenario,
    from_core_scenario,
    to_core_scenario,
)

MANIFEST = structure(
    {
        "seedId": "seed-1",
        "createdAt": "2026-11-22T10:00:00Z",
        "repo": "acme/sandbox",
        "fixtures": {
            "pr": {
                "type": "pr",
                "number": 7,
                "repo": "acme/sandbox",
                "branch": "eval/pr-7",
                "labels": ["ghx-eval", "p1"],
                "metadata": {"originalSha": "abc123", "files": [{"path": "README.md"}]},
            },
            "issue": {
                "type": "issue",
                "number": 12,
                "repo": "acme/sandbox",
                "metadata": {"searchTerm": "flaky login"},
            },
            "other_repo": {
                "type": "issue",
                "number": 3,
                "repo": "acme/elsewhere",
                "metadata": {},
            },
        },
    },
    FixtureManifest,
)


def scenario(
    prompt: str, input: dict, bindings: dict, requires=("pr", "issue", "other_repo")
) -> EvalScenario:
    return structure(
        {
            "id": "pr-bind-001",
            "name": "bind",
            "description": "",
            "prompt": prompt,
            "timeoutMs": 1000,
            "category": "pr",
            "difficulty": "basic",
            "fixture": {
                "repo": "acme/from-file",
                "requires": list(requires),
                "bindings": bindings,
            },
            "assertions": {
                "checkpoints": [
                    {
                        "id": "c",
                        "description": "",
                        "task": "pr.view",
                        "input": input,
                        "condition": {"type": "non_empty"},
                    }
                ]
            },
        },
        EvalScenario,
    )


def test_prompt_and_inputs_are_filled_and_exact_values_stay_raw():
    s = scenario(
        "Review PR #{{pr_number}} ({{ head }}) in {{owner}}/{{repo_name}} "
        "about {{term}}; labels {{labels}}",
        {
            "owner": "{{owner}}",
            "name": "{{repo_name}}",
            "prNumber": "{{pr_number}}",
            "title": "PR {{pr_number}}",
            "nested": {"list": ["{{pr_number}}", "x-{{term}}"]},
            "limit": 5,
        },
        {
            "pr_number": "pr.number",
            "head": "pr.branch",
            "term": "issue.metadata.searchTerm",
            "labels": "pr.labels",
        },
    )
    bound = bind_scenario(s, MANIFEST)
    assert (
        bound.prompt
        == 'Review PR #7 (eval/pr-7) in acme/sandbox about flaky login; labels ["ghx-eval", "p1"]'
    )
    assert bound.assertions.checkpoints[0].input == {
        "owner": "acme",
        "name": "sandbox",
        "prNumber": 7,  # exactly "{{pr_number}}": the manifest's number, still a number
        "title": "PR 7",
        "nested": {"list": [7, "x-flaky login"]},
        "limit": 5,
    }
    # the original is untouched (frozen values)
    assert s.assertions.checkpoints[0].input["prNumber"] == "{{pr_number}}"


def test_javascript_like_paths_reach_into_lists():
    s = scenario(
        "{{first_label}} {{label_count}} {{file}}",
        {},
        {
            "first_label": "pr.labels.0",
            "label_count": "pr.labels.length",
            "file": "pr.metadata.files.0.path",
        },
    )
    assert bind_scenario(s, MANIFEST).prompt == "ghx-eval 2 README.md"


def test_a_repo_binding_gives_owner_and_repo_name_and_extras_override():
    s = scenario(
        "{{repo}} {{owner}} {{repo_name}} {{run_id}} {{pr_number}}",
        {"n": "{{iteration}}"},
        {"repo": "other_repo.repo", "pr_number": "pr.number"},
    )
    values = binding_values(s, MANIFEST, {"run_id": "run-9", "iteration": 2})
    assert (values["repo"], values["owner"], values["repo_name"]) == (
        "acme/elsewhere",
        "acme",
        "elsewhere",
    )
    bound = bind_scenario(
        s, MANIFEST, {"run_id": "run-9", "iteration": 2, "pr_number": 99}
    )
    assert bound.prompt == "acme/elsewhere acme elsewhere run-9 99"
    assert bound.assertions.checkpoints[0].input == {"n": 2}


def test_without_a_manifest_the_files_repo_still_gives_owner_and_name():
    s = scenario("{{owner}}/{{repo_name}} run {{run_id}}", {}, {}, requires=())
    assert bind_scenario(s, None, {"run_id": "r1"}).prompt == "acme/from-file run r1"


@pytest.mark.parametrize(
    ("prompt", "input", "bindings", "fragment"),
    [
        (
            "Fix {{nope}}",
            {},
            {},
            "scenario pr-bind-001: prompt: unknown variable {{nope}} (known: "
            "owner, repo, repo_name)",
        ),
        (
            "x",
            {"a": {"b": ["{{nope}}"]}},
            {},
            "scenario pr-bind-001: assertions.checkpoints[0].input.a.b[0]: "
            "unknown variable {{nope}}",
        ),
        (
            "x",
            {},
            {"n": "pr.numbr"},
            "scenario pr-bind-001: fixture.bindings.n: 'pr.numbr': path "
            "'numbr': segment 'numbr' not found",
        ),
        (
            "x",
            {},
            {"n": "pr.labels.5"},
            "fixture.bindings.n: 'pr.labels.5': path 'labels.5': segment '5' is out of range",
        ),
        (
            "x",
            {},
            {"n": "issue.number.value"},
            "segment 'value' cannot be applied: the value at number is a number",
        ),
    ],
)
def test_unknown_variables_and_unresolvable_paths_are_errors(
    prompt, input, bindings, fragment
):
    with pytest.raises(BindingError) as info:
        bind_scenario(scenario(prompt, input, bindings), MANIFEST)
    assert fragment in str(info.value)


def test_a_fixture_missing_from_the_manifest_names_the_seed():
    s = scenario(
        "x",
        {},
        {"n": "pr_with_mixed_threads.number"},
        requires=("pr_with_mixed_threads",),
    )
    with pytest.raises(
        BindingError,
        match=r"fixture 'pr_with_mixed_threads' is not in the manifest \(seed "
        r"'seed-1' has: issue, other_repo, pr\)",
    ):
        bind_scenario(s, MANIFEST)
    with pytest.raises(BindingError, match="no fixture manifest to bind from"):
        bind_scenario(s, None)


def test_a_core_scenario_is_bound_as_a_core_scenario_keeping_other_extensions():
    s = scenario(
        "PR {{pr_number}}", {"prNumber": "{{pr_number}}"}, {"pr_number": "pr.number"}
    )
    core = to_core_scenario(s)
    core = Scenario(
        **{
            **{
                f: getattr(core, f)
                for f in (
                    "id",
                    "name",
                    "description",
                    "prompt",
                    "timeout_ms",
                    "allowed_retries",
                    "tags",
                )
            },
            "extensions": {**core.extensions, "team": "ghx"},
        }
    )
    bound = bind_scenario(core, MANIFEST, {"run_id": "r"})
    assert isinstance(bound, Scenario)
    assert bound.prompt == "PR 7" and bound.extensions["team"] == "ghx"
    assert from_core_scenario(bound).assertions.checkpoints[0].input == {"prNumber": 7}


def test_variables_seen_without_a_manifest():
    assert template_variables({"a": ["{{x}} {{ y }}", 3], "b": "{{z}}"}) == {
        "x",
        "y",
        "z",
    }
    s = scenario(
        "{{pr_number}} {{run_id}} {{typo}}",
        {"n": "{{other}}"},
        {"pr_number": "pr.number"},
    )
    assert unbound_variables(s, ("run_id",)) == [
        "scenario pr-bind-001: prompt: unknown variable {{typo}} (bindings: "
        "owner, pr_number, repo, repo_name, run_id)",
        "scenario pr-bind-001: assertions.checkpoints[0].input: unknown "
        "variable {{other}} (bindings: owner, pr_number, repo, repo_name, "
        "run_id)",
    ]


def test_a_core_scenario_with_only_the_parts_it_needs():
    # what the eval hooks may hold: a profile-loaded scenario with just a fixture section
    only_fixture = Scenario(
        id="s-001",
        name="s",
        prompt="Close #{{n}} in {{repo}}",
        extensions={
            "fixture": {
                "repo": "acme/sandbox",
                "requires": ["issue"],
                "bindings": {"n": "issue.number"},
            }
        },
    )
    bound = bind_scenario(only_fixture, MANIFEST, {"run_id": "r"})
    assert (
        bound.prompt == "Close #12 in acme/sandbox"
        and bound.extensions == only_fixture.extensions
    )
    with_checkpoints = Scenario(
        id="s-002",
        name="s",
        prompt="p",
        extensions={
            **only_fixture.extensions,
            "assertions": {
                "checkpoints": [
                    {
                        "id": "c",
                        "description": "",
                        "task": "issue.view",
                        "input": {"issueNumber": "{{n}}"},
                        "condition": {"type": "non_empty"},
                    }
                ]
            },
        },
    )
    checkpoint = bind_scenario(with_checkpoints, MANIFEST).extensions["assertions"][
        "checkpoints"
    ][0]
    assert checkpoint["input"] == {"issueNumber": 12}
    broken = Scenario(
        id="s-003",
        name="s",
        prompt="p",
        extensions={"fixture": {"requires": ["issue"]}},
    )
    with pytest.raises(
        ProfilerError,
        match=r"scenario s-003: extensions.fixture: \$\.repo: required field missing",
    ):
        bind_scenario(broken, MANIFEST)
