"""``profiler import``: recorded sessions -> ProfileRows (+ traces, analysis, manifest).

Every file is parsed before anything is written: one bad file prints one line
naming it (and the line or key at fault), the command exits 1 and writes
nothing. Otherwise each session becomes a row as if ``profiler run`` had
produced it: the installed collectors and analyzers run on it, and the scorer
too when ``--scorer`` is given.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import click

from ._async import await_me_maybe
from ._signature import accepts_keyword
from .errors import ProfilerError
from .importers import RecordedSession, check_format, load_sessions, with_model
from .importers._build import iso
from .model import (
    CheckpointResult,
    CustomMetric,
    PluginRecord,
    ProfileRow,
    RunCounts,
    RunManifest,
    Scenario,
    ScorerContext,
    ScorerResult,
    SessionAnalysisBundle,
    ToolCallSummary,
)
from .textcut import cut_lines

DEFAULT_MODE = "imported"
PROVIDER_ID = "transcripts"
#: File name endings picked up when a directory is given, per format.
_SUFFIXES = {
    "claude-code": (".jsonl",),
    "codex": (".jsonl",),
    "openai": (".json", ".jsonl"),
    "anthropic": (".json", ".jsonl"),
    "opencode": (".json",),
    "trace": (".json",),
}


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
            files.extend(sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(_SUFFIXES.get(format, ('.json', '.jsonl')))))
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
    return sessions, problems


def _cells(sessions: Sequence[RecordedSession], scenario: str | None) -> list[tuple[str, int]]:
    """(scenario id, iteration) of each session: iterations count from 0 per scenario, in input order."""
    counts: dict[str, int] = {}
    cells = []
    for session in sessions:
        scenario_id = scenario or session.scenario_hint or session.stem or session.session_id
        cells.append((scenario_id, counts.get(scenario_id, 0)))
        counts[scenario_id] = counts.get(scenario_id, 0) + 1
    return cells


def _times(session: RecordedSession) -> tuple[str, str]:
    from .runner.iteration import now_iso

    if session.started_at and session.completed_at:
        return session.started_at, session.completed_at
    # No timestamps in the file: the file's modification time is the best "when" there is.
    try:
        moment = datetime.fromtimestamp(Path(session.file).stat().st_mtime, tz=UTC)
    except OSError:
        return now_iso(), now_iso()
    return iso(moment), iso(moment + timedelta(milliseconds=session.result.metrics.timing.wall_ms))


async def _measure(
    session: RecordedSession,
    scenario: Scenario,
    *,
    mode: str,
    model: str,
    iteration: int,
    collectors: Sequence[Any],
    analyzers: Sequence[Any],
    scorer: Any,
    units: dict[str, str],
) -> tuple[dict[str, Any], dict[str, Any], ScorerResult | None, str | None, str | None]:
    """Run collectors, analyzers and scorer on one session; a failing component is the row's error, as in a run."""
    metrics: dict[str, Any] = {}
    analysis: dict[str, Any] = {}
    scored = None
    try:
        for collector in collectors:
            kwargs = {"model": model} if accepts_keyword(collector.collect, "model") else {}
            for metric in (
                await await_me_maybe(collector.collect(session.result, scenario, mode, session.trace, **kwargs)) or ()
            ):
                if not isinstance(metric, CustomMetric):
                    raise ProfilerError(
                        f"collector {collector.id!r} returned {type(metric).__name__}, expected CustomMetric"
                    )
                metrics[metric.name] = metric.value
                units.setdefault(metric.name, metric.unit)
        for analyzer in analyzers:
            analysis[analyzer.name] = await await_me_maybe(analyzer.analyze(session.trace, scenario, mode))
        if scorer is not None:
            context = ScorerContext(
                agent_output=session.text,
                trace=session.trace,
                mode=mode,
                model=model,
                iteration=iteration,
                metadata={"source": session.source, "format": session.format},
            )
            scored = await await_me_maybe(scorer.evaluate(scenario, context))
            if not isinstance(scored, ScorerResult):
                raise ProfilerError(f"scorer {scorer.id!r} returned {type(scored).__name__}, expected ScorerResult")
            for metric in scored.metrics:
                metrics[metric.name] = metric.value
                units.setdefault(metric.name, metric.unit)
            if scored.error:
                return metrics, analysis, scored, f"scorer {scorer.id!r}: {scored.error}", "scorer_error"
    except Exception as exc:  # noqa: BLE001 - recorded on the row like the runner does
        return metrics, analysis, scored, f"{type(exc).__name__}: {exc}", "component_error"
    return metrics, analysis, scored, None, None


def _row(
    session: RecordedSession,
    *,
    run_id: str,
    scenario_id: str,
    mode: str,
    model: str,
    iteration: int,
    metrics: dict[str, Any],
    scored: ScorerResult | None,
    error: str | None,
    error_code: str | None,
) -> ProfileRow:
    started, completed = _times(session)
    result = session.result
    extensions = dict(metrics)
    # The importer knows where the cost came from better than the cost collector, which sees a non-zero cost as "provider".
    extensions["cost_source"] = session.cost_source
    if session.error and error is None:
        error, error_code = session.error, "session_error"
    if scored is not None:
        success = scored.success and error is None
        details = tuple(
            CheckpointResult(
                id=d.id, description=d.description, passed=d.passed, actual=d.actual, expected=d.expected, error=d.error
            )
            for d in scored.details
        )
        passed, total, output_valid = scored.passed, scored.total, scored.output_valid
    else:
        # No scorer: a session that completed without error counts as a success, with no checkpoints.
        success = error is None and result.completion_reason == "stop"
        details, passed, total, output_valid = (), 0, 0, True
    reason = result.completion_reason
    if error and reason == "stop":
        reason = "error"
    return ProfileRow(
        run_id=run_id,
        scenario_id=scenario_id,
        mode=mode,
        model=model,
        iteration=iteration,
        started_at=started,
        completed_at=completed,
        tokens=result.metrics.tokens,
        timing=result.metrics.timing,
        tool_calls=ToolCallSummary.from_records(result.metrics.tool_calls),
        cost=result.metrics.cost,
        success=success,
        checkpoints_passed=passed,
        checkpoints_total=total,
        checkpoint_details=details,
        output_valid=output_valid,
        provider=PROVIDER_ID,
        session_id=session.session_id,
        agent_turns=session.trace.summary.total_turns,
        completion_reason=reason,
        extensions=extensions,
        error=error,
        error_code=error_code,
    )


def _input_hash(files: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path).encode() + b"\0")
        digest.update(path.read_bytes())
    return "sha256:" + digest.hexdigest()


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
) -> ImportResult:
    """Measure the sessions, then write rows, traces, analysis and manifest (each file atomically)."""
    import trio

    from .redact import Redactor
    from .runner.iteration import now_iso, session_export_path
    from .serde import to_json
    from .store import atomic_write_text, write_manifest

    registry = manager.registry
    collectors = [registry.create("collectors", cid, {}) for cid in registry.ids("collectors")]
    analyzers = [registry.create("analyzers", aid, {}) for aid in registry.ids("analyzers")]
    scorer = registry.create("scorers", scorer_id, {}) if scorer_id else None
    run_id = run_id or out.stem
    started_at = now_iso()
    units: dict[str, str] = {"cost_source": ""}
    cells = _cells(sessions, scenario)

    async def measure_all():
        done = []
        for session, (scenario_id, iteration) in zip(sessions, cells, strict=True):
            model = session.model or "unknown"
            spec = Scenario(
                id=scenario_id, name=scenario_id, prompt=session.prompt, extensions={"importedFrom": session.source}
            )
            measured = await _measure(
                session,
                spec,
                mode=mode,
                model=model,
                iteration=iteration,
                collectors=collectors,
                analyzers=analyzers,
                scorer=scorer,
                units=units,
            )
            done.append((session, scenario_id, iteration, model, *measured))
        return done

    measured = trio.run(measure_all)
    rows, bundles = [], []
    for session, scenario_id, iteration, model, metrics, analysis, scored, error, code in measured:
        rows.append(
            _row(
                session,
                run_id=run_id,
                scenario_id=scenario_id,
                mode=mode,
                model=model,
                iteration=iteration,
                metrics=metrics,
                scored=scored,
                error=error,
                error_code=code,
            )
        )
        if analysis:
            bundles.append(
                SessionAnalysisBundle(
                    session_id=session.session_id,
                    scenario_id=scenario_id,
                    mode=mode,
                    model=model,
                    iteration=iteration,
                    results=analysis,
                )
            )

    redact = Redactor()
    sessions_dir = out.parent / "sessions"
    for session, (scenario_id, iteration) in zip(sessions, cells, strict=True):
        path = session_export_path(sessions_dir, scenario_id, mode, iteration, None)
        atomic_write_text(path, redact(to_json(session.trace, indent=2)) + "\n")
    analysis_path = out.with_name(out.stem + ".analysis.jsonl") if bundles else None
    if analysis_path is not None:
        atomic_write_text(analysis_path, "".join(redact(to_json(b)) + "\n" for b in bundles))
    atomic_write_text(out, "".join(redact(to_json(r)) + "\n" for r in rows))

    warnings = tuple(w for s in sessions for w in s.warnings)
    scenario_ids = list(dict.fromkeys(c[0] for c in cells))
    manifest = RunManifest(
        run_id=run_id,
        profile_hash=_input_hash(files),
        plugins=tuple(
            PluginRecord(name=p.name, distribution=p.distribution, version=p.version)
            for p in sorted(manager.plugins.values(), key=lambda p: p.name)
            if p.error is None
        ),
        started_at=started_at,
        completed_at=now_iso(),
        status="completed",
        counts=RunCounts(
            expected=len(rows),
            completed=len(rows),
            errored=sum(1 for r in rows if r.error),
            succeeded=sum(1 for r in rows if r.success),
        ),
        metric_units=units,
        warnings=warnings,
        provider=PROVIDER_ID,
        models=tuple(dict.fromkeys(r.model for r in rows)),
        modes=(mode,),
        scenarios=tuple(scenario_ids),
        repetitions=max((i + 1 for _, i in cells), default=0),
    )
    manifest_path = out.with_name(out.stem + ".manifest.json")
    write_manifest(manifest_path, manifest, redact)
    return ImportResult(
        rows=tuple(rows),
        bundles=tuple(bundles),
        jsonl=out,
        analysis=analysis_path,
        manifest=manifest_path,
        sessions_dir=sessions_dir,
        warnings=warnings,
    )


def _known_format(value: str) -> str:
    # Checked against the registry at run time: plugins add formats (profiler_register_importers).
    from .cli import _manager

    try:
        return check_format(value, _manager().registry)
    except ProfilerError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command("import")
@click.argument("format", metavar="FORMAT", callback=lambda ctx, param, value: _known_format(value))
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Results JSONL to write.")
@click.option("--mode", default=DEFAULT_MODE, show_default=True, help="Mode recorded on every row.")
@click.option("--scenario", help="Scenario id of every row (default: the run's scenarioId, else the file name).")
@click.option("--scorer", "scorer_id", metavar="ID", help="Score each session with this scorer (default: none).")
@click.option("--run-id", help="Run id of the rows (default: the --out file name without .jsonl).")
@click.option("--model", help="Model to record (and price) when a file names none, e.g. for traces.")
def import_command(format, files, out, mode, scenario, scorer_id, run_id, model):
    """Turn recorded agent sessions into profile rows that `profiler report` can read.

    FORMAT is one of openai, anthropic, claude-code, codex, opencode, trace. Each
    session becomes one row; traces go to <out dir>/sessions/, analysis to
    <out>.analysis.jsonl, the manifest to <out>.manifest.json. A bad file is
    reported (file and line or key) and nothing is written.

    \b
    Examples:
      profiler import claude-code ~/.claude/projects/-home-me-myrepo/*.jsonl --out results/claude.jsonl
      profiler import codex ~/.codex/sessions/2026/11/22/ --out results/codex.jsonl
      profiler import opencode exports/*.json --out results/opencode.jsonl --mode with_skill
      profiler import openai runs.jsonl --out results/runs.jsonl --scenario refund-001
    """
    from rich.console import Console

    from .cli import _manager
    from .cli_run import print_summary

    inputs = expand_inputs(format, files)
    if not inputs:
        raise click.UsageError("no input files (the directories given hold none of this format)")
    sessions, problems = load_all(format, inputs)
    if problems:
        for line in problems:
            click.echo(f"Error: {cut_lines(line)}", err=True)
        click.echo(f"{len(problems)} of {len(inputs)} file(s) could not be imported; nothing written", err=True)
        sys.exit(1)
    if not sessions:
        click.echo("Error: the files hold no session; nothing written", err=True)
        sys.exit(1)
    sessions = [with_model(s, model) for s in sessions]
    result = import_sessions(
        sessions,
        files=inputs,
        out=out,
        manager=_manager(),
        mode=mode,
        scenario=scenario,
        scorer_id=scorer_id,
        run_id=run_id,
    )
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    print_summary(result.rows, Console())
    click.echo(f"Imported {len(result.rows)} session(s) from {len(inputs)} file(s)")
    click.echo(f"Results:  {result.jsonl}")
    if result.analysis is not None:
        click.echo(f"Analysis: {result.analysis}")
    click.echo(f"Traces:   {result.sessions_dir}")
    click.echo(f"Manifest: {result.manifest}")


__all__ = ["ImportResult", "expand_inputs", "import_command", "import_sessions", "load_all"]
