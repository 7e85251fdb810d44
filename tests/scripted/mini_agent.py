"""A small CLI agent for the ``command`` provider's tests: OpenAI chat completions over
httpx, and a shell tool.

Usage: ``python mini_agent.py [--prompt TEXT | --prompt-file PATH] [--stream] [--atif
PATH] [--env-file PATH]``; without either the
prompt is read from standard input. The model is ``$OPENAI_BASE_URL`` (key ``$OPENAI_API_KEY``),
the model name ``$PROFILER_MODEL``. It loops: ask the model; run each ``bash`` call it asks for in
the current folder and send the output back; print the final answer. With ``--atif`` it also writes
its trajectory there in ATIF (its shell tool named ``shell``, as this agent calls it); with
``--env-file`` it first writes its environment there as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import httpx

TOOLS = [
    {
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
]


def ask(client: httpx.Client, messages: list, stream: bool) -> dict:
    body = {
        "model": os.environ.get("PROFILER_MODEL", "mini"),
        "messages": messages,
        "tools": TOOLS,
        "stream": stream,
    }
    if not stream:
        response = client.post("/chat/completions", json=body)
        response.raise_for_status()
        return response.json()["choices"][0]["message"]
    message: dict = {"role": "assistant", "content": "", "tool_calls": []}
    with client.stream(
        "POST",
        "/chat/completions",
        json={**body, "stream_options": {"include_usage": True}},
    ) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data:") or line.strip() == "data: [DONE]":
                continue
            for choice in json.loads(line[5:]).get("choices") or ():
                delta = choice.get("delta") or {}
                message["content"] += delta.get("content") or ""
                for piece in delta.get("tool_calls") or ():
                    while len(message["tool_calls"]) <= piece.get("index", 0):
                        message["tool_calls"].append(
                            {
                                "id": "",
                                "type": "function",
                                "function": {"name": "", "arguments": ""},
                            }
                        )
                    call = message["tool_calls"][piece.get("index", 0)]
                    call["id"] += piece.get("id") or ""
                    call["function"]["name"] += (piece.get("function") or {}).get(
                        "name"
                    ) or ""
                    call["function"]["arguments"] += (piece.get("function") or {}).get(
                        "arguments"
                    ) or ""
    return message


def write_atif(path: str, steps: list) -> None:
    trajectory = {
        "schema_version": "ATIF-v1.6",
        "session_id": "mini",
        "agent": {"name": "mini-agent", "version": "1"},
        "steps": steps,
    }
    with open(path, "w") as out:
        json.dump(trajectory, out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt")
    parser.add_argument("--prompt-file")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--atif")
    parser.add_argument("--env-file")
    args = parser.parse_args()
    if args.env_file:
        with open(args.env_file, "w") as out:
            json.dump(dict(os.environ), out)
    prompt = (
        args.prompt
        if args.prompt is not None
        else open(args.prompt_file).read()
        if args.prompt_file
        else sys.stdin.read()
    )
    headers = {"authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}"}
    messages: list = [{"role": "user", "content": prompt}]
    steps: list = [{"step_id": 1, "source": "user", "message": prompt}]
    with httpx.Client(
        base_url=os.environ["OPENAI_BASE_URL"], headers=headers, timeout=60
    ) as client:
        for _ in range(10):
            message = ask(client, messages, args.stream)
            calls = message.get("tool_calls") or []
            messages.append(
                {
                    "role": "assistant",
                    "content": message.get("content"),
                    **({"tool_calls": calls} if calls else {}),
                }
            )
            step: dict = {
                "step_id": len(steps) + 1,
                "source": "agent",
                "message": message.get("content") or "",
            }
            steps.append(step)
            if not calls:
                print(message.get("content") or "")
                if args.atif:
                    write_atif(args.atif, steps)
                return 0
            step["tool_calls"], step["observation"] = [], {"results": []}
            for call in calls:
                command = json.loads(call["function"]["arguments"] or "{}").get(
                    "command", ""
                )
                done = subprocess.run(
                    command, shell=True, capture_output=True, text=True, timeout=30
                )
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "content": done.stdout + done.stderr,
                    }
                )
                step["tool_calls"].append(
                    {
                        "tool_call_id": call["id"],
                        "function_name": "shell",
                        "arguments": {"command": command},
                    }
                )
                step["observation"]["results"].append(
                    {"source_call_id": call["id"], "content": done.stdout + done.stderr}
                )
    print("gave up", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
