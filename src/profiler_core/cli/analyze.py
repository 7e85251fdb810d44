"""``profiler analyze``: run the installed analyzers on exported session traces."""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import ProfilerError
from ..util.textcut import printable
from .context import pass_manager

if TYPE_CHECKING:  # pragma: no cover
    from ..plugins.manager import Registry

if (
    TYPE_CHECKING
):  # the model is imported when a trace is analysed, not when the CLI starts
    from ..model import AnalysisResult, SessionTrace
    from ..plugins.manager import PluginManager

#: Characters of a list or table finding shown in the human table before "… (+N more)".
_CELL_BUDGET = 110


@click.command("analyze")
@click.argument(
    "traces",
    nargs=-1,
    required=True,
    metavar="TRACE...",
    type=click.Path(path_type=str),
)
@click.option(
    "--analyzer",
    "names",
    multiple=True,
    metavar="NAME",
    help="Run only this analyzer (repeatable); default: every installed analyzer.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print a JSON list, one object per trace."
)
@click.option(
    "--summary",
    "summary_only",
    is_flag=True,
    help="Print only the summary over all sessions.",
)
@pass_manager
def analyze(
    manager: PluginManager,
    traces: tuple[str, ...],
    names: tuple[str, ...],
    as_json: bool,
    summary_only: bool,
) -> None:
    """Analyse session traces with the installed analyzers.

    A TRACE is a run's trace store (``reports/<runId>/sessions/traces.jsonl``:
    every session of the run, the last record of each cell), the run's report
    or sessions folder or its run id, or one SessionTrace JSON file. Prints, per trace, each
    analyzer's one-line summary and a compact table of its findings, then a
    summary over all sessions (``--summary``: only that). A file that is not a
    trace is reported on stderr and the others are still analysed; the exit
    status is then 1.

    \b
    Examples:
      profiler analyze reports/run_20261122T051500Z_3f9a/sessions/traces.jsonl
      profiler analyze reports/run_20261122T051500Z_3f9a --summary
      profiler analyze reports/*/sessions/traces.jsonl --analyzer error --analyzer efficiency
      profiler analyze trace.json --json > analysis.json
    """
    try:
        analyzers = _build_analyzers(manager.registry, names)
    except ProfilerError as exc:
        raise click.ClickException(str(exc)) from None

    from .analyze_summary import AnalysisSummary

    failed = False
    # JSON objects printed so far: the list is streamed, one trace's results in memory
    # at a time
    listed = 0
    summary = AnalysisSummary()
    for path, scenario_id, trace in _traces(traces):
        if trace is None:  # `path` is then the message saying why
            failed = True
            summary.failed += 1
            click.echo(f"Error: {printable(path)}", err=True)
            continue
        results, errors = _run_analyzers(analyzers, trace, path, scenario_id)
        if not as_json:  # the JSON list has no summary: nothing to collect
            summary.add(results)
        for message in errors:
            failed = True
            click.echo(f"Error: {printable(message)}", err=True)
        if as_json:
            from ..storage.serde import unstructure

            item = {
                "trace": path,
                "sessionId": trace.session_id,
                "results": {n: unstructure(r) for n, r in results.items()},
            }
            # The same text as json.dumps(list, indent=2), one item at a time.
            text = textwrap.indent(json.dumps(item, indent=2, ensure_ascii=False), "  ")
            click.echo(("[\n" if not listed else ",\n") + text, nl=False)
            listed += 1
        elif not summary_only:
            _print_trace(path, trace, results)
    if as_json:
        click.echo("\n]" if listed else "[]")
    elif summary.sessions:
        summary.print(_console())
    if failed:
        raise click.exceptions.Exit(1)


def _build_analyzers(registry: Registry, names: tuple[str, ...]) -> list[Any]:
    """Instantiate the chosen analyzers (all installed ones when none are named)."""
    chosen = list(dict.fromkeys(names)) if names else list(registry.analyzers)
    if not chosen:
        raise ProfilerError(
            "no analyzers are installed (the built-in ones come from the "
            "'builtin_analyzers' plugin; "
            "check PROFILER_LOAD_PLUGINS and `profiler list-plugins`)"
        )
    analyzers = []
    for name in chosen:
        try:
            analyzers.append(registry.create("analyzers", name, options={}))
        except ProfilerError:
            raise
        # a plugin's broken factory gets one line, not a traceback
        except Exception as exc:  # noqa: BLE001
            raise ProfilerError(
                f"analyzer {name!r} could not be created: {type(exc).__name__}: {exc}"
            ) from None
    return analyzers


def _traces(paths: tuple[str, ...]) -> Iterator[tuple[str, str, SessionTrace | None]]:
    """(label, scenario id, trace) of every trace named; (message, "", None) for what
    cannot be read."""
    from ..storage.runs import run_folder
    from ..storage.tracestore import find_store, is_store, iter_latest

    for path in paths:
        try:
            path = str(
                run_folder(path)
            )  # a run id: its report folder, wherever its profile put it
        except ProfilerError as exc:
            yield str(exc), "", None
            continue
        if Path(path).is_dir():
            # A run's report or sessions folder, as `profiler traces export` takes it.
            try:
                path = str(find_store(Path(path)))
            except ProfilerError as exc:
                yield str(exc), "", None
                continue
        if is_store(Path(path)):
            problems: list[str] = []
            found = 0
            try:
                for r, with_model in iter_latest(Path(path), problems):
                    found += 1
                    model = f"+{r.model}" if with_model else ""
                    yield (
                        f"{path}#{r.scenario_id}/{r.mode}{model}-iter-{r.iteration}",
                        r.scenario_id,
                        r.trace,
                    )
            except ProfilerError as exc:
                problems.append(str(exc))
            for problem in problems:
                yield problem, "", None
            if not found and not problems:
                yield (
                    f"{path}: an empty trace store (no session was exported)",
                    "",
                    None,
                )
            continue
        try:
            yield path, Path(path).stem or "trace", _read_trace(path)
        except ProfilerError as exc:
            yield str(exc), "", None


def _read_trace(path: str) -> SessionTrace:
    """Load one exported trace; any problem becomes a ``ProfilerError`` naming the file."""
    from ..model import SessionTrace
    from ..storage.serde import from_json

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfilerError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ProfilerError(
            f"{path}: not a text file (expected SessionTrace JSON)"
        ) from None
    except OSError as exc:
        raise ProfilerError(f"{path}: cannot read ({exc.strerror or exc})") from None
    lines = text.lstrip().splitlines()
    if len(lines) > 1 and lines[0].startswith("{") and lines[1].startswith("{"):
        # One JSON object per line: a results or analysis JSONL, not one trace.
        raise ProfilerError(
            f"{path}: a JSONL file (one object per line), not a session trace; "
            "analyze reads a run's trace store "
            "(reports/<runId>/sessions/traces.jsonl) or SessionTrace JSON files"
        )
    return from_json(text, SessionTrace, source=path)


def _run_analyzers(
    analyzers: list[Any], trace: SessionTrace, path: str, scenario_id: str
) -> tuple[dict[str, AnalysisResult], list[str]]:
    """Each analyzer's result by name, and one message per analyzer that failed (naming
    it and the file)."""
    from ..model import AnalysisResult, Scenario

    # The CLI has no profile: the scenario is a stand-in with the recorded id (or the file's name).
    scenario = Scenario(id=scenario_id, name=scenario_id, prompt="")
    results: dict[str, AnalysisResult] = {}
    errors: list[str] = []
    for analyzer in analyzers:
        name = getattr(analyzer, "name", type(analyzer).__name__)
        try:
            result = analyzer.analyze(trace, scenario, "")
            if inspect.isawaitable(result):
                result = _wait(result)
        except ProfilerError as exc:
            errors.append(f"{path}: analyzer {name!r}: {exc}")
            continue
        # one plugin's bug must not hide the other analyzers' results
        except Exception as exc:  # noqa: BLE001
            errors.append(
                f"{path}: analyzer {name!r} failed: {type(exc).__name__}: {exc}"
            )
            continue
        if not isinstance(result, AnalysisResult):
            errors.append(
                f"{path}: analyzer {name!r} returned {type(result).__name__}, "
                "expected AnalysisResult"
            )
            continue
        results[name] = result
    return results, errors


def _wait(awaitable: Any) -> Any:
    """Run an async analyzer's coroutine to completion (the runner's "await me maybe")."""
    import trio

    async def wait() -> Any:
        return await awaitable

    return trio.run(wait)


# -- human output ---------------------------------------------------------------


def _console() -> Any:
    from rich.console import Console

    return Console(highlight=False)


def _print_trace(
    path: str, trace: SessionTrace, results: dict[str, AnalysisResult]
) -> None:
    """One trace: a heading, then per analyzer its summary and its findings in two columns.

    Plain lines (styled only on a terminal: click drops the styles in a pipe), written
    at once: laying each trace out as rich tables cost ~30 ms, most of a 20,000-trace run's
    six minutes.
    """
    from ..model import ToolCallEvent

    calls = sum(1 for e in trace.events if type(e) is ToolCallEvent)
    heading = (
        f" (session {trace.session_id}: {len(trace.events)} events, "
        f"{len(trace.turns)} turns, {calls} tool calls)"
    )
    lines = [
        click.style(printable(path, one_line=True), bold=True)
        + printable(heading, one_line=True)
    ]
    for name, result in results.items():
        lines.append(
            "  "
            f"{click.style(printable(name, one_line=True), bold=True, fg='cyan')} "
            f" {printable(result.summary)}"
        )
        if not result.findings:
            continue
        rows = [
            (printable(key, one_line=True), printable(format_finding(finding)))
            for key, finding in result.findings.items()
        ]
        width = max(len(key) for key, _ in rows)
        lines += [
            f"    {click.style(key.ljust(width), dim=True)}  {value}"
            for key, value in rows
        ]
    lines.append("")
    click.echo("\n".join(lines))


def format_finding(finding: Any) -> str:
    """A finding as one short human string (``15.0% (duplicate / total tool calls)``,
    ``a ×2, b ×1``)."""
    from ..model import (
        ListFinding,
        NumberFinding,
        RatioFinding,
        StringFinding,
        TableFinding,
    )

    if isinstance(finding, NumberFinding):
        return f"{_number(finding.value)} {finding.unit}".strip()
    if isinstance(finding, RatioFinding):
        return f"{finding.value * 100:.1f}% ({finding.label})"
    if isinstance(finding, StringFinding):
        return finding.value
    if isinstance(finding, ListFinding):
        return _budgeted(list(finding.values))
    if isinstance(finding, TableFinding):
        rows = list(finding.rows)
        counted = bool(finding.headers) and finding.headers[-1] in (
            "count",
            "occurrences",
        )
        if counted:
            # Most frequent first: in one screen the top patterns are what matters.
            rows.sort(key=lambda row: -_as_number(row[-1]) if row else 0)
            return _budgeted(
                [
                    " ".join(row[:-1]) + f" ×{row[-1]}"
                    if len(row) > 1
                    else " ".join(row)
                    for row in rows
                ]
            )
        return _budgeted([" ".join(row) for row in rows])
    return str(finding)


def _as_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def _number(value: float) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{int(value):,}" if abs(value) >= 10_000 else str(int(value))


def _budgeted(items: list[str]) -> str:
    """Items joined by commas until the character budget is spent, then ``… (+N more)``."""
    if not items:
        return "-"
    shown: list[str] = []
    used = 0
    for item in items:
        if shown and used + len(item) > _CELL_BUDGET:
            break
        shown.append(item)
        used += len(item) + 2
    rest = len(items) - len(shown)
    return ", ".join(shown) + (f", … (+{rest} more)" if rest else "")
