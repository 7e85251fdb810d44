"""``Record``: one shared ``__repr__``, ``__eq__`` and ``__hash__`` for core's frozen attrs classes.

attrs writes these three methods as Python source for every class and compiles
it when the class is defined: about 0.2 ms per class, and a run defines some
150 of them before its first session (docs/architecture.md, "Records"). A
frozen class declared ``@attrs.frozen(..., repr=False, eq=False)`` that derives
from :class:`Record` behaves as if attrs had written them: the same repr, the
same field-by-field equality (fields with ``eq=False`` left out, ``eq=key``
honoured) and a hash over the same fields, computed from ``__attrs_attrs__``.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable
from typing import Any

import attrs

__all__ = ["Record"]


class _Plan:
    """What one class compares, hashes and shows: worked out once, from its attrs fields."""

    __slots__ = ("eq", "hash", "repr", "salt")

    def __init__(self, cls: type) -> None:
        fields = attrs.fields(cls)
        #: the class in the hash by its name, as attrs does: the same in every process
        #: for one PYTHONHASHSEED
        self.salt = hash(f"{cls.__module__}.{cls.__qualname__}")
        #: (name, formatter or None for ``repr``, read with a default: the field is not
        #: set by ``__init__``)
        self.repr = tuple(
            (a.name, None if a.repr is True else a.repr, not a.init)
            for a in fields
            if a.repr is not False
        )
        compared = [a for a in fields if a.eq]
        hashed = [
            a for a in fields if a.hash is True or (a.hash is None and a.eq is True)
        ]
        if any(_key(a) for a in compared + hashed):
            self.eq = _keyed_getter(compared)
            self.hash = _keyed_getter(hashed)
        else:
            self.eq = _getter([a.name for a in compared])
            self.hash = _getter([a.name for a in hashed])


def _key(field: attrs.Attribute) -> Callable[[Any], Any] | None:
    # ``eq=callable`` on a field: attrs keeps the callable as ``eq_key`` (not in its type stubs).
    return getattr(field, "eq_key", None)


def _getter(names: list[str]) -> Callable[[Any], tuple]:
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    return operator.attrgetter(*names)


def _keyed_getter(fields: list[attrs.Attribute]) -> Callable[[Any], tuple]:
    plan = [(a.name, _key(a)) for a in fields]
    return lambda obj: tuple(
        key(getattr(obj, name)) if key else getattr(obj, name) for name, key in plan
    )


#: The objects being shown on this thread: a record that holds itself shows as ``...``
#: (attrs does the same).
_showing = threading.local()


def _plan(cls: type) -> _Plan:
    # Kept on the class itself (its own __dict__: a subclass has fields of its own).
    plan = cls.__dict__.get("_record_plan")
    if plan is None:
        plan = _Plan(cls)
        type.__setattr__(cls, "_record_plan", plan)
    return plan


class Record:
    """Base of a frozen attrs class whose repr, equality and hash are shared rather than generated.

    Declare ``@attrs.frozen(kw_only=True, repr=False, eq=False)`` and derive from
    ``Record``; the methods then behave as attrs' own (``tests/test_model_record.py``
    compares them with attrs' generated ones), with one difference, that of
    Python's tuples: a field holding the *same* object in both records is equal
    to itself, even a NaN. ``!=`` is Python's default, the inverse of ``==``.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        showing = getattr(_showing, "ids", None)
        if showing is None:
            showing = _showing.ids = set()
        if id(self) in showing:
            return "..."
        showing.add(id(self))
        try:
            parts = []
            for name, formatter, optional in _plan(self.__class__).repr:
                value = (
                    getattr(self, name, attrs.NOTHING)
                    if optional
                    else getattr(self, name)
                )
                parts.append(
                    f"{name}={value!r}"
                    if formatter is None
                    else f"{name}={formatter(value)}"
                )
            return (
                f"{self.__class__.__qualname__.rsplit('>.', 1)[-1]}({', '.join(parts)})"
            )
        finally:
            showing.discard(id(self))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        values = _plan(self.__class__).eq
        return values(self) == values(other)

    def __hash__(self) -> int:
        plan = _plan(self.__class__)
        return hash((plan.salt, *plan.hash(self)))
