"""Columnar loading of results JSONL: each line decoded once, numbers straight into arrays.

Each line goes through the one row decoder (``rowcodec``: msgspec structs
generated from the model, so it is checked as ``ProfileRow`` would check it,
in ~6 µs), and its values are appended to flat ``array`` buffers that become
numpy columns at the end; no ``ProfileRow`` object is built. A line the
decoder refuses is skipped and reported as ``file:line: $.key: why``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..util.arrays import np
from .rowtable import (
    CORE_COLUMNS,
    PARALLEL_MIN_BYTES,
    Categorical,
    RowTable,
    _cell_keys,
    _finish,
    _read,
    _split_point,
    can_fork,
    check_results_file,
    peek_run_id,
    run_stem,
    sibling,
    superseded_rows,
)


def load_rows(
    path: Path,
    *,
    sink: Callable[[bytes], None] | None = None,
    parallel: bool | None = None,
) -> RowTable:
    """Read a (possibly gzipped) results JSONL into columns; bad lines are skipped and reported.

    A cell (run, model, mode, scenario, iteration) written more than once (two
    writers on one run) is counted once: its last complete row is kept and one
    warning says how many rows were left out.

    :param sink: called with each accepted line (stripped), in file order, e.g.
        to copy rows into ``results.json`` without parsing them twice. When
        duplicates are found the file is read again, so a sink must have a
        ``restart()`` method to start over (else it sees the duplicates too).
    :param parallel: False reads in this process only; by default a big
        uncompressed file is read by two processes (this one and a fork), one
        half each.
    """
    check_results_file(path)
    split = None
    if (
        parallel is not False
        and path.stat().st_size >= PARALLEL_MIN_BYTES
        and can_fork()
    ):
        split = _split_point(path)
    if split is None:
        table = _read(path, sink)
    else:
        from .parallel import load_split  # the fork's machinery, only for a big file

        table = load_split(path, split, sink)
    table = _finish(table)
    dropped = superseded_rows(table)
    if not dropped.size:
        return table
    # Rare (two writers on one run): read again, leaving the superseded rows out of every column.
    restart = getattr(sink, "restart", None)
    if restart is not None:
        restart()
    again = _finish(
        _read(
            path,
            sink if restart is not None else None,
            drop=frozenset(dropped.tolist()),
        )
    )
    again.duplicates = int(dropped.size)
    cells = len(np.unique(_cell_keys(table)[dropped], axis=0))
    again.problems.insert(
        0,
        f"{path}: {dropped.size} duplicated row(s) of {cells} cell(s) (same "
        "run, model, mode, scenario and iteration): "
        "each cell is counted once, from its last complete row",
    )
    return again


__all__ = [
    "CORE_COLUMNS",
    "Categorical",
    "RowTable",
    "can_fork",
    "check_results_file",
    "load_rows",
    "peek_run_id",
    "run_stem",
    "sibling",
    "superseded_rows",
]
