"""The live objects a record may carry but never serialises: a trial's running ``Environment``.

Typing only, no attrs: ``plugins.contracts`` re-exports these, and a record below the
plugins (``CreateSessionParams.environment``) names them without importing upwards.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias, TypeVar, Union, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from .environment import ExecResult

T = TypeVar("T")
#: A value, or an awaitable of it: what a ``def`` or an ``async def`` method returns.
MaybeAwaitable: TypeAlias = Union[T, Awaitable[T]]  # noqa: UP007 - a generic alias needs Union


@runtime_checkable
class Environment(Protocol):
    """One trial's running environment: commands run in it, files go in and out, then it stops.

    Remote paths are absolute paths inside the environment. ``exec`` never
    raises for the command's own failure: the exit status, a timeout and a
    program that cannot start are in its :class:`profiler_core.model.ExecResult`.
    """

    def exec(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: str | None = None,
        timeout_s: float | None = None,
        on_output: Callable[[bytes], None] | None = None,
    ) -> MaybeAwaitable[ExecResult]:
        """Run ``argv`` inside (in ``cwd``, as ``user``, with ``env`` on top of the
        environment's) until it ends or ``timeout_s``; ``on_output`` gets its output
        while it runs (an agent's program is run this way in a kind without a
        ``command_line``).

        Optional: a keyword ``cancel`` (a ``threading.Event``); once it is set the
        command and what it started end, as at the timeout (docs/environments.md)."""
        ...

    def put(self, local: Path, remote: str) -> MaybeAwaitable[None]:
        """Copy a host file or folder to ``remote`` (a folder there is replaced, not
        merged into)."""
        ...

    def get(self, remote: str, local: Path) -> MaybeAwaitable[None]:
        """Copy ``remote`` (a file or folder) to the host path ``local``; links are
        copied as links, never followed."""
        ...

    def stop(self) -> MaybeAwaitable[None]:
        """End everything the trial started and remove it; called once, always, also
        after a failure."""
        ...
