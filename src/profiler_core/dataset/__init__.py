"""A run's data for analysis elsewhere: five normalised tables, into DuckDB, Parquet or data frames.

``tables`` streams the tables out of a run's files, ``writers`` appends them to
a DuckDB database or a folder of Parquet files (``profiler export``), and
``frames`` returns them as pandas or polars data frames
(``profiler_core.load_run``). See docs/analysis.md.
"""
