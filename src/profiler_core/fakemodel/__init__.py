"""A fake model on 127.0.0.1: scripted OpenAI chat, Anthropic Messages and OpenAI
Responses endpoints.

Real agent programs (OpenCode, Claude Code, Codex CLI) run against it with no
API key and no network: ``profiler fake-model`` serves a YAML script
(:mod:`.script`), and tests start :class:`FakeModelServer` with replies
(:mod:`.replies`). See docs/fake-model.md.
"""

from __future__ import annotations

from .replies import (
    Fail,
    Hang,
    Reply,
    Script,
    Shell,
    Text,
    ToolCall,
    Usage,
    has_tool_result,
    steps,
    tool_results,
    tool_then_text,
)
from .script import DEFAULT_SCRIPT, load_script, parse_script
from .server import FakeModelServer, RecordedRequest

__all__ = [
    "DEFAULT_SCRIPT",
    "Fail",
    "FakeModelServer",
    "Hang",
    "RecordedRequest",
    "Reply",
    "Script",
    "Shell",
    "Text",
    "ToolCall",
    "Usage",
    "has_tool_result",
    "load_script",
    "parse_script",
    "steps",
    "tool_results",
    "tool_then_text",
]
