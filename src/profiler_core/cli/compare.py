"""``profiler compare BASE NEW``: is the new run worse than the baseline? Gates a CI job on it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command("compare")
@click.argument("base", metavar="BASE")
@click.argument("new", metavar="NEW")
@click.option("--fail-on", "fail_on", multiple=True, metavar="METRIC:±N%|success_rate:-Npp|newly-failing[:Npp]",
              help="Exit 1 when METRIC is worse than this tolerance: a one-sided "
                  "test per scenario, Holm across gates; "
                   "newly-failing: when a scenario that passed every iteration "
                       "in BASE fails one in NEW (or drops N points) "
                   "(repeatable).")  # fmt: skip
@click.option("--margin", type=click.FloatRange(min=0, min_open=True), default=None, metavar="POINTS",
              help="Print the rows per mode that catch a change this many points "
                  "past each tolerance (default: the tolerance).")  # fmt: skip
@click.option(
    "--markdown",
    "markdown_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write a summary for a pull-request comment.",
)
@click.option(
    "--junit",
    "junit_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write JUnit XML: a case per (mode, scenario) of NEW, and per gate.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the comparison as JSON instead of tables.",
)
@click.option(
    "--results-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("results"),
    show_default=True,
    help="Where a run id is looked up.",
)
def compare_command(base: str, new: str, fail_on: tuple[str, ...], margin: float | None, markdown_file: Path | None,
                    junit_file: Path | None, as_json: bool, results_dir: Path) -> None:  # fmt: skip
    """Compare run NEW with run BASE, per mode and metric, and gate on regressions.

    BASE and NEW are run ids (looked up in --results-dir) or results files.
    Cells are matched by (model, mode, scenario). A gate compares each scenario
    with itself and tests "worse than the tolerance" one-sided, Holm-adjusted
    across the gates. Exit status: 0 every gate passed (or none given); 1 a gate
    regressed (the interval's good end is past the tolerance); 3 inconclusive
    or a possible regression (only the point estimate is past it); 1 also for
    bad input.

    \b
    Examples:
      profiler compare baseline/results.jsonl results/run_x.jsonl
      profiler compare run_a run_b --fail-on "success_rate:-5pp" --fail-on "cost:+10%"
      profiler compare base.jsonl new.jsonl --fail-on cost:+10% --junit compare.xml
    """
    from rich.console import Console

    from ..compare import Gate, compare_runs
    from ..compare import newly_failing as nf
    from ..compare.render import as_json as to_json_doc
    from ..compare.render import markdown, print_terminal
    from ..report.junit import write_junit
    from ..storage.paths import refuse_links, write_output_text
    from ..storage.runfiles import resolve_results
    from ..util.textcut import printable

    gates = [Gate.parse(text) for text in fail_on if not nf.is_newly_failing(text)]
    scenario_gates = [
        nf.NewlyFailingGate.parse(text) for text in fail_on if nf.is_newly_failing(text)
    ]
    base_path, new_path = (
        resolve_results(base, results_dir),
        resolve_results(new, results_dir),
    )
    comparison = compare_runs(base_path, new_path, gates, margin=margin)
    dropped = [nf.judge(gate, base_path, new_path) for gate in scenario_gates]
    comparison = nf.with_scenario_gates(comparison, dropped)
    for problem in comparison.problems:
        click.echo(f"warning: {printable(problem)}", err=True)
    if as_json:
        doc = to_json_doc(comparison)
        if dropped:
            doc["scenarioGates"] = nf.as_json(dropped)
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)  # a CI log: no terminal to size the tables to
        print_terminal(comparison, console)
        for line in nf.lines(dropped):
            console.print(line, markup=False, highlight=False)
    if markdown_file is not None:
        markdown_file.parent.mkdir(parents=True, exist_ok=True)
        write_output_text(
            markdown_file, markdown(comparison) + nf.markdown(dropped)
        )  # never through a link planted at its name
    if junit_file is not None:
        junit_file.parent.mkdir(parents=True, exist_ok=True)
        refuse_links(
            junit_file
        )  # the file is replaced, never written through a link; a link is refused, not replaced
        write_junit(junit_file, comparison.cases)
    exit_code = nf.exit_code(comparison.exit_code, dropped)
    if gates or scenario_gates:
        words = {
            "pass": "no regression",
            "regression": "REGRESSION",
            "inconclusive": "INCONCLUSIVE (the samples are too small to tell; see the rows a "
            "margin needs)",
        }
        outcome = "regression" if exit_code == 1 else comparison.outcome
        click.echo(f"Outcome: {words[outcome]} (exit {exit_code})", err=as_json)
    sys.exit(exit_code)
