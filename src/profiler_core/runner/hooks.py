"""Calling lifecycle hooks through pluggy, with the failure policy of docs/plugins.md ("Failures").

Each call is ``manager.hook.<name>(**kwargs)`` inside
:func:`~profiler_core.plugins.manager.isolated_hook_call`: pluggy orders the
implementations (``tryfirst``/``trylast``, wrappers, most recently registered
first) and a raising implementation is recorded with its plugin's name instead
of skipping the others. Awaitables that implementations return are awaited
after pluggy's call, in pluggy's order.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from typing import Any

from ..model import HookErrorRecord
from ..plugins.manager import HookFailures, PluginManager, isolated_hook_call
from ..util.asyncs import await_me_maybe

log = logging.getLogger("agent_profiler")


class HookCaller:
    """Calls lifecycle hooks; failures are recorded (and fatal only for ``before_run``)."""

    def __init__(self, manager: PluginManager) -> None:
        self.manager = manager
        self.errors: list[HookErrorRecord] = []

    def implemented(self, hook_name: str) -> bool:
        """Whether any plugin implements ``hook_name`` now (a call nobody implements is
        skipped on the hot path)."""
        return bool(getattr(self.manager.hook, hook_name).get_hookimpls())

    async def call(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """Call every implementation; record and log the ones that raise."""
        if not self.implemented(hook_name):
            return []
        with isolated_hook_call(hook_name) as failures:
            results = self._pluggy(hook_name, failures, kwargs) or []
        values = [await await_me_maybe(result) for result in results]
        self._record_all(failures)
        return [value for value in values if value is not None]

    async def first_result(self, hook_name: str, **kwargs: Any) -> Any:
        """Call a ``firstresult`` hook; the first implementation returning non-``None`` wins.

        pluggy stops at the first non-``None`` return, and an ``async``
        implementation returns a coroutine even when it will resolve to ``None``.
        So the awaitable is awaited here, and if it gives ``None`` the call goes on
        through pluggy with the implementations not yet called (wrappers wrap
        each such continuation again): an async plugin cannot silence the ones
        after it.
        """
        if not self.implemented(hook_name):
            return None
        called: list[str] = []
        while True:
            with isolated_hook_call(hook_name) as failures:
                result = self._pluggy(hook_name, failures, kwargs, skip=called)
            value = await await_me_maybe(result)
            self._record_all(failures)
            if (
                value is not None
                or not inspect.isawaitable(result)
                or not failures.called
            ):
                return value
            called += failures.called

    async def call_fatal(self, hook_name: str, **kwargs: Any) -> None:
        """Call every implementation; the first exception aborts as ``HookError`` naming
        its plugin."""
        with isolated_hook_call(hook_name, fatal=True):
            results = getattr(self.manager.hook, hook_name)(**kwargs) or []
        for result in results:
            await await_me_maybe(result)

    def call_sync(self, hook_name: str, **kwargs: Any) -> None:
        """Call synchronous hooks (progress) on the hot path; failures are recorded."""
        if not self.implemented(hook_name):
            return
        with isolated_hook_call(hook_name) as failures:
            results = self._pluggy(hook_name, failures, kwargs) or []
        for result in results:
            if inspect.iscoroutine(result):
                result.close()  # never awaited: say so once instead of a RuntimeWarning
                failures.failed(
                    "?",
                    TypeError(
                        f"{hook_name} is synchronous; an async implementation is not awaited"
                    ),
                )
        self._record_all(failures)

    def _pluggy(
        self,
        hook_name: str,
        failures: HookFailures,
        kwargs: dict[str, Any],
        skip: Sequence[str] = (),
    ) -> Any:
        try:
            if skip:
                plugins = [self.manager.pm.get_plugin(name) for name in skip]
                return self.manager.pm.subset_hook_caller(
                    hook_name, [p for p in plugins if p is not None]
                )(**kwargs)
            return getattr(self.manager.hook, hook_name)(**kwargs)
        except Exception as exc:  # noqa: BLE001 - only an old-style hookwrapper can get here
            failures.failed("unknown plugin (a hookwrapper)", exc)
            return None

    def _record_all(self, failures: HookFailures) -> None:
        for plugin_name, exc in failures.failures:
            message = f"{type(exc).__name__}: {exc}"
            log.warning(
                "hook %s of plugin %r failed: %s",
                failures.hook_name,
                plugin_name,
                message,
            )
            self.errors.append(
                HookErrorRecord(
                    hook=failures.hook_name, plugin=plugin_name, message=message
                )
            )
