"""The ``opencode`` judge provider: the ``llm-judge`` scorer's questions answered by an
OpenCode agent.

Like the ``opencode`` session provider it starts its own ``opencode serve``
(isolated home, generated config, ended by its process group), or uses a
running one (``base_url``). Each question is one OpenCode session: the
rubric as the system prompt, the session to grade as the prompt, answered by
``model`` with every tool denied (a judge reads, it does not act), then
deleted. The server is started once per run, by ``init()`` (the ``llm-judge``
scorer calls it before its first question) and stopped by ``shutdown()``
(after the run). See docs/llm-judge.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, JudgeError, ProfilerError
from ..model import JudgeRequest, JudgeResponse, PermissionConfig
from ..providers.opencode.config import (
    OpenCodeOptions,
    deep_merge,
    find_binary,
    opencode_config,
    split_model,
)
from ..util.leftovers import remove_folder, temporary_folder

if (
    TYPE_CHECKING
):  # trio and httpx are imported where used: registering the judge loads neither
    import httpx
    import trio

    from ..providers.opencode.server import OpenCodeServer

__all__ = ["OpenCodeJudge"]

#: Options of the session provider a judge takes too; the others (workdir, mcp,
#: agent...) are for sessions that act.
SHARED_OPTIONS = (
    "binary",
    "base_url",
    "config",
    "start_timeout_s",
    "request_timeout_s",
    "kill_grace_s",
)
#: A judge's tools are all denied: it answers from what it is shown.
DENY_TOOLS = {
    "permission": {
        "edit": "deny",
        "bash": "deny",
        "webfetch": "deny",
        "external_directory": "deny",
    }
}


class OpenCodeJudge:
    """Asks an OpenCode agent, one session per question, on a server it starts once per run."""

    id = "opencode"

    def __init__(
        self,
        *,
        model: str | None = None,
        answer_timeout_s: float = 300.0,
        **options: Any,
    ) -> None:
        """Validate now, so a bad option or a missing program fails before any agent
        session runs."""
        where = "judge 'opencode'"
        if not isinstance(model, str) or not model:
            raise ConfigError(
                f"{where}: options.model: expected OpenCode's "
                f"providerID/modelID (judge.model), got {model!r}"
            )
        unknown = sorted(set(options) - set(SHARED_OPTIONS))
        if unknown:
            raise ConfigError(
                f"{where}: unknown option(s) {', '.join(unknown)}; expected "
                f"some of model, answer_timeout_s, {', '.join(SHARED_OPTIONS)}"
            )
        if (
            isinstance(answer_timeout_s, bool)
            or not isinstance(answer_timeout_s, (int, float))
            or answer_timeout_s <= 0
        ):
            raise ConfigError(
                f"{where}: option 'answer_timeout_s': expected a number > 0, "
                f"got {answer_timeout_s!r}"
            )
        try:
            split_model(model)
            self.options = OpenCodeOptions.parse(options, where=where)
            if self.options.base_url is None:
                find_binary(self.options)
        except ProfilerError as exc:
            raise ConfigError(str(exc).replace("provider 'opencode'", where)) from None
        self.model = model
        self.answer_timeout_s = float(answer_timeout_s)
        self.server: OpenCodeServer | None = None
        self.client: httpx.AsyncClient | None = None
        self.workdir: Path | None = None
        self._lock: trio.Lock | None = None

    def __repr__(self) -> str:
        return f"OpenCodeJudge(model={self.model!r})"

    # -- lifecycle ------------------------------------------------------------------

    async def init(self) -> None:
        """Start the server (or connect to ``base_url``) and check it offers ``model``;
        once, however often called."""
        import trio

        self._lock = self._lock or trio.Lock()
        async with self._lock:
            if self.client is not None:
                return
            import httpx  # here, not with the module: registering the judge must not load it

            from ..providers.opencode.server import start_server

            self.workdir = temporary_folder("profiler-opencode-judge-")
            url = self.options.base_url
            if url is None:
                config = deep_merge(
                    opencode_config(self.options, self.model, PermissionConfig()),
                    DENY_TOOLS,
                )
                self.server = await start_server(
                    find_binary(self.options),
                    config=config,
                    mode_env={},
                    start_timeout_s=self.options.start_timeout_s,
                    kill_grace_s=self.options.kill_grace_s,
                )
                url = self.server.url
            self.client = httpx.AsyncClient(
                base_url=url.rstrip("/"), timeout=self.options.request_timeout_s
            )
            try:
                await self._check_model()
            except BaseException:
                await self._stop()
                raise

    async def shutdown(self) -> None:
        """Stop the server by its process group and remove its folders; safe to call twice."""
        import trio

        self._lock = self._lock or trio.Lock()
        async with self._lock:
            await self._stop()

    async def _stop(self) -> None:
        import trio

        from ..providers.opencode.server import close_server

        with trio.CancelScope(shield=True):
            client, self.client = self.client, None
            server, self.server = self.server, None
            try:
                await close_server(client, server, self.options.kill_grace_s)
            finally:
                if self.workdir is not None:
                    remove_folder(self.workdir)
                    self.workdir = None

    async def _check_model(self) -> None:
        provider_id, model_id = split_model(self.model)
        listing = await self._request("GET", "/config/providers")
        providers = {
            p.get("id"): p
            for p in (listing or {}).get("providers", [])
            if isinstance(p, dict)
        }
        if model_id not in ((providers.get(provider_id) or {}).get("models") or {}):
            raise JudgeError(
                f"judge 'opencode': model {self.model!r} is not available "
                "(define it in options.config or set its API key)"
            )

    # -- questions ------------------------------------------------------------------

    async def judge(self, request: JudgeRequest) -> JudgeResponse:
        """One session: the rubric as system prompt, the graded session as prompt; its
        answer, tokens and cost."""
        await self.init()
        created = await self._request(
            "POST", "/session", json={"title": "profiler judge"}
        )
        session_id = created.get("id") if isinstance(created, dict) else None
        if not isinstance(session_id, str) or not session_id:
            raise JudgeError(
                "judge 'opencode': POST /session answered without a session "
                f"id: {str(created)[:200]}"
            )
        provider_id, model_id = split_model(self.model)
        body = {
            "parts": [{"type": "text", "text": request.user_prompt}],
            "system": request.system_prompt,
            "model": {"providerID": provider_id, "modelID": model_id},
        }
        import trio

        try:
            with trio.fail_after(self.answer_timeout_s):
                answer = await self._request(
                    "POST",
                    f"/session/{session_id}/message",
                    json=body,
                    timeout=self.answer_timeout_s,
                )
        except trio.TooSlowError:
            raise JudgeError(
                f"judge 'opencode': no answer within {self.answer_timeout_s:g} s"
            ) from None
        finally:
            await self._delete(session_id)
        return _response(answer, session_id, self.model)

    async def _delete(self, session_id: str) -> None:
        import trio

        with trio.move_on_after(5) as scope:
            scope.shield = True
            try:
                await self._request("DELETE", f"/session/{session_id}")
            except JudgeError:
                pass  # the answer is what matters; the server and its sessions go at shutdown

    async def _request(
        self, method: str, path: str, *, json: Any = None, timeout: float | None = None
    ) -> Any:
        import httpx

        if self.client is None:
            raise JudgeError(
                "judge 'opencode': not started (init was not called or the server was stopped)"
            )
        extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        try:
            response = await self.client.request(
                method,
                path,
                params={"directory": str(self.workdir)},
                json=json,
                **extra,
            )
        except httpx.HTTPError as exc:
            raise JudgeError(
                f"judge 'opencode': {method} {path} failed: {type(exc).__name__}: {exc}"
            ) from None
        if response.status_code >= 400:
            raise JudgeError(
                f"judge 'opencode': {method} {path} answered HTTP "
                f"{response.status_code}: {response.text[:300]}"
            )
        return response.json() if response.content else None


def _response(answer: Any, session_id: str, model: str) -> JudgeResponse:
    """The judge's text, tokens and OpenCode's own cost from the answered message
    ``{info, parts}``."""
    from ..importers.opencode import error_text, session_from_messages

    if not isinstance(answer, dict) or not isinstance(answer.get("info"), dict):
        raise JudgeError(
            f"judge 'opencode': the answer is not a message {{info, parts}}: {str(answer)[:200]}"
        )
    if answer["info"].get("error") is not None:
        raise JudgeError(
            f"judge 'opencode': the model failed: {error_text(answer['info']['error'])}"
        )
    measured = session_from_messages(
        [answer], session_id=session_id, where=f"opencode judge session {session_id}"
    )
    tokens = measured.result.metrics.tokens
    cost = (
        measured.result.metrics.cost.total_usd
        if measured.cost_source == "provider"
        else None
    )
    return JudgeResponse(
        text=measured.text,
        token_count=tokens.output + tokens.reasoning,
        usage=tokens,
        cost_usd=cost,
        model=model,
    )
