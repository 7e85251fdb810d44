"""The registry of agents (config/agents.toml): one table read by the CLI, `init
--agent`, the providers and CI (issue 39)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from profiler_core.cli import cli
from profiler_core.config.agents import (
    APIS,
    agent,
    npm_packages,
    parse_registry,
    registry,
)
from profiler_core.demo.agent import agent_names
from profiler_core.errors import ConfigError
from profiler_core.importers import FORMATS
from profiler_core.plugins.builtins import BUILTIN_COMPONENTS

PROFILER = [sys.executable, "-m", "profiler_core"]


def builtin_providers() -> set[str]:
    return {
        cid
        for contract, parts in BUILTIN_COMPONENTS.values()
        if contract == "providers"
        for cid, _ in parts
    }


def test_every_row_names_a_known_provider_importer_and_api():
    rows = registry()
    assert {"opencode", "claude-code", "codex"} <= set(rows)
    for name, row in rows.items():
        assert row.name == name and row.program and row.binary_env.endswith("_BIN")
        assert row.provider in builtin_providers(), (
            f"{name}: provider {row.provider!r} is not a built-in"
        )
        assert row.importer == "" or row.importer in FORMATS, (
            f"{name}: importer {row.importer!r}"
        )
        assert row.api in APIS
        assert (
            row.npm_spec == f"{row.package}@{row.version}"
            and row.install_command == f"npm install {row.npm_spec}"
        )
    # One package installs once, whichever rows share it.
    assert len(npm_packages()) == len(set(npm_packages()))


def test_the_providers_name_their_program_from_the_registry():
    from profiler_core.providers.claude_code import ClaudeCodeProvider
    from profiler_core.providers.codex import CodexProvider

    assert (ClaudeCodeProvider.program, ClaudeCodeProvider.env_var) == (
        "claude",
        "CLAUDE_BIN",
    )
    assert CodexProvider.program == agent("codex").program
    assert "profiler agents install claude-code" in ClaudeCodeProvider.install_hint
    assert agent("claude-code").npm_spec in ClaudeCodeProvider.install_hint


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[agents.x]\nprogram = 1\n", "agents.toml: agents.x: missing "),
        ("[agents]\n", "agents.toml: expected a non-empty [agents] table"),
        ("[agents.x\n", "agents.toml: "),
    ],
)
def test_a_bad_table_is_one_line_naming_the_row(text, message):
    with pytest.raises(
        ConfigError, match="^" + message.replace("[", r"\[").replace("]", r"\]")
    ) as caught:
        parse_registry(text)
    assert "\n" not in str(caught.value)


def test_a_bad_field_is_named_with_what_was_expected():
    good = registry()["codex"]
    fields = {
        f: getattr(good, f)
        for f in (
            "program",
            "package",
            "version",
            "binary_env",
            "provider",
            "importer",
            "endpoint",
            "confine",
            "model",
        )
    }
    row = "".join(f'{k} = "{v}"\n' for k, v in fields.items())
    with pytest.raises(
        ConfigError,
        match=r"^agents.toml: agents.y.api: expected one of openai-chat, "
        r"openai-responses, anthropic, got 'grpc'$",
    ):
        parse_registry(f'[agents.y]\n{row}acp = []\napi = "grpc"\n')
    with pytest.raises(
        ConfigError, match=r"^agents.toml: agents.y.acp: expected a list of strings$"
    ):
        parse_registry(f'[agents.y]\n{row}acp = "x"\napi = "anthropic"\n')
    assert parse_registry(f'[agents.y]\n{row}acp = ["y", "acp"]\napi = "anthropic"\n')[
        "y"
    ].acp == ("y", "acp")


def test_agents_list_shows_every_row_and_json_has_every_key(monkeypatch, tmp_path):
    monkeypatch.setenv("PROFILER_AGENTS_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")
    for row in registry().values():
        monkeypatch.delenv(row.binary_env, raising=False)
    human = CliRunner().invoke(cli, ["agents", "list"])
    assert human.exit_code == 0, human.output
    for name, row in registry().items():
        assert (
            f"`profiler agents install {name}`" in human.output
            and row.npm_spec in human.output
        )
    listed = [
        json.loads(line)
        for line in CliRunner()
        .invoke(cli, ["agents", "list", "--json"])
        .output.splitlines()
    ]
    assert [r["name"] for r in listed] == list(registry())
    assert {tuple(sorted(r)) for r in listed} == {tuple(sorted(listed[0]))}
    codex = next(r for r in listed if r["name"] == "codex")
    assert (
        codex["program"] == "codex"
        and codex["found"] is None
        and codex["api"] == "openai-responses"
    )


def stand_in_npm(tmp_path):
    """A stand-in npm on PATH: records its arguments and creates every registry program
    where npm would."""
    log = tmp_path / "npm-args"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    programs = " ".join(row.program for row in registry().values())
    (bin_dir / "npm").write_text(
        textwrap.dedent(f"""\
        #!/bin/sh
        echo "$@" > {log}
        mkdir -p "$3/node_modules/.bin"
        for p in {programs}; do printf '#!/bin/sh\\n' > "$3/node_modules/.bin/$p"; chmod +x "$3/node_modules/.bin/$p"; done
    """)
    )
    (bin_dir / "npm").chmod(0o755)
    return log, {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PROFILER_AGENTS_DIR": str(tmp_path / "agents"),
    }


def test_agents_install_by_registry_name_names_the_package_and_the_agent(tmp_path):
    log, env = stand_in_npm(tmp_path)
    done = subprocess.run(
        [*PROFILER, "agents", "install", "claude-code"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    program = tmp_path / "agents" / "node_modules" / ".bin" / "claude"
    assert done.stdout.splitlines()[:2] == [
        f"Installing {agent('claude-code').npm_spec} into {tmp_path / 'agents'} ...",
        f"  claude-code: {program}",
    ]
    assert log.read_text().split()[-1] == agent("claude-code").npm_spec
    # The program's name still works, and names the same agent.
    by_program = subprocess.run(
        [*PROFILER, "agents", "install", "claude"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"  claude-code: {program}" in by_program.stdout
    unknown = subprocess.run(
        [*PROFILER, "agents", "install", "aider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unknown.returncode == 1 and unknown.stderr.startswith(
        "Error: unknown agent(s) aider (known: opencode, claude-code, codex"
    )
    assert len(unknown.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", agent_names())
def test_init_writes_a_valid_profile_for_every_agent_it_lists(tmp_path, name):
    row = agent(name)
    done = CliRunner().invoke(
        cli, ["init", "--agent", name, str(tmp_path / "p"), "--port", "8799"]
    )
    assert done.exit_code == 0, done.output
    profile = (tmp_path / "p" / "profile.yaml").read_text()
    assert (
        f"\n  id: {row.provider}\n  model: {row.model} " in profile
        and "127.0.0.1:8799" in profile
    )
    assert (
        f"is the {row.program} program found?"
        in (tmp_path / "p" / "README.md").read_text()
    )
    # `profiler validate` accepts it (the program: any executable, named by the row's variable).
    env = {**os.environ, row.binary_env: sys.executable}
    checked = subprocess.run(
        [*PROFILER, "validate", "profile.yaml"],
        cwd=tmp_path / "p",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_init_with_an_agent_it_does_not_know_is_one_line(tmp_path):
    done = CliRunner().invoke(cli, ["init", "--agent", "aider", str(tmp_path / "x")])
    assert done.exit_code != 0
    assert done.output.strip().splitlines() == [
        f"Error: --agent: unknown agent 'aider' (expected one of {', '.join(agent_names())})"
    ]
