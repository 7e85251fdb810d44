"""Executors that run cells in this process, on provider instances this process starts."""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import trio

from ...errors import ProfilerError
from ...model import ModeConfig, Scenario
from ..adapter import ProviderAdapter
from ..environment import mode_environment
from ..iteration import attempt_cell
from ..outcome import PLUGIN_ERRORS, IterationOutcome
from ..state import RunState
from ..wiring import provider_config
from .base import Cell, ModeGroup, Stage

log = logging.getLogger("agent_profiler")

#: called after a provider instance is initialised: (model, mode, instance) -> warm-up
Warmup = Callable[[str, str, ProviderAdapter], Awaitable[None]]


class LocalExecutor:
    """What both local executors share: initialising, warming up and shutting down
    provider instances."""

    name = "local"

    def __init__(
        self,
        provider: ProviderAdapter,
        *,
        modes: Mapping[str, ModeConfig],
        provider_options: Mapping[str, Any],
        provider_port: int,
        state: RunState,
        warmup: Warmup,
        factory: Callable[[], Any] | None = None,
        sandbox: Any = None,
    ) -> None:
        self.provider = provider
        self.sandbox = sandbox
        self.modes = modes
        self.provider_options = dict(provider_options)
        self.provider_port = provider_port
        self.state = state
        self.warmup = warmup
        self.factory = factory
        #: every instance initialised and not yet shut down
        self.live: list[ProviderAdapter] = []

    async def start(self) -> None:
        """Nothing to start: instances are made as groups open."""

    def stages(
        self, schedule: list[Cell], groups: dict[tuple[str, str], ModeGroup]
    ) -> list[Stage]:
        """One stage: every cell may run at once (within the concurrency limit)."""
        return [Stage(cells=tuple(schedule))]

    def environment(self, stage: Stage) -> AbstractContextManager[Any]:
        """Nothing: each instance gets its mode's environment through ``init``."""
        return contextlib.nullcontext()

    async def attempt(
        self,
        state: RunState,
        *,
        group: ModeGroup,
        model: str,
        mode: str,
        mode_config: ModeConfig,
        scenario: Scenario,
        iteration: int,
        attempt: int,
    ) -> tuple[IterationOutcome, str | None]:
        """One attempt, here, on the group's instance."""
        assert group.instance is not None  # open_group ran first
        return await attempt_cell(
            state,
            model=model,
            mode=mode,
            mode_config=mode_config,
            scenario=scenario,
            iteration=iteration,
            attempt=attempt,
            provider=group.instance,
        )

    async def init_instance(
        self, instance: ProviderAdapter, model: str, mode: str, *, with_overrides: bool
    ) -> None:
        """``init`` an instance for (model, mode), then warm it up; a failed init is one
        ProfilerError line."""
        config = provider_config(
            model=model,
            mode=mode,
            mode_config=self.modes[mode],
            provider_options=self.provider_options,
            port=self.provider_port,
            workspaces=self.state.workspaces,
            sandbox=self.sandbox,
            with_overrides=with_overrides,
        )
        self.live.append(
            instance
        )  # before init: an instance whose init fails is still shut down
        try:
            await instance.init(config)
        except ProfilerError:
            raise
        except Exception as exc:
            raise ProfilerError(
                f"provider {instance.id!r}: init failed (model {model!r}, mode "
                f"{mode!r}): {type(exc).__name__}: {exc}"
            ) from exc
        await self.warmup(model, mode, instance)

    async def shutdown_instance(self, instance: ProviderAdapter) -> None:
        """``shutdown``, shielded and bounded; a failure is a manifest warning, never a lost run."""
        if instance not in self.live:
            return
        self.live.remove(instance)
        with trio.move_on_after(
            instance.cleanup_limit("shutdown", self.state.destroy_timeout_s)
        ) as scope:
            scope.shield = True
            try:
                await instance.shutdown()
            except PLUGIN_ERRORS as exc:  # shutdown failure must not lose the run
                self.state.warnings.append(f"provider shutdown failed: {exc}")

    async def close(self) -> None:
        """Shut down every instance still running (an interrupted or failed run)."""
        for instance in list(self.live):
            await self.shutdown_instance(instance)


class OverlappedExecutor(LocalExecutor):
    """A provider instance per (model, mode): cells of several modes run at once."""

    name = "overlapped"

    def __init__(
        self, provider: ProviderAdapter, *, factory: Callable[[], Any], **kwargs: Any
    ) -> None:
        super().__init__(provider, factory=factory, **kwargs)
        self._spare: list[ProviderAdapter] = [
            provider
        ]  # the instance built to validate the profile serves the first group

    async def open_group(self, group: ModeGroup) -> None:
        """A fresh instance for the group, initialised with the mode's overrides and environment."""
        assert self.factory is not None
        group.instance = (
            self._spare.pop() if self._spare else ProviderAdapter.of(self.factory())
        )
        await self.init_instance(
            group.instance, group.model, group.mode, with_overrides=True
        )

    async def close_group(self, group: ModeGroup) -> None:
        """Shut the group's instance down."""
        if group.instance is not None:
            await self.shutdown_instance(group.instance)


class SequentialExecutor(LocalExecutor):
    """One provider instance at a time; modes one after another, each with its
    environment applied here.

    With ``init_scope: "suite"`` a model's instance is initialised once (with the
    first mode's environment) and serves all its modes; with ``"mode"`` every
    mode gets its own ``init``/``shutdown``.
    """

    name = "sequential"

    def __init__(
        self,
        provider: ProviderAdapter,
        *,
        scope: str,
        mode_order: Sequence[str],
        **kwargs: Any,
    ) -> None:
        super().__init__(provider, **kwargs)
        self.scope = scope
        self.mode_order = list(mode_order)
        self._model: str | None = (
            None  # the model the shared instance is initialised for (suite scope)
        )

    def stages(
        self, schedule: list[Cell], groups: dict[tuple[str, str], ModeGroup]
    ) -> list[Stage]:
        """A stage per run of consecutive cells of one (model, mode): one per mode in
        matrix order, or,
        round by round (a stop rule), one per mode and round."""
        stages: list[Stage] = []
        for key, cells in itertools.groupby(schedule, key=lambda c: (c[0], c[1])):
            stages.append(Stage(cells=tuple(cells), group=groups[key]))
        return stages

    def environment(self, stage: Stage) -> AbstractContextManager[Any]:
        """The stage's mode environment, on this process (the provider may read it)."""
        return (
            mode_environment(stage.group.config.environment)
            if stage.group is not None
            else contextlib.nullcontext()
        )

    async def open_group(self, group: ModeGroup) -> None:
        """Initialise the instance for this mode (mode scope) or this model (suite scope, once)."""
        group.instance = self.provider
        if self.scope == "mode":
            await self.init_instance(
                self.provider, group.model, group.mode, with_overrides=True
            )
            return
        if self._model == group.model:
            return
        await self.shutdown_instance(self.provider)  # the previous model's
        self._model = group.model
        first = self.mode_order[0]
        with mode_environment(self.modes[first].environment):
            await self.init_instance(
                self.provider,
                group.model,
                first,
                with_overrides=len(self.mode_order) == 1,
            )

    async def close_group(self, group: ModeGroup) -> None:
        """Mode scope: shut the instance down (suite scope keeps it for the model's next mode)."""
        if self.scope == "mode":
            await self.shutdown_instance(self.provider)


__all__ = ["LocalExecutor", "OverlappedExecutor", "SequentialExecutor"]
