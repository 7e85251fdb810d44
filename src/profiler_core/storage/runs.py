"""Finding a run's files from its id, or the newest run, wherever its profile put them.

A profile's ``results`` and ``reports`` folders are relative to the profile
(``examples/demo/results``), while ``profiler report RUN_ID`` and ``profiler
view`` are often typed from somewhere else. So a run is looked for first in the
given folders (``./results``, ``./reports`` by default), then in the run
manifests (``<run>.manifest.json``) found below the current directory, a few
levels deep. A run that is nowhere is one line saying where it was looked for.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import attrs

from ..errors import StoreError
from ..model.record import Record

#: How many folder levels below the current directory manifests are looked for
#: (examples/demo/results: 3).
SEARCH_DEPTH = 4
#: Folders never searched: environments, dependencies, caches, version control.
SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".agents",
        ".mypy_cache",
        ".pytest_cache",
        ".hypothesis",
        ".tox",
    }
)
REPORT_FILE = "report.html"
_MANIFEST = ".manifest.json"


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RunLocation(Record):
    """Where one run's files are."""

    run_id: str
    #: the results file (``<run>.jsonl`` or ``.jsonl.gz``); None when only its report was found
    results: Path | None
    #: the run's report folder (holding report.html once written)
    report_dir: Path
    #: the file whose modification time says how new the run is
    stamp: Path

    @property
    def report_html(self) -> Path:
        """``<report_dir>/report.html`` (which may not exist: ``--no-report``)."""
        return self.report_dir / REPORT_FILE


def find_run(
    run_id: str | None = None,
    *,
    results_dir: Path = Path("results"),
    reports_dir: Path = Path("reports"),
    root: Path | None = None,
    with_report: bool = False,
) -> RunLocation:
    """The run ``run_id`` (the newest one when None): in
    ``results_dir``/``reports_dir``, else below ``root``.

    ``with_report``: only runs whose report.html exists count. ``StoreError`` names
    every place looked in.
    """
    if run_id is not None and not _one_segment(run_id):
        raise StoreError(
            f"{run_id}: not a run id (a run id is a file name, without folders)"
        )
    root = root or Path(".")
    for found in (_in_folders(results_dir, reports_dir), _below(root)):
        runs = [
            r
            for r in found
            if (run_id is None or r.run_id == run_id)
            and (not with_report or r.report_html.is_file())
        ]
        if runs:
            return max(runs, key=_newness)
    what = (
        "no report found"
        if run_id is None and with_report
        else ("no run found" if run_id is None else f"no run {run_id!r}")
    )
    raise StoreError(
        f"{what} in {results_dir}/ or {reports_dir}/, nor in the run manifests "
        f"below {_shown(root)} ({SEARCH_DEPTH} levels); "
        "give the path of its results file or report folder instead"
    )


def _one_segment(run_id: str) -> bool:
    return (
        bool(run_id.strip())
        and run_id not in (".", "..")
        and not any(sep in run_id for sep in ("/", "\\", os.sep))
    )


def _shown(root: Path) -> str:
    return "the current directory" if str(root) == "." else f"{root}/"


def _newness(run: RunLocation) -> tuple[int, str]:
    try:
        return run.stamp.stat().st_mtime_ns, run.run_id
    except OSError:
        return 0, run.run_id


def _in_folders(results_dir: Path, reports_dir: Path) -> Iterator[RunLocation]:
    """The runs of the given folders: results files (with or without a manifest), then
    report folders."""
    seen: set[str] = set()
    if results_dir.is_dir():
        for path in sorted(results_dir.iterdir()):
            run_id = _results_run_id(path)
            if run_id is None or run_id in seen:
                continue
            seen.add(run_id)
            manifest = results_dir / f"{run_id}{_MANIFEST}"
            yield RunLocation(
                run_id=run_id,
                results=_results_file(results_dir, run_id),
                report_dir=reports_dir / run_id,
                stamp=manifest if manifest.is_file() else path,
            )
    if reports_dir.is_dir():
        for page in sorted(reports_dir.glob(f"*/{REPORT_FILE}")):
            run_id = page.parent.name
            if run_id not in seen:
                yield RunLocation(
                    run_id=run_id, results=None, report_dir=page.parent, stamp=page
                )


def _results_run_id(path: Path) -> str | None:
    """The run id of a file of a results folder: ``<run>.jsonl``, ``.jsonl.gz`` or
    ``.manifest.json``."""
    name = path.name
    if name.endswith(".analysis.jsonl"):
        return None
    for suffix in (_MANIFEST, ".jsonl.gz", ".jsonl"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def _results_file(folder: Path, run_id: str) -> Path | None:
    for candidate in (folder / f"{run_id}.jsonl", folder / f"{run_id}.jsonl.gz"):
        if candidate.is_file():
            return candidate
    return None


def _below(root: Path) -> Iterator[RunLocation]:
    """The runs of every run manifest below ``root``, at most SEARCH_DEPTH levels down."""
    for manifest in _manifests(root, SEARCH_DEPTH):
        run_id = manifest.name[: -len(_MANIFEST)]
        yield RunLocation(
            run_id=run_id,
            results=_results_file(manifest.parent, run_id),
            report_dir=_report_dir(manifest, run_id),
            stamp=manifest,
        )


def _manifests(folder: Path, depth: int) -> Iterator[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if (
            entry.is_file(follow_symlinks=False)
            and entry.name.endswith(_MANIFEST)
            and len(entry.name) > len(_MANIFEST)
        ):
            yield Path(folder, entry.name)
        elif (
            depth > 0
            and entry.is_dir(follow_symlinks=False)
            and entry.name not in SKIPPED
        ):
            yield from _manifests(Path(folder, entry.name), depth - 1)


def _report_dir(manifest: Path, run_id: str) -> Path:
    """The run's report folder: its sessions folder's parent (the manifest says), else
    ``<results>/../reports/<run>``."""
    try:
        sessions = json.loads(manifest.read_text(encoding="utf-8")).get("sessionsDir")
    except (OSError, ValueError, AttributeError):
        sessions = None
    if isinstance(sessions, str) and sessions and Path(sessions).is_absolute():
        return Path(sessions).parent
    return manifest.parent.parent / "reports" / run_id


def find_report_html(target: str | None, reports_dir: Path = Path("reports")) -> Path:
    """``report.html`` of a file, a report folder, a run id or (None) the newest run
    with a report."""
    if target is None:
        return find_run(None, reports_dir=reports_dir, with_report=True).report_html
    path = Path(target)
    if path.is_file():
        return path
    if path.is_dir() and (path / REPORT_FILE).is_file():
        return path / REPORT_FILE
    if not _one_segment(target):
        raise StoreError(f"{target}: no such report file or folder")
    if (reports_dir / target / REPORT_FILE).is_file():
        return reports_dir / target / REPORT_FILE
    return find_run(target, reports_dir=reports_dir, with_report=True).report_html


def run_folder(target: str) -> Path:
    """``target`` as a path when it exists or names folders; else a run id: that run's
    report folder."""
    path = Path(target)
    if (
        path.exists()
        or not _one_segment(target)
        or path.suffix in (".json", ".jsonl", ".gz", ".html")
    ):
        return path  # a path: the caller says it is missing
    return find_run(target).report_dir
