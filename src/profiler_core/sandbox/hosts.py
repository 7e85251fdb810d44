"""Which hosts a sandboxed program may reach: model endpoints (URLs) and the allow-list
(``host[:port]``).

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
from ..model.hosts import DEFAULT_PORTS, HostRule, parse_host_rule
from ..model.record import Record

__all__ = ["Endpoint", "HostRule", "allowed", "parse_endpoint", "parse_host_rule"]


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
    """A model endpoint URL (``http(s)://host[:port][/path]``) as an :class:`Endpoint`;
    anything else is one line."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise SandboxError(f"model endpoint {url!r}: {exc}") from None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise SandboxError(
            f"model endpoint {url!r}: expected an http:// or https:// URL with a host"
        )
    return Endpoint(
        url=url,
        scheme=parts.scheme,
        host=parts.hostname.lower(),
        port=port or DEFAULT_PORTS[parts.scheme],
    )
