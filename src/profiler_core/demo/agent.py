"""The files ``profiler init --agent`` writes: a real agent's profile pointing at
``profiler fake-model``."""

from __future__ import annotations

import json

from ..config.agents import AgentSpec, registry
from ..errors import ConfigError

#: provider id -> the profile's provider section for an agent of the registry run by that provider
_PROVIDERS = {
    "opencode": """\
provider:
  id: opencode
  model: {model}                   # OpenCode's providerID/modelID: the `fake` provider below
  options:
    config:                          # merged into OpenCode's own config: the fake model as an OpenAI-compatible provider
      provider:
        fake:
          npm: "@ai-sdk/openai-compatible"
          options: {{baseURL: "{base_url}", apiKey: "no-key-needed"}}
          models:
            fake: {{limit: {{context: 100000, output: 4096}}}}
""",
    "claude-code": """\
provider:
  id: claude-code
  model: {model}           # the model Claude Code asks for; the fake model answers any
  options:
    base_url: "{url}"                # ANTHROPIC_BASE_URL: the fake model (no key needed for a base_url)
""",
    "acp": """\
provider:
  id: acp
  model: {model}           # the Agent Client Protocol: the agent runs `{acp}`
  options:
    agent: {agent}
    base_url: "{endpoint}"   # the fake model; the wire recorder between them counts the tokens
""",
    "codex": """\
provider:
  id: codex
  model: {model}                 # the model Codex asks for; the fake model answers any
  options:
    base_url: "{base_url}"           # the fake model's OpenAI Responses API (no key needed for a base_url)
""",
}

_PROFILE = """\
# {agent} - the real program - against a fake model: no API key, nothing leaves this machine.
#
#   profiler fake-model fake-model.yaml --port {port}     # in another terminal (or with & at the end)
#   profiler run profile.yaml
#
# The fake model answers from fake-model.yaml: a shell call of `echo hello`, then "Done: ...".
# To profile a real model, see README.md.

modes:
  plain:
    system_instructions: "You are a coding agent. Use the shell to answer."
  terse:
    system_instructions: "You are a coding agent. Use the shell to answer. Reply in one line."

scenarios:
  path: scenarios

{provider}
scorer: {{id: checks}}

execution:
  repetitions: 3
  concurrency: 2
  warmup: false
{sandbox}
{prices}"""

#: How the report gets a cost: made-up prices, except for an agent that reports its own cost.
_PRICES = """
extensions:
  prices:                            # made-up prices (USD per million tokens), so the report shows a cost
    {model}: {{input_per_mtok: 1, output_per_mtok: 4, cache_read_per_mtok: 0.1}}
"""
_OWN_COST = """
# No prices here: Claude Code reports its own cost (total_cost_usd, at its list price for the model it
# asked for), and the report uses the agent's own figure whenever it gives one.
"""

_SCENARIO = {
    "id": "say-hello",
    "name": "Say hello with the shell",
    "prompt": "Run `echo hello` in the shell and tell me what it printed. Start your "
    "answer with 'Done:'.",
    "timeoutMs": 120000,
    "extensions": {
        "checks": [
            {
                "id": "answered",
                "description": "the agent says it is done",
                "target": "output",
                "condition": {"type": "matches", "pattern": "^Done:"},
            },
            {
                "id": "used-a-tool",
                "description": "the agent called a tool",
                "target": "trace",
                "condition": {
                    "type": "field_gte",
                    "path": "summary.totalToolCalls",
                    "value": 1,
                },
            },
        ]
    },
}

_README = """\
# {agent} against a fake model

A runnable profile of the real `{agent}` agent, answered by `profiler fake-model`
on 127.0.0.1 — no API key, no network. Two modes (`plain`, `terse`) × one
scenario (`scenarios/say-hello.json`) × 3 repetitions.

```bash
profiler agents list                               # is the {program} program found? (else: profiler agents install)
profiler fake-model fake-model.yaml --port {port} &   # the model, until Ctrl-C (or kill %1)
profiler run profile.yaml
```

- `fake-model.yaml` — what the model answers: shell calls, texts, token usage
  (docs/fake-model.md). Change it to script another session.
- `profile.yaml` — the modes, the scenarios, the provider pointing at the fake model.

## A real model

{real}
"""

#: provider id -> how to profile a real model instead
_REAL = {
    "opencode": "Remove `options.config` and set `model:` to OpenCode's `providerID/modelID`\n"
    "(e.g. `anthropic/claude-sonnet-4-5`), with that provider's key in the environment.",
    "claude-code": "Remove `options.base_url` and `export ANTHROPIC_API_KEY=...`.",
    "codex": "Remove `options.base_url` and `export OPENAI_API_KEY=...`.",
    "acp": "Set `options.base_url` to the model provider's API and export its key "
    "(`OPENAI_API_KEY`,\n"
    "or name another variable with `options.api_key_env`).",
}


def agent_names() -> tuple[str, ...]:
    """The agents of the registry ``profiler init --agent`` writes a profile for (those
    whose provider it knows)."""
    return tuple(name for name, row in registry().items() if row.provider in _PROVIDERS)


def _row(agent: str) -> AgentSpec:
    row = registry().get(agent)
    if row is None or row.provider not in _PROVIDERS:
        raise ConfigError(
            f"--agent: unknown agent {agent!r} (expected one of {', '.join(agent_names())})"
        )
    return row


#: ``execution.sandbox`` of a written profile: bwrap where it works here
#: (docs/sandbox.md), else a note.
_SANDBOX = (
    "  sandbox: bwrap                     # the agent sees only its workspace and "
    "reaches only the model"
)
_NO_SANDBOX = (
    "  # sandbox: bwrap                   # confine the agent: install bubblewrap "
    "(docs/sandbox.md); {why}"
)


def sandbox_line(sandbox: bool | None = None) -> str:
    """The profile's sandbox line: ``sandbox: bwrap`` when bubblewrap starts on this
    machine, else a commented one."""
    if sandbox is None:
        from ..errors import SandboxError
        from ..sandbox import SandboxSettings, check

        try:
            check(SandboxSettings(sandbox="bwrap"))
        except SandboxError as exc:
            return _NO_SANDBOX.format(why=str(exc).split(": ")[-1][:80])
        return _SANDBOX
    return _SANDBOX if sandbox else _NO_SANDBOX.format(why="not available here")


def prices_block(provider: str, model: str) -> str:
    """The profile's prices: made-up ones, or (Claude Code's provider, which reports its
    own cost) a comment saying why none."""
    return _OWN_COST if provider == "claude-code" else _PRICES.format(model=model)


def agent_files(
    agent: str, port: int, *, sandbox: bool | None = None
) -> dict[str, str]:
    """The files (relative path -> text) of a profile of ``agent`` against the fake
    model on ``port``.

    ``sandbox``: confine the agent with bwrap (None: when bwrap works on this machine).
    """
    from ..fakemodel import DEFAULT_SCRIPT

    row = _row(agent)
    url = f"http://127.0.0.1:{port}"
    endpoint = url if row.api == "anthropic" else f"{url}/v1"
    provider = _PROVIDERS[row.provider].format(
        url=url,
        base_url=f"{url}/v1",
        model=row.model,
        agent=agent,
        endpoint=endpoint,
        acp=" ".join(row.acp),
    )
    return {
        "profile.yaml": _PROFILE.format(
            agent=agent,
            port=port,
            provider=provider,
            sandbox=sandbox_line(sandbox),
            prices=prices_block(row.provider, row.model),
        ),
        "fake-model.yaml": DEFAULT_SCRIPT,
        "scenarios/say-hello.json": json.dumps(_SCENARIO, indent=2) + "\n",
        "README.md": _README.format(
            agent=agent, port=port, program=row.program, real=_REAL[row.provider]
        ),
    }
