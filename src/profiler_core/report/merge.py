"""Several results files in one report: expand globs, rename modes per file, write one
merged JSONL."""

from __future__ import annotations

import glob
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson

from ..errors import ConfigError, StoreError
from ..model.record import Record
from ..storage.lines import open_binary


def expand_sources(sources: Sequence[str]) -> list[str]:
    """Each source as given, or the files a glob pattern in it matches (sorted); a
    pattern matching nothing is an error."""
    out: list[str] = []
    for source in sources:
        if glob.has_magic(source):
            # `results/*.jsonl` also matches each run's analysis file, which holds no rows.
            matches = sorted(
                m
                for m in glob.glob(source)
                if not m.endswith((".analysis.jsonl", ".analysis.jsonl.gz"))
            )
            if not matches:
                raise StoreError(f"{source}: no results file matches this pattern")
            out += matches
        else:
            out.append(source)
    return list(dict.fromkeys(out))


def parse_as_mode(values: Sequence[str]) -> dict[str, str]:
    """``--as-mode FILE=MODE`` options -> {file or run id: mode}."""
    mapping: dict[str, str] = {}
    for value in values:
        key, sep, mode = value.partition("=")
        if not sep or not key or not mode:
            raise ConfigError(
                f"--as-mode {value!r}: expected FILE=MODE (a results file or "
                "run id, then the mode to call its rows)"
            )
        mapping[key] = mode
    return mapping


def _key_matches(key: str, path: Path) -> bool:
    name = path.name.removesuffix(".gz").removesuffix(".jsonl")
    return key in (str(path), path.name, name) or Path(key).resolve() == path.resolve()


@attrs.frozen(kw_only=True, repr=False, eq=False)
class MergedInputs(Record):
    """A merged results file and where its lines came from, to name the inputs rather
    than the merged file."""

    target: Path
    rows: int
    #: (first line of ``target`` taken from the input, the input), in order
    segments: tuple[tuple[int, Path], ...]

    def describe(self) -> str:
        """The inputs, as the report names its source."""
        return ", ".join(str(path) for _, path in self.segments)

    def locate(self, message: str) -> str:
        """``message`` naming the input and its line instead of ``target`` (``merged:12:
        x`` -> ``b.jsonl:2: x``)."""
        prefix = f"{self.target}:"
        if not message.startswith(prefix):
            return message
        number, sep, rest = message[len(prefix) :].partition(":")
        if sep and number.isdigit():
            line = int(number)
            start, path = next(
                (s for s in reversed(self.segments) if s[0] <= line), self.segments[0]
            )
            return f"{path}:{line - start + 1}:{rest}"
        return f"the merged inputs ({self.describe()}):{message[len(prefix) :]}"


def merge_results(
    paths: Sequence[Path], target: Path, as_mode: Mapping[str, str]
) -> MergedInputs:
    """Concatenate ``paths`` into ``target`` (JSONL), renaming the modes of the files
    named in ``as_mode``.

    A file of one mode has it renamed to MODE; a file of several has each mode ``m``
    renamed to ``MODE/m``, so its modes stay apart (one name for all would make
    their cells duplicates of each other). Lines are copied one for one, blank and
    malformed ones as they are, so a problem in the merged file names an input's own line.
    """
    unused = dict(as_mode)
    rows = 0
    segments: list[tuple[int, Path]] = []
    line_number = 1
    with open(target, "wb") as out:
        for path in paths:
            label = next((m for k, m in as_mode.items() if _key_matches(k, path)), None)
            unused = {k: m for k, m in unused.items() if not _key_matches(k, path)}
            rename = _renaming(path, label) if label is not None else None
            segments.append((line_number, path))
            for line in _lines(path):
                if rename is not None and line.strip():
                    line = _renamed(line, rename)
                out.write(line if line.endswith(b"\n") else line + b"\n")
                line_number += 1
                rows += bool(line.strip())
    if unused:
        raise ConfigError(
            f"--as-mode {', '.join(unused)}: no such input among {', '.join(str(p) for p in paths)}"
        )
    return MergedInputs(target=target, rows=rows, segments=tuple(segments))


def _lines(path: Path) -> Iterator[bytes]:
    try:
        with open_binary(path) as f:
            yield from f
    except OSError as exc:
        raise StoreError(f"{path}: cannot read ({exc})") from None


def _renaming(path: Path, label: str) -> dict[str, str]:
    """Old mode -> new mode for one input: ``label``, or ``label/mode`` when the input
    has several modes."""
    modes: dict[str, None] = {}
    for line in _lines(path):
        row = _row(line)
        if row is not None and isinstance(row.get("mode"), str):
            modes[row["mode"]] = None
    if len(modes) <= 1:
        return {mode: label for mode in modes}
    return {mode: f"{label}/{mode}" for mode in modes}


def _row(line: bytes) -> dict[str, Any] | None:
    try:
        row = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return row if isinstance(row, dict) else None


def _renamed(line: bytes, rename: Mapping[str, str]) -> bytes:
    row = _row(line)
    if row is None or row.get("mode") not in rename:
        return line  # copied as it is: the report names it as it does for one file
    row["mode"] = rename[row["mode"]]
    return orjson.dumps(row) + b"\n"


def merged_name(run_ids: Sequence[str]) -> str:
    """A name for a report of several runs: ``merged-<a>__<b>`` (shortened when long; a
    plain file name)."""
    name = "merged-" + "__".join(run_ids)
    return name if len(name) <= 100 else name[:90] + f"__{len(run_ids)}-runs"
