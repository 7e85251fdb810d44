"""Names from data cannot inject Markdown/HTML into report.md or formulas into
results.csv (issue 15.3)."""

from __future__ import annotations

import csv

import trio
import trio.testing
from markdown_it import MarkdownIt

from profiler_core import ModeConfig, Scenario
from profiler_core.report import write_report
from profiler_core.report.exports import safe_text
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.testing import FakeProvider, FixedScorer

SCRIPT_MODE = "<script>alert(1)</script>"
LINK_MODE = "[click](javascript:alert(1))"
FORMULA_SCENARIO = '=HYPERLINK("http://x")'


def _report(tmp_path, manager):
    options = RunOptions(
        provider=FakeProvider(text="-2+3"),
        scorer=FixedScorer(),
        scenarios=[
            Scenario(id=FORMULA_SCENARIO, name="f", prompt="do"),
            Scenario(id="@sum", name="s", prompt="do"),
        ],
        modes={SCRIPT_MODE: ModeConfig(), LINK_MODE: ModeConfig()},
        models=["+model"],
        repetitions=2,
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = manager
    result = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    return write_report(
        tmp_path / "results" / f"{result.run_id}.jsonl",
        tmp_path / "out",
        parallel=False,
    )


def test_markdown_renders_names_as_text(tmp_path, profiler_plugin_manager):
    paths = _report(tmp_path, profiler_plugin_manager)
    for source in (paths.md, paths.analysis_md):
        # The dangerous configuration: raw HTML allowed.
        rendered = MarkdownIt("commonmark", {"html": True}).render(source.read_text())
        assert "<script>" not in rendered
        assert 'href="javascript:' not in rendered
    rendered = (
        MarkdownIt("commonmark", {"html": True})
        .enable("table")
        .render(paths.md.read_text())
    )
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered  # shown as written
    assert "[click](javascript:alert(1))" in rendered


def test_csv_cells_never_start_a_formula(tmp_path, profiler_plugin_manager):
    paths = _report(tmp_path, profiler_plugin_manager)
    with open(paths.csv, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    text_columns = {"scenario_id", "mode", "model"}
    for row in body:
        for name, value in zip(header, row, strict=True):
            if name in text_columns:
                assert not value.startswith(("=", "+", "-", "@")), (name, value)
    scenarios = {row[header.index("scenario_id")] for row in body}
    assert scenarios == {"'" + FORMULA_SCENARIO, "'@sum"}
    assert {row[header.index("model")] for row in body} == {"'+model"}


def test_safe_text_leaves_numbers_and_plain_text_alone():
    assert safe_text(-3) == -3 and safe_text(1.5) == 1.5
    assert safe_text("plain") == "plain" and safe_text("") == ""
    assert [safe_text(v) for v in ("=1", "+1", "-1", "@x", "\tx", "\rx")] == [
        "'=1",
        "'+1",
        "'-1",
        "'@x",
        "'\tx",
        "'\rx",
    ]
