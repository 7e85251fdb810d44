"""Two processes for the two heavy steps of a big report: reading the rows and writing the CSV.

Parsing JSON and formatting CSV are CPU-bound Python; on a multi-core machine
a fork takes half of each. Only used on Linux, when no other Python thread
runs (``load.can_fork``), and for big inputs; the child never returns into the
caller's code: it ends with ``os._exit`` so that no inherited buffer is
flushed twice and no ``atexit`` handler runs.
"""

from __future__ import annotations

import math
import os
import pickle
import shutil
import signal
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, cast

from ..errors import StoreError
from ..util.arrays import np
from .rowtable import BUFFER, Categorical, RowTable, _parse


def _fork() -> int:
    with warnings.catch_warnings():
        # Python >= 3.12 warns about forking with threads: numpy's BLAS pool
        # counts, but the child never calls into BLAS.
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def _close_inherited(*keep: int) -> None:
    """In a child: close every inherited descriptor but stdio and ``keep`` (e.g. the
    HTML helper's pipes)."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def _range_lines(f: IO[bytes], start: int, end: int | None) -> Iterator[bytes]:
    """The lines of ``f`` from byte ``start`` (a line start) up to byte ``end``."""
    f.seek(start)
    pos = start
    for line in f:
        if end is not None and pos >= end:
            return
        pos += len(line)
        yield line


def _count_lines(path: Path, end: int) -> int:
    """Newlines in the first ``end`` bytes (the line number of the second half is one more)."""
    count = 0
    with open(path, "rb") as f:
        remaining = end
        while remaining:
            block = f.read(min(remaining, 1 << 24))
            if not block:
                break
            count += block.count(b"\n")
            remaining -= len(block)
    return count


def load_split(path: Path, split: int, sink: Any) -> RowTable:
    """Parse ``[0, split)`` here and ``[split, end)`` in a forked child, then merge the two tables.

    ``sink`` is None, a callable taking each accepted line, or a ``JsonArrayWriter``
    (its ``splice``/``extend_from`` let the child write its rows into the file directly).
    """
    tmpdir = Path(tempfile.mkdtemp(prefix="profiler-report-"))
    lines_file = tmpdir / "lines.jsonl"
    # A JSON-array writer lets the child write its rows straight into the file, after the
    # most the parent's rows can take: "[" + each line + one separator byte.
    splice = getattr(sink, "splice", None) and getattr(sink, "tmp_path", None)
    read_fd, write_fd = os.pipe()
    pid = _fork()
    if (
        pid == 0
    ):  # pragma: no cover - runs in the child (covered through the parent's result)
        status = 1
        try:
            _close_inherited(write_fd)
            with os.fdopen(write_fd, "wb") as out:
                try:
                    lines_before = _count_lines(path, split)
                    first = lines_before + 1
                    offset = 1 + split + lines_before
                    part_sink: Callable[[bytes], None] | None = None
                    lines_out, end = None, offset
                    if sink is not None:
                        if splice:
                            # closed below
                            lines_out = open(sink.tmp_path, "r+b", buffering=BUFFER)  # noqa: SIM115
                            lines_out.seek(offset)
                            sep = [b",\n"]
                        else:
                            # closed below
                            lines_out = open(lines_file, "wb", buffering=BUFFER)  # noqa: SIM115
                            sep = [b""]

                        # Rows joined by ",\n": results.json's own separator (a JSON
                        # line holds no raw
                        # newline, so it is unambiguous).
                        def write_row(line: bytes) -> None:
                            """Write one accepted row."""
                            lines_out.write(sep[0])
                            lines_out.write(line)
                            sep[0] = b",\n"

                        part_sink = write_row

                    with open(path, "rb", buffering=BUFFER) as f:
                        part = _parse(
                            path, _range_lines(f, split, None), first, part_sink
                        )
                    if lines_out is not None:
                        end = lines_out.tell()
                        lines_out.close()
                    pickle.dump(
                        ("ok", (part, offset, end)),
                        out,
                        protocol=pickle.HIGHEST_PROTOCOL,
                    )
                    status = 0
                except BaseException as exc:  # noqa: BLE001 - reported to the parent
                    pickle.dump(("error", f"{type(exc).__name__}: {exc}"), out)
        finally:
            os._exit(status)
    os.close(write_fd)
    waited = False
    try:
        with open(path, "rb", buffering=BUFFER) as f:
            head = _parse(path, _range_lines(f, 0, split), 1, sink)
        with os.fdopen(read_fd, "rb") as pipe:
            try:
                kind, payload = pickle.load(pipe)
            except (EOFError, pickle.UnpicklingError) as exc:
                kind, payload = "error", f"the reading process died ({exc})"
        os.waitpid(pid, 0)
        waited = True
        if kind != "ok":
            raise StoreError(
                f"{path}: cannot read the second half of the file: {payload}"
            )
        tail, offset, end = cast("tuple[RowTable, int, int]", payload)
        if sink is not None:
            if splice:
                sink.splice(offset, end)
            elif getattr(sink, "extend_from", None) is not None:
                sink.extend_from(lines_file)
            else:
                for line in lines_file.read_bytes().split(b",\n"):
                    if line:
                        sink(line)
        return merge(head, tail)
    finally:
        if not waited:
            _stop(pid)
        shutil.rmtree(tmpdir, ignore_errors=True)


def _stop(pid: int) -> None:
    """Kill and reap a child we no longer need (the parent failed first)."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _remap(a: Categorical, b: Categorical) -> tuple[list[str], np.ndarray]:
    """Merged values, and the new code of each of ``b``'s codes."""
    values = list(a.values)
    index = {v: i for i, v in enumerate(values)}
    mapping = np.empty(len(b.values), dtype=np.int32)
    for code, value in enumerate(b.values):
        if value not in index:
            index[value] = len(values)
            values.append(value)
        mapping[code] = index[value]
    return values, mapping


def _concat_columns(
    a: dict, b: dict, n_a: int, n_b: int, fill: float
) -> dict[str, Any]:
    """Concatenate dict-of-columns, filling keys missing on one side; objects win over floats."""
    out: dict[str, Any] = {}
    for key in list(dict.fromkeys([*a, *b])):
        ca, cb = a.get(key), b.get(key)
        if isinstance(ca, list) or isinstance(cb, list):
            la = _as_objects(ca, n_a)
            lb = _as_objects(cb, n_b)
            out[key] = la + lb
        else:
            ca = np.full(n_a, fill) if ca is None else ca
            cb = np.full(n_b, fill) if cb is None else cb
            out[key] = np.concatenate([ca, cb])
    return out


def _as_objects(col: Any, n: int) -> list:
    if col is None:
        return [None] * n
    if isinstance(col, list):
        return col
    return [
        None if math.isnan(v) else (int(v) if v.is_integer() else v)
        for v in col.tolist()
    ]


def merge(a: RowTable, b: RowTable) -> RowTable:
    """One table of ``a``'s rows followed by ``b``'s."""
    n_a = a.n
    categorical = {}
    maps = {}
    for name, cat in a.categorical.items():
        values, mapping = _remap(cat, b.categorical[name])
        maps[name] = mapping
        codes = np.concatenate(
            [
                cat.codes,
                mapping[b.categorical[name].codes]
                if b.n
                else b.categorical[name].codes,
            ]
        )
        categorical[name] = Categorical(codes=codes.astype(np.int32), values=values)
    checkpoints = {key: list(v) for key, v in a.checkpoints.items()}
    for (m, s, cid), (passed, total) in b.checkpoints.items():
        key = (int(maps["mode"][m]), int(maps["scenario_id"][s]), cid)
        slot = checkpoints.setdefault(key, [0, 0])
        slot[0] += passed
        slot[1] += total
    descriptions = dict(b.checkpoint_descriptions)
    descriptions.update(a.checkpoint_descriptions)
    return RowTable(
        path=a.path,
        n=n_a + b.n,
        numeric={k: np.concatenate([v, b.numeric[k]]) for k, v in a.numeric.items()},
        categorical=categorical,
        success=np.concatenate([a.success, b.success]),
        output_valid=np.concatenate([a.output_valid, b.output_valid]),
        started_at=a.started_at + b.started_at,
        completed_at=a.completed_at + b.completed_at,
        session_id=a.session_id + b.session_id,
        errors={**a.errors, **{i + n_a: v for i, v in b.errors.items()}},
        failed_checks={
            **a.failed_checks,
            **{i + n_a: v for i, v in b.failed_checks.items()},
        },
        verifier_tails={
            **a.verifier_tails,
            **{i + n_a: v for i, v in b.verifier_tails.items()},
        },
        checkpoints=checkpoints,
        checkpoint_descriptions=descriptions,
        by_category=_concat_columns(a.by_category, b.by_category, n_a, b.n, 0.0),
        extensions=_concat_columns(a.extensions, b.extensions, n_a, b.n, float("nan")),
        problems=a.problems + b.problems,
        skipped=a.skipped + b.skipped,
    )


def write_halves(
    path: Path,
    header_and_first: Callable[[IO[str]], None],
    second: Callable[[IO[str]], None],
) -> None:
    """Write a text file in two parts: the second by a forked child into a side file,
    then appended."""
    part = path.with_name(f".{path.name}.part")
    pid = _fork()
    if pid == 0:  # pragma: no cover - runs in the child
        status = 1
        try:
            _close_inherited()
            with open(part, "w", encoding="utf-8", newline="", buffering=BUFFER) as f:
                second(f)
            status = 0
        finally:
            os._exit(status)
    waited = False
    try:
        with open(path, "w", encoding="utf-8", newline="", buffering=BUFFER) as f:
            header_and_first(f)
        _, status = os.waitpid(pid, 0)
        waited = True
        if status != 0:
            raise StoreError(
                f"{path}: the process writing its second half failed (status {status})"
            )
        with open(path, "ab") as out, open(part, "rb") as f:
            shutil.copyfileobj(f, out, 1 << 22)
    finally:
        if not waited:
            _stop(pid)
        part.unlink(missing_ok=True)
