"""``profiler analyze``: run the installed analyzers on exported session traces."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import ProfilerError
from .context import pass_manager

if TYPE_CHECKING:  # the model is imported when a trace is analysed, not when the CLI starts
    from ..model import AnalysisResult, SessionTrace
    from ..plugins import PluginManager

#: Characters of a list or table finding shown in the human table before "… (+N more)".
_CELL_BUDGET = 110


@click.command("analyze")
@click.argument(
    "traces", nargs=-1, required=True, metavar="TRACE...", type=click.Path(dir_okay=False, path_type=str)
)
@click.option(
    "--analyzer",
    "names",
    multiple=True,
    metavar="NAME",
    help="Run only this analyzer (repeatable); default: every installed analyzer.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per trace.")
@pass_manager
def analyze(manager: PluginManager, traces: tuple[str, ...], names: tuple[str, ...], as_json: bool) -> None:
    """Analyse session traces with the installed analyzers.

    A TRACE is a run's trace store (``reports/<runId>/sessions/traces.jsonl``:
    every session of the run, the last record of each cell) or one SessionTrace
    JSON file. Prints, per trace, each analyzer's one-line summary and a compact
    table of its findings. A file that is not a trace is reported on stderr and
    the others are still analysed; the exit status is then 1.

    \b
    Examples:
      profiler analyze reports/run_20261122T051500Z_3f9a/sessions/traces.jsonl
      profiler analyze reports/*/sessions/traces.jsonl --analyzer error --analyzer efficiency
      profiler analyze trace.json --json > analysis.json
    """
    try:
        analyzers = _build_analyzers(manager.registry, names)
    except ProfilerError as exc:
        raise click.ClickException(str(exc)) from None

    outputs: list[dict[str, Any]] = []
    failed = False
    console = None if as_json else _console()
    for path, scenario_id, trace in _traces(traces):
        if trace is None:  # `path` is then the message saying why
            failed = True
            click.echo(f"Error: {path}", err=True)
            continue
        results, errors = _run_analyzers(analyzers, trace, path, scenario_id)
        for message in errors:
            failed = True
            click.echo(f"Error: {message}", err=True)
        if as_json:
            from ..serde import unstructure

            outputs.append(
                {
                    "trace": path,
                    "sessionId": trace.session_id,
                    "results": {name: unstructure(result) for name, result in results.items()},
                }
            )
        else:
            _print_trace(console, path, trace, results)
    if as_json:
        import json

        click.echo(json.dumps(outputs, indent=2, ensure_ascii=False))
    if failed:
        raise click.exceptions.Exit(1)


def _build_analyzers(registry: Any, names: tuple[str, ...]) -> list[Any]:
    """Instantiate the chosen analyzers (all installed ones when none are named)."""
    chosen = list(dict.fromkeys(names)) if names else list(registry.analyzers)
    if not chosen:
        raise ProfilerError(
            "no analyzers are installed (the built-in ones come from the 'builtin_analyzers' plugin; "
            "check PROFILER_LOAD_PLUGINS and `profiler list-plugins`)"
        )
    analyzers = []
    for name in chosen:
        try:
            analyzers.append(registry.create("analyzers", name, options={}))
        except ProfilerError:
            raise
        except Exception as exc:  # noqa: BLE001 - a plugin's broken factory gets one line, not a traceback
            raise ProfilerError(f"analyzer {name!r} could not be created: {type(exc).__name__}: {exc}") from None
    return analyzers


def _traces(paths: tuple[str, ...]) -> Iterator[tuple[str, str, SessionTrace | None]]:
    """(label, scenario id, trace) of every trace named; (message, "", None) for what cannot be read."""
    from ..tracestore import is_store, iter_latest

    for path in paths:
        if is_store(Path(path)):
            problems: list[str] = []
            found = 0
            try:
                for r, with_model in iter_latest(Path(path), problems):
                    found += 1
                    model = f"+{r.model}" if with_model else ""
                    yield f"{path}#{r.scenario_id}/{r.mode}{model}-iter-{r.iteration}", r.scenario_id, r.trace
            except ProfilerError as exc:
                problems.append(str(exc))
            for problem in problems:
                yield problem, "", None
            if not found and not problems:
                yield f"{path}: an empty trace store (no session was exported)", "", None
            continue
        try:
            yield path, Path(path).stem or "trace", _read_trace(path)
        except ProfilerError as exc:
            yield str(exc), "", None


def _read_trace(path: str) -> SessionTrace:
    """Load one exported trace; any problem becomes a ``ProfilerError`` naming the file."""
    from ..model import SessionTrace
    from ..serde import from_json

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfilerError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ProfilerError(f"{path}: not a text file (expected SessionTrace JSON)") from None
    except OSError as exc:
        raise ProfilerError(f"{path}: cannot read ({exc.strerror or exc})") from None
    lines = text.lstrip().splitlines()
    if len(lines) > 1 and lines[0].startswith("{") and lines[1].startswith("{"):
        # One JSON object per line: a results or analysis JSONL, not one trace.
        raise ProfilerError(
            f"{path}: a JSONL file (one object per line), not a session trace; "
            "analyze reads a run's trace store (reports/<runId>/sessions/traces.jsonl) or SessionTrace JSON files"
        )
    return from_json(text, SessionTrace, source=path)


def _run_analyzers(
    analyzers: list[Any], trace: SessionTrace, path: str, scenario_id: str
) -> tuple[dict[str, AnalysisResult], list[str]]:
    """Each analyzer's result by name, and one message per analyzer that failed (naming it and the file)."""
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
        except Exception as exc:  # noqa: BLE001 - one plugin's bug must not hide the other analyzers' results
            errors.append(f"{path}: analyzer {name!r} failed: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(result, AnalysisResult):
            errors.append(f"{path}: analyzer {name!r} returned {type(result).__name__}, expected AnalysisResult")
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


def _print_trace(console: Any, path: str, trace: SessionTrace, results: dict[str, AnalysisResult]) -> None:
    """One trace: a heading, then per analyzer its summary and a finding/value table."""
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    from ..model import ToolCallEvent

    calls = sum(1 for e in trace.events if type(e) is ToolCallEvent)
    heading = Text()
    heading.append(path, style="bold")
    heading.append(
        f" (session {trace.session_id}: {len(trace.events)} events, {len(trace.turns)} turns, {calls} tool calls)"
    )
    # soft_wrap: long paths and summaries stay on one line (terminals wrap them; pipes and greps don't break).
    console.print(heading, soft_wrap=True)
    for name, result in results.items():
        line = Text("  ")
        line.append(name, style="bold cyan")
        line.append(f"  {result.summary}")
        console.print(line, soft_wrap=True)
        if not result.findings:
            continue
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0), pad_edge=False)
        table.add_column("finding", style="dim", no_wrap=True)
        table.add_column("value", overflow="fold")
        for key, finding in result.findings.items():
            table.add_row(Text(key), Text(format_finding(finding)))
        console.print(Padding(table, (0, 0, 0, 4)))
    console.print()


def format_finding(finding: Any) -> str:
    """A finding as one short human string (``15.0% (duplicate / total tool calls)``, ``a ×2, b ×1``)."""
    from ..model import ListFinding, NumberFinding, RatioFinding, StringFinding, TableFinding

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
        counted = bool(finding.headers) and finding.headers[-1] in ("count", "occurrences")
        if counted:
            # Most frequent first: in one screen the top patterns are what matters.
            rows.sort(key=lambda row: -_as_number(row[-1]) if row else 0)
            return _budgeted([" ".join(row[:-1]) + f" ×{row[-1]}" if len(row) > 1 else " ".join(row) for row in rows])
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
