"""The checkpoint scorer: every condition on capability data, failing calls, no checkpoints, custom scorers."""

from __future__ import annotations

import pytest
import trio

from github_standin import MAIN_TOKEN, GitHubStandIn
from profiler_core import Scenario, ScorerContext, ScorerResult
from profiler_core.plugins import get_plugin_manager
from profiler_eval_ghx.capabilities import CapabilityResult, GitHubCapabilities
from profiler_eval_ghx.fixtures import seed_fixtures
from profiler_eval_ghx.github import GitHubClient
from profiler_eval_ghx.scorer import CheckpointScorer

ISSUE = {
    "id": "I_1", "number": 7, "title": "Login fails", "state": "CLOSED", "labels": ["bug", "eval"],
    "comments": {"items": [{"body": "first"}, {"body": "second"}]},
}


class Answers:
    """An injected executor: the scorer's dependency, answering each task with fixed data (or a failure)."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    async def run(self, task, input):
        self.calls.append((task, input))
        answer = self.answers[task]
        return answer if isinstance(answer, CapabilityResult) else CapabilityResult(ok=True, data=answer)


def scenario(*checkpoints):
    return Scenario(id="close-issue-001", name="n", prompt="p", extensions={"assertions": {"checkpoints": list(checkpoints)}})


def cp(cid, condition, task="issue.view"):
    return {"id": cid, "description": f"check {cid}", "task": task, "input": {"owner": "o", "name": "r", "issueNumber": 7}, "condition": condition}


CONTEXT = ScorerContext(agent_output="done", trace=None, mode="ghx", model="m", iteration=0)


def score(scorer, scen):
    return trio.run(scorer.evaluate, scen, CONTEXT)


@pytest.mark.parametrize(
    ("condition", "passed"),
    [
        ({"type": "non_empty", "path": "title"}, True),
        ({"type": "empty", "path": "body"}, True),
        ({"type": "count_gte", "path": "labels", "value": 2}, True),
        ({"type": "count_eq", "path": "comments.items", "value": 3}, False),
        ({"type": "field_equals", "path": "state", "value": "CLOSED"}, True),
        ({"type": "field_equals", "path": "comments.items.length", "value": 2}, True),  # JavaScript-like .length
        ({"type": "field_contains", "path": "comments.items.1.body", "value": "sec"}, True),  # list index
        ({"type": "field_contains", "path": "labels", "value": "enhancement"}, False),
        ({"type": "field_gte", "path": "number", "value": 8}, False),
    ],
)
def test_every_condition_on_capability_data(condition, passed):
    executor = Answers({"issue.view": {**ISSUE, "body": ""}})
    result = score(CheckpointScorer(executor=executor), scenario(cp("c1", condition)))
    assert isinstance(result, ScorerResult)
    assert result.success is passed and result.passed == int(passed) and result.total == 1
    (detail,) = result.details
    assert detail.id == "c1" and detail.expected and detail.passed is passed
    assert executor.calls == [("issue.view", {"owner": "o", "name": "r", "issueNumber": 7})]


def test_a_failed_call_fails_its_checkpoint_with_the_calls_message():
    executor = Answers({"issue.view": CapabilityResult(ok=False, error="HTTP 404: Not Found")})
    result = score(CheckpointScorer(executor=executor), scenario(cp("c1", {"type": "non_empty", "path": "title"})))
    assert not result.success and result.details[0].error == "issue.view failed: HTTP 404: Not Found"


def test_all_must_pass_and_none_is_not_a_success():
    executor = Answers({"issue.view": ISSUE})
    both = scenario(cp("open", {"type": "field_equals", "path": "state", "value": "OPEN"}), cp("title", {"type": "non_empty", "path": "title"}))
    result = score(CheckpointScorer(executor=executor), both)
    assert (result.success, result.passed, result.total) == (False, 1, 2)
    none = score(CheckpointScorer(executor=executor), scenario())
    assert (none.success, none.total) == (False, 0)


def test_bad_checkpoints_are_found_before_any_session():
    bad = scenario({"id": "", "task": "issue.view", "condition": {"type": "feild_equals"}})
    problems = CheckpointScorer(executor=Answers({})).check_scenario(bad)
    assert any("checkpoints[0].id" in p for p in problems) and any("feild_equals" in p for p in problems)


def test_custom_condition_calls_a_registered_scorer_with_the_data():
    registry = get_plugin_manager(entrypoints=False).registry
    # The checks scorer is a registered scorer: it tests the checkpoint's data through its metadata.
    custom = {"type": "custom", "scorer": "checks", "path": "title", "options": {}}
    executor = Answers({"issue.view": ISSUE})
    scen = Scenario(
        id="x-001", name="n", prompt="p",
        extensions={"assertions": {"checkpoints": [cp("c", custom)]}, "checks": [{"id": "said", "condition": {"type": "matches", "pattern": "done"}}]},
    )
    result = score(CheckpointScorer(executor=executor, registry=registry), scen)
    assert result.details[0].actual == "Login fails"
    assert result.success, result.details[0]


def test_scorer_against_the_github_stand_in():
    with GitHubStandIn() as server:
        client = GitHubClient(MAIN_TOKEN, base_url=server.url)
        manifest = trio.run(lambda: seed_fixtures(client, "octo/eval-sandbox", ["issue"], seed_id="s"))
        number = manifest.fixtures["issue"].number
        check = {
            "id": "still-open", "task": "issue.view", "input": {"owner": "octo", "name": "eval-sandbox", "issueNumber": number},
            "condition": {"type": "field_equals", "path": "state", "value": "OPEN"},
        }
        scorer = CheckpointScorer(executor=GitHubCapabilities(client))
        assert score(scorer, scenario(check)).success
        trio.run(lambda: client.rest("PATCH", f"/repos/octo/eval-sandbox/issues/{number}", json={"state": "closed"}))
        closed = score(scorer, scenario(check))
        assert not closed.success and closed.details[0].actual == "CLOSED"
