"""The registry of agents: which agent programs exist, read from one table (``agents.toml`` beside this module).

Every part of the profiler that names agents reads it: ``profiler agents
list|install``, ``profiler init --agent``, the providers (where a program is
found, what installs it), the tests and ``.ci/install-agents``. See
docs/agents.md.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from typing import Literal

import attrs

from ..errors import ConfigError
from ..model.record import Record

#: The model APIs an agent may call (the wire recorder understands these).
APIS = ("openai-chat", "openai-responses", "anthropic")

Api = Literal["openai-chat", "openai-responses", "anthropic"]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class AgentSpec(Record):
    """One row of the registry: an agent program, how it is installed, run, pointed at a model and confined."""

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

    @property
    def npm_spec(self) -> str:
        """``package@version`` as npm installs it ("" when the agent is not an npm package)."""
        return f"{self.package}@{self.version}" if self.package else ""

    @property
    def install_command(self) -> str:
        """The command that installs the program by hand."""
        return f"npm install {self.npm_spec}" if self.package else ""


_FIELDS = {a.name: a.type for a in attrs.fields(AgentSpec) if a.name != "name"}


def _row(name: str, raw: object, where: str) -> AgentSpec:
    """One checked row of the table (a ConfigError naming the row and the field otherwise)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: agents.{name}: expected a table")
    missing = sorted(set(_FIELDS) - set(raw))
    unknown = sorted(set(raw) - set(_FIELDS))
    if missing or unknown:
        what = (
            f"missing {', '.join(missing)}"
            if missing
            else f"unknown field(s) {', '.join(unknown)}"
        )
        raise ConfigError(f"{where}: agents.{name}: {what}")
    for field, value in raw.items():
        wanted = list if field == "acp" else str
        if not isinstance(value, wanted) or (
            wanted is list and not all(isinstance(v, str) and v for v in value)
        ):
            raise ConfigError(
                f"{where}: agents.{name}.{field}: expected {'a list of strings' if wanted is list else 'a string'}"
            )
    if raw["api"] not in APIS:
        raise ConfigError(
            f"{where}: agents.{name}.api: expected one of {', '.join(APIS)}, got {raw['api']!r}"
        )
    return AgentSpec(name=name, **{**raw, "acp": tuple(raw["acp"])})


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


@functools.cache
def registry() -> dict[str, AgentSpec]:
    """Every agent the profiler knows, by name, in the table's order."""
    text = (
        resources.files("profiler_core.config")
        .joinpath("agents.toml")
        .read_text(encoding="utf-8")
    )
    return parse_registry(text)


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
    """The pinned npm specs of the named agents (all by default), each once, in the table's order."""
    rows = [agent(n) for n in names] if names is not None else list(registry().values())
    return list(dict.fromkeys(row.npm_spec for row in rows if row.npm_spec))


__all__ = [
    "APIS",
    "AgentSpec",
    "agent",
    "by_program",
    "npm_packages",
    "parse_registry",
    "registry",
]
