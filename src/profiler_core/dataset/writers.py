"""Write a run's tables into DuckDB (``[duckdb]`` extra) or Parquet files (``[parquet]`` extra).

Both append: several runs go into one database or folder, and exporting a run
again replaces that run's rows (its run id), never duplicates them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import orjson

from ..errors import ProfilerError
from ..storage.paths import refuse_links, safe_name
from ..storage.runfiles import RunFiles
from .tables import SCHEMA, TABLES, iter_chunks, run_ids

_DUCK_TYPES = {"str": "VARCHAR", "int": "BIGINT", "float": "DOUBLE", "bool": "BOOLEAN"}


def needs(module: str, extra: str) -> None:
    """Raise one line naming the pip command when an optional module is missing."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise ProfilerError(
            f"this export needs {module}, which is not installed: pip install "
            f"'agent-profiler[{extra}]'"
        ) from None


def to_duckdb(files: RunFiles, database: Path, problems: list[str]) -> dict[str, int]:
    """Append the run's tables to a DuckDB database (created when missing); rows written
    per table."""
    needs("duckdb", "duckdb")
    import duckdb

    written = dict.fromkeys(TABLES, 0)
    # DuckDB opens the file (and its write-ahead log) by name: a planted link would lead
    # the export elsewhere.
    refuse_links(database, database.with_name(database.name + ".wal"))
    try:
        con = duckdb.connect(str(database))
    except duckdb.Error as exc:
        raise ProfilerError(
            f"{database}: cannot open it as a DuckDB database: {str(exc).splitlines()[0]}"
        ) from None
    try:
        for name in TABLES:
            columns = ", ".join(f'"{c}" {_DUCK_TYPES[t]}' for c, t in SCHEMA[name])
            con.execute(f'CREATE TABLE IF NOT EXISTS "{name}" ({columns})')
            _check_columns(con, database, name)
        con.execute("BEGIN TRANSACTION")
        # An earlier export of these runs is replaced, never added to (and stays if this one fails).
        ids = sorted(run_ids(files))
        for name in TABLES:
            con.execute(
                f'DELETE FROM "{name}" WHERE run_id IN ({", ".join("?" for _ in ids)})',
                ids,
            )
        with tempfile.TemporaryDirectory(prefix="profiler-export-") as tmp:
            for i, (name, chunk) in enumerate(iter_chunks(files, problems)):
                path = Path(tmp) / f"{i}.jsonl"
                _write_ndjson(path, chunk)
                _insert(con, name, path)
                written[name] += len(chunk["run_id"])
                os.unlink(path)
        con.execute("COMMIT")
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - no transaction open yet
            pass
        raise
    finally:
        con.close()
    return written


def _check_columns(con, database: Path, name: str) -> None:
    found = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE "
            f"table_name = '{name}' ORDER BY ordinal_position"
        ).fetchall()
    ]
    wanted = [c for c, _ in SCHEMA[name]]
    if found != wanted:
        raise ProfilerError(
            f"{database}: table {name!r} has other columns than this version "
            f"writes ({', '.join(found)}); export into a new database"
        )


def _write_ndjson(path: Path, chunk: dict[str, list]) -> None:
    names = list(chunk)
    with open(path, "wb") as f:
        for values in zip(*chunk.values()):
            f.write(
                orjson.dumps(
                    dict(zip(names, values)), option=orjson.OPT_SERIALIZE_NUMPY
                )
                + b"\n"
            )


def _insert(con, name: str, path: Path) -> None:
    columns = (
        "{" + ", ".join(f"'{c}': '{_DUCK_TYPES[t]}'" for c, t in SCHEMA[name]) + "}"
    )
    con.execute(
        f'INSERT INTO "{name}" SELECT * FROM read_json(?, format = '
        f"'newline_delimited', columns = {columns})",
        [str(path)],
    )


def to_parquet(files: RunFiles, folder: Path, problems: list[str]) -> dict[str, int]:
    """Write ``<folder>/<table>/<runId>.parquet`` for each table (one dataset folder per
    table); rows per table."""
    needs("pyarrow", "parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {
        "str": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
    }
    schemas = {
        name: pa.schema([(c, types[t]) for c, t in SCHEMA[name]]) for name in TABLES
    }
    stem = safe_name(files.run_id)
    writers: dict[str, pq.ParquetWriter] = {}
    written = dict.fromkeys(TABLES, 0)
    temporary = {name: folder / name / f".{stem}.parquet.tmp" for name in TABLES}
    try:
        for name in TABLES:
            (folder / name).mkdir(parents=True, exist_ok=True)
            refuse_links(
                folder / name, temporary[name]
            )  # a planted link would lead the files elsewhere
            writers[name] = pq.ParquetWriter(temporary[name], schemas[name])
        for name, chunk in iter_chunks(files, problems):
            writers[name].write_table(pa.table(chunk, schema=schemas[name]))
            written[name] += len(chunk["run_id"])
        for name in TABLES:
            writers.pop(name).close()
            os.replace(temporary[name], folder / name / f"{stem}.parquet")
    finally:
        for name, writer in writers.items():
            writer.close()
            temporary[name].unlink(missing_ok=True)
    return written


__all__ = ["needs", "to_duckdb", "to_parquet"]
