"""The registry of agents: which agent programs exist, read from one table
(``agents.toml`` beside this module).

Every part of the profiler that names agents reads it: ``profiler agents
list|install``, ``profiler init --agent``, the providers (where a program is
found, what installs it), the fake model (the agents' shell tools), the
importers (an agent's name as the format of its session files), the wire
recorder (the model APIs), the tests and ``.ci/install-agents``. A copy of the
table named by ``$PROFILER_AGENTS_FILE`` replaces it. See docs/agents.md.
"""

from __future__ import annotations

import functools
import json
import os
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import attrs

from ..errors import ConfigError
from ..model.record import Record

#: The model APIs an agent may call (the wire recorder understands these).
APIS = ("openai-chat", "openai-responses", "anthropic")

Api = Literal["openai-chat", "openai-responses", "anthropic"]

#: each API's requests: the path they end with (``POST <base>/chat/completions``)
API_PATHS: dict[str, str] = {
    "openai-chat": "/chat/completions",
    "openai-responses": "/responses",
    "anthropic": "/messages",
}

#: the variable naming a copy of the table that replaces the built-in one
REGISTRY_ENV = "PROFILER_AGENTS_FILE"


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ShellTool(Record):
    """An agent's shell tool: its name, and its arguments with ``{command}`` where the
    command goes."""

    #: the tool's name in the model requests (``exec_command``)
    tool: str
    #: the arguments of a call as JSON text (``{"cmd": "{command}"}``): text keeps the row hashable
    template: str

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments of a call, ``{command}`` unfilled."""
        loaded: dict[str, Any] = json.loads(self.template)
        return loaded

    def call(self, command: str) -> dict[str, Any]:
        """The arguments of a call of ``command``."""
        filled: dict[str, Any] = _fill(self.arguments, command)
        return filled


def _fill(value: Any, command: str) -> Any:
    if isinstance(value, str):
        return value.replace("{command}", command)
    if isinstance(value, list):
        return [_fill(v, command) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, command) for k, v in value.items()}
    return value


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AgentSpec(Record):
    """One row of the registry: an agent program, how it is installed, run, pointed at a
    model and confined."""

    #: the registry's name of the agent (``profiler init --agent NAME``)
    name: str
    #: the executable
    program: str
    #: the npm package that provides it ("" when it is not installed from npm)
    package: str
    #: the pinned version of ``package``
    version: str
    #: the variable that names the program's path, e.g. ``CLAUDE_BIN``
    binary_env: str
    #: the provider id that runs it
    provider: str
    #: the ``profiler import`` format of its own session files ("" when none)
    importer: str
    #: the command that speaks ACP on stdio (empty when the agent has none)
    acp: tuple[str, ...]
    #: the model API it calls
    api: Api
    #: how it is pointed at a model endpoint (prose, for the docs and ``agents list``)
    endpoint: str
    #: how a session is confined (prose)
    confine: str
    #: the model name a profile written by ``profiler init --agent`` asks the fake model for
    model: str
    #: its shell tools, newest first (the fake model calls the one a request offers)
    shell: tuple[ShellTool, ...] = ()

    @property
    def npm_spec(self) -> str:
        """``package@version`` as npm installs it ("" when the agent is not an npm package)."""
        return f"{self.package}@{self.version}" if self.package else ""

    @property
    def install_command(self) -> str:
        """The command that installs the program by hand."""
        return f"npm install {self.npm_spec}" if self.package else ""


_FIELDS = {a.name: a.type for a in attrs.fields(AgentSpec) if a.name != "name"}
#: the fields a row may leave out
_OPTIONAL = {"shell"}
_SHELL = 'a list of tables {tool = "...", arguments = {...}}'


def _shell(raw: Any, where: str) -> tuple[ShellTool, ...]:
    """The ``shell`` column: a list of ``{tool, arguments}`` tables (a ConfigError otherwise)."""
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected {_SHELL}")
    tools = []
    for i, item in enumerate(raw):
        if (
            not isinstance(item, dict)
            or set(item) != {"tool", "arguments"}
            or not isinstance(item["tool"], str)
            or not item["tool"]
            or not isinstance(item["arguments"], dict)
        ):
            raise ConfigError(f"{where}[{i}]: expected {_SHELL}")
        try:
            template = json.dumps(item["arguments"])
        except TypeError:  # a TOML date or time: no JSON value
            raise ConfigError(
                f"{where}[{i}].arguments: expected strings, numbers, lists and tables"
            ) from None
        tools.append(ShellTool(tool=item["tool"], template=template))
    return tuple(tools)


def _check_field(field: str, value: Any, where: str) -> None:
    """One string or list-of-strings field (``shell`` is checked by :func:`_shell`)."""
    if field == "shell":
        return
    wanted = list if field == "acp" else str
    if not isinstance(value, wanted) or (
        wanted is list and not all(isinstance(v, str) and v for v in value)
    ):
        what = "a list of strings" if wanted is list else "a string"
        raise ConfigError(f"{where}.{field}: expected {what}")


def _row(name: str, raw: object, where: str) -> AgentSpec:
    """One checked row of the table (a ConfigError naming the row and the field otherwise)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: agents.{name}: expected a table")
    missing = sorted(set(_FIELDS) - _OPTIONAL - set(raw))
    unknown = sorted(set(raw) - set(_FIELDS))
    if missing or unknown:
        what = (
            f"missing {', '.join(missing)}"
            if missing
            else f"unknown field(s) {', '.join(unknown)}"
        )
        raise ConfigError(f"{where}: agents.{name}: {what}")
    for field, value in raw.items():
        _check_field(field, value, f"{where}: agents.{name}")
    if raw["api"] not in APIS:
        raise ConfigError(
            f"{where}: agents.{name}.api: expected one of {', '.join(APIS)}, got {raw['api']!r}"
        )
    shell = _shell(raw.get("shell", []), f"{where}: agents.{name}.shell")
    return AgentSpec(name=name, **{**raw, "acp": tuple(raw["acp"]), "shell": shell})


def parse_registry(text: str, where: str = "agents.toml") -> dict[str, AgentSpec]:
    """The rows of a registry table in TOML (name -> AgentSpec), checked."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    table = data.get("agents")
    if not isinstance(table, dict) or not table:
        raise ConfigError(f"{where}: expected a non-empty [agents] table")
    return {name: _row(name, raw, where) for name, raw in table.items()}


def registry() -> dict[str, AgentSpec]:
    """Every agent the profiler knows, by name, in the table's order
    (``$PROFILER_AGENTS_FILE``'s, when set)."""
    return _load(os.environ.get(REGISTRY_ENV, ""))


@functools.cache
def _load(path: str) -> dict[str, AgentSpec]:
    if path:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"${REGISTRY_ENV}: cannot read {path!r}: {exc.strerror or exc}"
            ) from None
        return parse_registry(text, where=path)
    text = (
        resources.files("profiler_core.config")
        .joinpath("agents.toml")
        .read_text(encoding="utf-8")
    )
    return parse_registry(text)


def shell_tools() -> dict[str, ShellTool]:
    """Every agent's shell tools by tool name (the first row naming a tool gives its arguments)."""
    tools: dict[str, ShellTool] = {}
    for row in registry().values():
        for tool in row.shell:
            tools.setdefault(tool.tool, tool)
    return tools


def shell_tool_of(api: str) -> ShellTool | None:
    """The shell tool of the first agent calling ``api`` that has one (None when none has)."""
    return next(
        (row.shell[0] for row in registry().values() if row.api == api and row.shell),
        None,
    )


def agent(name: str) -> AgentSpec:
    """The registry's row of ``name`` (a ConfigError listing the known names otherwise)."""
    rows = registry()
    if name not in rows:
        raise ConfigError(f"unknown agent {name!r} (known: {', '.join(rows)})")
    return rows[name]


def by_program(program: str) -> AgentSpec | None:
    """The first row whose executable is ``program``, else None."""
    return next((row for row in registry().values() if row.program == program), None)


def npm_packages(names: tuple[str, ...] | None = None) -> list[str]:
    """The pinned npm specs of the named agents (all by default), each once, in the
    table's order."""
    rows = [agent(n) for n in names] if names is not None else list(registry().values())
    return list(dict.fromkeys(row.npm_spec for row in rows if row.npm_spec))


__all__ = [
    "APIS",
    "API_PATHS",
    "REGISTRY_ENV",
    "AgentSpec",
    "ShellTool",
    "agent",
    "by_program",
    "npm_packages",
    "parse_registry",
    "registry",
    "shell_tool_of",
    "shell_tools",
]
