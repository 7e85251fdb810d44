"""The ``Executor`` protocol and the (model, mode) groups it serves."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol

import attrs
import trio

from ...model import ModeConfig, Scenario
from ...model.record import Record
from ..adapter import ProviderAdapter
from ..outcome import IterationOutcome
from ..state import RunState

#: (model, mode, scenario, iteration)
Cell = tuple[str, str, Scenario, int]


@attrs.define(eq=False)
class ModeGroup:
    """The cells of one (model, mode), and the provider instance that serves them."""

    model: str
    mode: str
    config: ModeConfig
    #: cells of the group not finished yet
    remaining: int = 0
    #: the initialised provider (local executors); None on a Ray driver
    instance: ProviderAdapter | None = None
    #: new -> open -> closed; "failed" when opening it raised
    status: Literal["new", "open", "failed", "closed"] = "new"
    lock: trio.Lock = attrs.Factory(trio.Lock)


@attrs.frozen(repr=False, eq=False)
class Stage(Record):
    """Cells that may run at once; stages run one after another."""

    cells: tuple[Cell, ...]
    #: the group whose process environment applies while the stage runs (sequential executor)
    group: ModeGroup | None = None


class Executor(Protocol):
    """Runs the attempts of a run's cells; the run decides which, when, and records them.

    ``start`` before the first cell and ``close`` after the last (also on failure);
    ``open_group``/``close_group`` bracket the cells of one (model, mode);
    ``attempt`` submits one attempt of a cell and returns its result. Cancelling an
    attempt (trio's cancel scope: Ctrl-C, a timeout) cancels it where it runs.
    """

    #: a readable name for logs and the manifest ("sequential", "overlapped", "ray")
    name: str

    async def start(self) -> None:
        """Prepare to run cells (start a cluster, ...)."""
        ...

    def stages(
        self, schedule: list[Cell], groups: dict[tuple[str, str], ModeGroup]
    ) -> list[Stage]:
        """The schedule cut into stages (sequential: one per group; otherwise one)."""
        ...

    def environment(self, stage: Stage) -> AbstractContextManager[Any]:
        """What applies to this process while a stage runs (a mode's environment, or nothing)."""
        ...

    async def open_group(self, group: ModeGroup) -> None:
        """Make the group's provider ready (initialise it, warm it up)."""
        ...

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
        """One attempt of one cell of ``group``: ``(outcome, error)``."""
        ...

    async def close_group(self, group: ModeGroup) -> None:
        """The group is done (or the run ends): release its provider."""
        ...

    async def close(self) -> None:
        """Release everything still held; called once, shielded."""
        ...


__all__ = ["Cell", "Executor", "ModeGroup", "Stage"]
