"""The network plan of one job: which ports are relayed, whether the CONNECT proxy runs,
what the env says.

With ``network: model`` every loopback endpoint gets a relay on its own port
inside (its URL works unchanged), and remote HTTPS endpoints plus
``allow_hosts`` go through the CONNECT proxy (``HTTPS_PROXY`` inside, on a
port no endpoint uses). ``none`` relays nothing out; ``full`` shares the
host's network and relays nothing at all. Published ports are relayed in
whenever the sandbox has a network of its own.
"""

from __future__ import annotations

import attrs

from ..errors import SandboxError
from ..model.record import Record
from .hosts import HostRule, parse_endpoint, parse_host_rule
from .job import Job
from .settings import SandboxSettings

__all__ = ["Forward", "NetworkPlan", "plan_model", "plan_network"]

#: the proxy's port inside the sandbox, unless an endpoint uses it
PROXY_PORT = 3128
_LOOPBACK_NAMES = "localhost,127.0.0.1,::1"


@attrs.frozen(repr=False, eq=False)
class Forward(Record):
    """127.0.0.1:``port`` inside reaches ``host:port`` outside."""

    port: int
    host: str


@attrs.frozen(repr=False, eq=False)
class NetworkPlan(Record):
    """The relays and proxy one job needs."""

    forwards: tuple[Forward, ...] = ()
    rules: tuple[HostRule, ...] = ()
    proxy_port: int | None = None
    #: ports served inside that the host reaches through a relay
    publish: tuple[int, ...] = ()

    @property
    def relayed(self) -> bool:
        """Whether anything must be relayed between the sandbox and the host."""
        return bool(self.forwards or self.proxy_port or self.publish)

    def environment(self) -> dict[str, str]:
        """Variables that point the program at the proxy (none without one)."""
        if self.proxy_port is None:
            return {}
        proxy = f"http://127.0.0.1:{self.proxy_port}"
        return {
            "HTTPS_PROXY": proxy,
            "https_proxy": proxy,
            # Loopback endpoints are relayed directly, never through the proxy.
            "NO_PROXY": _LOOPBACK_NAMES,
            "no_proxy": _LOOPBACK_NAMES,
        }


def plan_network(settings: SandboxSettings, job: Job) -> NetworkPlan:
    """What to relay for ``job`` under ``settings``; an endpoint the mode cannot reach
    is one line."""
    mode = settings.network_mode
    if not settings.confined or mode == "full":
        return NetworkPlan()
    publish = tuple(dict.fromkeys(job.publish))
    if mode == "none":
        return NetworkPlan(publish=publish)
    return plan_model(job.endpoints, settings.allow_hosts, publish)


def plan_model(
    endpoints: tuple[str, ...],
    allow_hosts: tuple[str, ...],
    publish: tuple[int, ...] = (),
) -> NetworkPlan:
    """The relays that let a program reach only ``endpoints`` and ``allow_hosts``
    (``network: model``)."""
    forwards: dict[int, Forward] = {}
    rules = [parse_host_rule(entry) for entry in allow_hosts]
    for url in endpoints:
        endpoint = parse_endpoint(url)
        if endpoint.loopback:
            forwards.setdefault(endpoint.port, Forward(endpoint.port, endpoint.host))
        elif endpoint.scheme == "https":
            rules.append(HostRule(endpoint.host, endpoint.port))
        else:
            raise SandboxError(
                f"model endpoint {url!r}: with execution.network: model a "
                "remote endpoint must be https:// "
                "(reached through the CONNECT proxy); use execution.network: full for plain http"
            )
    clash = set(forwards) & set(publish)
    if clash:
        raise SandboxError(
            f"port {min(clash)} is both a model endpoint's and a published port of the sandbox"
        )
    proxy_port = None
    if rules:
        proxy_port = PROXY_PORT
        while proxy_port in forwards or proxy_port in publish:
            proxy_port += 1
    return NetworkPlan(
        forwards=tuple(forwards.values()),
        rules=tuple(rules),
        proxy_port=proxy_port,
        publish=publish,
    )
