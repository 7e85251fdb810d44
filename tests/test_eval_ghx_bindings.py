"""Scenario bindings: {{var}} from the manifest, owner/repo_name, extra variables, raw values, errors (issue 14)."""

from __future__ import annotations

import pytest

from profiler_core import Scenario
from profiler_eval_ghx.bindings import BindingError, bind_scenario
from profiler_eval_ghx.manifest import FixtureManifest, FixtureResource

MANIFEST = FixtureManifest(
    seed_id="s1", created_at="2026-11-22T00:00:00Z", repo="octo/sandbox",
    fixtures={
        "issue_bug_to_close": FixtureResource(type="issue", number=12, repo="octo/sandbox", metadata={"searchTerm": "crash"}),
        "pr": FixtureResource(type="pr", number=3, repo="octo/sandbox", branch="fix-1"),
    },
)


def scenario(prompt, bindings, checkpoint_input=None):
    ext = {"fixture": {"repo": "octo/sandbox", "requires": ["issue_bug_to_close"], "bindings": bindings}}
    if checkpoint_input is not None:
        ext["assertions"] = {"checkpoints": [{"id": "c", "task": "issue.view", "input": checkpoint_input, "condition": {"type": "empty"}}]}
    return Scenario(id="close-001", name="n", prompt=prompt, extensions=ext)


def test_prompt_and_inputs_are_filled_numbers_stay_numbers():
    bound = bind_scenario(
        scenario("Close #{{n}} ({{term}}) in {{owner}}/{{repo_name}} on {{branch}}, run {{run_id}}",
                 {"n": "issue_bug_to_close.number", "term": "issue_bug_to_close.metadata.searchTerm", "branch": "pr.branch"},
                 {"owner": "{{owner}}", "name": "{{repo_name}}", "issueNumber": "{{n}}", "note": "issue {{n}}"}),
        MANIFEST, {"run_id": "r1"},
    )
    assert bound.prompt == "Close #12 (crash) in octo/sandbox on fix-1, run r1"
    (cp,) = bound.extensions["assertions"]["checkpoints"]
    assert cp["input"] == {"owner": "octo", "name": "sandbox", "issueNumber": 12, "note": "issue 12"}


def test_extra_variables_override_bindings():
    bound = bind_scenario(scenario("{{n}}", {"n": "issue_bug_to_close.number"}), MANIFEST, {"n": 99})
    assert bound.prompt == "99"


def test_unknown_variable_and_unresolvable_path_are_errors():
    with pytest.raises(BindingError, match=r"unknown variable \{\{nope\}\}"):
        bind_scenario(scenario("{{nope}}", {}), MANIFEST, {})
    with pytest.raises(BindingError, match="fixture.bindings.n: 'issue_bug_to_close.nummber'"):
        bind_scenario(scenario("{{n}}", {"n": "issue_bug_to_close.nummber"}), MANIFEST, {})
