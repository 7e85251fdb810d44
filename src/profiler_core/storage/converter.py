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
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, TypeVar

import attrs
import cattrs
import orjson
from cattrs import gen as cattrs_gen
from cattrs.cols import homogenous_tuple_structure_factory
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    IterableValidationError,
)
from cattrs.fns import identity
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.preconf.json import make_converter

from ..errors import ValidationError
from ..model import (
    FINDING_TAGS,
    TRACE_EVENT_TAGS,
    AnalysisFinding,
    ScenarioSets,
    TraceEvent,
)
from ..util import codecache
from ..util.hints import type_hints
from ..util.numbers import is_int, is_number
from ..util.textcut import shown

T = TypeVar("T")

# cattrs' generated functions compiled once per machine, like attrs' (util/codecache.py);
# only in a process whose command line turned the cache on
codecache.cover(cattrs_gen)

#: Fields omitted from JSON when they hold this value (besides ``None`` defaults).
_OMIT_WHEN_DEFAULT = {
    "attempts",
    "setup",
    "verify",
    "verifications",
    "model_calls",
    "exclude",
    "mounts",
    "passed_by",
}


def camel(name: str) -> str:
    """``snake_case`` -> ``camelCase`` (JSON keys)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _refuse(name: str, value: Any) -> TypeError:
    return TypeError(f"expected {name}, got {type(value).__name__} {value!r}"[:300])


# Scalar hooks refuse silent coercions ("5" -> 5, 1.5 -> 1, true -> 1). Each is a
# plain function with an exact-type fast path: they run once per field of every
# row the report reads, so a lambda wrapped in a closure would double their cost.


def _structure_str(value: Any, _type: Any) -> str:
    if value.__class__ is str or isinstance(value, str):
        return value
    raise _refuse("str", value)


def _structure_bool(value: Any, _type: Any) -> bool:
    if value is True or value is False:
        return value
    raise _refuse("bool", value)


def _structure_int(value: Any, _type: Any) -> int:
    if value.__class__ is int or is_int(value):
        return value
    raise _refuse("int", value)


def _structure_float(value: Any, _type: Any) -> float:
    if value.__class__ is float or is_number(value):
        return float(value)
    raise _refuse("float", value)


def _structure_number(value: Any, _type: Any) -> int | float:
    # `int | float` keeps the JSON's own kind so 23638 stays 23638 after a round trip.
    cls = value.__class__
    if cls is int or cls is float or is_number(value):
        return value
    raise _refuse("float", value)


def _structure_optional_number(value: Any, _type: Any) -> int | float | None:
    cls = value.__class__
    if cls is int or cls is float or value is None or is_number(value):
        return value
    raise _refuse("float", value)


def _structure_scalar(value: Any, _type: Any) -> int | float | str:
    if value.__class__ is str or isinstance(value, str) or is_number(value):
        return value
    raise _refuse("str", value)


def _structure_json_scalar(value: Any, _type: Any) -> str | int | float | bool:
    if value.__class__ in (str, int, float, bool):
        return value
    raise TypeError(
        f"expected a string, number or boolean, got {json_kind(value)} {_short(value)}"
    )


def _structure_json_object(value: Any, _type: Any) -> dict[str, Any]:
    """``dict[str, Any]`` (extensions, options): free-form JSON, checked only for string keys.

    The generic dict hook walks every key and value through a hook; extensions
    carry dozens of keys per row, which made them half the cost of a row.
    """
    if value.__class__ is not dict and not isinstance(value, dict):
        raise TypeError(f"expected an object, got {json_kind(value)} {shown(value)}")
    for key in value:
        if key.__class__ is not str:
            raise TypeError(f"expected an object with string keys, got key {key!r}")
    return dict(value)


@attrs.frozen(
    eq=False
)  # hashed by identity: it sits in Annotated types, which cattrs hashes
class Expect:
    """A constraint on a field, written ``Annotated[int, Expect("an integer >= 1",
    lambda v: v >= 1)]``.

    The value is structured as the annotated type, then ``check`` must hold;
    any failure becomes one message, ``expected <description>, got <value>``,
    in the words a profile's author reads (not Python's type names).
    ``aliases`` maps a string or null to what it stands for (a callable is
    called): ``{None: dict}`` reads ``options:`` with nothing after it as ``{}``.
    """

    description: str
    check: Callable[[Any], bool] | None = None
    aliases: dict[str | None, Any] = attrs.field(factory=dict)


def _expect_factory(type_: Any, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    base, *extras = typing.get_args(type_)
    expect = next(m for m in extras if isinstance(m, Expect))
    structure_base = conv.get_structure_hook(base)
    check, aliases = expect.check, expect.aliases

    def hook(value: Any, _type: Any) -> Any:
        if aliases and (value is None or value.__class__ is str) and value in aliases:
            alias = aliases[value]
            return alias() if callable(alias) else alias
        try:
            result = structure_base(value, base)
            ok = check is None or check(result)
        except (ClassValidationError, IterableValidationError):
            raise  # a problem inside an item or a nested section: keep its own, more precise path
        except Exception:  # noqa: BLE001 - any failure of the inner type is this field's failure
            ok = False
        if not ok:
            raise ValueError(f"expected {expect.description}, got {_short(value)}")
        return result

    return hook


def _is_type(wanted: Any) -> Callable[[Any], bool]:
    """A predicate for ``register_structure_hook_func``: the type is exactly ``wanted``."""

    def check(type_: Any) -> bool:
        return bool(type_ == wanted)

    return check


def _is_expect(type_: Any) -> bool:
    return typing.get_origin(type_) is Annotated and any(
        isinstance(m, Expect) for m in type_.__metadata__
    )


def _short(value: Any) -> str:
    return shown(value, 80)


def _make(*, detailed: bool) -> cattrs.Converter:
    conv = make_converter(forbid_extra_keys=True, detailed_validation=detailed)
    conv.register_structure_hook(str, _structure_str)
    conv.register_structure_hook(bool, _structure_bool)
    conv.register_structure_hook(int, _structure_int)
    conv.register_structure_hook(float, _structure_float)
    # Unions by predicate: the JSON preset's union passthrough would win over a class hook
    # (and it takes `true` for a number, bool being an int).
    unions: tuple[tuple[Any, Callable[[Any, Any], Any]], ...] = (
        (int | float, _structure_number),
        (int | float | None, _structure_optional_number),
        (int | float | str, _structure_scalar),
    )
    for union, hook in unions:
        conv.register_structure_hook_func(_is_type(union), hook)
    conv.register_structure_hook_func(
        lambda t: t == str | int | float | bool, _structure_json_scalar
    )
    conv.register_structure_hook(Any, lambda v, _t: v)
    conv.register_structure_hook_func(
        lambda t: t == dict[str, Any], _structure_json_object
    )
    conv.register_structure_hook_factory(_is_expect, _expect_factory)

    generating: set[type] = set()

    def unstructure_factory(cls):
        # cattrs looks up a nested class's hook past its cache (`cache_result=False`), which
        # generated TokenBreakdown's function anew inside the trace, its summary and the row.
        # Through the cached lookup each class's function is generated once per cache, as a
        # top-level lookup is (and again after a registration clears the cache).
        if cls not in generating:
            generating.add(cls)
            try:
                return conv.get_unstructure_hook(cls)
            finally:
                generating.discard(cls)
        overrides: dict[str, Any] = {}
        hints = _field_types(cls)
        for a in attrs.fields(cls):
            # A field may also ask for it itself (metadata): a new field then leaves old
            # records' JSON (and hashes) unchanged.
            omit = (
                a.default is None
                or a.name in _OMIT_WHEN_DEFAULT
                or bool(a.metadata.get("omit_if_default"))
            )
            # `Any` fields hold plain JSON (tool inputs, extensions): pass them through as they
            # are instead of walking them value by value - the trace export's hot path.
            # Unions of JSON scalars (`str | None`) pass through too: cattrs would
            # dispatch on each value.
            # cattrs' own `identity` lets its generated code copy the attribute inline,
            # with no call.
            hint = hints.get(a.name)
            hook = identity if hint is Any or _is_scalar_union(hint) else None
            overrides[a.name] = override(
                rename=camel(a.name), omit_if_default=omit, unstruct_hook=hook
            )
        return make_dict_unstructure_fn(cls, conv, **overrides)

    def structure_factory(cls):
        overrides: dict[str, Any] = {
            a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)
        }
        make = make_dict_structure_fn(cls, conv, **overrides)
        if not detailed:
            # A value that is not an object fails in `make` too (it reads keys), and every failure
            # of the fast converter is structured again by the detailed one for its message.
            return make

        def hook(value, _type):
            if not isinstance(value, dict):
                raise TypeError(
                    f"expected an object, got {json_kind(value)} {shown(value)}"
                )
            return make(value, _type)

        return hook

    def sequence_factory(type_):
        # cattrs would turn the string "abc" into ("a", "b", "c"); a list is required.
        items = homogenous_tuple_structure_factory(type_, conv)

        def hook(value, _type):
            if not isinstance(value, (list, tuple)):
                raise TypeError(
                    f"expected a list, got {json_kind(value)} {shown(value)}"
                )
            return items(value, _type)

        return hook

    conv.register_structure_hook_factory(
        lambda t: (
            typing.get_origin(t) is tuple
            and len(typing.get_args(t)) == 2
            and typing.get_args(t)[1] is Ellipsis
        ),
        sequence_factory,
    )
    # A read-only Sequence[X] field (ProfileSuiteResult.rows) is read as tuple[X, ...].
    conv.register_structure_hook_factory(
        lambda t: typing.get_origin(t) is collections.abc.Sequence,
        lambda t: sequence_factory(tuple[typing.get_args(t)[0], ...]),  # type: ignore[misc]
    )
    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    conv.register_structure_hook_factory(attrs.has, structure_factory)
    conv.register_unstructure_hook_factory(
        _is_homogeneous_tuple, lambda t: _items_unstructure(conv, t)
    )

    # scenario-sets.json is a plain mapping of set name -> ids.
    conv.register_unstructure_hook(
        ScenarioSets, lambda s: {k: list(v) for k, v in s.sets.items()}
    )
    conv.register_structure_hook(
        ScenarioSets,
        lambda d, _t: ScenarioSets(sets=conv.structure(d, dict[str, tuple[str, ...]])),
    )

    _tag_union(conv, TraceEvent, TRACE_EVENT_TAGS, "trace event type")
    _tag_union(conv, AnalysisFinding, FINDING_TAGS, "finding type")
    return conv


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _is_homogeneous_tuple(type_: Any) -> bool:
    args = typing.get_args(type_)
    return typing.get_origin(type_) is tuple and len(args) == 2 and args[1] is Ellipsis


def _items_unstructure(conv: cattrs.Converter, type_: Any) -> Callable[[Any], Any]:
    """``tuple[X, ...]`` -> a list, each item by X's hook: what cattrs does, with a list
    comprehension.

    cattrs builds the list from a generator expression, one resumed frame per item; the
    row's tool-call records, a trace's turns and the analyzers' table rows go through here.
    """
    hook = conv.get_unstructure_hook(typing.get_args(type_)[0])
    if hook is identity:
        return list

    def unstructure_items(items: Any) -> list[Any]:
        return [hook(item) for item in items]

    return unstructure_items


def _is_scalar_union(hint: Any) -> bool:
    """Whether ``hint`` is a union of JSON scalars only (``str | None``, ``int | float``)."""
    args = (
        typing.get_args(hint)
        if typing.get_origin(hint) in (typing.Union, types.UnionType)
        else ()
    )
    return bool(args) and all(arg in _SCALARS for arg in args)


def _field_types(cls: type) -> Mapping[str, Any]:
    try:
        return type_hints(cls)
    except Exception:  # noqa: BLE001 - unresolvable hints: no fast path, cattrs still works
        return {}


def _tag_union(
    conv: cattrs.Converter, union: Any, tags: dict[type, str], noun: str
) -> None:
    # Unstructure members by a direct class lookup (cattrs' generic union path is ~3x slower).
    # A member's function is generated when one is first written: a run writes a few of the
    # trace's event types and of a union's members (a check uses one condition type of nine).
    member_hooks: dict[type, Callable[[Any], Any]] = {}

    def member_hook(cls: type) -> Callable[[Any], Any]:
        if cls not in tags:
            raise KeyError(cls)
        hook = member_hooks[cls] = conv.get_unstructure_hook(cls)
        return hook

    def unstructure_member(obj):
        cls = obj.__class__
        try:
            hook = member_hooks[cls]
        except KeyError:
            hook = member_hook(cls)
        data = hook(obj)
        data["type"] = tags[cls]
        return data

    conv.register_unstructure_hook(union, unstructure_member)

    def unstructure_members(items):
        # A trace's events: one loop instead of a hook call per event (the trace export's hot path).
        out = []
        for obj in items:
            cls = obj.__class__
            try:
                hook = member_hooks[cls]
            except KeyError:
                hook = member_hook(cls)
            data = hook(obj)
            data["type"] = tags[cls]
            out.append(data)
        return out

    members = tuple[union, ...]
    conv.register_unstructure_hook_func(lambda t: t == members, unstructure_members)
    # Structured as cattrs' configure_tagged_union does (the tag popped from a copy, then the
    # member's own hook), but each member's function is generated when one is first read: a
    # run writes trace events and findings and never reads them back. cattrs reports an unknown
    # or missing tag as "required field missing"; the tag is checked first so that the error
    # names the valid types (and nests as `$.events[0].type: ...`).
    by_tag = {tag: cls for cls, tag in tags.items()}
    member_structure: dict[str, Any] = {}
    valid = ", ".join(sorted(tags.values()))

    def hook(data, type_):
        if not isinstance(data, dict):
            raise ValueError(
                f'expected a {noun.removesuffix(" type")} object with a "type", '
                f"got {json_kind(data)} {data!r}"
            )
        tag = data.get("type")
        if tag not in by_tag:
            got = "nothing" if tag is None else f"unknown {tag!r}"
            raise ValueError(f"type: expected a {noun} ({valid}), got {got}")
        cls = by_tag[tag]
        structure_member = member_structure.get(tag)
        if structure_member is None:
            structure_member = member_structure[tag] = conv.get_structure_hook(cls)
        fields = dict(data)
        del fields["type"]
        return structure_member(fields, cls)

    conv.register_structure_hook(union, hook)


def register_tagged_union(
    union: Any, tags: dict[type, str], noun: str = "type"
) -> None:
    """Make ``union`` (of attrs classes) JSON-tagged by a ``"type"`` key with the names in ``tags``.

    ``noun`` names the tag in errors: ``$.condition.type: expected a condition type
    (...), got unknown 'x'``.
    """
    _register(lambda conv: _tag_union(conv, union, tags, noun))


def register_plain_keys(
    cls: type, structure_as: Callable[[Any, Callable[[Any], Any]], Any] | None = None
) -> None:
    """Structure the attrs class ``cls`` with its field names as keys (profile YAML is snake_case).

    :param structure_as: optional ``(value, structure_mapping) -> object`` for values that are
        not a mapping, e.g. a component given by its id alone (``scorer: checks``).
    """

    def plain_keys(conv: cattrs.Converter) -> None:
        make: Callable[[Any, Any], Any] = make_dict_structure_fn(cls, conv)

        def hook(value, _type):
            if structure_as is not None:
                return structure_as(value, lambda mapping: make(mapping, cls))
            if not isinstance(value, dict):
                raise TypeError(
                    f"expected a mapping, got {json_kind(value)} {_short(value)}"
                )
            return make(value, cls)

        conv.register_structure_hook(cls, hook)

    _register(plain_keys)


#: What register_tagged_union and register_plain_keys did, in order: the detailed converter
#: is built only when a structuring fails (most processes never need it), and replays them.
_REGISTRATIONS: list[Callable[[cattrs.Converter], None]] = []
_DETAILED: list[cattrs.Converter] = []


def _register(registration: Callable[[cattrs.Converter], None]) -> None:
    _REGISTRATIONS.append(registration)
    for conv in (converter, *_DETAILED):
        registration(conv)


def _detailed() -> cattrs.Converter:
    """The detailed twin of ``converter`` (every problem with its path), built on first use."""
    if not _DETAILED:
        conv = _make(detailed=True)
        for registration in _REGISTRATIONS:
            registration(conv)
        _DETAILED.append(conv)
    return _DETAILED[0]


def iter_errors(
    exc: BaseException, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], BaseException]]:
    """Every leaf problem of a detailed structuring failure, with its key path (field
    names, list indices)."""
    if isinstance(exc, (ClassValidationError, IterableValidationError)):
        with_notes, without = exc.group_exceptions()
        for inner, note in with_notes:
            key: str | int = (
                note.name if isinstance(note, AttributeValidationNote) else note.index
            )
            yield from iter_errors(inner, (*path, key))
        for inner in without:
            yield from iter_errors(inner, path)
    else:
        yield path, exc


def structure_detailed(data: Any, cls: Any) -> Any:
    """Structure ``data`` collecting every problem: raises cattrs' detailed error (see
    ``iter_errors``)."""
    try:
        return converter.structure(data, cls)
    except Exception:  # noqa: BLE001 - re-run below for the details
        pass
    return _detailed().structure(data, cls)


def json_kind(value: Any) -> str:
    """The JSON name of a value's kind, for error messages: null, boolean, number,
    string, list, object."""
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

_SNAKE_SEGMENT = re.compile(r"\.([a-z0-9]+(?:_[a-z0-9]+)+)")
_KEYED_MESSAGE = re.compile(r"^(\w+): (expected .*)$")


def _key_name(key: str) -> str:
    """A key of the input as a message shows it: as it is when plain, else quoted,
    escaped and cut."""
    return (
        key
        if key.isprintable() and len(key) <= 80 and "," not in key
        else shown(key, 80)
    )


def _format_exception(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, cattrs.ForbiddenExtraKeysError):
        return (
            f"unknown field(s): {', '.join(map(_key_name, sorted(exc.extra_fields)))}"
        )
    if isinstance(exc, (TypeError, ValueError)) and "expected" in str(exc):
        return str(exc)
    if typing.get_origin(type_) is typing.Literal:
        return f"expected one of {', '.join(map(repr, typing.get_args(type_)))}"
    name = getattr(type_, "__name__", None) or str(type_)
    message = str(exc) or type(exc).__name__
    return f"expected {name} ({message})"


def describe_error(exc: BaseException, source: str | None = None) -> str:
    """Turn a structuring failure into lines like ``file: $.iteration: expected int``."""
    if isinstance(exc, (cattrs.BaseValidationError,)):
        lines = cattrs.transform_error(
            exc, path="$", format_exception=_format_exception
        )
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
        result = _detailed().structure(data, cls)
    except Exception as exc:  # noqa: BLE001 - cattrs and validators raise many kinds
        raise ValidationError(describe_error(exc, source)) from None
    return result


def to_json(obj: Any, *, indent: int | None = None) -> str:
    """camelCase JSON of any model object (compact, UTF-8; NaN becomes null)."""
    return dumps(converter.unstructure(obj), indent=indent)


def dumps(data: Any, *, indent: int | None = None) -> str:
    """Plain data -> JSON text: orjson (~10x faster on traces), the stdlib for what it refuses."""
    option = orjson.OPT_INDENT_2 if indent else 0
    try:
        # Without OPT_NON_STR_KEYS first: it writes string keys the same, but takes orjson off its
        # fast path (a 16 KB trace: ~2.5x the time). Keys of other types are rare
        # (free-form extensions).
        return orjson.dumps(data, option=option).decode()
    except TypeError:
        option |= orjson.OPT_NON_STR_KEYS
    try:
        return orjson.dumps(data, option=option).decode()
    # e.g. integers beyond 64 bits in free-form extensions, or lone surrogates
    except TypeError as exc:
        if "surrogates" in str(exc):
            from ..util.textclean import clean_value

            # Half an emoji from a provider: U+FFFD, as readers of files do, instead of
            # a write that fails.
            return dumps(clean_value(data)[0], indent=indent)
        return json.dumps(
            data, indent=indent, ensure_ascii=False, allow_nan=False, default=str
        )


def json_error(exc: json.JSONDecodeError) -> str:
    """``Unterminated string at line 3 column 12``: json's message without its dangling
    "starting at" / "at"."""
    return f"{json_message(exc)} at line {exc.lineno} column {exc.colno}"


def json_message(exc: json.JSONDecodeError) -> str:
    """json's message without the dangling words its position would follow (``Invalid
    control character at``)."""
    return exc.msg.removesuffix(" starting at").removesuffix(" at")


def parse_json(text: str | bytes, *, source: str | None = None) -> Any:
    """JSON text -> plain data (orjson); bad JSON raises ``ValidationError`` with the
    line and column."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        first_error = exc
    # the stdlib's message names line and column; it also reads what orjson refuses
    # (NaN, lone surrogates)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        prefix = f"{source}: " if source else ""
        raise ValidationError(f"{prefix}not valid JSON ({json_error(exc)})") from None
    except (TypeError, ValueError, RecursionError):  # e.g. bytes that are not UTF-8
        prefix = f"{source}: " if source else ""
        raise ValidationError(f"{prefix}not valid JSON ({first_error})") from None
    from ..util.textclean import clean_value, warn_replaced

    value, replaced = clean_value(value)
    if replaced:
        warn_replaced(source or "JSON input", replaced)
    return value
