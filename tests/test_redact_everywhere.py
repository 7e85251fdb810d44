"""Every secret the profile marks or passes is masked wherever it goes, in every
spelling (issue 31.2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from profiler_core.util.redact import (
    REDACTED,
    Redactor,
    profile_secrets,
    redact_text,
    spellings,
    unmaskable,
)

# -- the rule, on text ----------------------------------------------------------------


def test_url_encoded_and_json_spellings_are_masked():
    secret = "p@ss/wo rd+9!é"
    redact = Redactor(environ={}, extra_values=[secret])
    for form in (
        secret,
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
    ):
        out = redact(f"GET https://host/x?key={form}&n=1")
        assert form not in out and REDACTED in out, form


def test_short_secrets_follow_the_documented_rule():
    redact = Redactor(environ={})
    refused = redact.add(
        {
            "a four-letter one": "zq9x",
            "a two-letter one": "ab",
            "a short number": "1234",
            "a long number": "98765432",
        }
    )
    assert refused == [
        "a two-letter one (shorter than 4 characters)",
        "a short number (a number or JSON word shorter than 8 characters)",
    ]
    # 4 to 7 characters: masked as a whole word, never inside another word (that would mangle text).
    assert redact('token "zq9x" and zq9x.') == f'token "{REDACTED}" and {REDACTED}.'
    assert redact("zq9xyz azq9x") == "zq9xyz azq9x"
    # Numbers are masked only whole, so a JSON row stays JSON.
    assert (
        redact('{"a": 98765432, "b": 1987654321}')
        == f'{{"a": {REDACTED}, "b": 1987654321}}'
    )
    assert redact('{"n": 1234, "s": "ab"}') == '{"n": 1234, "s": "ab"}'
    assert unmaskable("abcdefgh") is None and unmaskable("true")


def test_profile_secrets_finds_what_the_profile_marks_or_passes():
    options = {
        "api_key_env": "MY_LLM",  # a name that does not look secret
        "env": {"EXTRA_API_KEY": "extra-secret", "DEBUG": "1"},
        "mcp_servers": {
            "gh": {
                "command": "srv",
                "env": {"GITHUB_PAT_TOKEN": "mcp-secret"},
                "headers": {"Authorization": "Bearer hdr-secret"},
            }
        },
        "base_url": "https://bob:pa55-word@llm.example/v1?api_key=query-secret",
        "token": "plain-token",
        "max_tokens": 100,
        "model": "not-a-secret",
    }
    found = profile_secrets(
        options, "provider.options", environ={"MY_LLM": "llm-secret"}
    )
    assert sorted(found.values()) == sorted(
        [
            "llm-secret",
            "extra-secret",
            "mcp-secret",
            "Bearer hdr-secret",
            "hdr-secret",
            "pa55-word",
            "query-secret",
            "plain-token",
        ]
    )
    assert found["$MY_LLM (named by provider.options.api_key_env)"] == "llm-secret"
    assert "provider.options.mcp_servers.gh.env.GITHUB_PAT_TOKEN" in found


def test_text_outside_a_run_knows_every_declared_secret():
    Redactor(environ={}).add(["declared-elsewhere-42"])
    assert (
        redact_text("Error: cannot reach declared-elsewhere-42")
        == f"Error: cannot reach {REDACTED}"
    )


# -- a real run through the CLI: results, traces, analysis, reports, stdout and stderr ----

LEAKY = '''
from datetime import UTC, datetime
from urllib.parse import quote

from profiler_core import PromptMetrics, PromptResult, SessionHandle, TimingBreakdown, TokenBreakdown, hookimpl
from profiler_core.testing import simple_trace


class Leaky:
    """Says every secret it was given, raw and URL-encoded, in its answer, trace and errors."""

    id = "leaky"

    def __init__(self, **options):
        self.options = options
        self.attempts = {}

    def init(self, config):
        self.environment = dict(config.environment)

    def _secrets(self):
        import os
        o = self.options
        values = [os.environ[o["api_key_env"]], o["base_url"], *o["env"].values(), *o["mcp_servers"]["gh"]["env"].values(),
                  *self.environment.values()]
        return " ".join(f"{v} {quote(v, safe='')}" for v in values)

    def create_session(self, params):
        key = (params.scenario_id, params.iteration)
        self.attempts[key] = self.attempts.get(key, 0) + 1
        return SessionHandle(session_id=f"{params.scenario_id}-{params.iteration}-{self.attempts[key]}", provider=self.id,
                             created_at=datetime.now(UTC).isoformat())

    async def prompt(self, handle, text, timeout_ms=None):
        scenario, _, attempt = handle.session_id.rpartition("-")
        if attempt == "1" or scenario.startswith("bump-dependency"):
            raise RuntimeError(f"cannot connect: {self._secrets()}")
        return PromptResult(text=f"my secrets: {self._secrets()}",
                            metrics=PromptMetrics(tokens=TokenBreakdown(input=5, output=5), timing=TimingBreakdown(wall_ms=3)))

    def export_session(self, handle):
        return simple_trace(handle.session_id, f"trace says {self._secrets()}", (), TokenBreakdown(input=5, output=5), 3)

    def destroy_session(self, handle):
        pass

    def shutdown(self):
        pass


@hookimpl
def profiler_register_providers():
    return [Leaky]
'''

SECRETS = {
    "api_key_env": "llm-secret-value-1",
    "env": "extra secret/value+2",
    "mcp": "mcp-secret-value-3",
    "url_password": "pa55-word-4",
    "mode": "mode-secret-value-5",
    "short": "zq9x",
}


def _install(site: Path) -> None:
    (site / "agent_profiler_leaky.py").write_text(LEAKY)
    info = site / "agent_profiler_leaky-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agent-profiler-leaky\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        "[agent_profiler]\nleaky = agent_profiler_leaky\n"
    )


@pytest.mark.slow
def test_a_run_leaks_no_declared_secret_anywhere(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _install(site)
    scenarios = (
        Path(__file__).resolve().parent.parent / "examples" / "demo" / "scenarios"
    )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        textwrap.dedent(f"""
        modes:
          a: {{environment: {{SERVICE_TOKEN: {SECRETS["mode"]}}}}}
        scenarios: {{path: {scenarios}}}
        provider:
          id: leaky
          model: m
          options:
            api_key_env: MY_LLM
            base_url: "https://bob:{SECRETS["url_password"]}@llm.example/v1"
            env: {{EXTRA_API_KEY: "{SECRETS["env"]}", SHORT_TOKEN: "{SECRETS["short"]}", TINY_TOKEN: "ab"}}
            mcp_servers: {{gh: {{command: srv, env: {{GITHUB_PAT_TOKEN: {SECRETS["mcp"]}}}}}}}
        scorer: {{id: checks}}
        execution: {{repetitions: 1, warmup: false, allowed_retries: 1}}
        output: {{results_dir: {tmp_path / "results"}, reports_dir: {tmp_path / "reports"}}}
    """)
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PROFILER_LOAD_PLUGINS",)}
    env.update(PYTHONPATH=str(site), MY_LLM=SECRETS["api_key_env"])
    result = subprocess.run(
        [str(Path(sys.executable).with_name("profiler")), "run", str(profile)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert (
        "retrying" in result.stderr and "cannot connect" in result.stderr
    )  # the WARNING line is there, masked
    assert (
        "provider.options.env.TINY_TOKEN (shorter than 4 characters)" in result.stderr
    )  # named, never shown
    files = [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and "site" not in p.parts and p != profile
    ]
    assert {p.suffix for p in files} >= {".jsonl", ".json", ".md", ".html", ".csv"}, (
        files
    )
    texts = {str(p): p.read_text(errors="replace") for p in files}
    texts["stdout"], texts["stderr"] = result.stdout, result.stderr
    forms = {form for value in SECRETS.values() for form in spellings(value)}
    leaks = {
        (where, form) for where, text in texts.items() for form in forms if form in text
    }
    short = SECRETS["short"]
    # The short secret may stay inside longer words; as a word of its own it must be gone.
    leaks = {
        (w, f)
        for w, f in leaks
        if f != short or f" {short} " in texts[w] or f"{short}%" in texts[w]
    }
    assert not leaks, sorted(leaks)[:10]
    assert REDACTED in texts["stderr"] and any(
        REDACTED in t for w, t in texts.items() if w.endswith(".jsonl")
    )
