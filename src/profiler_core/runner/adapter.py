"""``ProviderAdapter``: one provider instance, called the same way whatever its methods are.

Plugins may write any method as ``def`` or ``async def``. A plain ``def`` that
blocks (sleeps, waits on a socket) would stop trio's event loop, and with it
every timeout and Ctrl-C; so synchronous provider methods run in a worker
thread, abandoned when their cell is cancelled. A provider whose synchronous
methods are known to return at once (the built-in simulator) says so with
``nonblocking_sync = True`` and is called inline, saving the thread hop.

Cleanup (``destroy_session``, ``shutdown``) is shielded from cancellation so a
timeout cannot skip it; but when the run itself is being cancelled (Ctrl-C), a
synchronous cleanup blocking its thread gets only ``CANCELLED_GRACE_S`` before
it is abandoned (:meth:`ProviderAdapter.cleanup_limit`), so it cannot hold up the exit.

The adapter decides this once per instance, and reads the optional attributes
the :class:`~profiler_core.plugins.contracts.SessionProvider` contract declares
(``init_scope``, ``needs_process_env``, ``nonblocking_sync``) once, with the
contract's defaults, so no other code calls a provider by a method's name or
probes it with ``getattr``.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import trio

from ..model import (
    CreateSessionParams,
    PromptResult,
    ProviderConfig,
    SessionHandle,
    SessionTrace,
)
from ..plugins.contracts import PROVIDER_DEFAULTS, optional_method
from ..util.asyncs import await_me_maybe

if TYPE_CHECKING:  # pragma: no cover
    from ..model.recorded import RecordedVerification

#: seconds a blocking synchronous cleanup may hold up a cancelled run (Ctrl-C) before it
#: is abandoned
CANCELLED_GRACE_S = 1.0


class ProviderAdapter:
    """A provider instance with async methods and its optional attributes resolved."""

    __slots__ = (
        "_calls",
        "_threaded",
        "_times",
        "_verdict",
        "id",
        "init_scope",
        "needs_process_env",
        "provider",
    )

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.id: str = provider.id
        self.init_scope: str = getattr(
            provider, "init_scope", PROVIDER_DEFAULTS["init_scope"]
        )
        self.needs_process_env: bool = bool(
            getattr(
                provider, "needs_process_env", PROVIDER_DEFAULTS["needs_process_env"]
            )
        )
        inline = bool(
            getattr(provider, "nonblocking_sync", PROVIDER_DEFAULTS["nonblocking_sync"])
        )
        names = (
            "init",
            "create_session",
            "prompt",
            "export_session",
            "destroy_session",
            "shutdown",
        )
        self._calls = {name: _caller(getattr(provider, name), inline) for name in names}
        #: the methods that run in a worker thread (synchronous and possibly blocking)
        self._threaded = frozenset(
            n
            for n in names
            if not inline and not inspect.iscoroutinefunction(getattr(provider, n))
        )
        self._times = optional_method(provider, "session_times")
        self._verdict = optional_method(provider, "session_verification")

    @classmethod
    def of(cls, provider: Any) -> ProviderAdapter:
        """``provider`` wrapped (an adapter is returned as it is)."""
        return provider if isinstance(provider, ProviderAdapter) else cls(provider)

    async def init(self, config: ProviderConfig) -> None:
        """Start the agent for a model and mode."""
        await self._calls["init"](config)

    async def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """A fresh session for one attempt."""
        return await self._calls["create_session"](params)

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None
    ) -> PromptResult:
        """Send the prompt and wait for the agent's turn to end."""
        return await self._calls["prompt"](handle, text, timeout_ms)

    async def export_session(self, handle: SessionHandle) -> SessionTrace | None:
        """The session's trace."""
        return await self._calls["export_session"](handle)

    async def destroy_session(self, handle: SessionHandle) -> None:
        """Tear the session down."""
        await self._calls["destroy_session"](handle)

    async def shutdown(self) -> None:
        """Stop the agent."""
        await self._calls["shutdown"]()

    def cleanup_limit(self, method: str, limit: float) -> float:
        """Seconds a shielded cleanup call may take: ``limit``, or the short grace when
        the caller is being
        cancelled (Ctrl-C) and ``method`` blocks a worker thread."""
        if method in self._threaded and trio.current_effective_deadline() == -math.inf:
            return min(limit, CANCELLED_GRACE_S)
        return limit

    def session_times(self, handle: SessionHandle) -> tuple[str, str] | None:
        """When a replayed session really happened; None for a live one."""
        return self._times(handle) if self._times is not None else None

    def session_verification(
        self, handle: SessionHandle
    ) -> RecordedVerification | None:
        """What a replayed session's verifiers said (a ``RecordedVerification``); None
        for a live one."""
        return self._verdict(handle) if self._verdict is not None else None


def _caller(fn: Callable[..., Any], inline: bool) -> Callable[..., Any]:
    """An async callable for ``fn``: awaited, called inline, or run in a worker thread."""
    if inline or inspect.iscoroutinefunction(fn):

        async def direct(*args: Any) -> Any:
            return await await_me_maybe(fn(*args))

        return direct

    async def threaded(*args: Any) -> Any:
        result = await trio.to_thread.run_sync(
            functools.partial(fn, *args), abandon_on_cancel=True
        )
        return await await_me_maybe(result)

    return threaded


__all__ = ["ProviderAdapter"]
