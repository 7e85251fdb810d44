"""``Record`` gives core's frozen classes attrs' own repr, equality and hash without
generating them per class."""

from __future__ import annotations

import importlib
import os
import pickle
import pkgutil
import subprocess
import sys

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import profiler_core
from profiler_core.model import TokenBreakdown
from profiler_core.model.record import Record
from report_cases import row as report_row


def _twins(**fields: attrs.Attribute) -> tuple[type, type]:
    """The same fields twice: once with attrs' generated methods, once as a Record."""
    generated = attrs.make_class("Twin", dict(fields), frozen=True, kw_only=True)
    shared = attrs.make_class(
        "Twin",
        dict(fields),
        bases=(Record,),
        frozen=True,
        kw_only=True,
        repr=False,
        eq=False,
    )
    return generated, shared


FIELDS = {
    "name": attrs.field(),
    "count": attrs.field(default=0),
    "secret": attrs.field(default="s", repr=False),
    "note": attrs.field(default="n", eq=False),
    "label": attrs.field(default="A", eq=str.lower),
    "shown": attrs.field(default=1.5, repr=lambda v: f"<{v}>"),
    "cached": attrs.field(default=None, hash=False),
    "later": attrs.field(init=False, default=7),
}

CHOICES = {
    "name": st.text(max_size=4),
    "count": st.integers(-3, 3),
    "secret": st.sampled_from(["s", "t"]),
    "note": st.sampled_from(["n", "m"]),
    "label": st.sampled_from(["A", "a", "B"]),
    "shown": st.sampled_from([1.5, 2.0]),
    "cached": st.sampled_from([None, 1]),
}


@given(
    left=st.fixed_dictionaries(CHOICES),
    changes=st.fixed_dictionaries({}, optional=CHOICES),
)
def test_a_record_compares_shows_and_hashes_as_attrs_generated_methods_do(
    left, changes
):
    right = {**left, **changes}  # a few fields changed, so that equal pairs are common
    generated, shared = _twins(**FIELDS)
    g1, g2, s1, s2 = (
        generated(**left),
        generated(**right),
        shared(**left),
        shared(**right),
    )
    assert repr(s1) == repr(g1)
    assert (s1 == s2) == (g1 == g2)
    assert (s1 != s2) == (g1 != g2)
    if s1 == s2:
        assert hash(s1) == hash(s2)
    # Fields that do not take part in equality do not take part in the hash either.
    assert hash(shared(**{**left, "note": "other", "cached": 99})) == hash(s1)


def test_a_record_equals_only_its_own_class():
    generated, shared = _twins(name=attrs.field())
    other = attrs.make_class(
        "Other",
        {"name": attrs.field()},
        bases=(Record,),
        frozen=True,
        repr=False,
        eq=False,
    )
    assert shared(name="x") == shared(name="x")
    assert shared(name="x") != other(name="x")
    assert shared(name="x") != generated(name="x")
    assert shared(name="x").__eq__("x") is NotImplemented
    assert len({shared(name="x"), shared(name="x"), other(name="x")}) == 2


def test_a_records_hash_is_the_same_in_every_process_for_one_hash_seed():
    code = "from profiler_core.model import TokenBreakdown as T; print(hash(T(input=1, output=2)))"
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for _ in range(2)
    }
    assert len(runs) == 1, runs


def test_a_record_holding_itself_shows_as_dots_like_attrs():
    generated, shared = _twins(items=attrs.field())
    g, s = generated(items=[]), shared(items=[])
    g.items.append(g)
    s.items.append(s)
    assert repr(s) == repr(g) == "Twin(items=[...])"


def test_an_unset_field_shows_as_nothing_like_attrs():
    generated, shared = _twins(late=attrs.field(init=False))
    assert repr(shared()) == repr(generated()) == "Twin(late=NOTHING)"


def test_a_subclass_compares_its_own_fields():
    @attrs.frozen(kw_only=True, repr=False, eq=False)
    class Base(Record):
        a: int = 0

    @attrs.frozen(kw_only=True, repr=False, eq=False)
    class Child(Base):
        b: int = 0

    assert repr(Base(a=1)) == "Base(a=1)"  # the base's plan is worked out first ...
    assert (
        repr(Child(a=1, b=2)) == "Child(a=1, b=2)"
    )  # ... and not inherited by the subclass
    assert Child(a=1, b=2) != Child(a=1, b=3)
    assert Base(a=1) != Child(a=1, b=0)


def test_core_records_survive_pickle_and_evolve():
    row = report_row("m", "s", 0)
    assert pickle.loads(pickle.dumps(row)) == row
    assert attrs.evolve(row, mode="n") != row
    assert TokenBreakdown(input=1) == TokenBreakdown(input=1) != TokenBreakdown(input=2)


def _core_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(profiler_core.__path__, "profiler_core."):
        if info.name.endswith("__main__"):
            continue  # it runs the command line
        module = importlib.import_module(info.name)
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and value.__module__ == module.__name__
            and attrs.has(value)
        ]
    return found


def test_every_record_in_core_is_frozen_and_leaves_the_three_methods_to_record():
    records = [cls for cls in _core_classes() if issubclass(cls, Record)]
    assert len(records) > 100
    for cls in records:
        props = attrs.inspect(cls)
        where = f"{cls.__module__}.{cls.__qualname__}"
        # A mutable class must stay unhashable, and attrs' generated methods would make
        # the base's unused.
        assert props.is_frozen, f"{where}: a Record must be frozen"
        assert not props.added_repr and not props.added_eq, (
            f"{where}: declare it with repr=False, eq=False"
        )


def test_no_frozen_core_class_compiles_its_own_methods_unless_it_compares_by_identity():
    for cls in _core_classes():
        if cls.__module__.startswith("profiler_core.stats."):
            # stats imports nothing of the project (test_stats.py), and a run does not
            # load it
            continue
        props = attrs.inspect(cls)
        if props.is_frozen and props.added_eq:
            pytest.fail(
                f"{cls.__module__}.{cls.__qualname__}: derive from Record (model/record.py)"
            )
