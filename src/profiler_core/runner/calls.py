"""Calling a provider's methods so that a blocking one cannot freeze the run.

Plugins may write any method as ``def`` or ``async def``. A plain ``def`` that
blocks (sleeps, waits on a socket) would stop trio's event loop, and with it
every timeout and Ctrl-C; so synchronous provider methods run in a worker
thread, abandoned when their cell is cancelled. A provider whose synchronous
methods are known to return at once (the built-in simulator) says so with
``nonblocking_sync = True`` and is called inline, saving the thread hop.

Cleanup (``destroy_session``, ``shutdown``) is shielded from cancellation so a
timeout cannot skip it; but when the run itself is being cancelled (Ctrl-C), a
synchronous cleanup blocking its thread gets only ``CANCELLED_GRACE_S`` before
it is abandoned, so it cannot hold up the exit.
"""

from __future__ import annotations

import functools
import inspect
import math
from typing import Any

import trio

from .._async import await_me_maybe


async def call_provider(provider: Any, method: str, *args: Any) -> Any:
    """``provider.<method>(*args)``: awaited when async, in a worker thread when sync and possibly blocking."""
    fn = getattr(provider, method)
    if not runs_in_thread(provider, method):
        return await await_me_maybe(fn(*args))
    result = await trio.to_thread.run_sync(functools.partial(fn, *args), abandon_on_cancel=True)
    return await await_me_maybe(result)


#: seconds a blocking synchronous cleanup may hold up a cancelled run (Ctrl-C) before it is abandoned
CANCELLED_GRACE_S = 1.0

#: what a plugin method may raise that becomes an error row: ``SystemExit`` too (a plugin calling
#: ``sys.exit()`` must not end the run); ``KeyboardInterrupt`` and trio's ``Cancelled`` still pass
PLUGIN_ERRORS: tuple[type[BaseException], ...] = (Exception, SystemExit)


def runs_in_thread(provider: Any, method: str) -> bool:
    """Whether ``call_provider`` runs ``provider.<method>`` in a worker thread (synchronous and possibly blocking)."""
    return not inspect.iscoroutinefunction(getattr(provider, method)) and not getattr(provider, "nonblocking_sync", False)


def cleanup_limit(provider: Any, method: str, limit: float) -> float:
    """Seconds a shielded cleanup call may take: ``limit``, or the short grace when the caller is being cancelled and the call blocks a thread."""
    if trio.current_effective_deadline() == -math.inf and runs_in_thread(provider, method):
        return min(limit, CANCELLED_GRACE_S)
    return limit
