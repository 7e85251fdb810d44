"""The ``eval`` mode resolver: the three ways an agent may reach GitHub.

- ``ghx``: ``$GHX_BIN_DIR`` (else ``./node_modules/.bin``) goes first on ``PATH``,
  and the first SKILL.md found (``$GHX_SKILL_MD``, ``./SKILL.md``,
  ``~/.agents/skills/{github-ghx,using-ghx,ghx}/SKILL.md``) is the system
  instructions (a short text about ghx when there is none);
- ``mcp``: the GitHub MCP server is added to the provider's MCP config through
  ``provider_overrides["mcp"]`` (OpenCode's shape): the remote server
  ``https://api.githubcopilot.com/mcp/`` with the token as bearer, or a local
  ``github-mcp-server stdio`` when ``mcp_server: local``;
- ``baseline``: plain ``gh``, told to ask for ``--json`` output.

The token is never copied into the config: it is referenced as
``{env:GH_TOKEN}`` (or ``{env:GITHUB_TOKEN}``), which the agent expands from its
own environment, so no file the profiler writes can hold it.

Options (``mode_resolver.options``) ``ghx_bin_dir``, ``skill_md`` and
``token_env`` take precedence over ``$GHX_BIN_DIR``, ``$GHX_SKILL_MD`` and
``GH_TOKEN``/``GITHUB_TOKEN``.
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from profiler_core import ConfigError, ModeConfig, UnknownModeError

__all__ = [
    "BASELINE_INSTRUCTIONS",
    "DEFAULT_MCP_COMMAND",
    "DEFAULT_MCP_URL",
    "GHX_FALLBACK_INSTRUCTIONS",
    "MCP_INSTRUCTIONS",
    "MODES",
    "EvalModeResolver",
    "find_skill_md",
    "ghx_bin_dir",
]

log = logging.getLogger("agent_profiler")

MODES = ("ghx", "mcp", "baseline")
DEFAULT_MCP_URL = "https://api.githubcopilot.com/mcp/"
DEFAULT_MCP_COMMAND = ("github-mcp-server", "stdio")
#: The MCP server's name in the provider's config (its tools appear as ``github_*``).
MCP_SERVER_NAME = "github"
TOKEN_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN")
SKILL_DIRS = ("github-ghx", "using-ghx", "ghx")

GHX_FALLBACK_INSTRUCTIONS = """\
You work on GitHub through `ghx`, a command-line tool that runs typed GitHub capabilities.
- `ghx capabilities list` shows what it can do; `ghx capabilities explain TASK` shows a task's input and output.
- Run a task with `ghx run TASK --input '<json>'` (for example `ghx run issue.view --input '{"owner": "o", "name": "r", "issueNumber": 1}'`).
- Prefer one `ghx` call that returns exactly what you need over several `gh` calls; its output is JSON.
- Do only what the task asks, then say briefly what you changed.
"""

MCP_INSTRUCTIONS = """\
You work on GitHub through the tools of the GitHub MCP server (their names start with `github_`).
- Use those tools to read and change issues, pull requests, reviews and workflows; do not shell out to `gh` or `curl`.
- Read a tool's description before calling it and pass exactly the parameters it asks for.
- Do only what the task asks, then say briefly what you changed.
"""

BASELINE_INSTRUCTIONS = """\
You work on GitHub through the `gh` command-line tool in the shell.
- Ask for machine-readable output: `gh issue view 12 --json title,state,labels`, `gh pr list --json number,title`.
- For anything `gh` has no command for, use `gh api` (REST or `gh api graphql`).
- Do only what the task asks, then say briefly what you changed.
"""


def ghx_bin_dir(
    environ: Mapping[str, str], cwd: Path, option: str | None = None
) -> Path:
    """Where the ``ghx`` binary is: the ``ghx_bin_dir`` option, ``$GHX_BIN_DIR``, else
    ``./node_modules/.bin`` (absolute)."""
    configured = option or environ.get("GHX_BIN_DIR")
    path = Path(configured).expanduser() if configured else Path("node_modules/.bin")
    return path if path.is_absolute() else cwd / path


def find_skill_md(
    environ: Mapping[str, str], cwd: Path, home: Path, option: str | None = None
) -> Path | None:
    """The first SKILL.md that exists, in the documented order (``None`` when there is none)."""
    candidates: list[Path] = []
    for configured_text in (option, environ.get("GHX_SKILL_MD")):
        if configured_text:
            configured = Path(configured_text).expanduser()
            candidates.append(
                configured if configured.is_absolute() else cwd / configured
            )
    candidates.append(cwd / "SKILL.md")
    candidates += [
        home / ".agents" / "skills" / name / "SKILL.md" for name in SKILL_DIRS
    ]
    return next((path for path in candidates if path.is_file()), None)


class EvalModeResolver:
    """Resolves ``ghx``, ``mcp`` and ``baseline`` into environment, instructions and MCP config."""

    id = "eval"

    def __init__(
        self,
        *,
        mcp_server: str = "remote",
        mcp_url: str = DEFAULT_MCP_URL,
        mcp_command: Sequence[str] = DEFAULT_MCP_COMMAND,
        ghx_bin_dir: str | None = None,
        skill_md: str | None = None,
        token_env: str | None = None,
        environ: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        home: str | Path | None = None,
    ) -> None:
        """Options come from the profile's ``mode_resolver.options``;
        ``environ``/``cwd``/``home`` default to the process's."""
        where = "mode resolver 'eval': option"
        if mcp_server not in ("remote", "local"):
            raise ConfigError(
                f"{where} mcp_server: expected remote or local, got {mcp_server!r}"
            )
        if not isinstance(mcp_url, str) or not mcp_url.startswith(
            ("https://", "http://")
        ):
            raise ConfigError(
                f"{where} mcp_url: expected an http(s) URL, got {mcp_url!r}"
            )
        if (
            isinstance(mcp_command, str)
            or not mcp_command
            or not all(isinstance(p, str) and p for p in mcp_command)
        ):
            raise ConfigError(
                f"{where} mcp_command: expected a list of strings (program "
                f"first), got {mcp_command!r}"
            )
        for name, value in (
            ("ghx_bin_dir", ghx_bin_dir),
            ("skill_md", skill_md),
            ("token_env", token_env),
        ):
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigError(
                    f"{where} {name}: expected a non-empty string, got {value!r}"
                )
        self.ghx_bin_dir = ghx_bin_dir
        self.skill_md = skill_md
        self.token_env = token_env
        self.mcp_server = mcp_server
        self.mcp_url = mcp_url
        self.mcp_command = tuple(mcp_command)
        self._environ = environ
        self._cwd = Path(cwd) if cwd is not None else None
        self._home = Path(home) if home is not None else None
        #: bin folders already warned about: modes are resolved more than once
        #: (validation, then the run)
        self._warned: set[Path] = set()

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment the modes are read from (the process's unless one was given)."""
        return self._environ if self._environ is not None else os.environ

    def resolve(self, mode: str) -> ModeConfig:
        """The mode's config; ``UnknownModeError`` for a name other than ghx, mcp or baseline."""
        if mode == "ghx":
            return self._ghx()
        if mode == "mcp":
            return ModeConfig(
                system_instructions=MCP_INSTRUCTIONS,
                provider_overrides={"mcp": {MCP_SERVER_NAME: self.mcp_config()}},
            )
        if mode == "baseline":
            return ModeConfig(system_instructions=BASELINE_INSTRUCTIONS)
        hint = difflib.get_close_matches(mode, MODES, n=1)
        did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
        raise UnknownModeError(
            f"unknown mode {mode!r}{did_you_mean} (the eval resolver knows: {', '.join(MODES)})"
        )

    def _ghx(self) -> ModeConfig:
        cwd = self._cwd or Path.cwd()
        bin_dir = ghx_bin_dir(self.environ, cwd, self.ghx_bin_dir)
        if not (bin_dir / "ghx").exists() and bin_dir not in self._warned:
            self._warned.add(bin_dir)
            log.warning(
                "mode ghx: no ghx in %s (set GHX_BIN_DIR, or npm install ghx there)",
                bin_dir,
            )
        path = self.environ.get("PATH", "")
        skill = find_skill_md(
            self.environ, cwd, self._home or Path.home(), self.skill_md
        )
        if skill is None:
            instructions = GHX_FALLBACK_INSTRUCTIONS
        else:
            try:
                instructions = skill.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"mode ghx: cannot read {skill} ({exc})") from None
        return ModeConfig(
            environment={
                "PATH": f"{bin_dir}{os.pathsep}{path}" if path else str(bin_dir)
            },
            system_instructions=instructions,
        )

    def mcp_config(self) -> dict[str, Any]:
        """The GitHub MCP server entry (OpenCode's ``mcp.<name>`` shape), with the token
        as an ``{env:...}`` reference."""
        names = (self.token_env,) if self.token_env else TOKEN_VARIABLES
        token_variable = next((name for name in names if self.environ.get(name)), None)
        if token_variable is None:
            raise ConfigError(
                f"mode mcp: the GitHub MCP server needs a token: set {' or '.join(names)}"
            )
        reference = f"{{env:{token_variable}}}"
        if self.mcp_server == "local":
            return {
                "type": "local",
                "command": list(self.mcp_command),
                "environment": {"GITHUB_PERSONAL_ACCESS_TOKEN": reference},
                "enabled": True,
            }
        return {
            "type": "remote",
            "url": self.mcp_url,
            "headers": {"Authorization": f"Bearer {reference}"},
            "enabled": True,
        }
