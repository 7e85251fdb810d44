"""Await-me-maybe (plugins may implement any method sync or async), and the errors of
trio's exception groups."""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar, cast

if TYPE_CHECKING:  # pragma: no cover
    from ..model.live import MaybeAwaitable

T = TypeVar("T")


#: Classes whose instances were found not awaitable (a sync plugin's results: lists,
#: AnalysisResult...).
_PLAIN: set[type] = set()


def is_awaitable(value: Any) -> TypeGuard[Awaitable[Any]]:
    """``inspect.isawaitable(value)``, answered from a set for classes already seen not to be.

    The runner asks it of every collector's, analyzer's and scorer's result, ~14 times a
    cell. Only a generator's answer depends on the object (its code's flags); for any other
    object it depends on the class alone.
    """
    cls = value.__class__
    if cls in _PLAIN:
        return False
    if inspect.isawaitable(value):
        return True
    if cls is not types.GeneratorType:
        _PLAIN.add(cls)
    return False


async def await_me_maybe(value: MaybeAwaitable[T]) -> T:
    """Return ``value``, awaiting it first if it is awaitable (datasette's idiom)."""
    if is_awaitable(value):
        return cast(T, await value)
    return cast(T, value)


def leaves(group: BaseExceptionGroup) -> list[BaseException]:
    """The exceptions of a (nested) exception group, flattened."""
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


async def call_off_loop(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``method``: an ``async def`` is awaited; a ``def`` runs in a worker thread
    (it may block), its awaitable awaited."""
    import trio  # only callers that run trio's loop get here

    if inspect.iscoroutinefunction(method):
        return await method(*args, **kwargs)
    result = await trio.to_thread.run_sync(functools.partial(method, *args, **kwargs))
    if inspect.isawaitable(result):
        return await result
    return result
