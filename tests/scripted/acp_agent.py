"""A scripted ACP agent for the ``acp`` provider's tests: JSON-RPC on stdio, behaving as
argv[1] says.

- ``ok``: a tool call that asks permission, then a message telling the outcome it got;
- ``exit``: exits at once with status 7 (a line on stderr);
- ``silent``: never answers ``initialize``;
- ``malformed``: a ``session/update`` without ``sessionUpdate``;
- ``garbage``: a line that is not JSON;
- ``v2``: answers ``initialize`` with protocol version 2.
"""

from __future__ import annotations

import json
import sys
import time


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def update(session: str, body: dict) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session, "update": body},
        }
    )


def main() -> int:
    mode = sys.argv[1]
    if mode == "exit":
        print("acp agent: no credentials", file=sys.stderr)
        return 7
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            if mode == "silent":
                time.sleep(60)
            send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {
                        "protocolVersion": 2 if mode == "v2" else 1,
                        "agentCapabilities": {},
                    },
                }
            )
        elif method == "session/new":
            send(
                {"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": "s-1"}}
            )
        elif method == "session/prompt":
            if mode == "malformed":
                send(
                    {
                        "jsonrpc": "2.0",
                        "method": "session/update",
                        "params": {"sessionId": "s-1", "update": {"text": "?"}},
                    }
                )
                time.sleep(5)
            if mode == "garbage":
                sys.stdout.write("Starting agent...\n")
                sys.stdout.flush()
                time.sleep(5)
            prompt = " ".join(
                block.get("text", "") for block in message["params"]["prompt"]
            )
            update(
                "s-1",
                {
                    "sessionUpdate": "agent_thought_chunk",
                    "content": {"type": "text", "text": "I will list."},
                },
            )
            update(
                "s-1",
                {
                    "sessionUpdate": "plan",
                    "entries": [
                        {
                            "content": "list files",
                            "priority": "high",
                            "status": "pending",
                        }
                    ],
                },
            )
            update(
                "s-1",
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "t1",
                    "title": "ls",
                    "kind": "execute",
                    "status": "pending",
                    "rawInput": {"command": "ls"},
                },
            )
            send(
                {
                    "jsonrpc": "2.0",
                    "id": 99,
                    "method": "session/request_permission",
                    "params": {
                        "sessionId": "s-1",
                        "toolCall": {"toolCallId": "t1", "title": "ls"},
                        "options": [
                            {"optionId": "yes", "kind": "allow_once", "name": "Allow"},
                            {"optionId": "no", "kind": "reject_once", "name": "Reject"},
                        ],
                    },
                }
            )
            answer = json.loads(sys.stdin.readline())
            chosen = answer["result"]["outcome"].get("optionId", "cancelled")
            status = "completed" if chosen == "yes" else "failed"
            update(
                "s-1",
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "t1",
                    "status": status,
                    "content": [
                        {
                            "type": "content",
                            "content": {
                                "type": "text",
                                "text": "a.txt\n" if chosen == "yes" else "denied",
                            },
                        }
                    ],
                },
            )
            # An unknown request of the agent's: the client refuses it.
            send(
                {
                    "jsonrpc": "2.0",
                    "id": 100,
                    "method": "fs/read_text_file",
                    "params": {"path": "/etc/passwd"},
                }
            )
            refused = json.loads(sys.stdin.readline())
            update(
                "s-1",
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": f"Done: permission {chosen}, "},
                },
            )
            update(
                "s-1",
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {
                        "type": "text",
                        "text": f"fs {refused['error']['code']}, prompt {prompt!r}",
                    },
                },
            )
            send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"stopReason": "end_turn"},
                }
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
