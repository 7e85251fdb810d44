"""``atif``: an Agent Trajectory Interchange Format file (``schema_version:
"ATIF-v1.x"``), as Harbor writes.

The trajectory is checked against Harbor's model first (``check_trajectory``:
required fields, types, no unknown keys, step ids 1, 2, ...; docs/importing.md
cites the model), so a file Harbor would refuse is refused here with one line
naming the file and the JSON path. Then:

- the first ``user`` step is the prompt; a later one starts a new turn;
- each ``agent`` step is one turn (one model response): ``reasoning_content``
  a reasoning event, ``message`` a text event, ``tool_calls`` tool calls whose
  results are the ``observation`` results naming them (``source_call_id``);
- a step's ``metrics`` are that response's usage (``prompt_tokens`` include
  ``cached_tokens``), its ``model_name`` (else the agent's) its model, and its
  ``cost_usd`` the provider's cost; ``final_metrics`` totals win when given;
- ``system`` steps are instructions, not turns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..metrics.pricing import price_tokens
from ..model import RecordedSession, TokenBreakdown
from ..traces.builder import SessionBuilder, text_of
from ..traces.readers import (
    json_problem,
    load_json,
    parse_time,
    read_text,
    truncation_hint,
)

#: The ATIF versions Harbor's trajectory model accepts (its ``schema_version`` literal).
ATIF_VERSIONS = tuple(f"ATIF-v1.{minor}" for minor in range(9))
#: What ``profiler traces export --format atif`` writes: no field newer than this version is used.
ATIF_EXPORT_VERSION = "ATIF-v1.6"

# The fields of each ATIF object (Harbor's models forbid any other): name -> expected JSON kinds.
_TRAJECTORY = {
    "schema_version": "str",
    "session_id": "str?",
    "trajectory_id": "str?",
    "agent": "object",
    "steps": "list",
    "notes": "str?",
    "final_metrics": "object?",
    "continued_trajectory_ref": "str?",
    "extra": "object?",
    "subagent_trajectories": "list?",
}
_AGENT = {
    "name": "str",
    "version": "str",
    "model_name": "str?",
    "tool_definitions": "list?",
    "extra": "object?",
}
_STEP = {
    "step_id": "int",
    "timestamp": "str?",
    "source": "str",
    "model_name": "str?",
    "reasoning_effort": "str|number?",
    "message": "str|list",
    "reasoning_content": "str?",
    "tool_calls": "list?",
    "observation": "object?",
    "metrics": "object?",
    "is_copied_context": "bool?",
    "llm_call_count": "int?",
    "extra": "object?",
}
_TOOL_CALL = {
    "tool_call_id": "str",
    "function_name": "str",
    "arguments": "object",
    "extra": "object?",
}
_OBSERVATION = {"results": "list"}
_RESULT = {
    "source_call_id": "str?",
    "content": "str|list?",
    "subagent_trajectory_ref": "list?",
    "extra": "object?",
}
_METRICS = {
    "prompt_tokens": "int?",
    "completion_tokens": "int?",
    "cached_tokens": "int?",
    "cost_usd": "number?",
    "prompt_token_ids": "list?",
    "completion_token_ids": "list?",
    "logprobs": "list?",
    "extra": "object?",
}
_FINAL = {
    "total_prompt_tokens": "int?",
    "total_completion_tokens": "int?",
    "total_cached_tokens": "int?",
    "total_cost_usd": "number?",
    "total_steps": "int?",
    "extra": "object?",
}
_AGENT_ONLY = (
    "model_name",
    "reasoning_effort",
    "reasoning_content",
    "tool_calls",
    "metrics",
)


def load(path: Path) -> list[RecordedSession]:
    """The session of one ATIF trajectory file."""
    text = read_text(path)
    try:
        data = load_json(text, str(path))
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"{path}: not valid JSON ({json_problem(exc, line=True)}){truncation_hint(exc, text)}"
        ) from None
    return [from_trajectory(data, path)]


def from_trajectory(
    data: Any, path: Path, *, where: str | None = None
) -> RecordedSession:
    """A RecordedSession from an ATIF trajectory (a parsed JSON object); a
    ValidationError names the path at fault."""
    where = where or str(path)
    problems = check_trajectory(data)
    if problems:
        raise ValidationError(
            f"{where}: {problems[0]}"
            + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
        )
    agent = data["agent"]
    builder = SessionBuilder(price=price_tokens, file=path, source=where, format="atif")
    feed_steps(builder, data["steps"], agent.get("model_name"))
    totals, cost = final_totals(data.get("final_metrics"))
    if cost is not None and builder.provider_cost == 0:
        builder.add_cost(cost)
    return builder.build(
        session_id=data.get("session_id") or path.stem,
        model=agent.get("model_name") if not builder.models else None,
        total_usage=totals,
    )


def feed_steps(
    builder: SessionBuilder, steps: list[Mapping[str, Any]], default_model: str | None
) -> None:
    """Give ``builder`` the turns, events, tool results and usage of a checked
    trajectory's steps."""
    for step in steps:
        if not step.get(
            "is_copied_context"
        ):  # context copied from an earlier trajectory is not this session's work
            _step(builder, step, default_model)


def _step(
    builder: SessionBuilder, step: Mapping[str, Any], default_model: str | None
) -> None:
    moment = (
        parse_time(step["timestamp"], f"steps[{step['step_id'] - 1}].timestamp")
        if step.get("timestamp")
        else None
    )
    message = text_of(step.get("message"))
    if step["source"] == "user":
        if builder.prompt is None:
            builder.prompt = message
        builder.user_message(moment)
        return
    if step["source"] == "system":
        builder.see(moment)
        return
    turn = builder.turn(step["step_id"], moment)
    model = step.get("model_name") or default_model
    builder.note_model(model)
    if step.get("reasoning_content"):
        builder.reasoning(turn, step["reasoning_content"])
    builder.text(turn, message)
    for call in step.get("tool_calls") or ():
        builder.tool_call(
            turn, call["tool_call_id"], call["function_name"], call["arguments"], moment
        )
    for result in (step.get("observation") or {}).get("results", ()):
        if result.get("source_call_id") is None:
            continue  # the result of an action that was no tool call: nothing to attach it to
        extra = result.get("extra") or {}
        builder.tool_result(
            result["source_call_id"],
            text_of(result.get("content")),
            is_error=extra.get("is_error") is True,
            moment=moment,
            where=f"{builder.source}: steps[{step['step_id'] - 1}].observation",
        )
    metrics = step.get("metrics")
    if metrics:
        builder.add_usage(
            _tokens(
                metrics.get("prompt_tokens"),
                metrics.get("cached_tokens"),
                metrics.get("completion_tokens"),
            ),
            model,
        )
        if metrics.get("cost_usd"):
            builder.add_cost(float(metrics["cost_usd"]))


def _tokens(
    prompt: int | None, cached: int | None, completion: int | None
) -> TokenBreakdown:
    """ATIF's counts (prompt tokens include the cached ones) as our breakdown."""
    cached = cached or 0
    return TokenBreakdown(
        input=max(0, (prompt or 0) - cached), cache_read=cached, output=completion or 0
    )


def final_totals(
    final: Mapping[str, Any] | None,
) -> tuple[TokenBreakdown | None, float | None]:
    """The trajectory's own totals (None where it gives none)."""
    if not final:
        return None, None
    counts = (
        final.get("total_prompt_tokens"),
        final.get("total_cached_tokens"),
        final.get("total_completion_tokens"),
    )
    totals = _tokens(*counts) if any(c is not None for c in counts) else None
    return totals, final.get("total_cost_usd")


# -- the check against Harbor's model -------------------------------------------------


def check_trajectory(data: Any) -> list[str]:
    """Problems of an ATIF trajectory against Harbor's ``Trajectory`` model, one per
    line with its JSON path."""
    if not isinstance(data, Mapping):
        return [
            "expected an ATIF trajectory (a JSON object with schema_version, "
            f"agent, steps), got {_kind(data)}"
        ]
    version = data.get("schema_version")
    if isinstance(version, str) and version not in ATIF_VERSIONS:
        return [
            f"$.schema_version: unknown ATIF version {version!r}; this profiler "
            f"reads {ATIF_VERSIONS[0]} to {ATIF_VERSIONS[-1]}"
        ]
    problems: list[str] = []
    _fields(data, _TRAJECTORY, "$", problems)
    if isinstance(data.get("agent"), Mapping):
        _fields(data["agent"], _AGENT, "$.agent", problems)
    if isinstance(data.get("final_metrics"), Mapping):
        _fields(data["final_metrics"], _FINAL, "$.final_metrics", problems)
    steps = data.get("steps")
    if isinstance(steps, list):
        if not steps:
            problems.append("$.steps: expected at least one step")
        for index, step in enumerate(steps):
            _check_step(step, index, problems)
    for index, sub in enumerate(data.get("subagent_trajectories") or ()):
        problems.extend(
            f"$.subagent_trajectories[{index}]{p[1:]}" for p in check_trajectory(sub)
        )
    return problems


def _check_step(step: Any, index: int, problems: list[str]) -> None:
    where = f"$.steps[{index}]"
    if not isinstance(step, Mapping):
        problems.append(f"{where}: expected an object, got {_kind(step)}")
        return
    _fields(step, _STEP, where, problems)
    if isinstance(step.get("step_id"), int) and step["step_id"] != index + 1:
        problems.append(
            f"{where}.step_id: expected {index + 1} (sequential from 1), got {step['step_id']}"
        )
    _check_source(step, where, problems)
    if isinstance(step.get("timestamp"), str) and not _iso(step["timestamp"]):
        problems.append(
            f"{where}.timestamp: expected an ISO 8601 timestamp, got {step['timestamp']!r}"
        )
    ids = _check_tool_calls(step, where, problems)
    if isinstance(step.get("metrics"), Mapping):
        _fields(step["metrics"], _METRICS, f"{where}.metrics", problems)
    observation = step.get("observation")
    if isinstance(observation, Mapping):
        _check_observation(observation, ids, f"{where}.observation", problems)


def _check_source(step: Mapping[str, Any], where: str, problems: list[str]) -> None:
    """A known source; the agent-only fields only on an agent's step."""
    source = step.get("source")
    if isinstance(source, str) and source not in ("system", "user", "agent"):
        problems.append(
            f"{where}.source: expected system, user or agent, got {source!r}"
        )
    if source not in ("system", "user"):
        return
    for field in _AGENT_ONLY:
        if step.get(field) is not None:
            problems.append(
                f"{where}.{field}: only an agent step may have it (source is {source!r})"
            )


def _check_tool_calls(
    step: Mapping[str, Any], where: str, problems: list[str]
) -> set[str]:
    """Each tool call's fields; the ids of the calls, for the results to name."""
    ids: set[str] = set()
    for k, call in enumerate(step.get("tool_calls") or ()):
        if _object(call, f"{where}.tool_calls[{k}]", problems):
            _fields(call, _TOOL_CALL, f"{where}.tool_calls[{k}]", problems)
            ids.add(call.get("tool_call_id"))
    return ids


def _check_observation(
    observation: Mapping[str, Any], ids: set[str], where: str, problems: list[str]
) -> None:
    """The observation's fields, and results that name a tool call of the step."""
    _fields(observation, _OBSERVATION, where, problems)
    for k, result in enumerate(observation.get("results") or ()):
        at = f"{where}.results[{k}]"
        if not _object(result, at, problems):
            continue
        _fields(result, _RESULT, at, problems)
        call_id = result.get("source_call_id")
        if call_id is not None and call_id not in ids:
            problems.append(
                f"{at}.source_call_id: {call_id!r} names no tool call of this step"
            )


def _object(value: Any, where: str, problems: list[str]) -> bool:
    if isinstance(value, Mapping):
        return True
    problems.append(f"{where}: expected an object, got {_kind(value)}")
    return False


def _fields(
    obj: Mapping[str, Any], spec: Mapping[str, str], where: str, problems: list[str]
) -> None:
    """Unknown keys, missing required ones, and values of the wrong JSON kind."""
    for key in obj:
        if key not in spec:
            problems.append(
                f"{where}.{key}: not a field of ATIF (expected one of {', '.join(spec)})"
            )
    for key, kinds in spec.items():
        optional = kinds.endswith("?")
        value = obj.get(key)
        if value is None:
            if not optional:
                problems.append(f"{where}.{key}: required")
            continue
        allowed = kinds.rstrip("?").split("|")
        if not any(_is(value, kind) for kind in allowed):
            problems.append(
                f"{where}.{key}: expected {' or '.join(allowed)}, got {_kind(value)}"
            )
        elif (
            "int" in allowed
            and isinstance(value, int)
            and value < (1 if key == "step_id" else 0)
        ):
            problems.append(
                f"{where}.{key}: expected {'>= 1' if key == 'step_id' else '>= 0'}, got {value}"
            )


def _is(value: Any, kind: str) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    types = {"str": str, "bool": bool, "list": list, "object": Mapping}
    return isinstance(value, types[kind])


def _iso(text: str) -> bool:
    from datetime import datetime

    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _kind(value: Any) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


__all__ = [
    "ATIF_EXPORT_VERSION",
    "ATIF_VERSIONS",
    "check_trajectory",
    "feed_steps",
    "final_totals",
    "from_trajectory",
    "load",
]
