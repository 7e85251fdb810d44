"""A custom Harbor agent (``harbor run --agent-import-path harbor_agent:ScriptedAgent``)
that calls a chat model on 127.0.0.1.

It runs inside Harbor's own interpreter (Python >= 3.12, Harbor importable;
tests/test_harbor_custom_agent.py puts this
folder on PYTHONPATH). The loop is the smallest real agent: ask the model (OpenAI chat,
with a ``bash`` tool) at the
agent kwarg ``model_url``, run each tool call in Harbor's environment, send the output
back, stop at a text answer;
the tokens the model reports are summed into Harbor's ``AgentContext``, as Harbor's
installed agents do.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}


class ScriptedAgent(BaseAgent):
    """Asks the model at ``model_url``, runs its bash calls in the environment, counts
    its tokens."""

    def __init__(
        self, *args: Any, model_url: str = "", max_turns: str = "8", **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.model_url, self.max_turns = model_url.rstrip("/"), int(max_turns)

    @staticmethod
    def name() -> str:
        return "scripted"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment: BaseEnvironment) -> None:
        pass

    def _ask(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        body = json.dumps(
            {"model": self.model_name or "fake", "messages": messages, "tools": [BASH]}
        ).encode()
        request = urllib.request.Request(
            f"{self.model_url}/v1/chat/completions",
            data=body,
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        messages: list[dict[str, Any]] = [{"role": "user", "content": instruction}]
        prompt = cached = completion = 0
        for _ in range(self.max_turns):
            answer = self._ask(messages)
            usage = answer.get("usage") or {}
            prompt += usage.get("prompt_tokens", 0)
            cached += (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
            completion += usage.get("completion_tokens", 0)
            message = answer["choices"][0]["message"]
            messages.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                break
            for call in calls:
                command = json.loads(call["function"]["arguments"])["command"]
                done = await environment.exec(command)
                output = (done.stdout or "") + (done.stderr or "")
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "content": f"exit {done.return_code}\n{output}",
                    }
                )
        context.n_input_tokens, context.n_cache_tokens, context.n_output_tokens = (
            prompt,
            cached,
            completion,
        )
