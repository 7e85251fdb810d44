"""The client side of the Agent Client Protocol (ACP v1): JSON-RPC 2.0, one message a
line, over a program's stdio.

Written here rather than taken from the ``agent-client-protocol`` SDK: the SDK
is asyncio, the profiler is trio, and the client needs four methods. What it
speaks (https://agentclientprotocol.com, protocol version 1):

- requests to the agent: ``initialize`` (``protocolVersion: 1``, no file-system
  or terminal capability offered), ``session/new``, ``session/prompt`` (answered
  with a ``stopReason`` when the turn ends);
- notifications from the agent: ``session/update`` (message and thought chunks,
  tool calls and their updates, plans), kept in order with their arrival time;
- requests from the agent: ``session/request_permission``, answered by the
  policy (``allow``: the first ``allow_once`` option, else ``allow_always``;
  ``reject``: ``reject_once``, else ``reject_always``); any other method is
  refused with JSON-RPC's "method not found".

A malformed line, an agent that exits or a request unanswered in time is one
:class:`AcpError` line.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import attrs

from ...errors import ProfilerError

if TYPE_CHECKING:
    pass

#: the protocol versions this client speaks (ACP has only version 1 so far)
SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
#: the version ``initialize`` offers: the newest this client speaks (the agent answers
#: it, or an older one it speaks)
PROTOCOL_VERSION = max(SUPPORTED_VERSIONS)
#: the longest line read from the agent (a tool's output inside an update may be long)
MAX_LINE = 16 * 1024 * 1024


class AcpError(ProfilerError):
    """The ACP agent broke the protocol, failed a request, or went away."""


@attrs.define
class Update:
    """One ``session/update`` notification: its ``update`` object and when it arrived
    (seconds, monotonic)."""

    update: dict[str, Any]
    at: float


def choose_option(options: Any, policy: str) -> str | None:
    """The ``optionId`` the policy picks among a permission request's options (None: no
    option fits)."""
    kinds = (
        ("allow_once", "allow_always")
        if policy == "allow"
        else ("reject_once", "reject_always")
    )
    for kind in kinds:
        for option in options if isinstance(options, list) else ():
            if (
                isinstance(option, dict)
                and option.get("kind") == kind
                and isinstance(option.get("optionId"), str)
            ):
                return str(option["optionId"])
    return None


@attrs.define(eq=False)
class AcpClient:
    """One connection to an ACP agent process: send requests, collect updates, answer
    the agent's requests."""

    stdin: Any
    stdout: Any
    #: ``allow`` or ``reject``: how ``session/request_permission`` is answered
    policy: str = "allow"
    updates: list[Update] = attrs.Factory(list)
    #: permission requests seen: (tool title, the option chosen or "cancelled")
    permissions: list[tuple[str, str]] = attrs.Factory(list)
    _next_id: int = 1
    _waiting: dict[int, Any] = attrs.Factory(dict)
    _answers: dict[int, dict[str, Any]] = attrs.Factory(dict)
    _closed: str | None = None
    _lock: Any = None

    async def serve(self, task_status: Any = None) -> None:
        """Read the agent's messages until its output ends (run in a nursery)."""
        import trio

        self._lock = trio.Lock()
        if task_status is not None:
            task_status.started()
        buffer = b""
        try:
            while True:
                chunk = await self.stdout.receive_some(65536)
                if not chunk:
                    break
                buffer += chunk
                if len(buffer) > MAX_LINE:
                    raise AcpError(
                        f"acp: the agent sent a line longer than {MAX_LINE} bytes"
                    )
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        await self._take(line)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            self._close("the agent closed its output")

    @property
    def closed(self) -> bool:
        """Whether the agent's output has ended."""
        return self._closed is not None

    def _close(self, why: str) -> None:
        if self._closed is None:
            self._closed = why
        for event in self._waiting.values():
            event.set()

    async def _take(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            raise AcpError(
                "acp: the agent sent a line that is not JSON-RPC: "
                f"{line[:200].decode('utf-8', 'replace')!r}"
            ) from None
        if not isinstance(message, dict):
            raise AcpError(
                "acp: the agent sent a JSON-RPC message that is not an object: "
                f"{line[:200].decode('utf-8', 'replace')!r}"
            )
        if "method" in message and "id" in message:
            await self._answer(message)
        elif "method" in message:
            self._notification(message)
        elif isinstance(message.get("id"), int) and message["id"] in self._waiting:
            self._answers[message["id"]] = message
            self._waiting.pop(message["id"]).set()

    def _notification(self, message: dict[str, Any]) -> None:
        if message.get("method") != "session/update":
            return  # extension notifications (``_...``) and ones this client does not use
        params = message.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        if not isinstance(update, dict) or not isinstance(
            update.get("sessionUpdate"), str
        ):
            raise AcpError(
                "acp: malformed session/update (expected "
                f"params.update.sessionUpdate): {json.dumps(message)[:200]}"
            )
        self.updates.append(Update(update=update, at=time.monotonic()))

    async def _answer(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params")
        if method == "session/request_permission" and isinstance(params, dict):
            chosen = choose_option(params.get("options"), self.policy)
            raw = params.get("toolCall")
            tool: dict[str, Any] = raw if isinstance(raw, dict) else {}
            self.permissions.append(
                (
                    str(tool.get("title") or tool.get("toolCallId") or "?"),
                    chosen or "cancelled",
                )
            )
            outcome = (
                {"outcome": "selected", "optionId": chosen}
                if chosen
                else {"outcome": "cancelled"}
            )
            await self._send(
                {"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}}
            )
            return
        error = {
            "code": -32601,
            "message": f"method not found: {method} (the profiler offers no such capability)",
        }
        await self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})

    async def _send(self, message: dict[str, Any]) -> None:
        import trio

        data = (json.dumps(message) + "\n").encode()
        async with self._lock:
            try:
                await self.stdin.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._close("the agent closed its input")

    async def request(
        self, method: str, params: dict[str, Any], timeout_s: float | None = None
    ) -> dict[str, Any]:
        """Send one request and wait for its result; an error answer, an exit or a
        timeout is an AcpError."""
        import trio

        if self._closed is not None:
            raise AcpError(f"acp: cannot send {method}: {self._closed}")
        request_id, self._next_id = self._next_id, self._next_id + 1
        done = self._waiting[request_id] = trio.Event()
        await self._send(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )
        with trio.move_on_after(
            timeout_s if timeout_s is not None else float("inf")
        ) as waited:
            await done.wait()
        if waited.cancelled_caught:
            raise AcpError(
                f"acp: the agent never answered {method} within {timeout_s:g} s"
            )
        answer = self._answers.pop(request_id, None)
        if answer is None:
            raise AcpError(
                f"acp: no answer to {method}: {self._closed or 'the connection ended'}"
            )
        if "error" in answer:
            error = (
                answer["error"]
                if isinstance(answer["error"], dict)
                else {"message": answer["error"]}
            )
            raise AcpError(f"acp: {method} failed: {error.get('message') or error}")
        result = answer.get("result")
        if not isinstance(result, dict):
            raise AcpError(
                f"acp: {method}: expected a result object, got {json.dumps(result)[:200]}"
            )
        return result

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification (``session/cancel``)."""
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})


def check_version(
    result: dict[str, Any], supported: tuple[int, ...] = SUPPORTED_VERSIONS
) -> int:
    """The version of the session: the one the agent chose in its ``initialize`` answer
    when this client speaks it
    (ACP's negotiation: the client offers its newest, the agent answers it or the newest
    it speaks); else an AcpError."""
    version = result.get("protocolVersion")
    if (
        isinstance(version, int)
        and not isinstance(version, bool)
        and version in supported
    ):
        return version
    speaks = ", ".join(str(v) for v in sorted(supported))
    raise AcpError(
        f"acp: the agent speaks protocol version {version!r}; this client speaks {speaks}"
    )


__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "AcpClient",
    "AcpError",
    "Update",
    "check_version",
    "choose_option",
]
