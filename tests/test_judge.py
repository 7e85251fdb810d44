"""The ``openai`` judge provider and the ``llm-judge`` scorer, against a real
chat-completions server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import trio
import yaml

from profiler_core import (
    ConfigError,
    JudgeRequest,
    ModeConfig,
    Scenario,
    ScorerContext,
    TokenBreakdown,
    ToolCallRecord,
)
from profiler_core.judges import JudgeError
from profiler_core.judges import openai as openai_judge
from profiler_core.judges.openai import OpenAIJudge, is_loopback_url, parse_retry_after
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.scorers import llm_judge
from profiler_core.scorers.llm_judge import LlmJudgeScorer, parse_verdicts
from profiler_core.testing import FakeProvider, fake_plugin, simple_trace

RUBRIC = {
    "gradingInstructions": "Be strict.",
    "criteria": [
        {"id": "correct", "description": "the answer names the failing test"},
        {"id": "tested", "description": "the agent ran the tests"},
    ],
}
PRICES = {"judge-m": {"input_per_mtok": 1, "output_per_mtok": 2}}


# -- a chat-completions server ---------------------------------------------------


def completion(
    text: str,
    *,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    model: str = "judge-m",
) -> dict:
    """A chat.completion body answering ``text``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def verdicts(**passed: bool) -> str:
    return json.dumps(
        {
            "verdicts": [
                {"id": k, "passed": v, "reasoning": f"{k} is {'ok' if v else 'wrong'}"}
                for k, v in passed.items()
            ]
        }
    )


class ChatServer:
    """Answers POST /v1/chat/completions from a script; records every request."""

    def __init__(self) -> None:
        # each: dict body | (status, headers, body) | callable(request) -> one of those
        self.script: list = []
        self.default = None
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                request = {
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": json.loads(raw),
                }
                with server._lock:
                    server.requests.append(request)
                    step = server.script.pop(0) if server.script else server.default
                if callable(step):
                    step = step(request)
                status, headers, body = (
                    step if isinstance(step, tuple) else (200, {}, step)
                )
                data = (
                    body.encode()
                    if isinstance(body, str)
                    else json.dumps(body).encode()
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def user_prompts(self) -> list[str]:
        return [r["body"]["messages"][1]["content"] for r in self.requests]


@pytest.fixture
def server():
    srv = ChatServer()
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()


@pytest.fixture(autouse=True)
def _no_real_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def make_judge(server: ChatServer, **options) -> OpenAIJudge:
    return OpenAIJudge(
        model="judge-m", base_url=server.base_url, backoff_base_s=0.01, **options
    )


def scenario(rubric=RUBRIC, **kw) -> Scenario:
    return Scenario(
        id="fix-001",
        name="Fix the build",
        description="Find why CI fails",
        prompt="Why does CI fail?",
        tags=("difficulty:easy",),
        extensions={"rubric": rubric} if rubric is not None else {},
        **kw,
    )


def context(output="test_login fails; I ran pytest", trace=True) -> ScorerContext:
    records = (
        ToolCallRecord(name="bash", success=True),
        ToolCallRecord(name="edit", success=False, error="file not found"),
    )
    tr = (
        simple_trace("s-1", output, records, TokenBreakdown(input=10, output=5), 12.0)
        if trace
        else None
    )
    return ScorerContext(
        agent_output=output, trace=tr, mode="plain", model="agent-m", iteration=0
    )


def evaluate(scorer, sc=None, ctx=None):
    return trio.run(scorer.evaluate, sc or scenario(), ctx or context())


def metrics(result) -> dict:
    return {m.name: m.value for m in result.metrics}


# -- parsing ----------------------------------------------------------------------


def test_fenced_json_gives_one_check_per_criterion(server):
    server.script = [
        completion(
            "Here you go:\n```json\n" + verdicts(correct=True, tested=False) + "\n```\n"
        )
    ]
    result = evaluate(LlmJudgeScorer(judge=make_judge(server, seed=7), prices=PRICES))
    assert [(d.id, d.passed, d.actual) for d in result.details] == [
        ("correct", True, "correct is ok"),
        ("tested", False, "tested is wrong"),
    ]
    assert (result.success, result.passed, result.total, result.error) == (
        False,
        1,
        2,
        None,
    )
    m = metrics(result)
    assert (
        m["judge_tokens_input"],
        m["judge_tokens_output"],
        m["judge_tokens_total"],
        m["judge_calls"],
    ) == (100, 20, 120, 1)
    assert m["judge_cost_usd"] == pytest.approx((100 * 1 + 20 * 2) / 1e6)
    assert m["judge_cost_source"] == "computed"
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert (body["model"], body["temperature"], body["seed"]) == ("judge-m", 0, 7)
    assert (
        "Authorization" not in server.requests[0]["headers"]
    )  # loopback without a key


def test_prompts_carry_criteria_scenario_output_and_trace(server):
    server.script = [completion(verdicts(correct=True, tested=True))]
    evaluate(LlmJudgeScorer(judge=make_judge(server)))
    system, user = (m["content"] for m in server.requests[0]["body"]["messages"])
    assert system.startswith("Be strict.")
    assert (
        "- correct: the answer names the failing test\n- tested: the agent ran the tests\n"
        in system
    )
    assert '"verdicts"' in system
    for expected in (
        "Fix the build",
        "Find why CI fails",
        "Why does CI fail?",
        "test_login fails; I ran pytest",
        "Turns: 1",
        "Tool calls: 2 (1 failed)",
        "1. bash (success)",
        "2. edit (failed: file not found)",
        "Errors: 0",
    ):
        assert expected in user, expected


def test_prose_around_json(server):
    answer = (
        "I looked at the session. "
        + verdicts(correct=True, tested=True)
        + " Overall {fine}."
    )
    server.script = [completion(answer)]
    result = evaluate(LlmJudgeScorer(judge=make_judge(server)))
    assert (result.success, result.passed, result.total) == (True, 2, 2)


def test_garbage_then_a_good_answer_on_the_second_ask(server):
    server.script = [
        completion("I think it went well!"),
        completion(verdicts(correct=True, tested=True), prompt_tokens=150),
    ]
    result = evaluate(LlmJudgeScorer(judge=make_judge(server)))
    assert (result.success, result.passed, result.error) == (True, 2, None)
    assert len(server.requests) == 2
    assert (
        "could not be used" in server.user_prompts()[1]
        and "I think it went well!" in server.user_prompts()[1]
    )
    m = metrics(result)
    assert (m["judge_calls"], m["judge_tokens_input"], m["judge_tokens_total"]) == (
        2,
        250,
        290,
    )


def test_garbage_twice_is_a_scorer_error(server):
    server.default = completion("no idea")
    result = evaluate(LlmJudgeScorer(judge=make_judge(server)))
    assert result.error and "no usable answer" in result.error
    assert not result.success and not result.output_valid and len(server.requests) == 2


def test_a_missing_verdict_fails_its_check_with_an_error(server):
    server.script = [completion(verdicts(correct=True))]
    result = evaluate(LlmJudgeScorer(judge=make_judge(server)))
    tested = result.details[1]
    assert (tested.id, tested.passed, tested.error) == (
        "tested",
        False,
        "no verdict returned by the judge",
    )
    assert (result.success, result.passed, result.total, result.error) == (
        False,
        1,
        2,
        None,
    )


def test_no_rubric_succeeds_with_zero_checks_and_no_call(server):
    result = evaluate(LlmJudgeScorer(judge=make_judge(server)), scenario(rubric=None))
    assert (result.success, result.passed, result.total) == (True, 0, 0)
    assert server.requests == []


def test_majority_of_three_samples(server):
    server.script = [
        completion(verdicts(correct=True, tested=False)),
        completion(verdicts(correct=False, tested=False)),
        completion(verdicts(correct=True, tested=True)),
    ]
    result = evaluate(
        LlmJudgeScorer(
            judge=make_judge(server, temperature=0.7), samples=3, prices=PRICES
        )
    )
    by_id = {d.id: d for d in result.details}
    assert by_id["correct"].passed and not by_id["tested"].passed
    assert by_id["correct"].actual == "correct is ok [agreement 2/3]"
    assert by_id["tested"].actual == "tested is wrong [agreement 2/3]"
    m = metrics(result)
    assert m["judge_agreement"] == pytest.approx(2 / 3)
    assert (m["judge_calls"], m["judge_tokens_total"]) == (3, 360)
    assert len(server.requests) == 3


def test_parse_verdicts_edge_cases():
    assert (
        parse_verdicts("nothing here")
        == 'no JSON object with a "verdicts" list was found'
    )
    found, problems = parse_verdicts(
        '<think>{"verdicts": [{"id": "a", "passed": '
        'false}]}</think>{"verdicts": [{"id": "a", "passed": "yes"}]}'
    )
    assert found["a"].passed is True and problems == {}
    found, problems = parse_verdicts(
        '[{"id": "a", "passed": "maybe"}, {"id": "b", "passed": false, "reasoning": "no"}]'
    )
    assert "a" in problems and found["b"].reasoning == "no"


def test_a_malformed_rubric_names_the_field(server):
    bad = {"criteria": [{"id": "", "description": "x"}]}
    with pytest.raises(
        ConfigError, match=r"scenario 'fix-001': extensions.rubric: \$.criteria\[0\].id"
    ):
        evaluate(LlmJudgeScorer(judge=make_judge(server)), scenario(rubric=bad))


def test_scorer_needs_a_judge_and_valid_options(server):
    with pytest.raises(ConfigError, match="needs a judge"):
        LlmJudgeScorer()
    with pytest.raises(ConfigError, match="options.samples"):
        LlmJudgeScorer(judge=make_judge(server), samples=0)


# -- the HTTP client ----------------------------------------------------------------


def test_429_with_retry_after_is_honoured_then_succeeds(server):
    server.script = [
        (429, {"Retry-After": "1"}, {"error": {"message": "slow down"}}),
        completion(verdicts(correct=True, tested=True)),
    ]
    judge = make_judge(server, backoff_max_s=5)
    start = time.monotonic()
    result = evaluate(LlmJudgeScorer(judge=judge))
    elapsed = time.monotonic() - start
    assert result.success and len(server.requests) == 2
    assert elapsed >= 0.95  # waited as told, not the 0.01 s backoff


def test_parse_retry_after_forms():
    assert parse_retry_after({"retry-after": "3"}) == 3
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert (
        parse_retry_after(
            {"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0
        )
        == 10
    )
    assert (
        parse_retry_after({"retry-after": "soon"}) is None
        and parse_retry_after({}) is None
    )


def test_client_errors_are_not_retried_and_never_show_the_key(server, monkeypatch):
    monkeypatch.setenv("JUDGE_CRED", "judgecredvalue-0123456789")
    server.default = (
        401,
        {},
        {"error": {"message": "key judgecredvalue-0123456789 is not valid"}},
    )
    judge = make_judge(server, api_key_env="JUDGE_CRED")
    with pytest.raises(JudgeError) as info:
        trio.run(judge.judge, JudgeRequest(system_prompt="s", user_prompt="u"))
    assert len(server.requests) == 1
    assert "HTTP 401" in str(info.value) and "$JUDGE_CRED" in str(info.value)
    assert "judgecredvalue" not in str(info.value)


def test_judge_options_are_checked(monkeypatch):
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        OpenAIJudge(model="gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-shown-0123456789")
    with pytest.raises(ConfigError, match="never read from the profile") as info:
        OpenAIJudge(model="gpt-4o-mini", api_key="sk-in-profile-0123456789")
    assert "sk-in-profile" not in str(info.value)
    with pytest.raises(ConfigError, match="options.model"):
        OpenAIJudge()
    with pytest.raises(ConfigError, match="options.base_url"):
        OpenAIJudge(model="m", base_url="api.example.com")
    assert "sk-never" not in repr(OpenAIJudge(model="m"))
    assert is_loopback_url("http://localhost:11434/v1") and is_loopback_url(
        "http://[::1]:8000/v1"
    )
    assert not is_loopback_url("https://api.openai.com/v1")


# -- through the runner -----------------------------------------------------------


def test_500_exhausting_retries_becomes_an_iteration_error_retried_by_the_runner(
    server, tmp_path, profiler_plugin_manager
):
    server.default = (500, {}, {"error": {"message": "upstream exploded"}})
    judge = make_judge(server, max_retries=2)
    options = RunOptions(
        provider=FakeProvider(),
        scorer=LlmJudgeScorer(judge=judge),
        scenarios=[scenario()],
        modes={"plain": ModeConfig()},
        repetitions=1,
        warmup=False,
        allowed_retries=1,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        plugin_manager=profiler_plugin_manager,
    )
    result = trio.run(run_profile_suite, options)
    (row,) = result.rows
    assert row.attempts == 2 and not row.success
    assert (
        row.error_code == "scorer_error" and "HTTP 500: upstream exploded" in row.error
    )
    assert "after 3 attempt(s)" in row.error
    assert (
        len(server.requests) == 2 * 3
    )  # (1 + max_retries) HTTP tries per runner attempt


def _register_judge_plugins(manager, provider):
    # Until these modules are core built-ins, register them on the test's manager.
    if "openai" not in manager.registry.judge_providers:
        manager.register(openai_judge, "test.judges.openai")
    if "llm-judge" not in manager.registry.scorers:
        manager.register(llm_judge, "test.scorers.llm_judge")
    manager.register(fake_plugin(provider=provider), "test.fake")


def test_api_key_is_sent_as_bearer_and_never_written(
    server, tmp_path, monkeypatch, caplog, profiler_plugin_manager
):
    from profiler_core.config.loader import load_profile
    from profiler_core.runner import options_from_config

    # neither key-shaped nor in a *KEY* variable: only our code protects it
    secret = "judgecredvalue-0123456789"
    monkeypatch.setenv("JUDGE_CRED", secret)
    (tmp_path / "scenarios").mkdir()
    for sid in ("good-001", "bad-001"):
        data = {
            "id": sid,
            "name": sid,
            "prompt": f"task {sid}",
            "extensions": {"rubric": RUBRIC},
        }
        (tmp_path / "scenarios" / f"{sid}.json").write_text(json.dumps(data))

    def answer(request):
        if "bad-001" in request["body"]["messages"][1]["content"]:
            # A server echoing the key back in its error must not get it into the row.
            return (403, {}, {"error": {"message": f"key {secret} has no access"}})
        return completion(verdicts(correct=True, tested=False))

    server.default = answer
    profile = {
        "modes": {"plain": {}},
        "scenarios": {"path": "scenarios"},
        "provider": {"id": "fake", "model": "agent-m"},
        "scorer": {"id": "llm-judge", "options": {"prices": PRICES}},
        "judge": {
            "id": "openai",
            "model": "judge-m",
            "options": {"base_url": server.base_url, "api_key_env": "JUDGE_CRED"},
        },
        "collectors": [],
        "analyzers": [],
        "execution": {"repetitions": 1, "warmup": False},
    }
    (tmp_path / "profile.yaml").write_text(yaml.safe_dump(profile))
    _register_judge_plugins(profiler_plugin_manager, FakeProvider())
    config = load_profile(tmp_path / "profile.yaml")
    options = options_from_config(config, profiler_plugin_manager)
    with caplog.at_level(logging.DEBUG):
        result = trio.run(run_profile_suite, options)

    assert {r["headers"].get("Authorization") for r in server.requests} == {
        f"Bearer {secret}"
    }
    rows = {r.scenario_id: r for r in result.rows}
    good, bad = rows["good-001"], rows["bad-001"]
    assert (good.checkpoints_passed, good.checkpoints_total, good.error) == (1, 2, None)
    assert (
        good.extensions["judge_tokens_total"] == 120
        and good.extensions["judge_cost_usd"] > 0
    )
    assert good.tokens.total == 150  # the agent's own tokens, untouched by the judge's
    assert "HTTP 403" in bad.error and "[REDACTED]" in bad.error
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" for p in written) and any(
        "sessions" in p.parts for p in written
    )
    assert any(p.name.endswith(".manifest.json") for p in written)
    for path in written:
        assert secret not in path.read_text(errors="replace"), path
    assert secret not in caplog.text
