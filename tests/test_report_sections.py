"""Plugins add report sections (``profiler_report_sections``) to report.md and report.html,
escaped, from the read-only summary and the rows; a failing plugin is one error line.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from profiler_core import ReportSection, hookimpl
from profiler_core.cli import cli
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.report import write_report
from profiler_core.testing import ContractError, check_report_section
from profiler_core.testing.contract_report import sample_results

HOSTILE = "<script>alert('x')</script> & <b>bold</b>"


class Counts:
    """Counts the rows per mode and quotes the summary's run id: a section from both inputs."""

    @hookimpl
    def profiler_report_sections(self, summary, rows):
        per_mode: dict[str, int] = {}
        for row in rows:
            per_mode[row.mode] = per_mode.get(row.mode, 0) + 1
        return ReportSection(
            title="Rows per mode",
            text=f"Run {summary['runId']}.\n\n{HOSTILE}",
            header=("mode", "rows"),
            rows=sorted(per_mode.items()),
        )


class Raises:
    @hookimpl
    def profiler_report_sections(self):
        raise RuntimeError("the section broke\nsecond line")


class Mutates:
    @hookimpl
    def profiler_report_sections(self, summary):
        summary["runId"] = "changed"  # read-only: TypeError


class WrongType:
    @hookimpl
    def profiler_report_sections(self):
        return {"title": "a dict"}


class Nothing:
    @hookimpl
    def profiler_report_sections(self):
        return None


def _report(tmp_path, *plugins):
    manager = get_plugin_manager(
        entrypoints=False,
        plugins=[(type(p).__name__.lower(), p) for p in plugins],
    )
    results = sample_results(tmp_path)
    return write_report(results, tmp_path / "out", parallel=False, plugins=manager)


def test_a_section_reaches_both_reports_escaped_in_html(tmp_path):
    written = _report(tmp_path, Counts())
    markdown = written.md.read_text()
    html = written.html.read_text()
    assert "## Rows per mode" in markdown
    assert "*From plugin counts.*" in markdown
    assert "| baseline | 6 |" in markdown and "| candidate | 6 |" in markdown
    assert "Run kit-run." in markdown
    assert "<h2>Rows per mode</h2>" in html
    assert '<a href="#plugin-section-1">Plugins</a><a href="#method">' in html
    assert '<section id="plugin-section-1"><h2>Rows per mode' in html
    assert '<td class="l">candidate</td><td class="l">6</td>' in html
    assert "<script>alert" not in html
    assert (
        "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &lt;b&gt;bold" in html
    )
    assert written.warnings == ()


def test_a_failing_plugin_is_one_error_line_and_the_others_still_show(tmp_path):
    written = _report(tmp_path, Raises(), Mutates(), WrongType(), Nothing(), Counts())
    markdown = written.md.read_text()
    html = written.html.read_text()
    assert "## Rows per mode" in markdown and "<h2>Rows per mode</h2>" in html
    expected = {
        "plugin 'raises': report section failed: RuntimeError: the section broke second line",
        "plugin 'mutates': report section failed: TypeError: "
        "'mappingproxy' object does not support item assignment",
        "plugin 'wrongtype': report section failed: returned a dict, "
        "expected a ReportSection or a list of them",
    }
    assert set(written.warnings) == expected
    for line in expected:
        assert f"**Error:** {line}\n" in markdown
        shown = line.replace("'", "&#x27;")
        assert f'<p class="plugin-error">{shown}</p>' in html
    assert "Plugin nothing" not in markdown  # None adds nothing, not even a heading
    assert markdown.index("## Rows per mode") < markdown.index("## Files")


def test_the_summary_document_is_the_one_written_to_data(tmp_path):
    seen = {}

    class Keeps:
        @hookimpl
        def profiler_report_sections(self, summary, rows):
            seen["summary"] = json.loads(json.dumps(summary, default=dict))
            seen["rows"] = [len(list(rows)), len(list(rows))]  # iterable twice

    written = _report(tmp_path, Keeps())
    assert seen["summary"] == json.loads(written.summary.read_text())
    assert seen["rows"] == [12, 12]


def test_a_section_checks_its_table():
    with pytest.raises(
        ValueError, match="rows: row 2 has 1 cells, the header 2 columns"
    ):
        ReportSection(title="t", header=("a", "b"), rows=[(1, 2), (3,)])
    with pytest.raises(ValueError, match="title: expected a non-empty string"):
        ReportSection(title="")


def test_the_kit_passes_a_good_plugin_and_names_what_a_bad_one_breaks():
    (section,) = check_report_section(Counts())
    assert section.rows == (("baseline", "6"), ("candidate", "6"))
    with pytest.raises(ContractError, match="RuntimeError: the section broke"):
        check_report_section(Raises())
    with pytest.raises(ContractError, match="mappingproxy"):
        check_report_section(Mutates())
    with pytest.raises(ContractError, match="added no section"):
        check_report_section(Nothing())
    assert check_report_section(Nothing(), expect_sections=False) == ()
    with pytest.raises(
        ContractError, match="does not implement profiler_report_sections"
    ):
        check_report_section(object())


def test_the_kit_refuses_sections_that_change_between_calls():
    class Clock:
        calls = 0

        @hookimpl
        def profiler_report_sections(self):
            Clock.calls += 1
            return ReportSection(title="Call", text=str(Clock.calls))

    with pytest.raises(ContractError, match="different sections when asked twice"):
        check_report_section(Clock())


def test_profiler_report_shows_the_section_and_prints_the_failure(tmp_path):
    manager = get_plugin_manager(
        entrypoints=False, plugins=[("counts", Counts()), ("raises", Raises())]
    )
    results = sample_results(tmp_path)
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(
        cli, ["report", str(results), "--out", str(out)], obj=manager
    )
    assert result.exit_code == 0, result.output
    assert (
        "warning: plugin 'raises': report section failed: RuntimeError" in result.output
    )
    assert "## Rows per mode" in (out / "report.md").read_text()


def test_the_report_profiler_run_writes_has_the_section(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    demo = Path(__file__).resolve().parent.parent / "examples" / "demo"
    shutil.copytree(
        demo, tmp_path / "demo", ignore=shutil.ignore_patterns("results", "reports")
    )
    monkeypatch.chdir(tmp_path / "demo")
    manager = get_plugin_manager(entrypoints=False, plugins=[("counts", Counts())])
    args = [
        "run",
        "profile.yaml",
        "--repetitions",
        "1",
        "--skip-warmup",
        "--progress",
        "none",
    ]
    result = CliRunner().invoke(cli, args, obj=manager)
    assert result.exit_code == 0, result.output
    (report,) = (tmp_path / "demo" / "reports").glob("*/report.md")
    assert "## Rows per mode" in report.read_text()
    assert "<h2>Rows per mode</h2>" in report.with_name("report.html").read_text()


def test_the_viewer_run_page_takes_the_sections_from_report_html(tmp_path):
    from types import SimpleNamespace

    from profiler_core.viewer.catalog import RunView

    written = _report(tmp_path, Raises(), Counts())
    files = SimpleNamespace(report_html=written.html)
    sections = RunView("k", files).report_sections()  # type: ignore[arg-type]
    plugins = [name for name in sections if name.startswith("plugin-section-")]
    assert plugins == ["plugin-section-1", "plugin-section-2"]
    shown = "".join(sections[name] for name in plugins)
    assert "<h2>Rows per mode</h2>" in shown
    assert "report section failed: RuntimeError" in shown
    assert "verdict" in sections  # the report's own sections are still there
