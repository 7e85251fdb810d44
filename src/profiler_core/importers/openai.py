"""``openai``: connector results / runs with OpenAI-format ``messages``.

A file holds one JSON object, a JSON array of objects, or one object per line
(JSONL). Each object is one session::

    {"id": "run_1", "scenarioId": "refund-001", "model": "gpt-4.1-mini",
     "startedAt": "...", "completedAt": "...", "latencyMs": 8421,
     "tokensUsage": {"input_tokens": 5120, "output_tokens": 612, "total_tokens": 5732},
     "messages": [{"role": "user", "content": "..."}, {"role": "assistant",
     "tool_calls": [...]}, ...]}

``usage`` (any shape ``normalize_usage`` accepts) wins over ``tokensUsage``;
without either, the usage of each assistant message is summed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..metrics.messages import normalize_messages
from ..metrics.pricing import price_tokens
from ..metrics.usage import normalize_usage
from ..model import CompletionReason, RecordedSession, TokenBreakdown
from ..traces.builder import SessionBuilder
from ..traces.readers import (
    expect_list,
    expect_mapping,
    keys_of,
    number,
    optional_str,
    parse_time,
    read_json_records,
)
from ._chat import walk_messages

_FAILED = {"failed", "error", "errored", "cancelled", "canceled", "aborted"}
_TIMED_OUT = {"timeout", "timed_out", "timedout"}


def load(path: Path) -> list[RecordedSession]:
    """Every session of an ``openai`` file."""
    records = read_json_records(path)
    return [
        _session(path, where, value, index, len(records))
        for index, (where, value) in enumerate(records)
    ]


def _session(
    path: Path, where: str, value: Any, index: int, count: int
) -> RecordedSession:
    run = expect_mapping(value, where, "a connector result or run object")
    if "messages" not in run:
        raise ValidationError(
            f"{where}: no 'messages' key ({keys_of(run)}); expected a connector result or run with "
            "'messages' in OpenAI chat format"
        )
    messages = normalize_messages(
        expect_list(run["messages"], f"{where}: $.messages"),
        where=f"{where}: $.messages",
    )
    builder = SessionBuilder(
        price=price_tokens, file=path, source=where, format="openai"
    )
    per_message = walk_messages(builder, messages, where=where)

    total = _total_usage(run, where)
    if total is None and per_message:
        builder.usage.extend(per_message)
    started = _time(run, "startedAt", where)
    completed = _time(run, "completedAt", where)
    latency = number(run.get("latencyMs"), f"{where}: $.latencyMs")
    reason, error = _ending(run, where)
    session_id = optional_str(run.get("threadId"), f"{where}: $.threadId")
    if not session_id:
        session_id = optional_str(run.get("id"), f"{where}: $.id")
    if not session_id:
        session_id = path.stem if count == 1 else f"{path.stem}-{index}"
    return builder.build(
        session_id=session_id,
        model=optional_str(run.get("model"), f"{where}: $.model"),
        latency_ms=latency,
        started_at=started,
        completed_at=completed,
        total_usage=total,
        completion_reason=reason,
        error=error,
        scenario_hint=optional_str(run.get("scenarioId"), f"{where}: $.scenarioId"),
    )


def _total_usage(run: Mapping[str, Any], where: str) -> TokenBreakdown | None:
    """The run's own token total (``usage``, else ``tokensUsage``), if it has one."""
    for key in ("usage", "tokensUsage"):
        if run.get(key) is not None:
            return normalize_usage(run[key], where=f"{where}: $.{key}")
    return None


def _time(run: Mapping[str, Any], key: str, where: str) -> datetime | None:
    value = run.get(key)
    return parse_time(value, f"{where}: $.{key}") if value is not None else None


def _ending(run: Mapping[str, Any], where: str) -> tuple[CompletionReason, str | None]:
    """How the run ended, from its ``status`` (or ``success: false``), and its error."""
    status = optional_str(run.get("status"), f"{where}: $.status")
    error = optional_str(run.get("error"), f"{where}: $.error")
    state = status.lower() if status else ""
    if state in _TIMED_OUT:
        return "timeout", error or f"run status {status!r}"
    if state in _FAILED or run.get("success") is False:
        return "error", error or f"run status {status or 'success: false'!r}"
    return "stop", error
