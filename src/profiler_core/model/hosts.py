"""Allow-list entries of a sandbox's network (``host``, ``host:port``, ``*.domain``),
checked when a profile is read."""

from __future__ import annotations

import attrs

from ..errors import SandboxError
from .record import Record

__all__ = ["DEFAULT_PORTS", "HostRule", "parse_host_rule"]

#: the port of a rule or URL that names none
DEFAULT_PORTS = {"http": 80, "https": 443}


@attrs.frozen(repr=False, eq=False)
class HostRule(Record):
    """One allow-list entry: a host (or ``*.domain``: any host under it) and a port (None: 443)."""

    host: str
    port: int | None = None

    def admits(self, host: str, port: int) -> bool:
        """Whether a CONNECT to ``host:port`` is allowed by this entry."""
        host = host.lower().rstrip(".")
        if port != (self.port or 443):
            return False
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        return host == self.host


def _port(text: str, where: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise SandboxError(
            f"{where}: expected a port between 1 and 65535, got {text!r}"
        )
    return int(text)


def parse_host_rule(text: str) -> HostRule:
    """``api.openai.com``, ``api.openai.com:8443`` or ``*.example.com`` as a :class:`HostRule`."""
    where = f"execution.allow_hosts: {text!r}"
    if not isinstance(text, str) or not text.strip() or "/" in text or "@" in text:
        raise SandboxError(f"{where}: expected a host name, host:port or *.domain")
    host, _, port = (
        text.strip().lower().rpartition(":")
        if ":" in text
        else (text.strip().lower(), "", "")
    )
    if (
        host.startswith("[")
        or not host
        or "*" in host[2:]
        or ("*" in host and not host.startswith("*."))
    ):
        raise SandboxError(f"{where}: expected a host name, host:port or *.domain")
    return HostRule(host.rstrip("."), _port(port, where) if port else None)
