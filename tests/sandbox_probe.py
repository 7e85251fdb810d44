"""Run inside a sandbox by the sandbox tests: try what a confined program must (not) be able to do.

Usage: ``python3 sandbox_probe.py PLAN_JSON``; prints one JSON object with the
outcome of every attempt. Standard library only (it runs with the sandbox's
own Python, possibly in a container that sees only the host's /usr).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys


def attempt_write(path: str) -> str:
    try:
        with open(path, "w") as handle:
            handle.write("escaped")
    except OSError as exc:
        return f"error: {exc.strerror}"
    return "ok"


def attempt_read(path: str) -> str:
    try:
        with open(path) as handle:
            return "ok: " + handle.read(200)
    except OSError as exc:
        return f"error: {exc.strerror}"


def attempt_connect(host: str, port: int, send: str) -> str:
    try:
        with socket.create_connection((host, port), timeout=3) as conn:
            conn.sendall(send.encode())
            data = conn.recv(200)
    except OSError as exc:
        return f"error: {exc.strerror or exc}"
    return "ok: " + data.decode("latin-1")


def attempt_connect_via_proxy(proxy_port: int, target: str) -> str:
    """CONNECT ``target`` through the HTTP proxy on 127.0.0.1:``proxy_port``; the status
    line, then what the target says."""
    try:
        with socket.create_connection(("127.0.0.1", proxy_port), timeout=3) as conn:
            conn.sendall(
                f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode()
            )
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(200)
                if not chunk:
                    break
                head += chunk
            status = head.split(b"\r\n", 1)[0].decode("latin-1")
            if " 200 " not in status + " ":
                return status
            # What the target sent first may have come with the proxy's answer.
            rest = head.split(b"\r\n\r\n", 1)[1] or conn.recv(200)
            return status + " | " + rest.decode("latin-1")
    except OSError as exc:
        return f"error: {exc.strerror or exc}"


def attempt_command(argv: list[str]) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"error: {exc}"
    return f"exit {done.returncode}: {(done.stdout + done.stderr).strip()[-300:]}"


def main() -> None:
    plan = json.loads(sys.argv[1])
    # Commands first: a remount that worked would show in the writes after it.
    commands = [attempt_command(argv) for argv in plan.get("commands", [])]
    result = {
        "commands": commands,
        "uid": os.getuid(),
        "cwd": os.getcwd(),
        "env": {name: os.environ.get(name) for name in plan.get("env", [])},
        "write": {path: attempt_write(path) for path in plan.get("write", [])},
        "read": {path: attempt_read(path) for path in plan.get("read", [])},
        "exists": {path: os.path.exists(path) for path in plan.get("exists", [])},
        "connect": {
            f"{h}:{p}": attempt_connect(h, p, plan.get("send", ""))
            for h, p in plan.get("connect", [])
        },
        "proxy": {
            t: attempt_connect_via_proxy(plan["proxy_port"], t)
            for t in plan.get("proxy", [])
        },
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
