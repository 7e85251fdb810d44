"""The inside end of a sandbox's network: loopback ports relayed to Unix sockets, and back.

A copy of this file runs with the sandbox's own Python, so it imports nothing
of the project and only the standard library. It binds every listener first,
touches ``--ready``, then either serves for ever (a container's network
helper) or forks the relay and replaces itself with the command after
``--`` (bwrap): the command starts only once its model port answers, and
keeps its PID, so whoever started it can wait for it and end it.

``--forward PORT=SOCKET``: 127.0.0.1:PORT (and [::1]:PORT) inside leads to the
Unix socket, whose other end (outside) reaches the model or the proxy.
``--publish SOCKET=PORT``: the Unix socket (seen from outside) leads to
127.0.0.1:PORT inside, where e.g. ``opencode serve`` listens.
"""

from __future__ import annotations

import os
import selectors
import socket
import sys
import threading

CHUNK = 65536


def pump(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways between two connected sockets until both sides are done; closes both."""
    selector = selectors.DefaultSelector()
    selector.register(a, selectors.EVENT_READ, b)
    selector.register(b, selectors.EVENT_READ, a)
    open_sides = 2
    try:
        while open_sides:
            for key, _ in selector.select():
                source, target = key.fileobj, key.data
                try:
                    data = source.recv(CHUNK)  # type: ignore[union-attr]
                except OSError:
                    data = b""
                if data:
                    target.sendall(data)
                    continue
                # One side finished sending: pass the end on, keep the other direction
                # open (HTTP half-close).
                selector.unregister(source)
                open_sides -= 1
                try:
                    target.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
    except OSError:
        pass
    finally:
        selector.close()
        a.close()
        b.close()


def _unix(path):
    def connect():
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        return conn

    return connect


def _tcp(port):
    def connect():
        return socket.create_connection(("127.0.0.1", port), timeout=10)

    return connect


def _handle(client, connect):
    try:
        upstream = connect()
        upstream.settimeout(None)
    except OSError:
        client.close()
        return
    pump(client, upstream)


def serve(listeners):
    """Accept on every listener for ever, one thread per connection."""
    selector = selectors.DefaultSelector()
    for listener, connect in listeners:
        selector.register(listener, selectors.EVENT_READ, connect)
    while True:
        for key, _ in selector.select():
            try:
                client, _ = key.fileobj.accept()  # type: ignore[union-attr]
            except OSError:
                continue
            threading.Thread(
                target=_handle, args=(client, key.data), daemon=True
            ).start()


def _listen_tcp(port):
    found = []
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(64)
        except OSError:
            sock.close()
            if family == socket.AF_INET:
                raise
            continue  # no IPv6 in this sandbox: 127.0.0.1 is enough
        found.append(sock)
    return found


def _listen_unix(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(64)
    return sock


def parse(argv):
    """``(forwards, publishes, ready_file, command)`` from the command line."""
    forwards, publishes, ready, command = [], [], None, []
    args = list(argv)
    while args:
        flag = args.pop(0)
        if flag == "--":
            command = args
            break
        value = args.pop(0)
        if flag == "--forward":
            port, path = value.split("=", 1)
            forwards.append((int(port), path))
        elif flag == "--publish":
            path, port = value.rsplit("=", 1)
            publishes.append((path, int(port)))
        elif flag == "--ready":
            ready = value
        else:
            raise SystemExit(f"relay: unknown option {flag}")
    return forwards, publishes, ready, command


def main(argv):
    """Bind, say ready, then serve (no command) or fork the relay and become the command."""
    forwards, publishes, ready, command = parse(argv)
    listeners = []
    try:
        for port, path in forwards:
            listeners += [(sock, _unix(path)) for sock in _listen_tcp(port)]
        for path, port in publishes:
            listeners.append((_listen_unix(path), _tcp(port)))
    except OSError as exc:
        sys.stderr.write(f"sandbox relay: cannot listen: {exc}\n")
        return 126
    if ready:
        with open(ready, "w") as handle:
            handle.write(str(os.getpid()))
    if not command:
        serve(listeners)
        return 0
    if os.fork() == 0:
        # The relay: not holding the command's output open, ended with the sandbox.
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        try:
            serve(listeners)
        finally:
            os._exit(0)
    for sock, _ in listeners:
        sock.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"sandbox: cannot run {command[0]!r}: {exc.strerror or exc}\n")
        return 127
    return 0  # not reached: execvp does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
