"""The eval mode resolver: PATH, SKILL.md search order, MCP config reaching the
provider, the token never written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from profiler_core import ConfigError, UnknownModeError
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer
from profiler_eval_ghx.modes import (
    BASELINE_INSTRUCTIONS,
    GHX_FALLBACK_INSTRUCTIONS,
    MCP_INSTRUCTIONS,
    EvalModeResolver,
    find_skill_md,
)

TOKEN = "ghp_FAKEtokenValue0123456789abcdef"


@pytest.fixture
def places(tmp_path):
    cwd, home = tmp_path / "project", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    return cwd, home


def resolver(places, **environ) -> EvalModeResolver:
    cwd, home = places
    return EvalModeResolver(
        environ={"PATH": "/usr/bin:/bin", **environ}, cwd=cwd, home=home
    )


def skill(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- ghx: PATH ----------------------------------------------------------------------------


def test_ghx_puts_ghx_bin_dir_first_on_path(places, tmp_path):
    bin_dir = tmp_path / "ghx-bin"
    config = resolver(places, GHX_BIN_DIR=str(bin_dir)).resolve("ghx")
    assert config.environment == {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin"}


def test_ghx_defaults_to_node_modules_bin_of_the_working_directory(places):
    cwd, _ = places
    config = resolver(places).resolve("ghx")
    assert (
        config.environment["PATH"]
        == f"{cwd / 'node_modules' / '.bin'}{os.pathsep}/usr/bin:/bin"
    )
    # an empty GHX_BIN_DIR is no setting; a relative one is taken from the working directory
    assert (
        resolver(places, GHX_BIN_DIR="").resolve("ghx").environment
        == config.environment
    )
    assert (
        resolver(places, GHX_BIN_DIR="tools")
        .resolve("ghx")
        .environment["PATH"]
        .startswith(f"{cwd / 'tools'}{os.pathsep}")
    )


def test_ghx_without_any_path_uses_the_bin_dir_alone(places, tmp_path):
    cwd, home = places
    config = EvalModeResolver(
        environ={"GHX_BIN_DIR": str(tmp_path)}, cwd=cwd, home=home
    ).resolve("ghx")
    assert config.environment == {"PATH": str(tmp_path)}


# -- ghx: SKILL.md, first found wins ------------------------------------------------------------


def test_skill_md_search_order(places, tmp_path):
    cwd, home = places
    r = resolver(places, GHX_SKILL_MD=str(tmp_path / "custom" / "SKILL.md"))
    # nothing anywhere: the fallback text
    assert r.resolve("ghx").system_instructions == GHX_FALLBACK_INSTRUCTIONS
    # then each place, from the last in the order to the first: each new one takes over
    order = [
        home / ".agents" / "skills" / "ghx" / "SKILL.md",
        home / ".agents" / "skills" / "using-ghx" / "SKILL.md",
        home / ".agents" / "skills" / "github-ghx" / "SKILL.md",
        cwd / "SKILL.md",
        tmp_path / "custom" / "SKILL.md",
    ]
    for index, path in enumerate(order):
        skill(path, f"skill #{index} at {path}")
        assert r.resolve("ghx").system_instructions == f"skill #{index} at {path}"
        assert find_skill_md(r.environ, cwd, home) == path


def test_a_missing_ghx_skill_md_falls_through(places):
    cwd, _home = places
    skill(cwd / "SKILL.md", "project skill")
    r = resolver(places, GHX_SKILL_MD=str(cwd / "nope.md"))
    assert r.resolve("ghx").system_instructions == "project skill"


# -- mcp: the server reaches the provider through provider_overrides --------------------------


def test_mcp_remote_server_with_the_token_as_a_reference(places):
    config = resolver(places, GH_TOKEN=TOKEN, GITHUB_TOKEN="other").resolve("mcp")
    assert config.system_instructions == MCP_INSTRUCTIONS
    assert config.environment == {}
    assert config.provider_overrides == {
        "mcp": {
            "github": {
                "type": "remote",
                "url": "https://api.githubcopilot.com/mcp/",
                "headers": {"Authorization": "Bearer {env:GH_TOKEN}"},
                "enabled": True,
            }
        }
    }
    assert TOKEN not in repr(config)


def test_mcp_uses_github_token_when_gh_token_is_unset(places):
    config = resolver(places, GITHUB_TOKEN=TOKEN).resolve("mcp")
    assert config.provider_overrides["mcp"]["github"]["headers"] == {
        "Authorization": "Bearer {env:GITHUB_TOKEN}"
    }


def test_mcp_local_server_when_configured(places):
    cwd, home = places
    r = EvalModeResolver(
        mcp_server="local",
        mcp_command=["/opt/github-mcp-server", "stdio", "--toolsets", "issues"],
        environ={"GH_TOKEN": TOKEN},
        cwd=cwd,
        home=home,
    )
    assert r.resolve("mcp").provider_overrides == {
        "mcp": {
            "github": {
                "type": "local",
                "command": ["/opt/github-mcp-server", "stdio", "--toolsets", "issues"],
                "environment": {"GITHUB_PERSONAL_ACCESS_TOKEN": "{env:GH_TOKEN}"},
                "enabled": True,
            }
        }
    }
    default = EvalModeResolver(
        mcp_server="local", environ={"GH_TOKEN": TOKEN}, cwd=cwd, home=home
    )
    assert default.resolve("mcp").provider_overrides["mcp"]["github"]["command"] == [
        "github-mcp-server",
        "stdio",
    ]


def test_mcp_without_a_token_fails_fast(places):
    with pytest.raises(
        ConfigError,
        match="mode mcp: the GitHub MCP server needs a token: set GH_TOKEN or GITHUB_TOKEN",
    ):
        resolver(places).resolve("mcp")


# -- baseline and the rest ------------------------------------------------------------------------


def test_baseline_is_plain_gh_with_json(places):
    config = resolver(places, GH_TOKEN=TOKEN).resolve("baseline")
    assert (
        config.system_instructions == BASELINE_INSTRUCTIONS
        and "--json" in BASELINE_INSTRUCTIONS
    )
    assert config.environment == {} and config.provider_overrides == {}


def test_unknown_mode_and_bad_options(places):
    with pytest.raises(
        UnknownModeError,
        match=r"unknown mode 'ghxx'; did you mean 'ghx'\? \(the eval resolver knows: "
        r"ghx, mcp, baseline\)",
    ):
        resolver(places).resolve("ghxx")
    with pytest.raises(
        ConfigError, match="option mcp_server: expected remote or local, got 'docker'"
    ):
        EvalModeResolver(mcp_server="docker")
    with pytest.raises(
        ConfigError, match="option mcp_command: expected a list of strings"
    ):
        EvalModeResolver(mcp_command="github-mcp-server stdio")
    with pytest.raises(ConfigError, match="option mcp_url: expected an http"):
        EvalModeResolver(mcp_url="api.githubcopilot.com")


def test_the_plugin_registers_the_resolver():
    from profiler_core.plugins.manager import get_plugin_manager

    assert (
        get_plugin_manager().registry.get("mode_resolvers", "eval").factory
        is EvalModeResolver
    )


# -- through the runner: what the provider receives, and what is written --------------------------


def test_modes_reach_the_provider_and_the_token_is_never_written(
    places, tmp_path, monkeypatch
):
    from profiler_core import Scenario

    cwd, home = places
    bin_dir = tmp_path / "bin"
    skill(cwd / "SKILL.md", "Use ghx for GitHub.")
    environ = {"PATH": "/usr/bin", "GHX_BIN_DIR": str(bin_dir), "GH_TOKEN": TOKEN}
    monkeypatch.setenv(
        "GH_TOKEN", TOKEN
    )  # as in a real run: the token is in the environment
    provider = FakeProvider()
    instructions: dict[str, str] = {}
    provider.script = lambda params, attempt: instructions.__setitem__(
        params.mode, params.system_instructions
    )
    options = RunOptions(
        provider=provider,
        scorer=FixedScorer(),
        scenarios=[Scenario(id="issue-close-001", name="x", prompt="close it")],
        mode_resolver=EvalModeResolver(environ=environ, cwd=cwd, home=home),
        mode_names=["ghx", "mcp", "baseline"],
        repetitions=1,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    trio.run(run_profile_suite, options)
    by_mode = {c.mode: c for c in provider.configs}
    assert by_mode["ghx"].environment["PATH"] == f"{bin_dir}{os.pathsep}/usr/bin"
    assert by_mode["mcp"].options["mcp"]["github"]["headers"] == {
        "Authorization": "Bearer {env:GH_TOKEN}"
    }
    assert (
        "mcp" not in by_mode["ghx"].options and "mcp" not in by_mode["baseline"].options
    )
    assert instructions == {
        "ghx": "Use ghx for GitHub.",
        "mcp": MCP_INSTRUCTIONS,
        "baseline": BASELINE_INSTRUCTIONS,
    }
    written = [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".csv", ".html")
    ]
    assert any(p.suffix == ".jsonl" for p in written)
    for path in written:
        assert TOKEN not in path.read_text(encoding="utf-8", errors="replace"), path


def test_options_take_precedence_over_the_environment(places, tmp_path):
    cwd, home = places
    skill(cwd / "SKILL.md", "project skill")
    skill(tmp_path / "opt" / "SKILL.md", "option skill")
    r = EvalModeResolver(
        ghx_bin_dir=str(tmp_path / "opt-bin"),
        skill_md=str(tmp_path / "opt" / "SKILL.md"),
        token_env="EVAL_GH_TOKEN",
        environ={
            "PATH": "/bin",
            "GHX_BIN_DIR": "/env-bin",
            "GH_TOKEN": TOKEN,
            "EVAL_GH_TOKEN": TOKEN,
        },
        cwd=cwd,
        home=home,
    )
    ghx = r.resolve("ghx")
    assert ghx.environment["PATH"] == f"{tmp_path / 'opt-bin'}{os.pathsep}/bin"
    assert ghx.system_instructions == "option skill"
    assert r.resolve("mcp").provider_overrides["mcp"]["github"]["headers"] == {
        "Authorization": "Bearer {env:EVAL_GH_TOKEN}"
    }
    unset = EvalModeResolver(
        token_env="EVAL_GH_TOKEN", environ={"GH_TOKEN": TOKEN}, cwd=cwd, home=home
    )
    with pytest.raises(ConfigError, match="set EVAL_GH_TOKEN$"):
        unset.resolve("mcp")
    with pytest.raises(
        ConfigError, match="option token_env: expected a non-empty string"
    ):
        EvalModeResolver(token_env="")
