"""The flat columns of a results row, declared once, and the projections read from them.

A row (``ProfileRow``) nests: ``tokens.input``, ``cost.total_usd``. The tables
made from rows (the dataset export's ``rows`` table, the viewer's index, the
report's numeric columns) see it flat: ``tokens_input``, ``cost_total_usd``.
``ROW_COLUMNS`` says once which column is which attribute path; each column's
type is read from the model's type hints, never written here. A reader that
needs only some fields decodes a line with :func:`projection`: a msgspec
struct holding just those paths, with the types, constraints and defaults of
the one row decoder (``rowcodec``), so it refuses what the report refuses and
skips the rest of the line without building it.
"""

from __future__ import annotations

import functools
import operator
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, Literal

import attrs
import msgspec

from ..model import ProfileRow
from ..model.record import Record
from ..util.hints import type_hints
from .rowcodec import RowStruct

#: A column's type: what the dataset export writes it as ("json": a mapping, as JSON text).
Kind = Literal["str", "int", "float", "bool", "json"]


@attrs.frozen(repr=False, eq=False)
class Column(Record):
    """One flat column of a row: its name, the attribute path it reads and its type."""

    name: str
    #: dotted attribute path, the same on a ``ProfileRow`` and on a decoded struct
    path: str
    kind: Kind
    #: the column's value of a row (or of a struct decoded from its line)
    get: Callable[[Any], Any] = attrs.field(eq=False, repr=False)


def _kind(hint: Any) -> Kind:
    """The column type of a model field's type hint (``int | None`` -> int, ``int |
    float`` -> float)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        kinds: list[Kind] = sorted(
            {_kind(arg) for arg in typing.get_args(hint) if arg is not type(None)}
        )
        if kinds == ["float", "int"]:
            return "float"
        if len(kinds) == 1:
            return kinds[0]
        raise TypeError(f"rowcolumns: no column type for {hint!r}")
    if hint is bool:
        return "bool"
    if hint in (int, float):
        return "int" if hint is int else "float"
    if hint is str or typing.get_origin(hint) is Literal:
        return "str"
    if typing.get_origin(hint) is dict:
        return "json"
    raise TypeError(f"rowcolumns: no column type for {hint!r}")


def _hint(path: str) -> Any:
    """The model's type hint at a dotted path of ``ProfileRow``."""
    cls: Any = ProfileRow
    hint: Any = None
    for part in path.split("."):
        hints = type_hints(cls) if attrs.has(cls) else {}
        if part not in hints:
            raise TypeError(
                f"rowcolumns: {path!r}: {part!r} is not a field of a record"
            )
        hint = hints[part]
        cls = hint
    return hint


def column(name: str, path: str) -> Column:
    """The column ``name`` reading ``path`` of a row, typed as the model types it."""
    return Column(name, path, _kind(_hint(path)), operator.attrgetter(path))


#: The flat columns of a row, in the order of the dataset export's ``rows`` table
#: (docs/analysis.md). Names follow the metric names of docs/metrics.md.
ROW_COLUMNS: tuple[Column, ...] = tuple(
    column(name, path)
    for name, path in (
        ("run_id", "run_id"),
        ("model", "model"),
        ("mode", "mode"),
        ("scenario_id", "scenario_id"),
        ("iteration", "iteration"),
        ("started_at", "started_at"),
        ("completed_at", "completed_at"),
        ("success", "success"),
        ("output_valid", "output_valid"),
        ("checkpoints_passed", "checkpoints_passed"),
        ("checkpoints_total", "checkpoints_total"),
        ("reward", "reward"),
        ("tokens_input", "tokens.input"),
        ("tokens_output", "tokens.output"),
        ("tokens_reasoning", "tokens.reasoning"),
        ("tokens_cache_read", "tokens.cache_read"),
        ("tokens_cache_write", "tokens.cache_write"),
        ("tokens_total", "tokens.total"),
        ("tokens_active", "tokens.active"),
        ("latency_wall_ms", "timing.wall_ms"),
        ("cost_total_usd", "cost.total_usd"),
        ("cost_input_usd", "cost.input_usd"),
        ("cost_output_usd", "cost.output_usd"),
        ("cost_reasoning_usd", "cost.reasoning_usd"),
        ("tool_calls_total", "tool_calls.total"),
        ("tool_calls_failed", "tool_calls.failed"),
        ("tool_calls_retried", "tool_calls.retried"),
        ("tool_calls_error_rate", "tool_calls.error_rate"),
        ("agent_turns", "agent_turns"),
        ("completion_reason", "completion_reason"),
        ("error", "error"),
        ("error_code", "error_code"),
        ("attempts", "attempts"),
        ("provider", "provider"),
        ("session_id", "session_id"),
        ("extensions", "extensions"),
    )
)

#: Each column by name.
COLUMNS: dict[str, Column] = {c.name: c for c in ROW_COLUMNS}


def columns(names: Iterable[str]) -> tuple[Column, ...]:
    """The declared columns of these names, in the order given; an unknown name is a TypeError."""
    unknown = [name for name in names if name not in COLUMNS]
    if unknown:
        raise TypeError(f"rowcolumns: not a column of a row: {', '.join(unknown)}")
    return tuple(COLUMNS[name] for name in names)


def projection(name: str, paths: Iterable[str]) -> type[msgspec.Struct]:
    """A struct decoding only ``paths`` of a results line (``tokens.total``, ``extensions.x``).

    Its fields are the row decoder's (same keys, types, constraints and defaults);
    the line's other keys are skipped. A path into a mapping (``extensions.cost_source``)
    reads that one key, None when absent.
    """
    return _projection(name, RowStruct, tuple(sorted(set(paths))))


@functools.cache
def _projection(
    name: str, struct: type[msgspec.Struct], paths: tuple[str, ...]
) -> type[msgspec.Struct]:
    fields = {f.name: f for f in msgspec.structs.fields(struct)}
    wanted: dict[str, list[str]] = {}
    for path in paths:
        head, _, rest = path.partition(".")
        if head not in fields:
            raise TypeError(f"rowcolumns: {struct.__name__} has no field {head!r}")
        wanted.setdefault(head, [])
        if rest:
            wanted[head].append(rest)
    built: list[tuple[str, Any, Any]] = []
    for head, inner in wanted.items():
        field = fields[head]
        kind = field.type
        if inner:
            kind = _inner(f"{name}_{head}", kind, tuple(inner))
        if field.default is not msgspec.NODEFAULT:
            built.append((head, kind, field.default))
        elif field.default_factory is not msgspec.NODEFAULT:
            # a nested record's default, projected as the record is
            factory = kind if inner else field.default_factory
            built.append((head, kind, msgspec.field(default_factory=factory)))
        else:
            built.append((head, kind, msgspec.NODEFAULT))
    return msgspec.defstruct(
        name,
        built,
        kw_only=True,
        gc=False,
        rename={f.name: f.encode_name for f in fields.values()},
        module=__name__,
    )


def _inner(name: str, kind: Any, paths: tuple[str, ...]) -> Any:
    """The projected type of a nested field: a nested record's struct, or one mapping's keys."""
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return _projection(name, kind, paths)
    if typing.get_origin(kind) is dict:
        keys = [(key, Any, None) for key in paths if "." not in key]
        if len(keys) != len(paths):
            raise TypeError(f"rowcolumns: {paths!r}: a mapping's key holds no fields")
        return msgspec.defstruct(name, keys, kw_only=True, gc=False, module=__name__)
    raise TypeError(f"rowcolumns: {name}: {kind!r} has no fields")


__all__ = ["COLUMNS", "ROW_COLUMNS", "Column", "column", "columns", "projection"]
