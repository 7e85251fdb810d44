"""Import recorded agent sessions: one file -> RecordedSession(s) with a PromptResult
and a SessionTrace.

Formats (see docs/importing.md): ``openai`` (connector results / runs with
OpenAI chat messages), ``anthropic`` (Messages API conversations),
``claude-code`` (Claude Code session logs), ``codex`` (Codex CLI rollout files),
``opencode`` (``opencode export``
JSON), ``trace`` (a SessionTrace JSON) and ``atif`` (an ATIF trajectory, as Harbor
writes). A truncated or foreign file raises
a ProfilerError naming the file and the line or key at fault. An agent of the registry of agents
(config/agents.toml) names the format of its own files too: ``codex-acp`` reads as ``codex``.

Formats are importers in the plugin registry: core's are registered through
``profiler_register_importers`` like a third party's (docs/plugins.md), and
``check_format``/``load_sessions``/``FORMATS`` look them up there.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import attrs

from .._lazy import lazy_exports
from ..errors import ConfigError
from ..model.record import Record
from ..plugins.markers import hookimpl

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.manager import Registry

#: the public names this module defines itself
_EAGER = (
    "FORMATS",
    "ModuleImporter",
    "agent_formats",
    "check_format",
    "formats",
    "get_importer",
    "load_sessions",
    "suffixes",
    "with_model",
)

#: module of this package -> the public names it defines, each imported on first use: the
#: built-in importers plugin is registered at start-up, the session model it builds loads later
_LAZY = {
    ".model": ("RecordedSession",),
    ".traces.categories": ("tool_category",),
    "subagents": ("attach_subagents",),
}

__getattr__ = lazy_exports(__name__, _LAZY)

# Written from _LAZY by `python -m profiler_core._lazy_gen`: do not edit by hand.
if TYPE_CHECKING:
    from ..model import (
        RecordedSession,
    )
    from ..traces.categories import (
        tool_category,
    )
    from .subagents import (
        attach_subagents,
    )

__all__ = [
    "FORMATS",
    "ModuleImporter",
    "RecordedSession",
    "agent_formats",
    "attach_subagents",
    "check_format",
    "formats",
    "get_importer",
    "load_sessions",
    "suffixes",
    "tool_category",
    "with_model",
]
# End of the written names.

#: Built-in format name -> (module of this package with a ``load(path) -> list[RecordedSession]``,
#: the file name endings read from a directory). Add a line here for a new built-in format;
#: third parties use ``profiler_register_importers``.
_MODULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "openai": ("openai", (".json", ".jsonl")),
    "anthropic": ("anthropic", (".json", ".jsonl")),
    "claude-code": ("claude_code", (".jsonl",)),
    "opencode": ("opencode", (".json",)),
    "trace": ("trace", (".json",)),
    "codex": ("codex", (".jsonl",)),
    "atif": ("atif", (".json",)),
}


@attrs.frozen(repr=False, eq=False)
class ModuleImporter(Record):
    """A built-in importer: the ``load`` function of one module of this package
    (imported on first use)."""

    id: str
    module: str
    #: file name endings read from a directory (the ``Importer`` contract's optional ``suffixes``)
    suffixes: tuple[str, ...] = (".json", ".jsonl")

    def load(self, path: Path) -> list[RecordedSession]:
        """The recorded sessions of one file."""
        loaded: list[RecordedSession] = importlib.import_module(
            f".{self.module}", __name__
        ).load(Path(path))
        return loaded


@hookimpl
def profiler_register_importers(register: Any) -> None:
    """Core's formats, registered like a third party's would be."""
    for format, (module, suffixes) in _MODULES.items():
        register(_factory(format, module, suffixes), id=format)


def _factory(format: str, module: str, suffixes: tuple[str, ...]) -> Any:
    def build() -> ModuleImporter:
        return ModuleImporter(id=format, module=module, suffixes=suffixes)

    build.__qualname__ = f"ModuleImporter[{format}]"
    return build


def _registry(registry: Registry | None) -> Registry:
    if registry is not None:
        return registry
    from ..plugins.manager import default_plugin_manager

    return default_plugin_manager().registry


def formats(registry: Registry | None = None) -> tuple[str, ...]:
    """Every registered format, sorted (the process's default plugins unless
    ``registry`` is given)."""
    return tuple(_registry(registry).ids("importers"))


class _Formats(Sequence[str]):
    """``FORMATS``: the registered format names, looked up each time it is read (so
    plugins' formats appear)."""

    def _names(self) -> tuple[str, ...]:
        return formats()

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, value: object) -> bool:
        return value in self._names()

    def __repr__(self) -> str:
        return repr(self._names())


FORMATS: Sequence[str] = _Formats()


def agent_formats() -> dict[str, str]:
    """Agent name -> the format of its own session files, from the registry of agents
    (config/agents.toml, column ``importer``): ``codex-acp`` -> ``codex``."""
    from ..config.agents import registry

    return {name: row.importer for name, row in registry().items() if row.importer}


def check_format(format: str, registry: Registry | None = None) -> str:
    """The registered format of ``format``: itself, or the importer of the registry's agent of
    that name (``claude-code-acp`` -> ``claude-code``); else a ConfigError listing both."""
    known = formats(registry)
    if format in known:
        return format
    agents = agent_formats()
    if agents.get(format) in known:
        return agents[format]
    others = [a for a in agents if a not in known]
    raise ConfigError(
        f"unknown transcript format {format!r}; expected one of {', '.join(known)}"
        + (f" (or an agent: {', '.join(others)})" if others else "")
    )


def get_importer(format: str, registry: Registry | None = None) -> Any:
    """The importer of ``format`` (or of an agent's name) from the registry (a
    ConfigError names the known formats)."""
    reg = _registry(registry)
    return reg.create("importers", check_format(format, reg))


def suffixes(format: str, registry: Registry | None = None) -> tuple[str, ...]:
    """The file name endings the importer of ``format`` reads from a directory (its
    ``suffixes``, or the default)."""
    from ..plugins.contracts import ImporterDefaults

    declared = getattr(
        get_importer(format, registry), "suffixes", ImporterDefaults.suffixes
    )
    return tuple(declared)


def load_sessions(
    format: str, path: str | Path, registry: Registry | None = None
) -> list[RecordedSession]:
    """The recorded sessions of one file (a JSONL file may hold several)."""
    sessions: list[RecordedSession] = get_importer(format, registry).load(Path(path))
    return sessions


def with_model(session: RecordedSession, model: str | None) -> RecordedSession:
    """``session`` with ``model`` filled in when the file named none, re-priced if its
    cost was unknown."""
    if not model or session.model:
        return session
    if session.cost_source != "unknown":
        return attrs.evolve(session, model=model)
    from ..metrics.pricing import price_tokens

    cost = price_tokens(model, session.result.metrics.tokens)
    if cost is None:
        return attrs.evolve(session, model=model)
    metrics = attrs.evolve(session.result.metrics, cost=cost)
    return attrs.evolve(
        session,
        model=model,
        result=attrs.evolve(session.result, metrics=metrics),
        cost_source="computed",
    )
