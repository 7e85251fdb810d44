"""Recorded sessions -> a run: what ``profiler import`` does, through ``run_profile_suite``.

The sessions are replayed by the ``transcripts`` provider, one matrix cell per
session (no repetition of a recording, no warmup), so an imported row is made
exactly like a row of ``profiler run``: same collectors, analyzers, scorer and
``make_row``. The run is written to a hidden folder next to ``--out`` and its
files are moved into place only once it completed, so a failure leaves nothing
behind. Two things differ from a live run, both on purpose, and both are
written that way the first time: a row's ``startedAt``/``completedAt`` are the
recorded times (the provider's ``session_times``: when the session happened,
not when it was replayed), and rows are in input order (the run is given its
cells in that order and runs them one at a time).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from ..errors import ProfilerError
from ..importers import RecordedSession, attach_subagents, load_sessions, suffixes
from ..model import (
    BeforeScenarioContext,
    ModeConfig,
    ProfileRow,
    Scenario,
    SessionAnalysisBundle,
)
from ..model.record import Record
from ..plugins.markers import hookimpl
from ..providers.transcripts import TranscriptsProvider
from ..storage.paths import check_run_id, inside, open_output, refuse_links
from ..storage.store import RunLock, RunPaths, read_jsonl, read_manifest, write_manifest
from ..util.redact import Redactor
from .options import RunOptions

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.manager import PluginManager

DEFAULT_MODE = "imported"
#: The scorer when none is named: with no checks in the scenario, a session succeeds
#: when it ended without error.
DEFAULT_SCORER = "checks"
#: Model of a session whose file names none and for which ``--model`` was not given.
UNKNOWN_MODEL = "unknown"
Cell = tuple[str, str, str, int]
#: What ``profiler import`` does with an ``--out`` that already holds a run.
Existing = Literal["refuse", "replace", "append"]
#: An import into ``<out>`` is staged in ``.<out name>.import`` beside it.
STAGING_SUFFIX = ".import"


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ImportResult(Record):
    """What ``import_sessions`` wrote."""

    rows: tuple[ProfileRow, ...]
    bundles: tuple[SessionAnalysisBundle, ...]
    jsonl: Path
    analysis: Path | None
    manifest: Path
    sessions_dir: Path
    warnings: tuple[str, ...]


def expand_inputs(format: str, paths: Sequence[Path]) -> list[Path]:
    """Files as given; a directory stands for its files of the format (the importer's
    ``suffixes``), sorted."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            endings = suffixes(format)
            files.extend(
                sorted(
                    p
                    for p in path.iterdir()
                    if p.is_file() and p.name.endswith(endings)
                )
            )
        else:
            files.append(path)
    return files


def load_all(
    format: str, files: Sequence[Path]
) -> tuple[list[RecordedSession], list[str]]:
    """Parse every file; return the sessions and one problem line per file that failed."""
    sessions: list[RecordedSession] = []
    problems: list[str] = []
    for path in files:
        try:
            sessions.extend(load_sessions(format, path))
        except ProfilerError as exc:
            problems.append(str(exc))
        # a file we did not foresee still gets one line, not a traceback
        except Exception as exc:  # noqa: BLE001
            problems.append(
                f"{path}: cannot be read as {format} ({type(exc).__name__}: {exc})"
            )
    return attach_subagents(sessions), problems


class _RecordedPrompts:
    """Run hooks: each iteration's scenario carries its own session's prompt and source
    (for the scorer)."""

    def __init__(self, by_cell: dict[tuple[str, str, int], RecordedSession]) -> None:
        self.by_cell = by_cell

    @hookimpl
    def profiler_before_scenario(self, ctx: BeforeScenarioContext) -> Scenario | None:
        """The scenario of this iteration, with the recorded first user message as its prompt."""
        session = self.by_cell.get((ctx.mode, ctx.scenario.id, ctx.iteration))
        if session is None:
            return None
        return attrs.evolve(
            ctx.scenario,
            prompt=session.prompt,
            extensions={"importedFrom": session.source},
        )


def import_sessions(
    sessions: Sequence[RecordedSession],
    *,
    files: Sequence[Path],
    out: Path,
    manager: PluginManager,
    mode: str = DEFAULT_MODE,
    scenario: str | None = None,
    scorer_id: str | None = None,
    run_id: str | None = None,
    model: str | None = None,
    existing: Existing = "refuse",
    modes: Sequence[str] | None = None,
    warnings: Sequence[str] = (),
) -> ImportResult:
    """Replay the sessions through the runner, then put rows, traces, analysis and
    manifest next to ``out``.

    ``out`` is locked as a run is (``<out dir>/<out stem>.lock``): an import never
    writes a run being
    written. When ``out`` exists, ``existing`` says what to do: ``refuse`` (one line),
    ``replace`` it,
    or ``append`` (the new sessions' iterations follow the recorded ones). ``modes``,
    one per session,
    puts sessions under modes of their own (a Harbor job's agents); else every row is ``mode``'s.
    ``warnings`` are kept in the manifest beside the sessions' own.
    """
    if not sessions:
        raise ProfilerError("the files hold no session")
    run_id = run_id or out.stem
    made = [d for d in (out.parent, *out.parent.parents) if not d.exists()]
    target = RunPaths(
        out.parent, check_run_id(out.stem)
    )  # its analysis and manifest beside ``out``
    lock = RunLock(target)
    lock.acquire()
    staging = out.parent / f".{out.name}{STAGING_SUFFIX}"
    try:
        remove_dead_staging(
            out.parent
        )  # what SIGKILLed or SIGTERMed imports into this folder left
        # Data never chooses where files go: no planted link is written through, no
        # folder leads out.
        refuse_links(out, target.analysis, target.manifest)
        sessions_dir = inside(out.parent, out.parent / "sessions")
        previous = _existing_rows(out, target.manifest, existing)
        session_modes = list(modes) if modes is not None else [mode] * len(sessions)
        provider, cells = _replay_plan(
            sessions, scenario, session_modes, model, previous
        )
        _fresh_folder(staging)  # this --out's own leftovers (we hold its lock)
        options = _options(
            provider,
            manager,
            cells,
            sessions,
            scorer_id=scorer_id,
            staging=staging,
            run_id=run_id,
            files=files,
        )
        _run_import(options)
        noted = (*warnings, *(w for s in sessions for w in s.warnings))
        staged = RunPaths(staging, run_id)
        written = _move_into_place(
            staging, staged, out, target, sessions_dir, noted, append=bool(previous)
        )
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        lock.release()
        for folder in (
            made
        ):  # innermost first: a failed import leaves no trace, not even a folder
            if folder.exists() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    shutil.rmtree(staging, ignore_errors=True)
    lock.release()
    analysis = written["analysis"]
    return ImportResult(
        rows=tuple(read_jsonl(out).rows[len(previous) :]),
        bundles=tuple(read_jsonl(analysis, SessionAnalysisBundle).rows)
        if analysis is not None
        else (),
        warnings=noted,
        **written,
    )


def remove_dead_staging(folder: Path) -> list[Path]:
    """Remove the staging folders killed imports left in ``folder``; a live import holds
    its run's lock and keeps its own."""
    removed = []
    for staging in sorted(folder.glob(f".*{STAGING_SUFFIX}")):
        if staging.is_symlink() or not staging.is_dir():
            continue
        try:
            lock = RunLock(
                RunPaths(
                    folder,
                    check_run_id(Path(staging.name[1 : -len(STAGING_SUFFIX)]).stem),
                )
            )
            lock.acquire()
        except ProfilerError:  # an import still running (or a folder no import made)
            continue
        try:
            shutil.rmtree(staging, ignore_errors=True)
        finally:
            lock.release()
        removed.append(staging)
    return removed


def _fresh_folder(folder: Path) -> None:
    """An empty ``folder``: a leftover one is removed first (a link planted at its name
    too, never followed)."""
    if folder.is_symlink():
        folder.unlink()
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()


def _run_import(options: RunOptions) -> None:
    import trio

    from .suite import run_profile_suite

    trio.run(run_profile_suite, options)


def _existing_rows(out: Path, manifest: Path, existing: Existing) -> list[ProfileRow]:
    """The rows already in ``out`` when appending; a refusal (one line) when ``out``
    holds a run and we may not touch it."""
    if not (out.exists() or manifest.exists()):
        return []
    if existing == "refuse":
        raise ProfilerError(
            f"{out} already exists; use --append to add these sessions to it, or --replace"
        )
    if existing == "replace" or not out.exists():
        return []
    read = read_jsonl(out)
    if read.problems:
        raise ProfilerError(
            f"{out}: cannot append to a file with unreadable lines ({read.problems[0]})"
        )
    return read.rows


def _replay_plan(
    sessions: Sequence[RecordedSession],
    scenario: str | None,
    modes: Sequence[str],
    model: str | None,
    previous: Sequence[ProfileRow],
) -> tuple[TranscriptsProvider, list[Cell]]:
    """The provider and one cell per session, in input order; iterations follow those
    already recorded."""
    provider = TranscriptsProvider.from_sessions(
        sessions, scenario=scenario, recorded_times=True
    )
    cells: list[Cell] = []
    counts: dict[tuple[str, str], int] = {}
    for row in previous:
        key = (row.mode, row.scenario_id)
        counts[key] = max(counts.get(key, 0), row.iteration + 1)
    assigned: dict[tuple[str, str, int], RecordedSession] = {}
    for session, mode in zip(sessions, modes, strict=True):
        scenario_id = provider.scenario_of(session)
        iteration = counts.get((mode, scenario_id), 0)
        cells.append(
            (session.model or model or UNKNOWN_MODEL, mode, scenario_id, iteration)
        )
        assigned[(mode, scenario_id, iteration)] = session
        counts[(mode, scenario_id)] = iteration + 1
    provider.assigned = assigned
    return provider, cells


def _options(
    provider: TranscriptsProvider,
    manager: PluginManager,
    cells: list[Cell],
    sessions: Sequence[RecordedSession],
    *,
    scorer_id: str | None,
    staging: Path,
    run_id: str,
    files: Sequence[Path],
) -> RunOptions:
    """The run of an import: exactly its cells, one at a time (rows land in input
    order), no warm-up, traces as files."""
    registry = manager.registry
    scenario_ids = list(dict.fromkeys(c[2] for c in cells))
    return RunOptions(
        provider=provider,
        scorer=registry.create("scorers", scorer_id or DEFAULT_SCORER, {}),
        scenarios=[Scenario(id=sid, name=sid, prompt="") for sid in scenario_ids],
        modes={mode: ModeConfig() for mode in dict.fromkeys(c[1] for c in cells)},
        models=list(dict.fromkeys(c[0] for c in cells)),
        collectors=[
            registry.create("collectors", cid, {}) for cid in registry.ids("collectors")
        ],
        analyzers=[
            registry.create("analyzers", aid, {}) for aid in registry.ids("analyzers")
        ],
        repetitions=1 + max(c[3] for c in cells),
        cells=cells,
        concurrency=1,
        warmup=False,
        allowed_retries=0,
        session_export=True,
        trace_format="files",  # an import lays its traces out as files, one per recorded session
        results_dir=str(staging),
        reports_dir=str(staging),
        run_id=run_id,
        hooks=[
            _RecordedPrompts({c[1:]: s for c, s in zip(cells, sessions, strict=True)})
        ],
        plugin_manager=manager,
        profile_hash=_input_hash(files),
    )


def _move_into_place(
    staging: Path,
    staged: RunPaths,
    out: Path,
    target: RunPaths,
    sessions_dir: Path,
    warnings: tuple[str, ...],
    *,
    append: bool,
) -> dict[str, Any]:
    """Traces, rows, analysis, then the manifest: a kill at any point leaves no analysis
    of rows that are not there."""
    # The runner puts traces under <reports>/<runId>/sessions.
    traces = staging / staged.run_id / "sessions"
    moves = (
        [
            (t, sessions_dir / t.relative_to(traces))
            for t in sorted(traces.rglob("*"))
            if t.is_file()
        ]
        if traces.is_dir()
        else []
    )
    for (
        _,
        moved_to,
    ) in (
        moves
    ):  # all checked before any is moved: a link in sessions/ leads nothing elsewhere
        inside(sessions_dir, moved_to.parent)
    for trace, moved_to in moves:
        moved_to.parent.mkdir(parents=True, exist_ok=True)
        os.replace(trace, moved_to)
    analysis, manifest_path = target.analysis, target.manifest
    has_analysis = staged.analysis.is_file() and staged.analysis.stat().st_size > 0
    if append:
        # Rows first: killed in between, the new rows merely lack analysis (as after a crashed run).
        _append_file(staged.jsonl, out)
        if has_analysis:
            _append_file(staged.analysis, analysis)
    else:
        # The replaced run's analysis and manifest go first: killed between two renames, the
        # folder holds the old rows or the new ones, never rows beside another run's analysis.
        analysis.unlink(missing_ok=True)
        manifest_path.unlink(missing_ok=True)
        os.replace(staged.jsonl, out)
        if has_analysis:
            os.replace(staged.analysis, analysis)
    manifest = read_manifest(staged.manifest)
    write_manifest(
        manifest_path,
        attrs.evolve(manifest, warnings=warnings + tuple(manifest.warnings)),
        Redactor(),
    )
    return {
        "jsonl": out,
        "analysis": analysis if analysis.exists() else None,
        "manifest": manifest_path,
        "sessions_dir": sessions_dir,
    }


def _append_file(source: Path, target: Path) -> None:
    with open_output(
        target, "ab"
    ) as f:  # a link planted at the name since the check is refused, not followed
        f.write(source.read_bytes())


def _input_hash(files: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path).encode() + b"\0")
        digest.update(path.read_bytes())
    return "sha256:" + digest.hexdigest()


__all__ = [
    "DEFAULT_MODE",
    "ImportResult",
    "expand_inputs",
    "import_sessions",
    "load_all",
]
