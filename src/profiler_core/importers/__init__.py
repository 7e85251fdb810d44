"""Import recorded agent sessions: one file -> RecordedSession(s) with a PromptResult and a SessionTrace.

Formats (see docs/importing.md): ``openai`` (connector results / runs with
OpenAI chat messages), ``anthropic`` (Messages API conversations),
``claude-code`` (Claude Code session logs), ``codex`` (Codex CLI rollout files), ``opencode`` (``opencode export``
JSON) and ``trace`` (a SessionTrace JSON). A truncated or foreign file raises
a ProfilerError naming the file and the line or key at fault.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import attrs

from ..errors import ConfigError
from ._build import RecordedSession

#: format name -> module of this package with a ``load(path) -> list[RecordedSession]``
_MODULES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "claude-code": "claude_code",
    "opencode": "opencode",
    "trace": "trace",
    "codex": "codex",
}

FORMATS: tuple[str, ...] = tuple(_MODULES)


def check_format(format: str) -> str:
    """``format`` if known, else a ConfigError listing the known ones."""
    if format not in _MODULES:
        raise ConfigError(f"unknown transcript format {format!r}; expected one of {', '.join(FORMATS)}")
    return format


def load_sessions(format: str, path: str | Path) -> list[RecordedSession]:
    """The recorded sessions of one file (a JSONL file may hold several)."""
    module = importlib.import_module(f".{_MODULES[check_format(format)]}", __name__)
    return module.load(Path(path))


def with_model(session: RecordedSession, model: str | None) -> RecordedSession:
    """``session`` with ``model`` filled in when the file named none, re-priced if its cost was unknown."""
    if not model or session.model:
        return session
    if session.cost_source != "unknown":
        return attrs.evolve(session, model=model)
    from ..pricing import price_tokens

    cost = price_tokens(model, session.result.metrics.tokens)
    if cost is None:
        return attrs.evolve(session, model=model)
    metrics = attrs.evolve(session.result.metrics, cost=cost)
    return attrs.evolve(
        session, model=model, result=attrs.evolve(session.result, metrics=metrics), cost_source="computed"
    )


__all__ = ["FORMATS", "RecordedSession", "check_format", "load_sessions", "with_model"]
