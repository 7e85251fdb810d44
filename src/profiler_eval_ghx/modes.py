"""``eval`` mode resolver: the three ways an agent can do GitHub work — ``ghx``, ``mcp`` and ``baseline`` (plain gh)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from profiler_core import ModeConfig, UnknownModeError

MODES = ("ghx", "mcp", "baseline")

#: The GitHub MCP server GitHub hosts; the token goes in a header by reference, never by value.
REMOTE_MCP_URL = "https://api.githubcopilot.com/mcp/"

SKILL_NAMES = ("github-ghx", "using-ghx", "ghx")

GHX_FALLBACK = """\
You have the `ghx` command-line tool for GitHub. Use it for every GitHub read or change:
`ghx run <capability> --input '<json>'` (for example `ghx run issue.view --input '{"owner": "o", "name": "r", "issueNumber": 1}'`).
Run `ghx capabilities list` to see what it can do. Prefer one ghx call over several raw API calls.
Do not use `gh` or curl for GitHub when a ghx capability exists.
"""

MCP_INSTRUCTIONS = """\
You have the GitHub MCP server's tools (their names start with `github_`). Use them for every GitHub read
or change; do not use the `gh` command or curl for GitHub.
"""

BASELINE_INSTRUCTIONS = """\
Use the GitHub CLI `gh` for GitHub work. Ask for structured output with `--json <fields>` (and `--jq` to
select) instead of parsing tables, and use `gh api` for anything the subcommands do not cover.
"""


def find_skill(env: Mapping[str, str], cwd: Path, home: Path) -> Path | None:
    """The first SKILL.md of: ``$GHX_SKILL_MD``, ``./SKILL.md``, ``~/.agents/skills/{github-ghx,using-ghx,ghx}/SKILL.md``."""
    candidates = []
    if env.get("GHX_SKILL_MD"):
        candidates.append(Path(env["GHX_SKILL_MD"]))
    candidates.append(cwd / "SKILL.md")
    candidates += [home / ".agents" / "skills" / name / "SKILL.md" for name in SKILL_NAMES]
    return next((c for c in candidates if c.is_file()), None)


class EvalModeResolver:
    """Resolves ``ghx``, ``mcp`` and ``baseline`` into instructions, PATH and MCP servers."""

    id = "eval"

    def __init__(
        self,
        *,
        ghx_bin_dir: str | None = None,
        skill_md: str | None = None,
        mcp_command: list[str] | str | None = None,
        mcp_url: str = REMOTE_MCP_URL,
        token_env: str | None = None,
        **_: Any,
    ) -> None:
        self.ghx_bin_dir = ghx_bin_dir
        self.skill_md = skill_md
        self.mcp_command = [mcp_command] if isinstance(mcp_command, str) else mcp_command
        self.mcp_url = mcp_url
        self.token_env = token_env

    def resolve(self, mode: str) -> ModeConfig:
        """The mode's config; an unknown mode raises ``UnknownModeError`` naming the three."""
        env = os.environ
        if mode == "ghx":
            bin_dir = self.ghx_bin_dir or env.get("GHX_BIN_DIR") or str(Path("node_modules/.bin").resolve())
            path = os.pathsep.join(p for p in (bin_dir, env.get("PATH", "")) if p)
            skill = Path(self.skill_md) if self.skill_md else find_skill(env, Path.cwd(), Path.home())
            instructions = skill.read_text(encoding="utf-8") if skill is not None and skill.is_file() else GHX_FALLBACK
            return ModeConfig(environment={"PATH": path}, system_instructions=instructions)
        if mode == "mcp":
            return ModeConfig(system_instructions=MCP_INSTRUCTIONS, provider_overrides={"mcp": {"github": self._mcp_server()}})
        if mode == "baseline":
            return ModeConfig(system_instructions=BASELINE_INSTRUCTIONS)
        raise UnknownModeError(f"unknown mode {mode!r} (the eval resolver knows: {', '.join(MODES)})")

    def _token_var(self) -> str:
        if self.token_env:
            return self.token_env
        return "GH_TOKEN" if os.environ.get("GH_TOKEN") or not os.environ.get("GITHUB_TOKEN") else "GITHUB_TOKEN"

    def _mcp_server(self) -> dict[str, Any]:
        """OpenCode's MCP entry; the token is a ``{env:VAR}`` reference OpenCode fills in, so no file holds it."""
        var = self._token_var()
        command = self.mcp_command or (os.environ["GITHUB_MCP_COMMAND"].split() if os.environ.get("GITHUB_MCP_COMMAND") else None)
        if command:
            return {
                "type": "local",
                "command": [*command, "stdio"] if command[-1] != "stdio" else list(command),
                "environment": {"GITHUB_PERSONAL_ACCESS_TOKEN": f"{{env:{var}}}"},
            }
        return {"type": "remote", "url": self.mcp_url, "headers": {"Authorization": f"Bearer {{env:{var}}}"}}
