"""Secrets containing quotes, backslashes or non-ASCII text are masked in every
serialised form (issue 15.2)."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from profiler_core import ModeConfig, Scenario
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer
from profiler_core.util.redact import Redactor

SECRETS = [
    'pa"ss\\word-123',
    "tök€n-sécret-42",
    "line\nbreak-secret",
    'x\\"y-quoted-secret',
]


@pytest.mark.parametrize("secret", SECRETS)
def test_every_json_spelling_is_masked(secret):
    redact = Redactor(environ={"MY_API_KEY": secret})
    for text in (
        json.dumps({"v": secret}),
        json.dumps({"v": secret}, ensure_ascii=False),
        json.dumps({"outer": json.dumps({"v": secret})}),
        secret,
    ):
        assert "[REDACTED]" in redact(text)
        out = redact(text)
        for form in (
            secret,
            json.dumps(secret)[1:-1],
            json.dumps(secret, ensure_ascii=False)[1:-1],
        ):
            assert form not in out


def test_quoted_secret_never_reaches_a_trace_row_or_manifest(
    tmp_path, profiler_plugin_manager, monkeypatch
):
    secret = 'hunter"2\\secret-value'
    monkeypatch.setenv("SERVICE_TOKEN", secret)
    options = RunOptions(
        provider=FakeProvider(text=f"the token is {secret}"),
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do")],
        modes={"a": ModeConfig(environment={"OTHER_SECRET": 'mode"secret\\value'})},
        repetitions=1,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".jsonl") for p in files) and any(
        "sessions" in p.parts for p in files
    )
    for path in files:
        text = path.read_text()
        for value in (secret, 'mode"secret\\value'):
            assert json.dumps(value)[1:-1] not in text and value not in text, path
