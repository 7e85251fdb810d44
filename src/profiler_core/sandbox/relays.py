"""The outside end of a sandbox's network: Unix sockets to the model, a CONNECT proxy,
published ports.

The sandbox has no network of its own (``network: model``); what it may reach
is offered as Unix sockets in a folder mounted into it. Here, outside, one
thread accepts on all of them: a model socket connects to the model's
host:port; the proxy socket reads one ``CONNECT host:port`` request and
connects only when the allow-list admits the host; a published port listens
on 127.0.0.1 here and leads to a Unix socket the inside relay serves.
Each connection gets a thread that copies bytes both ways (``relay_main.pump``).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .hosts import HostRule, allowed
from .relay_main import pump

if TYPE_CHECKING:
    from .network import NetworkPlan

__all__ = ["Relays", "relay_arguments"]

#: the longest CONNECT request head the proxy reads
_MAX_HEAD = 8192
#: seconds a client has to send its CONNECT request, and an upstream to accept
_TIMEOUT_S = 10.0


class Relays:
    """Listeners for one sandbox, served from one thread; :meth:`close` ends every connection."""

    def __init__(self) -> None:
        self._listeners: list[
            tuple[socket.socket, Callable[[socket.socket], None]]
        ] = []
        self._live: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread: threading.Thread | None = None
        self._closed = False

    # -- what to serve (before start) ---------------------------------------

    def serve_plan(self, plan: NetworkPlan, out_dir: Path) -> None:
        """The host side of ``plan``'s model network: each forward and the proxy, on the
        sockets in ``out_dir`` that :func:`relay_arguments` points the inside relay at."""
        for forward in plan.forwards:
            self.forward(out_dir / f"m{forward.port}.sock", forward.host, forward.port)
        if plan.proxy_port is not None:
            self.proxy(out_dir / "proxy.sock", plan.rules)

    def forward(self, path: Path, host: str, port: int) -> None:
        """Connections to the Unix socket ``path`` go on to ``host:port``."""
        self._listeners.append(
            (_unix_listener(path), lambda client: self._forward(client, host, port))
        )

    def proxy(self, path: Path, rules: tuple[HostRule, ...]) -> None:
        """An HTTP CONNECT proxy on the Unix socket ``path`` admitting only hosts
        ``rules`` allow."""
        self._listeners.append(
            (_unix_listener(path), lambda client: self._proxy(client, rules))
        )

    def publish(self, path: Path) -> int:
        """A port on 127.0.0.1 here leading to the Unix socket ``path`` (served inside);
        returns the port."""
        listener = socket.create_server(("127.0.0.1", 0))
        self._listeners.append(
            (listener, lambda client: self._connect_unix(client, path))
        )
        return int(listener.getsockname()[1])

    # -- running --------------------------------------------------------------

    def start(self) -> None:
        """Serve from a daemon thread (nothing to do without listeners)."""
        if self._listeners and self._thread is None:
            self._thread = threading.Thread(
                target=self._serve, name="sandbox-relays", daemon=True
            )
            self._thread.start()

    def close(self) -> None:
        """Stop accepting, cut every open connection, close the listeners."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            live, self._live = list(self._live), set()
        for sock in live:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for listener, _ in self._listeners:
            listener.close()
        self._wake_r.close()
        self._wake_w.close()

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._wake_r, selectors.EVENT_READ, None)
        for listener, handle in self._listeners:
            selector.register(listener, selectors.EVENT_READ, handle)
        try:
            while not self._closed:
                for key, _ in selector.select():
                    if key.data is None:
                        return
                    try:
                        client, _ = key.fileobj.accept()  # type: ignore[union-attr]
                    except OSError:
                        continue
                    self._track(client)
                    threading.Thread(
                        target=key.data, args=(client,), daemon=True
                    ).start()
        finally:
            selector.close()

    def _track(self, *socks: socket.socket) -> None:
        with self._lock:
            self._live.update(socks)

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        self._track(upstream)
        try:
            pump(client, upstream)
        finally:
            with self._lock:
                self._live.difference_update((client, upstream))

    # -- connection handlers (each in its own thread) --------------------------

    def _forward(self, client: socket.socket, host: str, port: int) -> None:
        try:
            upstream = socket.create_connection((host, port), timeout=_TIMEOUT_S)
        except OSError:
            self._drop(client)
            return
        upstream.settimeout(None)
        self._pump(client, upstream)

    def _connect_unix(self, client: socket.socket, path: Path) -> None:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(str(path))
        except OSError:
            upstream.close()
            self._drop(client)
            return
        self._pump(client, upstream)

    def _proxy(self, client: socket.socket, rules: tuple[HostRule, ...]) -> None:
        client.settimeout(_TIMEOUT_S)
        try:
            target = _read_connect(client)
        except (OSError, ValueError):
            self._answer(client, "400 Bad Request")
            return
        if target is None:
            self._answer(
                client, "405 Method Not Allowed"
            )  # plain-HTTP proxying is not offered
            return
        host, port = target
        if not allowed(rules, host, port):
            self._answer(client, "403 Forbidden")
            return
        try:
            upstream = socket.create_connection((host, port), timeout=_TIMEOUT_S)
        except OSError:
            self._answer(client, "502 Bad Gateway")
            return
        upstream.settimeout(None)
        client.settimeout(None)
        try:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        except OSError:
            upstream.close()
            self._drop(client)
            return
        self._pump(client, upstream)

    def _answer(self, client: socket.socket, status: str) -> None:
        with contextlib.suppress(OSError):
            client.sendall(
                f"HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()
            )
        self._drop(client)

    def _drop(self, client: socket.socket) -> None:
        with self._lock:
            self._live.discard(client)
        client.close()


def relay_arguments(plan: NetworkPlan, out_dir: Path, in_dir: Path) -> list[str]:
    """The inside relay's options for ``plan`` (``sandbox/relay_main.py``): its ready mark
    and published ports' sockets in ``in_dir``, the way out through ``out_dir``."""
    args = ["--ready", str(in_dir / "ready")]
    for forward in plan.forwards:
        args += ["--forward", f"{forward.port}={out_dir / f'm{forward.port}.sock'}"]
    if plan.proxy_port is not None:
        args += ["--forward", f"{plan.proxy_port}={out_dir / 'proxy.sock'}"]
    for port in plan.publish:
        args += ["--publish", f"{in_dir / f'p{port}.sock'}={port}"]
    return args


def _unix_listener(path: Path) -> socket.socket:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(64)
    return listener


def _read_connect(client: socket.socket) -> tuple[str, int] | None:
    """The ``(host, port)`` of a ``CONNECT host:port HTTP/1.x`` request head; None for
    another method."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = client.recv(1024)
        if not chunk or len(head) > _MAX_HEAD:
            raise ValueError("no complete request head")
        head += chunk
    method, _, rest = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
    if method.upper() != "CONNECT":
        return None
    authority = rest.split(" ", 1)[0]
    host, _, port = authority.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"bad CONNECT target {authority!r}")
    return host.strip("[]").lower(), int(port)
