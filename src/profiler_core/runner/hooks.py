"""Calling lifecycle hooks one plugin at a time, with the failure policy of DESIGN §4."""

from __future__ import annotations

import logging
from typing import Any

from .._async import await_me_maybe
from ..errors import HookError
from ..model import HookErrorRecord
from ..plugins import PluginManager

log = logging.getLogger("agent_profiler")


class HookCaller:
    """Calls lifecycle hooks; failures are recorded (and fatal only for ``before_run``)."""

    def __init__(self, manager: PluginManager) -> None:
        self.manager = manager
        self.errors: list[HookErrorRecord] = []

    async def call(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """Call every implementation; record and log the ones that raise."""
        results = []
        for plugin_name, call in self.manager.hookimpls(hook_name):
            try:
                results.append(await await_me_maybe(call(**kwargs)))
            except Exception as exc:  # noqa: BLE001 - the policy: never abort the suite
                self._record(hook_name, plugin_name, exc)
        return results

    async def first_result(self, hook_name: str, **kwargs: Any) -> Any:
        """Call implementations until one returns something other than ``None``."""
        for plugin_name, call in self.manager.hookimpls(hook_name):
            try:
                result = await await_me_maybe(call(**kwargs))
            except Exception as exc:  # noqa: BLE001
                self._record(hook_name, plugin_name, exc)
                continue
            if result is not None:
                return result
        return None

    async def call_fatal(self, hook_name: str, **kwargs: Any) -> None:
        """Call every implementation; the first exception aborts (``before_run``)."""
        for plugin_name, call in self.manager.hookimpls(hook_name):
            try:
                await await_me_maybe(call(**kwargs))
            except Exception as exc:
                raise HookError(f"plugin {plugin_name!r}: {hook_name} failed: {exc}") from exc

    def call_sync(self, hook_name: str, **kwargs: Any) -> None:
        """Call synchronous hooks (progress) on the hot path; failures are recorded."""
        for plugin_name, call in self.manager.hookimpls(hook_name):
            try:
                call(**kwargs)
            except Exception as exc:  # noqa: BLE001
                self._record(hook_name, plugin_name, exc)

    def _record(self, hook_name: str, plugin_name: str, exc: Exception) -> None:
        message = f"{type(exc).__name__}: {exc}"
        log.warning("hook %s of plugin %r failed: %s", hook_name, plugin_name, message)
        self.errors.append(HookErrorRecord(hook=hook_name, plugin=plugin_name, message=message))
