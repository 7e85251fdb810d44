"""Resuming a run: what it already recorded, and whether it may be continued.

The run's lock is held before any of this is read (``Run.prepare``), so a
second writer cannot slip in between the checks and the first new row.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import attrs

from ..errors import ConfigError
from ..model import ProfileRow, RunManifest, SessionAnalysisBundle
from ..model.record import Record
from ..storage.store import RunPaths, read_jsonl, read_manifest, repair_truncated_tail
from ..storage.tracestore import TRACES_FILE

log = logging.getLogger("agent_profiler")


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ResumeState(Record):
    """A run being resumed: its manifest and the rows it already has."""

    manifest: RunManifest
    rows: tuple[ProfileRow, ...]
    #: what was repaired or skipped while reading (printed as warnings)
    warnings: tuple[str, ...] = ()

    @property
    def resumed_from(self) -> tuple[str, ...]:
        """The start times of every earlier invocation of the run, oldest first."""
        return (*self.manifest.resumed_from, self.manifest.started_at)


def load_resume(
    paths: RunPaths,
    *,
    profile_hash: str,
    plugins: Mapping[str, str | None],
    force: bool = False,
) -> ResumeState:
    """Read a run to resume; refuse (``ConfigError``) a changed profile or plugin
    versions unless ``force``."""
    manifest = read_manifest(paths.manifest)
    if manifest.profile_hash != profile_hash and not force:
        raise ConfigError(
            f"the profile (or its scenarios) changed since run {paths.run_id} started; "
            "resuming would mix two experiments (use --force to resume anyway)"
        )
    changed = [
        p.name
        for p in manifest.plugins
        if p.name in plugins and plugins[p.name] != p.version
    ]
    if changed and not force:
        raise ConfigError(
            f"plugin versions changed since run {paths.run_id} started: "
            f"{', '.join(changed)} (use --force)"
        )
    warnings = []
    for file, cls in (
        (paths.jsonl, ProfileRow),
        (paths.analysis, SessionAnalysisBundle),
    ):
        if repaired := repair_truncated_tail(file, cls):
            warnings.append(repaired)
    rows: list[ProfileRow] = []
    if paths.jsonl.exists():
        read = read_jsonl(paths.jsonl)
        rows, warnings = read.rows, warnings + read.problems
    return ResumeState(manifest=manifest, rows=tuple(rows), warnings=tuple(warnings))


def refuse_existing(paths: RunPaths, sessions_dir: Path) -> None:
    """A new run may not reuse the id of a run that has files: it would mix two experiments."""
    store = sessions_dir / TRACES_FILE
    if paths.jsonl.exists() or paths.manifest.exists():
        raise ConfigError(
            f"run {paths.run_id!r} already exists in {paths.results_dir}; "
            f"use --resume {paths.run_id} to finish it, or another --run-id"
        )
    if store.exists() and store.stat().st_size:
        raise ConfigError(
            f"run {paths.run_id!r} already has session traces in {store}; "
            f"use --resume {paths.run_id} to finish it, or another --run-id"
        )


def trace_layout(
    sessions_dir: Path, wanted: str, *, resuming: bool
) -> tuple[str, str | None]:
    """The trace format to write, and a warning when it is not ``wanted``: a resumed run
    keeps the layout it started with."""
    if (sessions_dir / TRACES_FILE).exists():
        if resuming and wanted != "jsonl":
            return (
                "jsonl",
                f"traces appended to {TRACES_FILE}, as the run being resumed "
                f"did (not trace_format {wanted!r})",
            )
        return ("jsonl" if resuming else wanted), None
    if (
        resuming
        and wanted == "jsonl"
        and next(sessions_dir.glob("*/*-iter-*.json"), None) is not None
    ):
        return (
            "files",
            "traces written one file per session, as the run being resumed did",
        )
    return wanted, None


__all__ = ["ResumeState", "load_resume", "refuse_existing", "trace_layout"]
