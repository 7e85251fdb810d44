"""The one decoder of result rows: msgspec structs generated from the model's attrs classes.

Every reader of results JSONL (``profiler report``, ``--resume``,
``store.read_jsonl``, ``serde.from_json(..., ProfileRow)``) decodes a line
here. The schema is not written twice: each attrs class of a row
(``ProfileRow`` and the classes it nests) becomes a ``msgspec.Struct`` with the
same camelCase keys, defaults and constraints, read from the attrs fields and
their validators. msgspec checks a line while it parses it, in C (~7 µs for a
2.5 KB row, against ~24 µs for ``orjson.loads`` alone and ~70 µs for orjson +
cattrs, bench/bench_decoders.py), with the model's strictness: ``true`` is not
``1``, a count is >= 0 and at most 2^53, ids are non-empty, unknown keys are
refused. ``tests/test_rowcodec.py`` checks it accepts exactly what the cattrs
converter accepts. The tables made of rows (the dataset export, the viewer's
index, the report's columns) read the row's flat columns declared in
``rowcolumns``, and a reader of a few fields decodes a projection of these
structs (``rowcolumns.projection``), never a schema of its own.
"""

from __future__ import annotations

import functools
import json
import math
import re
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal

import attrs
import msgspec

from ..errors import ValidationError
from ..model import ProfileRow
from ..model import _validators as v
from ..util.hints import type_hints
from ..util.textcut import shown
from .converter import camel

#: The constraint msgspec checks for each validator the row classes use.
_CONSTRAINTS: dict[Callable[..., None], msgspec.Meta] = {
    v.non_empty: msgspec.Meta(min_length=1),
    v.non_negative: msgspec.Meta(ge=0),
    v.count: msgspec.Meta(ge=0, le=v.MAX_COUNT),
    v.positive: msgspec.Meta(gt=0),
    v.amount: msgspec.Meta(ge=0, le=v.MAX_COUNT),
    v.iteration_number: msgspec.Meta(ge=-1, le=v.MAX_COUNT),
    v.unit_interval: msgspec.Meta(ge=0, le=1),
}

#: Converters a row field may have: none, or one the struct's own type already gives (a tuple).
_CONVERTERS: tuple[Any, ...] = (None, v.as_tuple)

#: Validators of a mapping's values: the constraint goes on the value type.
_VALUE_CONSTRAINTS: dict[Callable[..., None], msgspec.Meta] = {
    v.counts: msgspec.Meta(ge=0, le=v.MAX_COUNT),
}


def _constrained(hint: Any, meta: msgspec.Meta | None) -> Any:
    """``hint`` with ``meta`` on its str/int/float parts (``int | float | None`` -> each member)."""
    if meta is None or hint is type(None):
        return hint
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return functools.reduce(
            lambda a, b: a | b,
            (_constrained(arg, meta) for arg in typing.get_args(hint)),
        )
    if hint in (str, int, float):
        return Annotated[hint, meta]
    # A check silently dropped would let through rows the model refuses.
    raise TypeError(
        f"rowcodec: a constraint on {hint!r} is not supported (only on str, int and float)"
    )


def _struct_type(hint: Any) -> Any:
    """The msgspec type of a field's type hint (nested attrs classes become their structs)."""
    if attrs.has(hint):
        return struct_for(hint)
    origin = typing.get_origin(hint)
    if origin is tuple:
        item, ellipsis = typing.get_args(hint)
        if ellipsis is not Ellipsis:
            raise TypeError(f"rowcodec: fixed-length tuple {hint!r} is not supported")
        return tuple[_struct_type(item), ...]  # type: ignore[misc]
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(
            lambda a, b: a | b, (_struct_type(arg) for arg in typing.get_args(hint))
        )
    if origin is dict:
        key, value = typing.get_args(hint)
        return dict[key, _struct_type(value)]  # type: ignore[misc,valid-type]
    if hint in (str, int, float, bool, type(None)) or hint is Any or origin is Literal:
        return hint
    raise TypeError(f"rowcodec: field type {hint!r} has no msgspec equivalent")


@functools.cache
def struct_for(cls: type) -> type[msgspec.Struct]:
    """The msgspec struct mirroring the attrs class ``cls`` (camelCase keys, defaults,
    validators)."""
    hints = type_hints(cls)
    fields: list[tuple[str, Any, Any]] = []
    for a in attrs.fields(cls):
        where = f"rowcodec: {cls.__name__}.{a.name}"
        validator = a.validator
        meta = (
            None
            if validator is None
            else _CONSTRAINTS.get(validator) or _VALUE_CONSTRAINTS.get(validator)
        )
        if validator is not None and meta is None:
            raise TypeError(
                f"{where}: validator {validator!r} has no msgspec constraint"
            )
        if (
            a.converter not in _CONVERTERS
        ):  # the struct would keep what the model converts
            raise TypeError(f"{where}: converter {a.converter!r} is not supported")
        if isinstance(a.default, attrs.Factory) and a.default.takes_self:  # type: ignore[arg-type]
            raise TypeError(
                f"{where}: a default factory that takes self is not supported"
            )
        kind = _struct_type(hints[a.name])
        if validator in _VALUE_CONSTRAINTS:
            if typing.get_origin(kind) is not dict:
                raise TypeError(f"{where}: validator {validator!r} needs a mapping")
            key, value = typing.get_args(kind)
            kind = dict[key, _constrained(value, meta)]  # type: ignore[misc,valid-type]
        else:
            kind = _constrained(kind, meta)
        if a.default is attrs.NOTHING:
            fields.append((a.name, kind, msgspec.NODEFAULT))
        elif isinstance(a.default, attrs.Factory):  # type: ignore[arg-type]
            fields.append(
                (a.name, kind, msgspec.field(default_factory=a.default.factory))
            )
        else:
            fields.append((a.name, kind, a.default))
    return msgspec.defstruct(
        cls.__name__,
        fields,
        kw_only=True,
        forbid_unknown_fields=True,
        # rows hold no cycles; untracked structs spare the collector a pass per few
        # hundred rows
        gc=False,
        rename={a.name: camel(a.name) for a in attrs.fields(cls)},
        module=__name__,
    )


def _tuple_of(build: Callable[[Any], Any], items: Any) -> tuple[Any, ...]:
    return tuple(map(build, items))


@functools.cache
def _builder(cls: type) -> Callable[[Any], Any]:
    """A function struct -> attrs object of ``cls`` (nested structs and tuples of them too)."""
    hints = type_hints(cls)
    steps: list[tuple[str, str, Callable[[Any], Any] | None]] = []
    for a in attrs.fields(cls):
        hint = hints[a.name]
        nested = [arg for arg in (hint, *typing.get_args(hint)) if attrs.has(arg)]
        if attrs.has(hint):
            step: Callable[[Any], Any] | None = _builder(hint)
        elif typing.get_origin(hint) is tuple and nested:
            step = functools.partial(_tuple_of, _builder(nested[0]))
        elif nested:
            raise TypeError(
                f"rowcodec: {cls.__name__}.{a.name}: {hint!r} is not supported"
            )
        else:
            step = None
        steps.append(
            (a.alias or a.name, a.name, step)
        )  # a private ``_x`` is passed to __init__ as ``x``

    def build(struct: Any) -> Any:
        return cls(
            **{
                arg: getattr(struct, name)
                if step is None
                else step(getattr(struct, name))
                for arg, name, step in steps
            }
        )

    return build


#: The struct of one results line, and its decoder.
RowStruct: type[msgspec.Struct] = struct_for(ProfileRow)
_decoder = msgspec.json.Decoder(RowStruct)

_SURROGATE = "a string holds a lone surrogate (\\ud800-\\udfff), not text"

_MSGSPEC_MESSAGE = re.compile(
    r"^(?P<what>.*?)(?: - at `(?P<path>\$[^`]*)`)?$", re.DOTALL
)


#: What decoding a line that is not a row raises (msgspec's errors; nesting beyond the
#: recursion limit;
#: bytes that are not UTF-8, or a str holding a lone surrogate).
DECODE_ERRORS: tuple[type[BaseException], ...] = (
    msgspec.MsgspecError,
    RecursionError,
    UnicodeError,
)

#: ``decode_struct(line)`` -> ``RowStruct``, raising ``DECODE_ERRORS``: for loops that
#: explain only some failures.
decode_struct: Callable[[bytes | str], Any] = _decoder.decode


def decode(line: bytes | str, source: str | None = None) -> Any:
    """One results line -> its ``RowStruct``; a bad line raises ``ValidationError``
    (``source: $.path: why``)."""
    try:
        return _decoder.decode(line)
    except DECODE_ERRORS as exc:
        raise ValidationError(explain(line, exc, source)) from None


def to_model(struct: Any) -> ProfileRow:
    """A decoded ``RowStruct`` -> ``ProfileRow`` (the attrs validators run again; they agree)."""
    return _builder(ProfileRow)(struct)


def decode_row(line: bytes | str, source: str | None = None) -> ProfileRow:
    """One results line -> ``ProfileRow``; a bad line raises ``ValidationError`` naming
    the key path."""
    return to_model(decode(line, source))


def explain(line: bytes | str, exc: BaseException, source: str | None = None) -> str:
    """Why ``line`` was refused, in one line: ``source: $.tokens.input: expected a value
    >= 0, got -1``.

    msgspec stops at the first problem and checks while it parses, so a torn
    line may fail on a key before its syntax does. The syntax is judged first
    (the stdlib names line and column; a byte order mark and a key written
    twice in one object are named too, as msgspec refuses the first and may
    refuse the first copy of the second), then the model's converter words
    every problem of the row at once, as for any other file the profiler
    reads; only what the stdlib takes and msgspec does not (lone surrogates,
    numbers beyond a float) is left to msgspec's message.
    """
    from .converter import json_error, structure

    prefix = f"{source}: " if source else ""
    if isinstance(exc, RecursionError):
        return prefix + "not valid JSON (nested too deeply)"
    if isinstance(exc, UnicodeEncodeError):  # a str line holding a raw lone surrogate
        return prefix + _SURROGATE
    if line[:3] == b"\xef\xbb\xbf" or line[:1] == "\ufeff":  # the stdlib would skip it
        return prefix + "not valid JSON (starts with a byte order mark)"
    duplicates: list[str] = []
    try:
        document = json.loads(
            line,
            parse_constant=_refuse_constant,
            object_pairs_hook=_no_repeats(duplicates),
        )
    except json.JSONDecodeError as syntax:
        return f"{prefix}not valid JSON ({json_error(syntax)})"
    except (ValueError, UnicodeError, RecursionError) as syntax:
        return f"{prefix}not valid JSON ({syntax})"
    if (
        duplicates
    ):  # JSON readers disagree on which copy counts: such a row is refused, not guessed
        return f"{prefix}an object has the key {shown(duplicates[0], 80)} twice"
    try:
        structure(document, ProfileRow, source=source)
    except ValidationError as refused:
        return str(refused)
    except RecursionError:
        return prefix + "not valid JSON (nested too deeply)"
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeError:
        return prefix + _SURROGATE
    return prefix + _msgspec_words(str(exc), document)


def _msgspec_words(message: str, document: Any) -> str:
    """``$.path: expected int >= 0, got -1`` from msgspec's ``Expected `int` >= 0 - at
    `$.path```."""
    match = _MSGSPEC_MESSAGE.match(message)
    what, path = (match["what"], match["path"] or "$") if match else (message, "$")
    what = what.replace("`", "")
    if what[1:2].islower():  # "Expected ..." -> "expected ...", but "JSON is ..." stays
        what = what[:1].lower() + what[1:]
    if (
        what == "number out of range"
    ):  # msgspec names no key inside a mapping ($.extensions[...])
        return (
            f"{_infinite_at(document, '$') or path}: number out of range (beyond "
            "what a float holds)"
        )
    if ", got " not in what:
        found, value = _lookup(document, path)
        if found:
            what += f", got {shown(value, 80)}"
    return f"{path}: {what}"


def _no_repeats(found: list[str]) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """An ``object_pairs_hook`` that notes the keys an object holds twice."""

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        document = dict(pairs)
        if len(document) < len(pairs) and not found:
            seen: set[str] = set()
            found.extend(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        return document

    return hook


def _infinite_at(node: Any, path: str) -> str | None:
    """The path of the first number the stdlib read as infinite (it was beyond a float), if any."""
    if isinstance(node, float) and math.isinf(node):
        return path
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, item in items:
        step = (
            f"[{key}]"
            if isinstance(key, int)
            else f".{key}"
            if key.isidentifier()
            else f"[{shown(key, 80)}]"
        )
        found = _infinite_at(item, path + step)
        if found:
            return found
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _lookup(document: Any, path: str) -> tuple[bool, Any]:
    """The value at a msgspec path (``$.tokens.input``, ``$.checkpointDetails[0].id``)
    of a parsed line, if any."""
    node = document
    for key, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path.removeprefix("$")):
        try:
            node = node[key] if key else node[int(index)]
        except (KeyError, IndexError, TypeError):
            return False, None
    return True, node
