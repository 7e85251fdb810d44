"""The ``opencode`` session provider: profiles a real OpenCode agent through ``opencode serve``.

One server per mode (``init_scope = "mode"``), each in its own temporary home
with a generated config, so the user's OpenCode files are neither read nor
touched. A prompt is sent with ``prompt_async`` and the session is polled
until its last message ends with ``stop``; a model error, or more model
retries than ``max_model_retries`` (OpenCode retries 5xx answers forever),
ends it at once. See docs/providers/opencode.md.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Mapping
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ...model import (
    CreateSessionParams,
    PromptResult,
    ProviderConfig,
    SessionHandle,
    SessionTrace,
)
from ...util.leftovers import remove_folder, temporary_folder
from .._agent_process import empty_trace
from .config import (
    OpenCodeError,
    OpenCodeOptions,
    find_binary,
    opencode_config,
    session_title,
    split_model,
)
from .metrics import measure, progress
from .server import OpenCodeServer, close_server, start_server
from .wire import PARENT_HEADER, SESSION_HEADER, hide_key, point_at, wire_setup

if (
    TYPE_CHECKING
):  # httpx and trio are imported where used: listing the plugins loads neither
    import httpx

log = logging.getLogger("agent_profiler")

#: Seconds a session may stay idle after its prompt before OpenCode is deemed never to
#: have started it.
NOT_STARTED_S = 15.0
#: Seconds an abort may take (shielded: it runs while the iteration is being cancelled).
ABORT_TIMEOUT_S = 5.0
#: how long a dropped connection waits for a dying server's exit to show (it closes its
#: sockets first)
EXIT_SETTLE_S = 0.5


@attrs.define
class _Session:
    """What the provider remembers about one live session."""

    id: str
    directory: str
    system: str
    #: a per-session working directory the provider created (removed on destroy)
    owned_dir: Path | None = None
    #: messages of the model retries OpenCode made, one per attempt seen
    retries: list[str] = attrs.Factory(list)
    attempt: int = 0
    #: the wire recorder's calls of this session (None: not attributable to it alone)
    wire_calls: tuple[Any, ...] | None = ()
    #: its prompt ran while another session's did (matters only when the calls name no session)
    overlapped: bool = False


#: Where a model provider's API lives when the OpenCode config names no ``baseURL`` (a
#: sandbox lets only these through).
VENDOR_ENDPOINTS = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com",
    "google": "https://generativelanguage.googleapis.com",
    "openrouter": "https://openrouter.ai",
    "groq": "https://api.groq.com",
    "mistral": "https://api.mistral.ai",
}


def model_endpoints(options: OpenCodeOptions, model: str) -> tuple[str, ...]:
    """The model endpoints a sandboxed OpenCode must reach: every ``baseURL`` of its
    config, else the vendor's."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "baseURL" and isinstance(item, str):
                    found.append(item)
                else:
                    walk(item)

    walk(options.config)
    if not found and model:
        vendor = VENDOR_ENDPOINTS.get(split_model(model)[0])
        found += [vendor] if vendor else []
    return tuple(dict.fromkeys(found))


def model_endpoint(options: OpenCodeOptions, model: str) -> str:
    """The URL the model's requests go to: its provider's ``baseURL`` in the config,
    else the vendor's API."""
    provider_id = split_model(model)[0] if "/" in model else ""
    providers = (options.config or {}).get("provider")
    provider = providers.get(provider_id) if isinstance(providers, dict) else None
    settings = provider.get("options") if isinstance(provider, dict) else None
    url = settings.get("baseURL") if isinstance(settings, dict) else None
    if isinstance(url, str) and url:
        return url
    return (
        VENDOR_ENDPOINTS.get(provider_id)
        or f"OpenCode's default for provider {provider_id!r}"
    )


class OpenCodeProvider:
    """Drives OpenCode sessions over its HTTP API."""

    id = "opencode"
    #: ``base_url`` (a server) and the config's ``baseURL``s are opened once before the
    #: first session (runner.endpoint)
    endpoint_check = True
    init_scope = "mode"
    #: sessions in a trial run ``opencode run`` inside it (opencode/trial.py)
    runs_in_trial = True

    def __init__(self, **options: Any) -> None:
        """Validate the options now, so a bad one or a missing program fails before
        anything runs."""
        self.base_options = OpenCodeOptions.parse(options)
        if self.base_options.base_url is None:
            find_binary(self.base_options)
        self.options = self.base_options
        self.model = ""
        self.server: OpenCodeServer | None = None
        self.client: httpx.AsyncClient | None = None
        self.workdir = Path.cwd()
        self.sessions: dict[str, _Session] = {}
        #: the wire recorder of this mode's server and its one path on it (docs/wire.md)
        self.recorder: Any = None
        self.wire: Any = None
        #: sessions whose prompt is running (calls are the session's only when it runs alone)
        self._running: set[str] = set()
        #: what a session inside a trial needs: the mode's config, endpoints,
        #: environment (init), its sessions
        self.trial_setup: (
            tuple[dict[str, Any], tuple[str, ...], dict[str, str]] | None
        ) = None
        self.trial_sessions: dict[str, Any] = {}

    # -- lifecycle ---------------------------------------------------------------

    async def init(self, config: ProviderConfig) -> None:
        """Start this mode's ``opencode serve`` (or connect to ``options.base_url``) and
        ask it whether it has the model.

        Here, not with the first session: a server's start (seconds on a loaded
        machine) must not count in that session's time or timeout.
        """
        if self.server or self.client or self.recorder:  # initialised before
            await self.shutdown()
        options = OpenCodeOptions.parse(config.options)
        split_model(config.model)
        self.options, self.model = options, config.model
        self.workdir = Path(_server_folder(options, config)).expanduser().resolve()
        template = options.workdir_template
        if not self.workdir.is_dir():
            raise OpenCodeError(
                f"provider 'opencode': workdir {str(self.workdir)!r} is not a directory"
            )
        if template is not None and not Path(template).expanduser().is_dir():
            raise OpenCodeError(
                f"provider 'opencode': option 'workdir_template': {template!r} is not a directory"
            )
        try:
            if options.base_url:
                url = options.base_url.rstrip("/")
            else:
                url = await self._start_server(options, config)
            await self._connect(url)
        except BaseException:
            await self.shutdown()
            raise

    async def _start_server(
        self, options: OpenCodeOptions, config: ProviderConfig
    ) -> str:
        """Start this mode's server (and keep what a session inside a trial is given); its URL."""
        server_config = opencode_config(options, config.model, config.permissions)
        endpoints, key = model_endpoints(options, config.model), None
        if getattr(config.sandbox, "wire", True):
            server_config, endpoints, key = self._record_wire(
                server_config, config.model, endpoints, config.environment
            )
        # in a trial the agent holds the placeholder too: the real key stays with the recorder
        self.trial_setup = (
            server_config,
            endpoints,
            hide_key(config.environment, key),
        )
        self.server = await start_server(
            find_binary(options),
            config=server_config,
            mode_env=config.environment,
            port=config.port,
            start_timeout_s=options.start_timeout_s,
            kill_grace_s=options.kill_grace_s,
            sandbox=config.sandbox,
            workdir=self.workdir,
            endpoints=endpoints,
            key=key,
        )
        log.info(
            "opencode server for mode %r: %s (pid %d)",
            config.mode,
            self.server.url,
            self.server.pid,
        )
        return self.server.url

    async def _connect(self, url: str) -> None:
        """A client of the server at ``url``, which must have the model."""
        # httpx is imported here, not with the module: registering the provider must not load it.
        import httpx

        self.client = httpx.AsyncClient(
            base_url=url, timeout=self.options.request_timeout_s
        )
        await self._check_model(self.model)

    def _record_wire(
        self,
        server_config: dict[str, Any],
        model: str,
        endpoints: tuple[str, ...],
        mode_env: Mapping[str, str],
    ) -> tuple[dict[str, Any], tuple[str, ...], str | None]:
        """Point the model's provider at a wire recorder that forwards to its endpoint
        and holds its real key;
        the config, the endpoints the server must reach, and that key (docs/wire.md)."""
        setup = wire_setup(server_config, model, mode_env)
        if setup is None:
            return server_config, endpoints, None
        from ...wire import WireRecorder

        self.recorder = WireRecorder(setup.endpoint).start()
        self.wire = self.recorder.open()
        self.wire.api_key = setup.key
        # OpenCode names each call's session: concurrent sessions' calls are told apart by it.
        self.wire.key_header, self.wire.parent_header = SESSION_HEADER, PARENT_HEADER
        forwarded = {setup.endpoint, VENDOR_ENDPOINTS.get(split_model(model)[0])}
        return (
            point_at(setup.config, model, self.wire.base_url),
            (self.wire.base_url, *[e for e in endpoints if e not in forwarded]),
            setup.key,
        )

    async def _check_model(self, model: str) -> None:
        # OpenCode takes a prompt for a model it does not have and then silently never answers.
        provider_id, model_id = split_model(model)
        listing = await self._request("GET", "/config/providers", str(self.workdir))
        providers = {
            p.get("id"): p
            for p in (listing or {}).get("providers", [])
            if isinstance(p, dict)
        }
        models = (providers.get(provider_id) or {}).get("models") or {}
        if model_id not in models:
            available = "; ".join(
                f"{pid}: {', '.join(sorted(p.get('models') or {})[:6])}"
                for pid, p in sorted(providers.items(), key=lambda kv: str(kv[0]))
            )
            raise OpenCodeError(
                f"opencode: model {model!r} is not available (define it in "
                "options.config or set its provider's API key "
                f"in the environment); OpenCode offers {available or 'no model'}"
            )

    async def shutdown(self) -> None:
        """Stop the server by its PID and remove every temporary directory; safe to call twice."""
        import trio

        with trio.CancelScope(shield=True):
            client, self.client = self.client, None
            server, self.server = self.server, None
            try:
                await close_server(client, server, self.options.kill_grace_s)
            finally:
                recorder, self.recorder, self.wire = self.recorder, None, None
                if recorder is not None:
                    recorder.close()
                for session in self.sessions.values():
                    _remove(session.owned_dir)
                self.sessions.clear()
                for inside in self.trial_sessions.values():
                    inside.dirs.remove()
                self.trial_sessions.clear()

    # -- sessions ----------------------------------------------------------------

    async def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """``POST /session`` (with a title, which spares a title-generation model call);
        in a trial, folders only."""
        if params.environment is not None:
            return self._trial_session(params)
        if params.workspace is not None:
            owned, directory = (
                None,
                params.workspace,
            )  # the runner's workspace for this session
        else:
            owned = (
                await self._new_workdir() if self.options.workdir_per_session else None
            )
            directory = str(owned or self.workdir)
        try:
            title = session_title(params)
            created = await self._request(
                "POST", "/session", directory, json={"title": title}
            )
        except BaseException:
            _remove(owned)
            raise
        session_id = created.get("id") if isinstance(created, dict) else None
        if not isinstance(session_id, str) or not session_id:
            _remove(owned)
            raise OpenCodeError(
                f"opencode: POST /session answered without a session id: {str(created)[:200]}"
            )
        self.sessions[session_id] = _Session(
            id=session_id,
            directory=directory,
            system=params.system_instructions,
            owned_dir=owned,
        )
        return SessionHandle(
            session_id=session_id,
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Send the mode's instructions and the prompt, poll until ``stop``; abort on
        error, timeout or cancel."""
        import trio

        if handle.session_id in self.trial_sessions:
            with trio.fail_after(timeout_ms / 1000) if timeout_ms else nullcontext():
                return await self._trial_prompt(handle, text)
        session = self._session(handle)
        provider_id, model_id = split_model(self.model)
        body: dict[str, Any] = {
            "parts": [{"type": "text", "text": text}],
            "model": {"providerID": provider_id, "modelID": model_id},
        }
        if session.system:
            body["system"] = session.system
        if self.options.agent:
            body["agent"] = self.options.agent
        first = len(self.wire.calls) if self.wire is not None else 0
        if self._running:
            # Another session of this server is prompting: without OpenCode's session
            # header on the calls,
            # the calls of the two cannot be told apart.
            for other in self._running:
                self.sessions[other].overlapped = True
            session.overlapped = True
        self._running.add(session.id)
        try:
            await self._request(
                "POST",
                f"/session/{session.id}/prompt_async",
                session.directory,
                json=body,
            )
            with trio.fail_after(timeout_ms / 1000) if timeout_ms else nullcontext():
                await self._wait(session)
        except BaseException:
            await self._abort(session)
            raise
        finally:
            self._running.discard(session.id)
            self._take_wire_calls(session, first)
        messages = await self._messages(session)
        return measure(messages, session_id=session.id, retries=session.retries).result

    def _take_wire_calls(self, session: _Session, first: int) -> None:
        """The session's model calls: those naming it (and its sub-agents) in OpenCode's
        session header,
        else, from a server that names none, those made while its prompt ran alone."""
        if self.wire is None:
            return
        if self.wire.keyed():
            session.wire_calls = self.wire.calls_of(session.id)
        elif session.overlapped:
            session.wire_calls = None
        else:
            session.wire_calls = self.wire.snapshot()[first:]

    async def export_session(self, handle: SessionHandle) -> SessionTrace:
        """The session's trace, built from its messages by the same parser ``profiler
        import opencode`` uses."""
        if handle.session_id in self.trial_sessions:
            return self._trial_trace(handle)
        session = self._session(handle)
        messages = await self._messages(session)
        trace = measure(messages, session_id=session.id, retries=session.retries).trace
        if session.wire_calls:
            trace = attrs.evolve(trace, events=(*trace.events, *session.wire_calls))
        return trace

    async def destroy_session(self, handle: SessionHandle) -> None:
        """Wait (bounded) for the session to go idle, abort it if it will not, then delete it."""
        import trio

        inside = self.trial_sessions.pop(handle.session_id, None)
        if inside is not None:
            inside.dirs.remove()
        session = self.sessions.pop(handle.session_id, None)
        if session is None:
            return
        try:
            if self.client is None or not self._server_alive():
                return
            with trio.move_on_after(self.options.idle_timeout_s):
                while await self._busy(session):
                    await trio.sleep(self.options.poll_interval_ms / 1000)
            if await self._busy(session):
                await self._abort(session)
            await self._request("DELETE", f"/session/{session.id}", session.directory)
            if session.directory != str(self.workdir):
                # OpenCode keeps one instance per directory; a per-session directory's
                # would pile up.
                await self._request("POST", "/instance/dispose", session.directory)
        except OpenCodeError as exc:
            log.warning("opencode: destroying session %s: %s", session.id, exc)
        finally:
            self._end_processes(session)
            _remove(session.owned_dir)

    def _end_processes(self, session: _Session) -> None:
        """End what the session started on the shared server: all new processes when no
        other session runs,
        else those working in its folder (a shared folder is no one's: they wait for the
        server to be idle)."""
        if self.server is None:
            return  # a server the provider did not start (base_url) is not its to clean
        folder = None
        # others still run on this server: only what works in this session's folder is
        # its
        if self.sessions:
            if any(
                other.directory == session.directory for other in self.sessions.values()
            ):
                return
            folder = session.directory
        ended = self.server.end_session_processes(folder)
        if ended:
            log.info(
                "opencode: ended %d process(es) session %s left running",
                ended,
                session.id,
            )

    # -- polling -----------------------------------------------------------------

    async def _wait(self, session: _Session) -> None:
        import trio

        interval = self.options.poll_interval_ms / 1000
        # About 2 s of idleness after a finished step without `stop` means OpenCode gave
        # up on the turn;
        # before the first answer OpenCode may sit idle a while (start-up), so allow NOT_STARTED_S.
        idle_limit = max(2, round(2.0 / interval))
        start_limit = max(idle_limit, round(NOT_STARTED_S / interval))
        idle_polls = 0
        while True:
            await trio.sleep(interval)
            status = await self._status(session)
            state = progress(
                await self._request(
                    "GET",
                    f"/session/{session.id}/message",
                    session.directory,
                    params={"limit": 2},
                )
            )
            if state.error:
                raise self._model_failed(f"opencode: model error: {state.error}")
            if state.done:
                return
            if status.get("type") == "retry":
                self._note_retry(session, status)
            elif not status and (state.completed or not state.assistant_messages):
                idle_polls += 1
                if state.assistant_messages and idle_polls >= idle_limit:
                    raise OpenCodeError(
                        "opencode: the session went idle without finishing "
                        f"(last finish: {state.finish!r})"
                    )
                if not state.assistant_messages and idle_polls >= start_limit:
                    raise self._model_failed(
                        "opencode: the prompt was accepted but OpenCode never "
                        f"started answering within {NOT_STARTED_S:g} s"
                    )
                continue
            idle_polls = 0

    def _note_retry(self, session: _Session, status: dict[str, Any]) -> None:
        attempt = status.get("attempt")
        message = str(status.get("message") or "model request failed")
        if isinstance(attempt, int) and attempt > session.attempt:
            session.attempt = attempt
            session.retries.append(f"attempt {attempt}: {message}")
        if session.attempt > self.options.max_model_retries:
            raise self._model_failed(
                f"opencode: model request failed {session.attempt} time(s) and "
                "OpenCode keeps retrying "
                f"(max_model_retries={self.options.max_model_retries}): {message}"
            )

    def _model_failed(self, message: str) -> OpenCodeError:
        """An error of the model's answer, naming the model endpoint (OpenCode's own
        message names none)."""
        return OpenCodeError(
            f"{message} (model endpoint: {model_endpoint(self.options, self.model)})"
        )

    async def _status(self, session: _Session) -> dict[str, Any]:
        statuses = await self._request("GET", "/session/status", session.directory)
        status = statuses.get(session.id) if isinstance(statuses, dict) else None
        return (
            status if isinstance(status, dict) and status.get("type") != "idle" else {}
        )

    async def _busy(self, session: _Session) -> bool:
        return bool(await self._status(session))

    async def _messages(self, session: _Session) -> list[Any]:
        messages = await self._request(
            "GET", f"/session/{session.id}/message", session.directory
        )
        if not isinstance(messages, list):
            raise OpenCodeError(
                f"opencode: GET /session/{session.id}/message: expected a list, "
                f"got {type(messages).__name__}"
            )
        return messages

    async def _abort(self, session: _Session) -> None:
        # Shielded: this runs while the iteration is being cancelled (timeout, Ctrl-C).
        import trio

        with trio.move_on_after(ABORT_TIMEOUT_S) as scope:
            scope.shield = True
            try:
                if self.client is not None and self._server_alive():
                    await self._request(
                        "POST", f"/session/{session.id}/abort", session.directory
                    )
            except OpenCodeError as exc:
                log.warning("opencode: abort of session %s failed: %s", session.id, exc)

    # -- plumbing ----------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        directory: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        import httpx

        if self.client is None:
            raise OpenCodeError(
                "opencode: the provider is not initialised (init was not "
                "called or the server was shut down)"
            )

        try:
            response = await self.client.request(
                method,
                path,
                params={"directory": directory, **(params or {})},
                json=json,
            )
        except httpx.TimeoutException:
            raise OpenCodeError(
                f"opencode: {method} {path} got no answer within "
                f"{self.options.request_timeout_s:g} s"
            ) from None
        except httpx.TransportError as exc:
            note = await self._exit_note()
            raise OpenCodeError(
                f"opencode: {method} {path} failed: {type(exc).__name__}: {exc}{note}"
            ) from None
        if response.status_code >= 400:
            raise OpenCodeError(
                f"opencode: {method} {path} answered HTTP "
                f"{response.status_code}: {response.text[:300]}"
            )
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise OpenCodeError(
                f"opencode: {method} {path} answered non-JSON: {response.text[:200]!r}"
            ) from None

    def _server_alive(self) -> bool:
        return self.server is None or self.server.process.poll() is None

    async def _exit_note(self) -> str:
        """Why a request broke, when the server died: a killed process closes its
        sockets a moment before
        it can be reaped, so a dropped connection waits up to ``EXIT_SETTLE_S`` for the
        exit to show."""
        import trio

        with trio.move_on_after(EXIT_SETTLE_S):
            while self.server is not None and self.server.process.poll() is None:
                await trio.sleep(0.01)
        if self.server is None or self.server.process.poll() is None:
            return ""
        return (
            f" (the opencode server, pid {self.server.pid}, exited with status "
            f"{self.server.process.returncode})"
        )

    # -- sessions inside a trial (opencode/trial.py) --------------------------------

    def trial_needs(self, mode: str) -> tuple[tuple[Any, ...], tuple[str, ...]]:
        """What a trial gives this agent: its program's folder (read-only) and its model
        endpoints."""
        from ..in_trial import program_mounts

        endpoints = self.trial_setup[1] if self.trial_setup is not None else ()
        return program_mounts(self.trial_program(find_binary(self.options))), endpoints

    def trial_program(self, binary: str) -> str:
        """OpenCode's native program by its real path (an npm link resolved)."""
        return str(Path(binary).resolve())

    def _trial_session(self, params: CreateSessionParams) -> SessionHandle:
        from .trial import new_session

        if self.trial_setup is None:
            raise OpenCodeError(
                "opencode: a session inside a trial needs the provider's own "
                "config (not options.base_url)"
            )
        session = new_session(
            params, find_binary(self.options), self.options, self.trial_setup[2]
        )
        session_id = f"opencode-trial-{len(self.trial_sessions)}-{id(session):x}"
        self.trial_sessions[session_id] = session
        return SessionHandle(
            session_id=session_id,
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )

    async def _trial_prompt(self, handle: SessionHandle, text: str) -> PromptResult:
        from .trial import prompt_in_trial

        session = self.trial_sessions[handle.session_id]
        assert self.trial_setup is not None
        first = len(self.wire.calls) if self.wire is not None else 0
        try:
            return await prompt_in_trial(
                self,
                session,
                text,
                config=self.trial_setup[0],
                model=self.model,
                agent=self.options.agent,
            )
        finally:
            if self.wire is not None:
                session.wire_calls = self.wire.snapshot()[first:]

    def _trial_trace(self, handle: SessionHandle) -> SessionTrace:
        session = self.trial_sessions[handle.session_id]
        trace = session.trace or empty_trace(handle.session_id)
        if session.wire_calls:
            trace = attrs.evolve(trace, events=(*trace.events, *session.wire_calls))
        return trace

    def _session(self, handle: SessionHandle) -> _Session:
        try:
            return self.sessions[handle.session_id]
        except KeyError:
            raise OpenCodeError(
                f"opencode: unknown session {handle.session_id!r}"
            ) from None

    async def _new_workdir(self) -> Path:
        import trio

        target = temporary_folder(
            "profiler-opencode-work-"
        )  # recorded: a killed run's is removed by the next
        source = self.options.workdir_template or self.options.workdir
        if source is None:
            return target  # no template: a fresh, empty directory
        template = Path(source).expanduser()
        # Copied in a worker thread: a big template must not stall the other sessions' polling.
        await trio.to_thread.run_sync(
            lambda: shutil.copytree(template, target, symlinks=True, dirs_exist_ok=True)
        )
        return target


def _server_folder(options: OpenCodeOptions, config: ProviderConfig) -> str:
    """The folder the server works in: the runner's (its sessions' workspaces) in a
    sandbox, where that folder is
    the only one the server may write; elsewhere the deprecated ``workdir`` option still wins."""
    confined = config.sandbox is not None and config.sandbox.confined
    if confined and config.workdir not in ("", "."):
        return config.workdir
    return options.workdir or config.workdir or "."


def _remove(path: Path | None) -> None:
    if path is not None:
        remove_folder(path)
