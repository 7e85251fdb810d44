"""Reports of a run: report.md, analysis.md, report.html and the data exports.

``write_report(results.jsonl, out_dir)`` reads the rows column by column
(``load``), computes the statistics (``summary``) and from them, once, what the
reports show (``view``), which is rendered as Markdown (``markdown``) and HTML
with inline SVG charts (``html``, ``charts``); beside them the CSV / JSON
exports (``exports``). See docs/reports.md.
"""

from __future__ import annotations

import datetime as _dt
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import ProfilerError
from ..model.record import Record
from ..storage.paths import inside, refuse_links, write_output_text

if TYPE_CHECKING:
    from ..plugins.manager import PluginManager
    from .merge import MergedInputs

log = logging.getLogger(__name__)

__all__ = ["ReportPaths", "write_report"]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ReportPaths(Record):
    """Where a report's files were written, and what was wrong with the input."""

    out_dir: Path
    md: Path
    analysis_md: Path
    html: Path
    csv: Path
    json: Path
    summary: Path
    run_id: str
    rows: int
    #: Skipped lines and unreadable side files, one line each; callers print them
    #: (report.md lists them too).
    warnings: tuple[str, ...] = ()
    #: the report's verdict as plain lines (best mode per criterion, then each finding),
    #: for a terminal
    verdict: tuple[str, ...] = ()


class _Clock:
    """Logs the time of each step at debug level (``logging.getLogger("profiler_core.report")``)."""

    def __init__(self) -> None:
        self.last = time.perf_counter()

    def lap(self, what: str) -> None:
        """Log the time since the previous lap."""
        now = time.perf_counter()
        log.debug("%s: %.2f s", what, now - self.last)
        self.last = now


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_report(
    results_path: Path,
    out_dir: Path,
    *,
    baseline: str | None = None,
    manifest_path: Path | None = None,
    parallel: bool | None = None,
    merged_from: MergedInputs | None = None,
    plugins: PluginManager | None = None,
) -> ReportPaths:
    """Write report.md, analysis.md, report.html and data/{results.csv,results.json,summary.json}.

    :param results_path: a results JSONL file (ours or the TypeScript original's; ``.gz`` too).
    :param out_dir: the report folder (created).
    :param baseline: the mode every other mode is compared with (default: the first mode).
    :param manifest_path: the run manifest (default: ``<run>.manifest.json`` beside the
        results; optional).
    :param parallel: False does everything in this process. By default, for big inputs, a helper
        process renders the HTML (overlapping matplotlib with the data work) and, on Linux, a fork
        reads half of the rows and writes half of the CSV.
    :param merged_from: when ``results_path`` merges several inputs (``report.merge``): the report
        names those inputs and their lines, not the merged file.
    :param plugins: the plugin manager asked for report sections (``profiler_report_sections``);
        default: the process-wide one (built-ins and installed plugins).
    """
    from ..storage.store import read_manifest
    from .load import check_results_file, sibling

    results_path = Path(results_path)
    out_dir = Path(out_dir)
    check_results_file(results_path)
    warnings: list[str] = []
    manifest = None
    manifest_file = (
        Path(manifest_path)
        if manifest_path is not None
        else sibling(results_path, ".manifest.json")
    )
    if manifest_path is not None or manifest_file.exists():
        try:
            manifest = read_manifest(manifest_file)
        except ProfilerError as exc:
            warnings.append(f"run manifest not used: {exc}")

    data_dir = out_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "md": out_dir / "report.md",
        "analysis_md": out_dir / "analysis.md",
        "html": out_dir / "report.html",
        "csv": data_dir / "results.csv",
        "json": data_dir / "results.json",
        "summary": data_dir / "summary.json",
    }
    _refuse_planted_links(out_dir, data_dir, paths.values())
    worker = _start_worker(results_path) if parallel is not False else None
    try:
        return _write(
            results_path,
            paths,
            out_dir,
            manifest,
            warnings,
            baseline,
            worker,
            parallel,
            merged_from,
            plugins,
        )
    finally:
        if worker is not None:
            worker.close()


def _repetitions(manifest) -> int | None:
    """The repetitions the run made: a stopped run's rounds, else the profile's number
    (None when unknown)."""
    if manifest is None:
        return None
    if manifest.stop is not None:
        return manifest.stop.repetitions
    return manifest.repetitions or None


def _start_worker(results_path: Path):
    """Start the HTML helper process for big inputs; None when not worth it or not possible."""
    from .worker import MIN_BYTES, HtmlWorker, input_bytes

    try:
        if input_bytes(results_path) < MIN_BYTES:
            return None
        return HtmlWorker()
    except OSError as exc:
        log.debug("report helper not started: %s", exc)
        return None


def _show_model_labels(table, manifest) -> None:
    """Models by the labels the profile gave them (``models: [{id, label}]``, recorded
    in the manifest)."""
    labels = (
        manifest.overrides.get("model_labels") if manifest is not None else None
    ) or {}
    if isinstance(labels, dict) and labels:
        column = table.categorical["model"]
        shown = [str(labels.get(value, value)) for value in column.values]
        if len(set(shown)) == len(shown):  # a label never merges two models' rows
            column.values = shown


def _meta(
    table, manifest, results_path: Path, merged_from: MergedInputs | None
) -> dict[str, Any]:
    """The run's facts the reports show beside the numbers: ids, times, status,
    providers, plugins, rows."""
    run_ids = table.categorical["run_id"].values
    return {
        "runId": manifest.run_id
        if manifest
        else (run_ids[0] if len(run_ids) == 1 else results_path.name),
        "runIds": run_ids,
        "source": merged_from.describe()
        if merged_from is not None
        else str(results_path),
        "generatedAt": _now(),
        "startedAt": manifest.started_at if manifest else min(table.started_at),
        "completedAt": (manifest.completed_at if manifest else None)
        or max(table.completed_at),
        "status": manifest.status if manifest else None,
        "providers": (
            [manifest.provider]
            if manifest and manifest.provider
            else table.categorical["provider"].values
        ),
        "repetitions": _repetitions(manifest),
        "plugins": [
            f"{p.name} {p.version}" if p.version else p.name for p in manifest.plugins
        ]
        if manifest
        else [],
        "rows": table.n,
        "skippedLines": table.skipped,
        "problems": list(table.problems),
        "artifacts": _artifacts(table),
    }


def _artifacts(table) -> list[tuple[str, list[str]]]:
    """Each row's kept artifacts (its ``artifacts`` extension: paths in the run's report
    folder), labelled by its cell."""
    column = table.extensions.get("artifacts")
    if not isinstance(column, list):
        return []
    scenarios = table.categorical["scenario_id"].labels()
    modes = table.categorical["mode"].labels()
    iterations = table.numeric["iteration"].tolist()
    found = []
    for i, files in enumerate(column):
        if isinstance(files, list) and files:
            label = f"{scenarios[i]} · {modes[i]} · iteration {int(iterations[i])}"
            found.append((label, [str(f) for f in files if isinstance(f, str)]))
    return found


def _write(
    results_path,
    paths,
    out_dir,
    manifest,
    warnings,
    baseline,
    helper,
    parallel,
    merged_from=None,
    plugins=None,
) -> ReportPaths:
    from .analysis import read_analysis
    from .exports import JsonArrayWriter, write_csv, write_json
    from .load import load_rows, sibling
    from .markdown import render_analysis, render_report
    from .sections import collect_sections
    from .summary import build_summary
    from .summary_json import summary_json
    from .view import analysis_view, report_view
    from .worker import render_page

    clock = _Clock()
    writer = JsonArrayWriter(paths["json"])
    try:
        table = load_rows(results_path, sink=writer, parallel=parallel)
    except BaseException:
        writer.abort()
        raise
    writer.finish()
    clock.lap(f"read {table.n} rows")
    _show_model_labels(table, manifest)
    if merged_from is not None:
        table.problems = [merged_from.locate(p) for p in table.problems]
    warnings = list(table.problems) + warnings
    meta = _meta(table, manifest, results_path, merged_from)
    run_id = meta["runId"]
    summary = build_summary(
        table,
        run_id=run_id,
        baseline=baseline,
        mode_order=manifest.modes if manifest else (),
        units=dict(manifest.metric_units) if manifest else None,
        repetitions=_repetitions(manifest),
        stop=manifest.stop if manifest else None,
    )
    summary_doc = summary_json(summary, meta)
    sections = collect_sections(_manager(plugins), summary_doc, results_path)
    warnings += [shown.warning for shown in sections if shown.error is not None]
    # what report.md and report.html both show, computed once
    view = report_view(summary, meta, table.problems, sections)
    clock.lap("statistics")
    job = {"summary": summary, "view": view, "path": str(paths["html"])}
    if helper is not None:
        helper.submit(job)
    write_csv(table, paths["csv"], parallel=parallel)
    clock.lap("results.csv")
    write_json(summary_doc, paths["summary"])
    write_output_text(paths["md"], render_report(view))

    analysis_file = sibling(results_path, ".analysis.jsonl")
    digest, analysis_problems = read_analysis(
        analysis_file
    )  # one bundle at a time: memory per distinct value
    warnings += analysis_problems
    write_output_text(
        paths["analysis_md"],
        render_analysis(analysis_view(digest, analysis_problems, str(analysis_file))),
    )

    clock.lap("summary.json, report.md, analysis.md")
    failure = helper.wait() if helper is not None else "not started"
    if failure is not None:
        if helper is not None:
            log.debug("report helper failed (%s); rendering the page here", failure)
        render_page(job)
    clock.lap("report.html")
    return ReportPaths(
        out_dir=out_dir,
        run_id=run_id,
        rows=table.n,
        warnings=tuple(warnings),
        verdict=tuple(view.verdict.lines()),
        **paths,
    )


def _manager(plugins: PluginManager | None) -> PluginManager:
    """The given plugin manager, else the process-wide one."""
    if plugins is not None:
        return plugins
    from ..plugins.manager import default_plugin_manager

    return default_plugin_manager()


def _refuse_planted_links(out_dir: Path, data_dir: Path, outputs: Any) -> None:
    """A ``data`` folder leading out of the report folder, or a link at any output name
    (or its temporary name), is refused."""
    inside(out_dir, data_dir)
    refuse_links(
        *outputs,
        *(
            p.with_name(f".{p.name}.{suffix}")
            for p in outputs
            for suffix in ("tmp", "part")
        ),
    )
