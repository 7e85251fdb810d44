"""Where one run's files are, and which runs a results folder holds.

A run writes ``results/<runId>.jsonl`` (its rows), ``results/<runId>.manifest.json``,
``results/<runId>.analysis.jsonl`` and a report folder ``reports/<runId>/`` with its
trace store ``sessions/traces.jsonl``. The manifest records absolute paths, which go
stale when the folders are copied elsewhere (a CI artefact), so every file is looked
for at the manifest's path first and then beside the results folder. ``profiler
view``, ``profiler compare`` and ``profiler export`` find runs here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import attrs

from ..errors import ProfilerError, StoreError
from ..model import RunManifest
from ..model.record import Record
from .paths import safe_name

#: Suffixes of a results file (the rows of one run).
RESULTS_SUFFIXES = (".jsonl", ".jsonl.gz")
#: Files beside a results file that are not results.
_SIDE_FILES = (".analysis.jsonl", ".analysis.jsonl.gz")


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RunFiles(Record):
    """The files of one run that exist (None for those that do not)."""

    run_id: str
    #: ``results/<runId>.jsonl`` (or ``.jsonl.gz``)
    results: Path
    manifest: RunManifest | None = None
    manifest_path: Path | None = None
    #: ``results/<runId>.analysis.jsonl``
    analysis: Path | None = None
    #: ``reports/<runId>/`` (holds report.html, data/, sessions/)
    report_dir: Path | None = None
    #: the trace store (``sessions/traces.jsonl``) or, for ``trace_format: files``, the
    #: sessions folder
    traces: Path | None = None

    @property
    def report_html(self) -> Path | None:
        """``report.html`` of the run, when one was written."""
        if self.report_dir is None or not (self.report_dir / "report.html").is_file():
            return None
        return self.report_dir / "report.html"

    def sort_key(self) -> tuple[str, float]:
        """Newest first when sorted in reverse: the start time, else the file's
        modification time."""
        started = self.manifest.started_at if self.manifest else ""
        try:
            mtime = self.results.stat().st_mtime
        except OSError:
            mtime = 0.0
        return (started or "", mtime)


def stem_of(path: Path) -> str:
    """``results/run_1.jsonl(.gz)`` -> ``run_1``."""
    name = path.name
    for suffix in (".gz", ".jsonl"):
        name = name.removesuffix(suffix)
    return name


def is_results_file(path: Path) -> bool:
    """A run's rows file (not its analysis file, not a hidden temporary)."""
    name = path.name
    return (
        path.is_file()
        and not name.startswith(".")
        and name.endswith(RESULTS_SUFFIXES)
        and not name.endswith(_SIDE_FILES)
    )


def run_files(results: Path, reports_dir: Path | None = None) -> RunFiles:
    """The files of the run whose rows are in ``results`` (the other files are optional)."""
    from .store import read_manifest

    stem = stem_of(results)
    manifest_path = results.with_name(f"{stem}.manifest.json")
    manifest = None
    if manifest_path.is_file():
        try:
            manifest = read_manifest(manifest_path)
        except ProfilerError:
            manifest = (
                None  # a broken manifest costs the run its metadata, not its rows
            )
    run_id = manifest.run_id if manifest else stem
    analysis = next(
        (
            p
            for p in (results.with_name(f"{stem}{s}") for s in _SIDE_FILES)
            if p.is_file()
        ),
        None,
    )
    report_dir = _report_dir(results, run_id, manifest, reports_dir)
    return RunFiles(
        run_id=run_id,
        results=results,
        manifest=manifest,
        manifest_path=manifest_path if manifest else None,
        analysis=analysis,
        report_dir=report_dir,
        traces=_traces(report_dir, manifest),
    )


def _report_dir(
    results: Path, run_id: str, manifest: RunManifest | None, reports_dir: Path | None
) -> Path | None:
    """The run's report folder: where the manifest says, else ``<reports>/<runId>``
    beside the results folder."""
    candidates: list[Path] = []
    if manifest is not None:
        for recorded in (manifest.trace_store, manifest.sessions_dir):
            if recorded:
                sessions = (
                    Path(recorded)
                    if Path(recorded).name == "sessions"
                    else Path(recorded).parent
                )
                candidates.append(sessions.parent)
    folder = safe_name(run_id)
    if reports_dir is not None:
        candidates.append(reports_dir / folder)
    candidates.append(results.parent.parent / "reports" / folder)
    candidates.append(results.parent / "reports" / folder)
    return next((c for c in candidates if c.is_dir()), None)


def _traces(report_dir: Path | None, manifest: RunManifest | None) -> Path | None:
    """The trace store, else a sessions folder of per-session files, else None."""
    from .tracestore import TRACES_FILE

    folders = [report_dir / "sessions"] if report_dir is not None else []
    if manifest is not None and manifest.trace_store:
        folders.insert(0, Path(manifest.trace_store).parent)
    for folder in folders:
        for name in (TRACES_FILE, TRACES_FILE + ".gz"):
            if (folder / name).is_file():
                return folder / name
    for folder in folders:
        if folder.is_dir() and next(folder.glob("*/*-iter-*.json"), None) is not None:
            return folder
    return None


def iter_results(results_dir: Path) -> Iterator[Path]:
    """The results files directly inside ``results_dir``, by name."""
    try:
        entries = sorted(os.scandir(results_dir), key=lambda e: e.name)
    except FileNotFoundError:
        raise StoreError(f"{results_dir}: no such results folder") from None
    except OSError as exc:
        raise StoreError(
            f"{results_dir}: cannot list ({exc.strerror or exc})"
        ) from None
    for entry in entries:
        path = Path(entry.path)
        if is_results_file(path):
            yield path


def find_runs(results_dir: Path, reports_dir: Path | None = None) -> list[RunFiles]:
    """Every run in ``results_dir``, newest first."""
    runs = [run_files(path, reports_dir) for path in iter_results(results_dir)]
    runs.sort(key=RunFiles.sort_key, reverse=True)
    return runs


def locate_results(source: str, results_dir: Path) -> tuple[Path, Path | None]:
    """The results file ``source`` names, and for a run found outside ``results_dir``
    its own report folder.

    ``source`` is a results file path, or a run id: ``<results-dir>/<RUN_ID>.jsonl`` (``.gz``), else
    the run whose manifest is below the current directory (``runs.find_run``: a profile's results
    folder is relative to the profile, e.g. ``examples/demo/results``).
    """
    from .runs import find_run

    path = Path(source)
    if path.is_file():
        return path, None
    looks_like_path = (
        path.suffix in (".jsonl", ".gz", ".json") or "/" in source or "\\" in source
    )
    if looks_like_path:
        raise StoreError(f"{source}: results file not found")
    for candidate in (
        results_dir / f"{source}.jsonl",
        results_dir / f"{source}.jsonl.gz",
    ):
        if candidate.is_file():
            return candidate, None
    try:
        run = find_run(source, results_dir=results_dir)
    except StoreError:
        raise StoreError(
            f"{source}: no such results file, and no run {source!r} in "
            f"{results_dir}/ nor in the run manifests below the "
            "current directory (give the results file's path, or --results-dir)"
        ) from None
    if run.results is None:
        raise StoreError(
            f"{source}: the run has a report ({run.report_html}) but no results "
            "file beside its manifest"
        )
    return run.results, (
        run.report_dir
        if run.results.parent.resolve() != results_dir.resolve()
        else None
    )


def resolve_results(source: str, results_dir: Path) -> Path:
    """The results file of a path or run id (see ``locate_results``)."""
    return locate_results(source, results_dir)[0]


__all__ = [
    "RunFiles",
    "find_runs",
    "is_results_file",
    "iter_results",
    "locate_results",
    "resolve_results",
    "run_files",
    "stem_of",
]
