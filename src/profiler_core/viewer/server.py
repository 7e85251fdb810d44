"""Serve the viewer with Hypercorn on trio until Ctrl-C.

Hypercorn runs on trio natively (the project's concurrency library), so the
viewer needs no second event loop; Starlette runs on trio through anyio and
calls the page functions, which read files, in worker threads.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import signal
import socket
import webbrowser
from collections.abc import Callable
from functools import partial
from pathlib import Path

import trio

#: addresses that mean "every interface of this machine"
WILDCARDS = ("0.0.0.0", "::", "")


def allowed_hosts(host: str, proc: Path = Path("/proc/net")) -> tuple[str, ...]:
    """The ``Host`` names a request may carry: loopback, ``host``, and for a wildcard
    every address and name of
    this machine (a browser elsewhere on the network asks by the machine's address, not
    by ``0.0.0.0``)."""
    names = ["127.0.0.1", "localhost", "[::1]", host]
    if host in WILDCARDS:
        names += [socket.gethostname(), socket.getfqdn(), *_local_addresses(proc)]
    return tuple(
        dict.fromkeys(
            f"[{name}]" if ":" in name and not name.startswith("[") else name
            for name in names
            if name
        )
    )


def _local_addresses(proc: Path) -> list[str]:
    """This machine's IPv4 (``fib_trie``'s ``/32 host LOCAL``) and IPv6 (``if_inet6``)
    addresses; by name elsewhere."""
    found: list[str] = []
    try:
        trie = (proc / "fib_trie").read_text(encoding="ascii", errors="replace")
        found += re.findall(r"\|-- (\d+\.\d+\.\d+\.\d+)\n\s+/32 host LOCAL", trie)
    except OSError:
        pass
    try:
        for line in (
            (proc / "if_inet6")
            .read_text(encoding="ascii", errors="replace")
            .splitlines()
        ):
            found.append(str(ipaddress.IPv6Address(int(line.split()[0], 16))))
    except (OSError, ValueError, IndexError):
        pass
    try:
        found += [
            str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)
        ]
    except OSError:
        pass
    return list(dict.fromkeys(str(a).split("%")[0] for a in found))


def serve(app, host: str, port: int, on_ready: Callable[[str], None]) -> None:
    """Serve ``app`` on ``host:port`` (0: a free port); ``on_ready`` gets the base URL
    once it listens."""
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve

    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger(
        "profiler_core.viewer"
    )  # quiet unless the user turns logging on
    config.graceful_timeout = 1.0

    async def main() -> None:
        # Ctrl-C and SIGTERM arrive as messages, not as a KeyboardInterrupt raised in whichever task
        # runs: Hypercorn swallows a KeyboardInterrupt that lands in its own tasks, and
        # one that lands
        # in its shutdown path left the viewer waiting forever. Here a signal sets one event that
        # Hypercorn's own graceful shutdown waits on.
        stop = trio.Event()
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_set_on_signal, signals, stop)
                async with trio.open_nursery() as server:
                    binds = await server.start(
                        partial(
                            hypercorn_serve, app, config, shutdown_trigger=stop.wait
                        )
                    )
                    # A browser may take its time to start (or block until it exits): in a
                    # thread, so it never holds the server up, and abandoned at shutdown.
                    nursery.start_soon(_in_thread, on_ready, binds[0])
                nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    except* KeyboardInterrupt:
        # Ctrl-C is how the viewer stops (it may come wrapped in the nursery's exception
        # group)
        pass
    except* OSError as group:
        # A busy port or an address this host does not have: the caller's one-line
        # error, not a group.
        raise _first(group) from None


async def _set_on_signal(signals, stop: trio.Event) -> None:
    """Set ``stop`` at the first signal received."""
    async for _ in signals:
        stop.set()
        return


async def _in_thread(call: Callable[[str], None], url: str) -> None:
    """Run ``call(url)`` in a worker thread that shutdown may abandon."""
    await trio.to_thread.run_sync(call, url, abandon_on_cancel=True)


def _first(group: BaseExceptionGroup) -> BaseException:
    """The first exception of a (possibly nested) exception group."""
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


def open_browser(url: str, opener: Callable[[str], bool] = webbrowser.open) -> bool:
    """Open ``url`` in the user's browser (``$BROWSER`` is honoured); False when none
    could be started."""
    try:
        return bool(opener(url))
    except webbrowser.Error:
        return False


__all__ = ["open_browser", "serve"]
