"""Calling a provider's methods so that a blocking one cannot freeze the run.

Plugins may write any method as ``def`` or ``async def``. A plain ``def`` that
blocks (sleeps, waits on a socket) would stop trio's event loop, and with it
every timeout and Ctrl-C; so synchronous provider methods run in a worker
thread, abandoned when their cell is cancelled. A provider whose synchronous
methods are known to return at once (the built-in simulator) says so with
``nonblocking_sync = True`` and is called inline, saving the thread hop.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import trio

from .._async import await_me_maybe


async def call_provider(provider: Any, method: str, *args: Any) -> Any:
    """``provider.<method>(*args)``: awaited when async, in a worker thread when sync and possibly blocking."""
    fn = getattr(provider, method)
    if inspect.iscoroutinefunction(fn) or getattr(provider, "nonblocking_sync", False):
        return await await_me_maybe(fn(*args))
    result = await trio.to_thread.run_sync(functools.partial(fn, *args), abandon_on_cancel=True)
    return await await_me_maybe(result)
