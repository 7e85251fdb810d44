"""Which hosts a sandboxed program may reach: model endpoints (URLs) and the allow-list (``host[:port]``).

A loopback endpoint (``http://127.0.0.1:8080``) is relayed as plain TCP to the
same port inside the sandbox, so its URL works unchanged there. A remote one
(``https://api.anthropic.com``) goes through the HTTP CONNECT proxy, which
admits only the hosts of the allow-list.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import attrs

from ..errors import SandboxError
from ..model.record import Record

__all__ = ["Endpoint", "HostRule", "allowed", "parse_endpoint", "parse_host_rule"]

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
        raise SandboxError(f"{where}: expected a port between 1 and 65535, got {text!r}")
    return int(text)


def parse_host_rule(text: str) -> HostRule:
    """``api.openai.com``, ``api.openai.com:8443`` or ``*.example.com`` as a :class:`HostRule`."""
    where = f"execution.allow_hosts: {text!r}"
    if not isinstance(text, str) or not text.strip() or "/" in text or "@" in text:
        raise SandboxError(f"{where}: expected a host name, host:port or *.domain")
    host, _, port = text.strip().lower().rpartition(":") if ":" in text else (text.strip().lower(), "", "")
    if host.startswith("[") or not host or "*" in host[2:] or ("*" in host and not host.startswith("*.")):
        raise SandboxError(f"{where}: expected a host name, host:port or *.domain")
    return HostRule(host.rstrip("."), _port(port, where) if port else None)


def allowed(rules: tuple[HostRule, ...], host: str, port: int) -> bool:
    """Whether any rule admits ``host:port``."""
    return any(rule.admits(host, port) for rule in rules)


@attrs.frozen(repr=False, eq=False)
class Endpoint(Record):
    """A model endpoint: where it is, and whether it is on this machine's loopback."""

    url: str
    scheme: str
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        """Whether the endpoint is on 127.0.0.0/8, ::1 or ``localhost`` (relayed as plain TCP)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_endpoint(url: str) -> Endpoint:
    """A model endpoint URL (``http(s)://host[:port][/path]``) as an :class:`Endpoint`; anything else is one line."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise SandboxError(f"model endpoint {url!r}: {exc}") from None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise SandboxError(f"model endpoint {url!r}: expected an http:// or https:// URL with a host")
    return Endpoint(url=url, scheme=parts.scheme, host=parts.hostname.lower(), port=port or DEFAULT_PORTS[parts.scheme])
