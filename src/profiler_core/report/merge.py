"""Several results files in one report: expand globs, rename modes per file, write one merged JSONL."""

from __future__ import annotations

import glob
import gzip
from collections.abc import Mapping, Sequence
from pathlib import Path

import orjson

from ..errors import ConfigError, StoreError


def expand_sources(sources: Sequence[str]) -> list[str]:
    """Each source as given, or the files a glob pattern in it matches (sorted); a pattern matching nothing is an error."""
    out: list[str] = []
    for source in sources:
        if glob.has_magic(source):
            matches = sorted(glob.glob(source))
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
            raise ConfigError(f"--as-mode {value!r}: expected FILE=MODE (a results file or run id, then the mode to call its rows)")
        mapping[key] = mode
    return mapping


def _key_matches(key: str, path: Path) -> bool:
    name = path.name.removesuffix(".gz").removesuffix(".jsonl")
    return key in (str(path), path.name, name) or Path(key).resolve() == path.resolve()


def merge_results(paths: Sequence[Path], target: Path, as_mode: Mapping[str, str]) -> int:
    """Concatenate ``paths`` into ``target`` (JSONL), renaming the mode of the files named in ``as_mode``; rows written.

    Lines that are not JSON objects are copied as they are, so the report names them as it does for one file.
    """
    unused = dict(as_mode)
    rows = 0
    with open(target, "wb") as out:
        for path in paths:
            mode = next((m for k, m in as_mode.items() if _key_matches(k, path)), None)
            unused = {k: m for k, m in unused.items() if not _key_matches(k, path)}
            opener = gzip.open if path.suffix == ".gz" else open
            try:
                with opener(path, "rb") as f:
                    for line in f:
                        if not line.strip():
                            continue
                        if mode is not None:
                            try:
                                row = orjson.loads(line)
                            except orjson.JSONDecodeError:
                                row = None
                            if isinstance(row, dict):
                                row["mode"] = mode
                                line = orjson.dumps(row) + b"\n"
                        out.write(line if line.endswith(b"\n") else line + b"\n")
                        rows += 1
            except OSError as exc:
                raise StoreError(f"{path}: cannot read ({exc})") from None
    if unused:
        raise ConfigError(f"--as-mode {', '.join(unused)}: no such input among {', '.join(str(p) for p in paths)}")
    return rows


def merged_name(run_ids: Sequence[str]) -> str:
    """A name for a report of several runs: ``merged-<a>__<b>`` (shortened when long; a plain file name)."""
    name = "merged-" + "__".join(run_ids)
    return name if len(name) <= 100 else name[:90] + f"__{len(run_ids)}-runs"
