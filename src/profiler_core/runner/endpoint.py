"""One look at the model endpoints before the first session: a server that is not there
costs seconds, not minutes.

An agent whose endpoint is down retries each request for minutes before its
session fails (a forgotten ``profiler fake-model`` cost a new user nine
minutes). The endpoints the profile names — ``base_url`` (Claude Code, Codex,
an OpenCode server) and the ``baseURL`` of OpenCode's model providers — are
each opened once over TCP; a refused connection or a host name that does not
resolve is one line naming the endpoint. A provider that names no endpoint
(the simulated one, an agent's default) is not checked, nor one that does not
say its ``base_url`` is a model endpoint (``endpoint_check = True``: the agent
providers); the URL is shown without its password or query.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import trio

#: Seconds one connection attempt may take; a slower endpoint is left to the sessions.
CONNECT_TIMEOUT_S = 3.0


def model_endpoints(option_sets: Iterable[Mapping[str, Any]]) -> list[str]:
    """The http(s) endpoints named by provider options (``base_url``, OpenCode's
    ``config.provider.*.options.baseURL``)."""
    found: list[str] = []
    for options in option_sets:
        candidates = [options.get("base_url")]
        config = options.get("config")
        providers = config.get("provider") if isinstance(config, Mapping) else None
        if isinstance(providers, Mapping):
            for provider in providers.values():
                settings = (
                    provider.get("options") if isinstance(provider, Mapping) else None
                )
                if isinstance(settings, Mapping):
                    candidates.append(settings.get("baseURL"))
        for url in candidates:
            if (
                isinstance(url, str)
                and urlsplit(url).scheme in ("http", "https")
                and urlsplit(url).hostname
                and url not in found
            ):
                found.append(url)
    return found


async def unreachable(url: str, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why ``url``'s host cannot be connected to (refused, unresolvable); None when it
    accepts, or is merely slow."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"bad port in {url!r}"
    host = parts.hostname or ""
    with trio.move_on_after(timeout_s):
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError as exc:
            return _reason(exc)
        await stream.aclose()
    return None


def shown(url: str) -> str:
    """``url`` without a password or query (either may hold a key): scheme, host, port and path."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    netloc = f"[{netloc}]" if ":" in netloc else netloc
    try:
        netloc += f":{parts.port}" if parts.port else ""
    except ValueError:
        pass
    return f"{parts.scheme}://{netloc}{parts.path}"


def _reason(exc: OSError) -> str:
    """A short reason for a failed connection (trio groups the errors of every address it tried)."""
    group = exc.__cause__
    causes = [exc, *(group.exceptions if isinstance(group, BaseExceptionGroup) else ())]
    if any(isinstance(cause, ConnectionRefusedError) for cause in causes):
        return "connection refused"
    last = causes[-1]
    return (str(last).splitlines() or [type(last).__name__])[0]


__all__ = ["CONNECT_TIMEOUT_S", "model_endpoints", "shown", "unreachable"]
