"""The one cattrs converter: model objects <-> camelCase JSON.

Every attrs class (ours and plugins') gets camelCase keys through hook
factories, so nothing hand-writes dict conversions. Unions of trace events and
analysis findings are tagged by their ``"type"`` field. Fields whose default is
``None`` are left out of the JSON when they are ``None`` so that rows of the
TypeScript original round-trip unchanged.
"""

from __future__ import annotations

import collections.abc
import json
import re
import typing
from typing import Any, TypeVar

import attrs
import cattrs
import orjson
from cattrs.cols import homogenous_tuple_structure_factory
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.json import make_converter
from cattrs.strategies import configure_tagged_union

from .errors import ValidationError
from .model import FINDING_TAGS, TRACE_EVENT_TAGS, AnalysisFinding, ScenarioSets, TraceEvent

T = TypeVar("T")

#: Fields omitted from JSON when they hold this value (besides ``None`` defaults).
_OMIT_WHEN_DEFAULT = {"attempts"}


def camel(name: str) -> str:
    """``snake_case`` -> ``camelCase`` (JSON keys)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _strict(kind: type, accept):
    """A structure hook that refuses silent coercions ("5" -> 5, 1.5 -> 1)."""
    name = kind.__name__

    def hook(value, _type):
        if not accept(value):
            raise TypeError(f"expected {name}, got {type(value).__name__} {value!r}")
        return value

    return hook


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _make(*, detailed: bool) -> cattrs.Converter:
    conv = make_converter(forbid_extra_keys=True, detailed_validation=detailed)
    conv.register_structure_hook(str, _strict(str, lambda v: isinstance(v, str)))
    conv.register_structure_hook(bool, _strict(bool, lambda v: isinstance(v, bool)))
    conv.register_structure_hook(int, _strict(int, _is_int))
    conv.register_structure_hook(float, lambda v, _t: float(_strict(float, _is_number)(v, _t)))
    # `int | float` keeps the JSON's own kind so 23638 stays 23638 after a round trip.
    conv.register_structure_hook(int | float, _strict(float, _is_number))
    conv.register_structure_hook(int | float | None, lambda v, _t: None if v is None else _strict(float, _is_number)(v, _t))
    conv.register_structure_hook(
        int | float | str, _strict(str, lambda v: _is_number(v) or isinstance(v, str))
    )
    conv.register_structure_hook(Any, lambda v, _t: v)

    def unstructure_factory(cls):
        overrides: dict[str, Any] = {}
        hints = _field_types(cls)
        for a in attrs.fields(cls):
            omit = a.default is None or a.name in _OMIT_WHEN_DEFAULT
            # `Any` fields hold plain JSON (tool inputs, extensions): pass them through as they
            # are instead of walking them value by value - the trace export's hot path.
            hook = _identity if hints.get(a.name) is Any else None
            overrides[a.name] = override(rename=camel(a.name), omit_if_default=omit, unstruct_hook=hook)
        return make_dict_unstructure_fn(cls, conv, **overrides)

    def structure_factory(cls):
        overrides: dict[str, Any] = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
        make = make_dict_structure_fn(cls, conv, **overrides)

        def hook(value, _type):
            if not isinstance(value, dict):
                raise TypeError(f"expected an object, got {json_kind(value)} {value!r}"[:200])
            return make(value, _type)

        return hook

    def sequence_factory(type_):
        # cattrs would turn the string "abc" into ("a", "b", "c"); a list is required.
        items = homogenous_tuple_structure_factory(type_, conv)

        def hook(value, _type):
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"expected a list, got {json_kind(value)} {value!r}"[:200])
            return items(value, _type)

        return hook

    conv.register_structure_hook_factory(
        lambda t: typing.get_origin(t) is tuple and len(typing.get_args(t)) == 2 and typing.get_args(t)[1] is Ellipsis,
        sequence_factory,
    )
    # A read-only Sequence[X] field (ProfileSuiteResult.rows) is read as tuple[X, ...].
    conv.register_structure_hook_factory(
        lambda t: typing.get_origin(t) is collections.abc.Sequence,
        lambda t: sequence_factory(tuple[typing.get_args(t)[0], ...]),  # type: ignore[misc]
    )
    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    conv.register_structure_hook_factory(attrs.has, structure_factory)

    # scenario-sets.json is a plain mapping of set name -> ids.
    conv.register_unstructure_hook(ScenarioSets, lambda s: {k: list(v) for k, v in s.sets.items()})
    conv.register_structure_hook(
        ScenarioSets, lambda d, _t: ScenarioSets(sets=conv.structure(d, dict[str, tuple[str, ...]]))
    )

    _tag_union(conv, TraceEvent, TRACE_EVENT_TAGS, "trace event type")
    _tag_union(conv, AnalysisFinding, FINDING_TAGS, "finding type")
    return conv


def _identity(value: Any) -> Any:
    return value


def _field_types(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - unresolvable hints: no fast path, cattrs still works
        return {}


def _tag_union(conv: cattrs.Converter, union: Any, tags: dict[type, str], noun: str) -> None:
    configure_tagged_union(union, conv, tag_generator=lambda cls: tags[cls], tag_name="type")
    # Unstructure members by a direct class lookup (cattrs' generic union path is ~3x slower).
    member_hooks = {cls: conv.get_unstructure_hook(cls) for cls in tags}

    def unstructure_member(obj):
        data = member_hooks[obj.__class__](obj)
        data["type"] = tags[obj.__class__]
        return data

    conv.register_unstructure_hook(union, unstructure_member)
    # cattrs reports an unknown or missing tag as "required field missing"; check the
    # tag first so the error names the valid types (and nests as `$.events[0].type: ...`).
    union_hook = conv.get_structure_hook(union)
    valid = ", ".join(sorted(tags.values()))

    def hook(data, type_):
        if not isinstance(data, dict):
            raise ValueError(f"expected a {noun.removesuffix(' type')} object with a \"type\", got {json_kind(data)} {data!r}")
        tag = data.get("type")
        if tag not in tags.values():
            got = "nothing" if tag is None else f"unknown {tag!r}"
            raise ValueError(f"type: expected a {noun} ({valid}), got {got}")
        return union_hook(data, type_)

    conv.register_structure_hook(union, hook)


def register_tagged_union(union: Any, tags: dict[type, str], noun: str = "type") -> None:
    """Make ``union`` (of attrs classes) JSON-tagged by a ``"type"`` key with the names in ``tags``.

    ``noun`` names the tag in errors: ``$.condition.type: expected a condition type (...), got unknown 'x'``.
    """
    for conv in (converter, _detailed_converter):
        _tag_union(conv, union, tags, noun)


def json_kind(value: Any) -> str:
    """The JSON name of a value's kind, for error messages: null, boolean, number, string, list, object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


#: The converter. Structuring is fast (no per-field bookkeeping); only when it
#: fails is the input structured again by the detailed twin, for the error's path.
converter: cattrs.Converter = _make(detailed=False)
_detailed_converter: cattrs.Converter = _make(detailed=True)

_SNAKE_SEGMENT = re.compile(r"\.([a-z0-9]+(?:_[a-z0-9]+)+)")
_KEYED_MESSAGE = re.compile(r"^(\w+): (expected .*)$")


def _format_exception(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        return f"unknown field(s): {', '.join(sorted(exc.extra_fields))}"
    if isinstance(exc, (TypeError, ValueError)) and "expected" in str(exc):
        return str(exc)
    name = getattr(type_, "__name__", None) or str(type_)
    message = str(exc) or type(exc).__name__
    return f"expected {name} ({message})"


def describe_error(exc: BaseException, source: str | None = None) -> str:
    """Turn a structuring failure into lines like ``file: $.iteration: expected int``."""
    if isinstance(exc, (cattrs.BaseValidationError,)):
        lines = cattrs.transform_error(exc, path="$", format_exception=_format_exception)
    else:
        lines = [f"{_format_exception(exc, None)} @ $"]
    out = []
    for line in lines:
        message, _, path = line.rpartition(" @ ")
        path = _SNAKE_SEGMENT.sub(lambda m: "." + camel(m.group(1)), path)
        # Validators name their own key ("cacheRead: expected ..."); fold it into the path.
        keyed = _KEYED_MESSAGE.match(message)
        if keyed:
            path, message = f"{path}.{keyed.group(1)}", keyed.group(2)
        out.append(f"{path}: {message}")
    prefix = f"{source}: " if source else ""
    return prefix + "; ".join(out)


def unstructure(obj: Any) -> Any:
    """Model object -> plain JSON-able data (camelCase keys)."""
    return converter.unstructure(obj)


def structure(data: Any, cls: type[T], *, source: str | None = None) -> T:
    """Plain JSON data -> model object; a wrong field raises ``ValidationError`` naming its path."""
    try:
        return converter.structure(data, cls)
    except Exception:  # noqa: BLE001 - any failure is re-diagnosed below
        pass
    try:
        result = _detailed_converter.structure(data, cls)
    except Exception as exc:  # noqa: BLE001 - cattrs and validators raise many kinds
        raise ValidationError(describe_error(exc, source)) from None
    return result


def to_json(obj: Any, *, indent: int | None = None) -> str:
    """camelCase JSON of any model object (compact, UTF-8; NaN becomes null)."""
    return dumps(converter.unstructure(obj), indent=indent)


def dumps(data: Any, *, indent: int | None = None) -> str:
    """Plain data -> JSON text: orjson (~10x faster on traces), the stdlib for what it refuses."""
    option = orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return orjson.dumps(data, option=option).decode()
    except TypeError:  # e.g. integers beyond 64 bits in free-form extensions
        return json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False, default=str)


def from_json(text: str | bytes, cls: type[T], *, source: str | None = None) -> T:
    """Parse JSON into ``cls``; bad JSON or a wrong field raises ``ValidationError``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        prefix = f"{source}: " if source else ""
        raise ValidationError(f"{prefix}not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    return structure(data, cls, source=source)
