"""A tiny MCP server on stdio (newline-delimited JSON-RPC 2.0) with one tool, ``shout``: test-only.

Run as ``python -m tests.scripted.mcp_echo`` (or by path); every call is appended to the
file named by ``$MCP_ECHO_LOG`` when set, so a test can see that the agent called it.
"""

from __future__ import annotations

import json
import os
import sys

TOOL = {
    "name": "shout",
    "description": "Return the text in capitals.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


def answer(request: dict) -> dict | None:
    """The JSON-RPC response to one request (None for a notification)."""
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo", "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        if os.environ.get("MCP_ECHO_LOG"):
            with open(os.environ["MCP_ECHO_LOG"], "a", encoding="utf-8") as log:
                log.write(json.dumps(params) + "\n")
        result = {"content": [{"type": "text", "text": text.upper()}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": {"code": -32601, "message": f"no method {method}"},
        }
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        response = answer(json.loads(line))
        if response is not None:
            sys.stdout.write(json.dumps(response) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
