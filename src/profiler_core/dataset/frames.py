"""``profiler_core.load_run(path)``: a run's five tables as pandas or polars data frames."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import attrs

from ..errors import ProfilerError
from ..model.record import Record
from .tables import SCHEMA, read_tables

Backend = Literal["pandas", "polars"]


@attrs.frozen(repr=False, eq=False)
class RunTables(Record):
    """The tables of one run; each a pandas or polars DataFrame (see docs/analysis.md)."""

    rows: Any
    tool_calls: Any
    checkpoints: Any
    turns: Any
    findings: Any
    #: lines of the run's files that could not be read (skipped)
    problems: tuple[str, ...] = ()

    def __getitem__(self, name: str) -> Any:
        """A table by name: ``tables["tool_calls"]``."""
        if name not in SCHEMA:
            raise KeyError(name)
        return getattr(self, name)


def _backend(wanted: str | None) -> Backend:
    import importlib.util

    if wanted not in (None, "pandas", "polars"):
        raise ProfilerError(f"backend: expected 'pandas' or 'polars', got {wanted!r}")
    for name in (wanted,) if wanted else ("pandas", "polars"):
        if importlib.util.find_spec(name) is not None:
            return name  # type: ignore[return-value]
    raise ProfilerError(
        f"load_run needs {wanted or 'pandas or polars'}, which is not "
        "installed: pip install 'agent-profiler[pandas]' (or polars)"
    )


def _frame(columns: dict[str, list], name: str, backend: Backend) -> Any:
    types = dict(SCHEMA[name])
    if backend == "polars":
        import polars as pl

        kinds = {
            "str": pl.Utf8,
            "int": pl.Int64,
            "float": pl.Float64,
            "bool": pl.Boolean,
        }
        return pl.DataFrame(columns, schema={c: kinds[t] for c, t in types.items()})
    import pandas as pd

    dtypes = {"str": "string", "int": "Int64", "float": "Float64", "bool": "boolean"}
    return pd.DataFrame(
        {c: pd.array(v, dtype=dtypes[types[c]]) for c, v in columns.items()}
    )


def load_run(
    path: str | Path,
    *,
    backend: Backend | None = None,
    reports_dir: str | Path | None = None,
) -> RunTables:
    """The tables of the run whose rows are in ``path`` (``results/<runId>.jsonl``), as data frames.

    ``backend``: "pandas" or "polars" (default: pandas when installed, else polars).
    The run's trace store, analysis file and manifest are found beside the
    results as ``profiler view`` finds them (``reports_dir`` to look elsewhere).
    """
    from ..storage.runfiles import is_results_file, run_files

    chosen = _backend(backend)
    path = Path(path)
    if not is_results_file(path):
        raise ProfilerError(
            f"{path}: not a run's results file (expected results/<runId>.jsonl)"
        )
    problems: list[str] = []
    tables = read_tables(
        run_files(path, Path(reports_dir) if reports_dir is not None else None),
        problems,
    )
    frames = {name: _frame(columns, name, chosen) for name, columns in tables.items()}
    return RunTables(**frames, problems=tuple(problems))


__all__ = ["RunTables", "load_run"]
