"""OpenCode inside a trial's container: one ``opencode run`` per prompt, read back with
``opencode export``.

A trial (docs/environments.md, "Agents inside the trial") runs the agent in
the task's container, where the mode's ``opencode serve`` on the host cannot
reach. So a session in a trial runs OpenCode's own one-shot command there:
``opencode run --format json --model M --dir WORKDIR -- PROMPT``, with the
mode's generated config (``OPENCODE_CONFIG_CONTENT``, its model's ``baseURL``
the wire recorder's) and the mode's system instructions as an instructions
file in the session's home. Its JSON lines name the session; ``opencode
export <id>`` then prints the session's messages, which the parser of
``profiler import opencode`` measures, as the server's messages are.
The program, the home and the network come from ``providers/in_trial.py``.
"""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from typing import Any

import attrs

from ...model import CreateSessionParams, PromptResult, SessionTrace
from .._agent_process import SessionDirs, run_agent
from ..in_trial import run_in_trial
from .config import OpenCodeError, deep_merge, session_title
from .metrics import measure
from .server import server_environment

__all__ = ["TrialSession", "prompt_in_trial"]


@attrs.define
class TrialSession:
    """One OpenCode session inside a trial: the runner's parameters and the session's folders."""

    params: CreateSessionParams
    dirs: SessionDirs
    setup: Any
    trace: SessionTrace | None = None
    wire_calls: tuple[Any, ...] = ()


def new_session(
    params: CreateSessionParams, binary: str, options: Any, mode_env: Mapping[str, str]
) -> TrialSession:
    """A session's folders (its home is copied into the trial when it runs)."""
    setup = types.SimpleNamespace(binary=binary, options=options, environment=mode_env)
    return TrialSession(
        params=params, dirs=SessionDirs.create("opencode", None, None), setup=setup
    )


async def prompt_in_trial(
    provider: Any,
    session: TrialSession,
    text: str,
    *,
    config: dict[str, Any],
    model: str,
    agent: str | None,
) -> PromptResult:
    """Run ``opencode run`` on ``text`` inside the trial, then read the session back
    with ``opencode export``."""
    home, params = session.dirs.home, session.params
    system = params.system_instructions.strip()
    if system:
        # no --system switch: the mode's instructions reach OpenCode as an instructions file
        path = home / "profiler-instructions.md"
        path.write_text(system + "\n", encoding="utf-8")
        config = deep_merge(config, {"instructions": [str(path)]})
    env = server_environment(home, config, session.setup.environment, confined=True)
    env["TMPDIR"] = str(session.dirs.tmp)
    command = [session.setup.binary, "run", "--format", "json", "--model", model]
    command += ["--dir", params.environment_workdir or "."]
    # titled as the server's sessions are: no model call to write a title
    command += ["--title", session_title(params)]
    command += ["--agent", agent] if agent else []
    run = await run_in_trial(
        provider,
        session,
        [*command, "--", text],
        env,
        start=run_agent,
        on_line=None,
        stdin=None,
        keep=False,
    )
    found = [line.get("sessionID") for line in run.lines]
    session_id = next((s for s in reversed(found) if isinstance(s, str) and s), None)
    if session_id is None:
        raise OpenCodeError(
            f"opencode run exited with status {run.exit_code} without a session: "
            f"{run.stderr_tail() or ' | '.join(run.noise[-3:]) or '(no output)'}"
        )
    exported = await run_in_trial(
        provider,
        session,
        [session.setup.binary, "export", session_id],
        env,
        start=run_agent,
        on_line=None,
        stdin=None,
        keep=True,
    )
    messages = _messages(exported.output_text(), session_id)
    measured = measure(messages, session_id=session_id)
    session.trace = measured.trace
    return measured.result


def _messages(text: str, session_id: str) -> list[Any]:
    """The ``messages`` of ``opencode export``'s JSON (it may print a line of its own before it)."""
    start = text.find("{")
    try:
        data = json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        data = None
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list):
        raise OpenCodeError(
            f"opencode export {session_id}: expected a JSON object with "
            f"messages, got {text[:200]!r}"
        )
    return messages
