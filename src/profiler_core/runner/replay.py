"""Recorded sessions -> a run: what ``profiler import`` does, through ``run_profile_suite``.

The sessions are replayed by the ``transcripts`` provider, one matrix cell per
session (no repetition of a recording, no warmup), so an imported row is made
exactly like a row of ``profiler run``: same collectors, analyzers, scorer and
``make_row``. The run is written to a hidden folder next to ``--out`` and its
files are moved into place only once it completed, so a failure leaves nothing
behind. Two things differ from a live run, both on purpose: a row's
``startedAt``/``completedAt`` are the recorded times (when the session
happened, not when it was replayed), and rows are in input order.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs

from .._hookmarkers import hookimpl
from ..errors import ProfilerError
from ..importers import RecordedSession, attach_subagents, load_sessions
from ..model import (
    BeforeScenarioContext,
    ModeConfig,
    ProfileRow,
    Scenario,
    SessionAnalysisBundle,
)
from ..providers.transcripts import TranscriptsProvider
from ..redact import Redactor
from ..serde import dumps, parse_json
from ..store import RunPaths, atomic_write_text, read_manifest, write_manifest
from .options import RunOptions

DEFAULT_MODE = "imported"
#: The scorer when none is named: with no checks in the scenario, a session succeeds when it ended without error.
DEFAULT_SCORER = "checks"
#: Model of a session whose file names none and for which ``--model`` was not given.
UNKNOWN_MODEL = "unknown"
#: File name endings picked up when a directory is given, per format.
_SUFFIXES = {
    "claude-code": (".jsonl",),
    "codex": (".jsonl",),
    "openai": (".json", ".jsonl"),
    "anthropic": (".json", ".jsonl"),
    "opencode": (".json",),
    "trace": (".json",),
}

Cell = tuple[str, str, str, int]


@attrs.frozen(kw_only=True)
class ImportResult:
    """What ``import_sessions`` wrote."""

    rows: tuple[ProfileRow, ...]
    bundles: tuple[SessionAnalysisBundle, ...]
    jsonl: Path
    analysis: Path | None
    manifest: Path
    sessions_dir: Path
    warnings: tuple[str, ...]


def expand_inputs(format: str, paths: Sequence[Path]) -> list[Path]:
    """Files as given; a directory stands for its files of the format (``*.jsonl`` for claude-code), sorted."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES.get(format, (".json", ".jsonl")))))
        else:
            files.append(path)
    return files


def load_all(format: str, files: Sequence[Path]) -> tuple[list[RecordedSession], list[str]]:
    """Parse every file; return the sessions and one problem line per file that failed."""
    sessions: list[RecordedSession] = []
    problems: list[str] = []
    for path in files:
        try:
            sessions.extend(load_sessions(format, path))
        except ProfilerError as exc:
            problems.append(str(exc))
        except Exception as exc:  # noqa: BLE001 - a file we did not foresee still gets one line, not a traceback
            problems.append(f"{path}: cannot be read as {format} ({type(exc).__name__}: {exc})")
    return attach_subagents(sessions), problems


class _RecordedPrompts:
    """Run hooks: each iteration's scenario carries its own session's prompt and source (for the scorer)."""

    def __init__(self, by_cell: dict[tuple[str, str, int], RecordedSession]) -> None:
        self.by_cell = by_cell

    @hookimpl
    def profiler_before_scenario(self, ctx: BeforeScenarioContext) -> Scenario | None:
        """The scenario of this iteration, with the recorded first user message as its prompt."""
        session = self.by_cell.get((ctx.mode, ctx.scenario.id, ctx.iteration))
        if session is None:
            return None
        return attrs.evolve(ctx.scenario, prompt=session.prompt, extensions={"importedFrom": session.source})


def import_sessions(
    sessions: Sequence[RecordedSession],
    *,
    files: Sequence[Path],
    out: Path,
    manager: Any,
    mode: str = DEFAULT_MODE,
    scenario: str | None = None,
    scorer_id: str | None = None,
    run_id: str | None = None,
    model: str | None = None,
) -> ImportResult:
    """Replay the sessions through the runner, then put rows, traces, analysis and manifest next to ``out``."""
    import trio

    from .suite import run_profile_suite

    if not sessions:
        raise ProfilerError("the files hold no session")
    provider = TranscriptsProvider.from_sessions(sessions, scenario=scenario)
    registry = manager.registry
    scorer = registry.create("scorers", scorer_id or DEFAULT_SCORER, {})
    collectors = [registry.create("collectors", cid, {}) for cid in registry.ids("collectors")]
    analyzers = [registry.create("analyzers", aid, {}) for aid in registry.ids("analyzers")]

    # One cell per session: iterations count from 0 per scenario, in input order (the provider's pick order).
    cells: list[Cell] = []
    counts: dict[str, int] = {}
    for session in sessions:
        scenario_id = provider.scenario_of(session)
        cells.append((session.model or model or UNKNOWN_MODEL, mode, scenario_id, counts.get(scenario_id, 0)))
        counts[scenario_id] = counts.get(scenario_id, 0) + 1
    run_id = run_id or out.stem
    made = [d for d in (out.parent, *out.parent.parents) if not d.exists()]
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        options = RunOptions(
            provider=provider,
            scorer=scorer,
            scenarios=[Scenario(id=sid, name=sid, prompt="") for sid in counts],
            modes={mode: ModeConfig()},
            models=list(dict.fromkeys(c[0] for c in cells)),
            collectors=collectors,
            analyzers=analyzers,
            repetitions=max(counts.values()),
            only_cells=frozenset(cells),
            warmup=False,
            allowed_retries=0,
            session_export=True,
            trace_format="files",  # an import lays its traces out as files, one per recorded session
            results_dir=str(staging),
            reports_dir=str(staging),
            run_id=run_id,
            hooks=[_RecordedPrompts({c[1:]: s for c, s in zip(cells, sessions, strict=True)})],
            plugin_manager=manager,
            profile_hash=_input_hash(files),
        )
        suite = trio.run(run_profile_suite, options)
        order = {cell: index for index, cell in enumerate(cells)}
        # Read now: the suite's rows and bundles are read from the staging files, which are gone afterwards.
        rows = sorted(suite.rows, key=lambda r: order[r.cell])
        bundles = sorted(suite.analysis_results, key=lambda b: order[(b.model, b.mode, b.scenario_id, b.iteration)])
        times = {cell: _recorded_times(session) for cell, session in zip(cells, sessions, strict=True)}
        warnings = tuple(w for s in sessions for w in s.warnings)
        written = _move_into_place(staging, RunPaths(staging, run_id), out, order, times, warnings)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in made:  # innermost first: a failed import leaves no trace, not even a folder
            if folder.exists() and not any(folder.iterdir()):
                folder.rmdir()
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return ImportResult(
        rows=tuple(attrs.evolve(r, started_at=times[r.cell][0], completed_at=times[r.cell][1]) for r in rows),
        bundles=tuple(bundles),
        warnings=warnings,
        **written,
    )


def _move_into_place(
    staging: Path,
    staged: RunPaths,
    out: Path,
    order: dict[Cell, int],
    times: dict[Cell, tuple[str, str]],
    warnings: tuple[str, ...],
) -> dict[str, Any]:
    """Traces, analysis, rows, then the manifest: each file replaced whole, the manifest last."""
    sessions_dir = out.parent / "sessions"
    # The runner puts traces under <reports>/sessions (or, per run, <reports>/<runId>/sessions).
    for traces in (staging / "sessions", staging / staged.run_id / "sessions"):
        if traces.is_dir():
            for trace in sorted(p for p in traces.rglob("*") if p.is_file()):
                target = sessions_dir / trace.relative_to(traces)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(trace, target)
    analysis = None
    if staged.analysis.is_file() and staged.analysis.stat().st_size:
        analysis = out.with_name(out.stem + ".analysis.jsonl")
        atomic_write_text(analysis, _reordered(staged.analysis, order))
    atomic_write_text(out, _reordered(staged.jsonl, order, times))
    manifest = read_manifest(staged.manifest)
    manifest_path = out.with_name(out.stem + ".manifest.json")
    write_manifest(manifest_path, attrs.evolve(manifest, warnings=warnings + tuple(manifest.warnings)), Redactor())
    return {"jsonl": out, "analysis": analysis, "manifest": manifest_path, "sessions_dir": sessions_dir}


def _reordered(path: Path, order: dict[Cell, int], times: dict[Cell, tuple[str, str]] | None = None) -> str:
    """The lines the runner wrote (already redacted), in input order; rows get their recorded times."""
    records = []
    for line in path.read_bytes().splitlines():
        record = parse_json(line)  # orjson, or the stdlib for what it refuses (an integer beyond 64 bits in extensions)
        cell = (record["model"], record["mode"], record["scenarioId"], record["iteration"])
        if times is not None:
            record["startedAt"], record["completedAt"] = times[cell]
        records.append((order[cell], record))
    records.sort(key=lambda pair: pair[0])
    return "".join(dumps(record) + "\n" for _, record in records)


def _recorded_times(session: RecordedSession) -> tuple[str, str]:
    """When the session happened; for a file without timestamps, its modification time."""
    if session.started_at and session.completed_at:
        return session.started_at, session.completed_at
    try:
        moment = datetime.fromtimestamp(Path(session.file).stat().st_mtime, tz=UTC)
    except OSError:
        moment = datetime.now(UTC)
    end = moment + timedelta(milliseconds=session.result.metrics.timing.wall_ms)
    return _iso(moment), _iso(end)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _input_hash(files: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path).encode() + b"\0")
        digest.update(path.read_bytes())
    return "sha256:" + digest.hexdigest()


__all__ = ["DEFAULT_MODE", "ImportResult", "expand_inputs", "import_sessions", "load_all"]
