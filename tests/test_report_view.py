"""report.md and report.html render one view model: every table, figure and verdict in
it shows in both (issue 26.2)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from profiler_core.report import view as view_module
from profiler_core.report import write_report
from profiler_core.report.html import render_html
from profiler_core.report.markdown import MODE_METRICS, render_analysis, render_report
from profiler_core.report.view import (
    ListFinding,
    ReportView,
    TableFinding,
    analysis_view,
    report_view,
)
from report_cases import FAKE_CHARTS, MARKUP_MODES, analysis_cases, summary_cases
from test_report import all_rows, write_rows

# One worker builds the module's cases (~2 s of statistics) instead of each worker that
# gets one of its tests.
pytestmark = pytest.mark.xdist_group("report_view")


class _Page(HTMLParser):
    """The text of an HTML page, and its tables as rows of cell texts."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def rows(self) -> list[list[str]]:
        """Every row of every table."""
        return [row for table in self.tables for row in table]

    def has_row(self, cells, start: int = 0) -> bool:
        """Some table row holds ``cells`` from column ``start`` on (it may have more
        columns after them)."""
        want = [str(c) for c in cells]
        return any(row[start : start + len(want)] == want for row in self.rows())

    def says(self, text: str) -> bool:
        """The page's text (tags left out, entities decoded) contains ``text``."""
        return text in " ".join("".join(self.text).split())


def _markdown(text: str) -> _Page:
    return _Page(MarkdownIt("commonmark").enable("table").render(text))


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """Every case's view and both renderings, read back as pages."""
    out = {}
    for name, (summary, meta, problems) in summary_cases(
        tmp_path_factory.mktemp("cases")
    ).items():
        view = report_view(summary, meta, problems)
        out[name] = (
            view,
            _markdown(render_report(view)),
            _Page(render_html(view, FAKE_CHARTS)),
        )
    return out


CASES = (
    "hand", "other-baseline", "one-mode", "one-repetition", "no-success", "no-checks", "errors", "all-errored",
    "tie", "stopped", "many-modes", "markup", "large-sample", "units",
)  # fmt: skip


def test_the_cases_cover_the_edges(cases):
    """The cases are what their names say, so the agreement tests below meet every part
    of the view."""
    assert set(cases) == set(CASES)
    assert (
        not cases["one-mode"][0].verdict.compared
        and not cases["one-mode"][0].comparisons
    )
    assert [m.name for m in cases["other-baseline"][0].modes if m.baseline] == ["fast"]
    assert {m.rate for m in cases["no-success"][0].modes} == {"0.0%"}
    assert (
        cases["errors"][0].errors.more and cases["errors"][0].errors.codes is not None
    )
    assert cases["errors"][0].problems and cases["errors"][0].errors.failed
    assert cases["all-errored"][0].verdict.errors and any(
        w.mode is None for w in cases["all-errored"][0].verdict.winners
    )
    assert all(w.text.startswith("tie:") for w in cases["tie"][0].verdict.winners)
    assert (
        cases["stopped"][0].verdict.stop_table is not None
        and cases["stopped"][0].verdict.stop_table.rows
    )
    assert (
        cases["many-modes"][0].charts.note
        and len(cases["many-modes"][0].scenarios) > 20
    )
    assert (
        cases["large-sample"][0].comparisons[0].large_sample
        and not cases["hand"][0].comparisons[0].large_sample
    )
    assert cases["units"][0].metric("judge_score").unit == "points"
    assert cases["one-repetition"][0].k == 1 and cases["hand"][0].k == 6
    no_checks = cases["no-checks"][0]
    assert [s.has_checks for s in no_checks.scenarios] == [False, True]
    assert any(s.outcomes is not None for s in cases["hand"][0].scenarios)


@pytest.mark.parametrize("name", CASES)
def test_the_verdict_shows_in_both_reports(cases, name):
    view, md, page = cases[name]
    v = view.verdict
    for doc in (md, page):
        if v.errors:
            assert doc.says(_flat(v.errors))
        if v.stop_headline:
            assert doc.says(_flat(v.stop_headline))
            assert all(doc.has_row(row) for row in v.stop_table.rows)
        assert doc.says("nothing to compare") is not v.compared
        for f in v.findings:
            assert doc.says(f"{f.criterion}: {_flat(f.text)}"), f.text
    for w in v.winners:
        assert md.has_row([w.criterion, w.text])
        mode, _, why = w.text.partition(" — ")
        assert page.says(f"{w.criterion}{_flat(mode)}{_flat(why)}")


@pytest.mark.parametrize("name", CASES)
def test_every_comparison_row_shows_in_both_reports(cases, name):
    view, md, page = cases[name]
    for comp in view.comparisons:
        for doc in (md, page):
            assert doc.says(
                f"{comp.success.rate} vs {comp.success.baseline_rate} "
                f"({comp.success.difference}, 95% CI"
            )
        for r in comp.rows:
            cells = [
                r.label,
                r.baseline_median,
                r.mode_median,
                r.reduction,
                r.ci,
                r.effect,
                r.p,
                r.p_holm,
            ]
            assert md.has_row(cells) and page.has_row(cells), cells


@pytest.mark.parametrize("name", CASES)
def test_every_median_and_change_shows_in_both_reports(cases, name):
    """report.md lists them per scenario (a row per metric), report.html per metric (a
    row per scenario)."""
    view, md, page = cases[name]
    for metric in view.metrics:
        for j, scen in enumerate(view.scenarios):
            cells = [*metric.medians[j], *metric.changes[j]]
            assert md.has_row([metric.label, *cells]), (metric.name, scen.name)
            assert page.has_row([scen.name, *cells]), (metric.name, scen.name)
        assert page.has_row(
            ["all scenarios", *metric.overall_medians, *metric.overall_changes]
        )


@pytest.mark.parametrize("name", CASES)
def test_modes_scenarios_checks_and_errors_show_in_both_reports(cases, name):
    view, md, page = cases[name]
    shown = [m for name in MODE_METRICS if (m := view.metric(name)) is not None]
    for mode in view.modes:
        md_row = next(
            row
            for row in md.rows()
            if row[:2]
            == [mode.name + (" (baseline)" if mode.baseline else ""), str(mode.rows)]
        )
        assert (
            md_row[2]
            == f"{mode.rate} [{mode.lower}, {mode.upper}] ({mode.successes}/{mode.trials})"
        )
        assert page.says(
            f"success · 95% CI {mode.lower}–{mode.upper} · {mode.successes}/{mode.trials}"
        )
        for metric in shown:
            assert metric.overall_medians[mode.index] in md_row
            assert page.says(
                f"{metric.label} (median){metric.overall_medians[mode.index]}"
            )
    for scen in view.scenarios:
        rates = [r.rate if r else "–" for r in scen.success]
        assert page.has_row([scen.name, *rates])
        for mode, rate in zip(view.modes, scen.success, strict=True):
            if rate is not None:
                assert md.says(
                    f"{mode.name} {rate.rate} ({rate.successes}/{rate.trials})"
                )
        for row in scen.checkpoints.rows if scen.checkpoints else ():
            assert md.has_row(row) and page.has_row(row)
        for row in scen.outcomes.rows if scen.outcomes else ():
            assert md.has_row(row)
    e = view.errors
    for row in e.reasons.rows:
        assert md.has_row(row) and page.has_row(row)
    for r in e.rows:
        assert md.has_row([r.mode, r.scenario, r.iteration, r.code, r.message[:200]])
        assert page.has_row(
            [r.mode, r.scenario, r.iteration, r.code, r.message[:300], "transcript"]
        )
    for r in e.failed:
        assert md.has_row([r.mode, r.scenario, r.iteration, r.checks, r.reward])
        assert page.has_row([r.mode, r.scenario, r.iteration, r.checks, r.reward])
        if r.verifier_tail:
            assert md.says(_flat(r.verifier_tail)) and page.says(_flat(r.verifier_tail))
    for problem in view.problems:
        assert md.says(_flat(problem)) and page.says(_flat(problem))


@pytest.mark.parametrize("name", CASES)
def test_the_page_places_every_chart_the_view_names(cases, name):
    view, _, page = cases[name]
    for slot in (view.charts.forest, *view.charts.figures):
        # The forest plot is in the comparison section, which one mode does not have.
        assert page.says(slot.caption) is (
            slot.name != "forest" or view.verdict.compared
        )
    assert page.says(view.charts.note or "") and (
        view.charts.drawn or page.says("No charts")
    )


def test_the_view_is_built_once_per_report_and_the_terminal_verdict_comes_from_it(
    tmp_path, monkeypatch
):
    built: list[ReportView] = []
    real = view_module.report_view

    def counted(*args):
        built.append(real(*args))
        return built[-1]

    monkeypatch.setattr(view_module, "report_view", counted)
    written = write_report(
        write_rows(tmp_path / "r.jsonl", all_rows()), tmp_path / "out", parallel=False
    )
    assert len(built) == 1
    assert list(written.verdict) == built[0].verdict.lines()
    assert written.md.read_text() == render_report(built[0])
    assert (
        f"<title>Report: {built[0].headline.run_id}</title>" in written.html.read_text()
    )


def test_analysis_md_shows_every_difference_the_view_holds(tmp_path):
    by_name = analysis_cases(tmp_path)
    digest, problems, source = by_name["present"]
    view = analysis_view(digest, problems, source)
    md = _markdown(render_analysis(view))
    assert view.sessions == 14 and view.modes == ("base", "fast") and view.problems
    quiet = next(s for s in view.scenarios if s.name == "quiet")
    assert quiet.analyzers == () and md.says("No differences between modes.")
    shown = [a for s in view.scenarios for a in s.analyzers]
    # Analyzers in the documented order, others after them by name; findings equal in
    # every mode left out.
    assert [a.name for a in view.scenarios[0].analyzers] == [
        "efficiency",
        "strategy",
        "custom-z",
    ]
    assert all(
        row[0] not in ("same", "n")
        for a in shown
        if a.scalars
        for row in a.scalars.rows
    )
    for analyzer in shown:
        assert md.says(analyzer.name)
        for row in analyzer.scalars.rows if analyzer.scalars else ():
            assert md.has_row(row)
        for detail in analyzer.details:
            assert md.says(detail.key)
            if isinstance(detail, ListFinding):
                for mode, items, more in detail.per_mode:
                    assert md.says(
                        f"{mode}: {', '.join(items) or '–'}" + (" …" if more else "")
                    )
                    assert len(items) <= view_module.DETAIL_LIMIT
            else:
                assert isinstance(detail, TableFinding)
                for _mode, table in detail.per_mode:
                    assert md.has_row(table.header) and all(
                        md.has_row(row) for row in table.rows
                    )
    assert any(
        isinstance(d, ListFinding) and any(more for _, _, more in d.per_mode)
        for a in shown
        for d in a.details
    )
    assert any(
        isinstance(d, TableFinding)
        and d.per_mode[0][1].header == ("col1", "col2", "col3")
        for a in shown
        for d in a.details
    )
    for problem in view.problems:
        assert md.says(_flat(problem))


def test_analysis_md_without_bundles_says_where_it_looked(tmp_path):
    digest, problems, source = analysis_cases(tmp_path)["absent"]
    view = analysis_view(digest, problems, source)
    assert view.sessions == 0 and view.scenarios == ()
    assert (
        f"No session analysis data available (looked for `{source}`)."
        in render_analysis(view)
    )


def test_one_mode_has_no_comparison_changes_or_winners(cases):
    view, md, page = cases["one-mode"]
    assert view.change_header == [] and all(
        m.changes == ((),) * len(view.scenarios) for m in view.metrics
    )
    assert view.verdict.winners == () and view.verdict.findings == ()
    assert not md.says("Comparison:") and page.says(
        "Only one mode: nothing to compare."
    )


def test_anchors_are_unique_for_names_that_slug_alike():
    assert view_module.anchors(["a.b", "a-b", "a b", "x"], "metric") == {
        "a.b": "metric-a-b", "a-b": "metric-a-b-2", "a b": "metric-a-b-3", "x": "metric-x",
    }  # fmt: skip


def test_markup_in_names_is_text_in_both_reports(cases):
    view, md, page = cases["markup"]
    names = [m.name for m in view.modes]
    assert names == list(MARKUP_MODES)
    for name in names:
        assert md.says(name) and page.says(name)
    assert (
        page.has_row(["<img src=x>"])
        and md.says("### <img src=x>") is False
        and md.says("<img src=x>")
    )
