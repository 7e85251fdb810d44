"""Checkpoint conditions: small, JSON-described assertions on a value.

A condition addresses part of a value with a dot path (``items.0.state``,
``items.length``; an empty path is the whole value) and tests it. Conditions
are a tagged union parsed from JSON by their ``"type"``::

    {"type": "count_gte", "path": "items", "value": 2}
    {"type": "field_equals", "path": "items.0.state", "value": "open"}
    {"type": "matches", "pattern": "^Done:"}
    {"type": "custom", "scorer": "my-scorer", "path": "items", "options": {}}

A ``custom`` condition hands the value to a registered scorer: the caller
supplies a ``custom`` callback that knows how to find and call it (the
checkpoint scorer does, with the run's registry); without one it fails with a
clear error instead of silently passing.

They are shared by the ``checks`` scorer and by domain plugins (the GitHub
evaluation's checkpoint scorer), so their meaning is defined once, here.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, Union

import attrs

from ..errors import ProfilerError
from ..model.record import Record
from ..storage.serde import json_kind, register_tagged_union, structure
from ..util.numbers import is_int, is_number

__all__ = [
    "CONDITION_TAGS",
    "Condition",
    "ConditionOutcome",
    "CountEq",
    "CountGte",
    "Custom",
    "CustomCheck",
    "Empty",
    "FieldContains",
    "FieldEquals",
    "FieldGte",
    "Matches",
    "NonEmpty",
    "PathError",
    "describe_condition",
    "evaluate_condition",
    "evaluate_condition_async",
    "parse_condition",
    "resolve_path",
]


class PathError(ProfilerError):
    """A dot path does not lead anywhere in the value (names the failing segment)."""


def _count_value(instance, attribute: attrs.Attribute, value) -> None:
    if not is_int(value) or value < 0:
        raise ValueError(f"{attribute.name}: expected an integer >= 0, got {value!r}")


def _number_value(instance, attribute: attrs.Attribute, value) -> None:
    if not is_number(value):
        raise ValueError(f"{attribute.name}: expected a number, got {value!r}")


def _regex(instance, attribute: attrs.Attribute, value) -> None:
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(
            f"{attribute.name}: expected a valid regular expression ({exc})"
        ) from None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class NonEmpty(Record):
    """Passes when the value exists and is not empty (``""``, ``[]``, ``{}``, null)."""

    path: str = ""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Empty(Record):
    """Passes when the value is null or an empty string, list or object."""

    path: str = ""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CountGte(Record):
    """Passes when the list (or object) at ``path`` has at least ``value`` items."""

    path: str = ""
    value: int = attrs.field(validator=_count_value)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class CountEq(Record):
    """Passes when the list (or object) at ``path`` has exactly ``value`` items."""

    path: str = ""
    value: int = attrs.field(validator=_count_value)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class FieldEquals(Record):
    """Passes when the value at ``path`` equals ``value`` (``true`` is not ``1``)."""

    path: str = ""
    value: Any


@attrs.frozen(kw_only=True, repr=False, eq=False)
class FieldContains(Record):
    """Passes when the string at ``path`` contains ``value``, or the list at ``path`` holds it."""

    path: str = ""
    value: Any


@attrs.frozen(kw_only=True, repr=False, eq=False)
class FieldGte(Record):
    """Passes when the number at ``path`` is >= ``value``."""

    path: str = ""
    value: int | float = attrs.field(validator=_number_value)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Matches(Record):
    """Passes when the regular expression ``pattern`` is found in the value at ``path``.

    Strings are searched as they are; numbers and booleans as their JSON text;
    lists and objects as their compact JSON (so a pattern can look anywhere in
    a trace).
    """

    path: str = ""
    pattern: str = attrs.field(validator=_regex)
    ignore_case: bool = False


def _scorer_id(instance, attribute: attrs.Attribute, value) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(
            f"{attribute.name}: expected the id of a registered scorer, got {value!r}"
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Custom(Record):
    """Passes when the registered scorer ``scorer`` (built with ``options``) succeeds on
    the value at ``path``."""

    path: str = ""
    scorer: str = attrs.field(validator=_scorer_id)
    options: dict[str, Any] = attrs.field(factory=dict)


Condition = Union[  # noqa: UP007 - a runtime union for the tagged-union hooks
    NonEmpty,
    Empty,
    CountGte,
    CountEq,
    FieldEquals,
    FieldContains,
    FieldGte,
    Matches,
    Custom,
]

#: Runs a ``custom`` condition: ``(condition, value at its path) -> outcome or passed``
#: (may be async).
CustomCheck = Callable[
    [Custom, Any], "ConditionOutcome | bool | Awaitable[ConditionOutcome | bool]"
]

#: JSON ``type`` tag of each condition class.
CONDITION_TAGS: dict[type, str] = {
    NonEmpty: "non_empty",
    Empty: "empty",
    CountGte: "count_gte",
    CountEq: "count_eq",
    FieldEquals: "field_equals",
    FieldContains: "field_contains",
    FieldGte: "field_gte",
    Matches: "matches",
    Custom: "custom",
}

_VALID_TYPES = ", ".join(sorted(CONDITION_TAGS.values()))


register_tagged_union(Condition, CONDITION_TAGS, "condition type")


def parse_condition(data: Any, *, source: str | None = None) -> Condition:
    """JSON data -> a condition; an unknown type or a wrong field raises ``ValidationError``."""
    return structure(data, Condition, source=source)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------


def resolve_path(value: Any, path: str | None) -> Any:
    """Follow a dot path (``items.0.state``, ``items.length``) into ``value``.

    Object keys are looked up as written; list segments are indexes (negative
    counts from the end) or ``length``; ``length`` also gives the size of a
    string or of an object without a ``length`` key. A segment that leads
    nowhere raises ``PathError`` saying which one and why.
    """
    if not path:
        return value
    current = value
    walked: list[str] = []
    for segment in path.split("."):
        here = ".".join(walked) or "the top level"

        def fail(reason: str) -> PathError:
            # used in this iteration only
            return PathError(f"path {path!r}: segment {segment!r} {reason}")  # noqa: B023

        if isinstance(current, dict):
            if segment in current:
                current = current[segment]
            elif segment == "length":
                current = len(current)
            else:
                keys = ", ".join(sorted(map(str, current))[:12]) or "none"
                raise fail(
                    f"not found: the object at {here} has no key {segment!r} (keys: {keys})"
                )
        elif isinstance(current, (list, tuple)):
            if segment == "length":
                current = len(current)
            else:
                try:
                    index = int(segment)
                except ValueError:
                    raise fail(
                        f"is not an index: the value at {here} is a list (use a number or 'length')"
                    ) from None
                if not -len(current) <= index < len(current):
                    raise fail(
                        f"is out of range: the list at {here} has {len(current)} item(s)"
                    )
                current = current[index]
        elif isinstance(current, str) and segment == "length":
            current = len(current)
        else:
            raise fail(
                f"cannot be applied: the value at {here} is a "
                f"{json_kind(current)}, not an object or list"
            )
        walked.append(segment)
    return current


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ConditionOutcome(Record):
    """The result of one condition: passed, what was found, what was expected, why it
    could not be checked."""

    passed: bool
    actual: Any = None
    expected: Any = None
    error: str | None = None


def describe_condition(cond: Condition, subject: str = "value") -> str:
    """A short human description of what the condition expects (``count of items >= 2``).

    ``subject`` names the whole value when the path is empty (``output matches /^Done/``).
    """
    where = cond.path or subject
    if isinstance(cond, NonEmpty):
        return f"{where} is non-empty"
    if isinstance(cond, Empty):
        return f"{where} is empty"
    if isinstance(cond, CountGte):
        return f"count of {where} >= {cond.value}"
    if isinstance(cond, CountEq):
        return f"count of {where} == {cond.value}"
    if isinstance(cond, FieldEquals):
        return f"{where} == {json.dumps(cond.value)}"
    if isinstance(cond, FieldContains):
        return f"{where} contains {json.dumps(cond.value)}"
    if isinstance(cond, FieldGte):
        return f"{where} >= {cond.value}"
    if isinstance(cond, Matches):
        flags = "i" if cond.ignore_case else ""
        return f"{where} matches /{cond.pattern}/{flags}"
    if isinstance(cond, Custom):
        return f"scorer {cond.scorer!r} passes on {where}"
    raise TypeError(f"not a condition: {cond!r}")


def _same(a: Any, b: Any) -> bool:
    # JSON equality: booleans are not numbers (True != 1), but 1 == 1.0.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b  # both booleans (bool has no subclasses)
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return _same_items(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and _same_items(
            [a[k] for k in a], [b[k] for k in a]
        )
    return type(a) is type(b) and a == b


def _same_items(a: list[Any] | tuple[Any, ...], b: list[Any] | tuple[Any, ...]) -> bool:
    if len(a) != len(b):
        return False
    return all(_same(x, y) for x, y in zip(a, b))


def _is_empty(value: Any) -> bool:
    return value is None or (
        isinstance(value, (str, list, tuple, dict)) and len(value) == 0
    )


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def evaluate_condition(
    cond: Condition,
    value: Any,
    *,
    subject: str = "value",
    custom: CustomCheck | None = None,
) -> ConditionOutcome:
    """Test ``cond`` against ``value``; never raises for bad data (the outcome carries the error).

    ``subject`` names the value in the outcome's ``expected`` text; ``custom``
    runs ``custom`` conditions (it must answer synchronously here: use
    ``evaluate_condition_async`` for a callback that awaits).
    """
    expected = describe_condition(cond, subject)
    try:
        actual = resolve_path(value, cond.path)
    except PathError as exc:
        return ConditionOutcome(
            passed=False, actual=None, expected=expected, error=str(exc)
        )
    if isinstance(cond, Custom):
        return _custom_now(cond, actual, expected, custom)
    check = _CHECKS.get(type(cond)) or _check_for_subclass(cond)
    return check(cond, actual, expected, subject)


def _wrong_kind(
    cond: Condition, actual: Any, expected: str, subject: str, wanted: str
) -> ConditionOutcome:
    """The value at the path is not the kind of value the condition tests: an error, not
    a failure."""
    where = cond.path or f"the {subject}"
    error = f"expected {wanted} at {where}, got {json_kind(actual)}"
    return ConditionOutcome(passed=False, actual=actual, expected=expected, error=error)


def _check_non_empty(
    cond: NonEmpty, actual: Any, expected: str, subject: str
) -> ConditionOutcome:
    return ConditionOutcome(
        passed=not _is_empty(actual), actual=actual, expected=expected
    )


def _check_empty(
    cond: Empty, actual: Any, expected: str, subject: str
) -> ConditionOutcome:
    return ConditionOutcome(passed=_is_empty(actual), actual=actual, expected=expected)


def _check_count(
    cond: CountGte | CountEq, actual: Any, expected: str, subject: str
) -> ConditionOutcome:
    if not isinstance(actual, (list, tuple, dict)):
        return _wrong_kind(cond, actual, expected, subject, "a list")
    count = len(actual)
    passed = count >= cond.value if isinstance(cond, CountGte) else count == cond.value
    return ConditionOutcome(passed=passed, actual=count, expected=expected)


def _check_equals(
    cond: FieldEquals, actual: Any, expected: str, subject: str
) -> ConditionOutcome:
    return ConditionOutcome(
        passed=_same(actual, cond.value), actual=actual, expected=expected
    )


def _check_contains(
    cond: FieldContains, actual: Any, expected: str, subject: str
) -> ConditionOutcome:
    if isinstance(actual, str):
        if not isinstance(cond.value, str):
            wanted = f"a list (a string can only contain a string, not {json_kind(cond.value)})"
            return _wrong_kind(cond, actual, expected, subject, wanted)
        return ConditionOutcome(
            passed=cond.value in actual, actual=actual, expected=expected
        )
    if isinstance(actual, (list, tuple)):
        return ConditionOutcome(
            passed=any(_same(x, cond.value) for x in actual),
            actual=actual,
            expected=expected,
        )
    return _wrong_kind(cond, actual, expected, subject, "a string or a list")


def _check_gte(
    cond: FieldGte, actual: Any, expected: str, subject: str
) -> ConditionOutcome:
    if not is_number(actual):
        return _wrong_kind(cond, actual, expected, subject, "a number")
    return ConditionOutcome(
        passed=actual >= cond.value, actual=actual, expected=expected
    )


def _check_matches(
    cond: Matches, actual: Any, expected: str, subject: str
) -> ConditionOutcome:
    if actual is None:
        return _wrong_kind(cond, actual, expected, subject, "a string")
    flags = re.IGNORECASE if cond.ignore_case else 0
    found = re.search(cond.pattern, _as_text(actual), flags) is not None
    return ConditionOutcome(passed=found, actual=actual, expected=expected)


_Check = Callable[[Any, Any, str, str], ConditionOutcome]

#: The check of each condition class but ``Custom``: ``(condition, value at its path,
#: expected text, subject)``.
_CHECKS: dict[type, _Check] = {
    NonEmpty: _check_non_empty,
    Empty: _check_empty,
    CountGte: _check_count,
    CountEq: _check_count,
    FieldEquals: _check_equals,
    FieldContains: _check_contains,
    FieldGte: _check_gte,
    Matches: _check_matches,
}


def _check_for_subclass(cond: Any) -> _Check:
    for kind, check in _CHECKS.items():
        if isinstance(cond, kind):
            return check
    raise TypeError(f"not a condition: {cond!r}")


def _custom_now(
    cond: Custom, actual: Any, expected: str, custom: CustomCheck | None
) -> ConditionOutcome:
    """A custom condition whose check must answer synchronously (an async one is this
    condition's error)."""
    verdict = _call_custom(cond, actual, expected, custom)
    if inspect.isawaitable(verdict):
        if inspect.iscoroutine(verdict):
            verdict.close()  # never awaited: close it so Python does not warn about it
        return ConditionOutcome(
            passed=False,
            actual=actual,
            expected=expected,
            error=f"custom condition (scorer {cond.scorer!r}) needs "
            "evaluate_condition_async: its check is async",
        )
    return _custom_outcome(cond, verdict, actual, expected)


async def evaluate_condition_async(
    cond: Condition,
    value: Any,
    *,
    subject: str = "value",
    custom: CustomCheck | None = None,
) -> ConditionOutcome:
    """``evaluate_condition`` for callers whose ``custom`` check may be async (a
    scorer's ``evaluate``)."""
    if not isinstance(cond, Custom):
        return evaluate_condition(cond, value, subject=subject)
    expected = describe_condition(cond, subject)
    try:
        actual = resolve_path(value, cond.path)
    except PathError as exc:
        return ConditionOutcome(
            passed=False, actual=None, expected=expected, error=str(exc)
        )
    verdict = _call_custom(cond, actual, expected, custom)
    if inspect.isawaitable(verdict):
        try:
            verdict = await verdict
        # a plugin's scorer failing is that checkpoint's error
        except Exception as exc:  # noqa: BLE001
            verdict = _raised(cond, actual, expected, exc)
    return _custom_outcome(cond, verdict, actual, expected)


def _call_custom(
    cond: Custom, actual: Any, expected: str, custom: CustomCheck | None
) -> Any:
    if custom is None:
        return ConditionOutcome(
            passed=False,
            actual=actual,
            expected=expected,
            error=f"custom condition (scorer {cond.scorer!r}): no scorer registry "
            "here to call it with "
            "(custom conditions run inside the checkpoint scorer)",
        )
    try:
        return custom(cond, actual)
    except Exception as exc:  # noqa: BLE001 - a plugin's scorer failing is that condition's error
        return _raised(cond, actual, expected, exc)


def _raised(
    cond: Custom, actual: Any, expected: str, exc: Exception
) -> ConditionOutcome:
    return ConditionOutcome(
        passed=False,
        actual=actual,
        expected=expected,
        error=f"scorer {cond.scorer!r} raised {type(exc).__name__}: {exc}",
    )


def _custom_outcome(
    cond: Custom, verdict: Any, actual: Any, expected: str
) -> ConditionOutcome:
    if isinstance(verdict, ConditionOutcome):
        return verdict
    if isinstance(verdict, bool):
        return ConditionOutcome(passed=verdict, actual=actual, expected=expected)
    return ConditionOutcome(
        passed=False,
        actual=actual,
        expected=expected,
        error=f"custom condition (scorer {cond.scorer!r}): its check returned "
        f"{type(verdict).__name__}, expected a bool or ConditionOutcome",
    )
