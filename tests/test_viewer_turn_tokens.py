"""Per-turn token counts: the events' estimates are labelled so; a turn with exact
per-call figures shows those."""

from __future__ import annotations

import attrs

from profiler_core import TokenBreakdown
from profiler_core.dataset.tables import read_tables
from profiler_core.storage.runfiles import run_files
from profiler_core.viewer.session import timeline, turn_tokens
from profiler_core.viewer.timeline import turns_of
from synthetic_runs import Cell, grid, trace_of, write_run


def test_the_timeline_labels_the_events_token_counts_as_estimated():
    html = timeline(trace_of(Cell(mode="m", scenario="s", iteration=0)))
    assert "~30 tokens (estimated)" in html  # turn 1: its reasoning's count
    assert "~7 tokens (estimated)" in html  # the text event of turn 2
    assert "30 tokens ·" not in html.replace("~30 tokens", "")


def test_a_turn_with_exact_tokens_shows_them_unlabelled():
    (first, _second) = turns_of(trace_of(Cell(mode="m", scenario="s", iteration=0)))
    exact = attrs.evolve(first, tokens=TokenBreakdown(input=4000, output=95))
    assert turn_tokens(exact) == "4,095 tokens"
    assert turn_tokens(first) == "~30 tokens (estimated)"


def test_the_exported_turns_table_says_the_counts_are_estimates(tmp_path):
    results = write_run(tmp_path, "run_t", grid(["a"], ["s"], 1), report=False)
    turns = read_tables(run_files(results, tmp_path / "reports"))["turns"]
    assert turns["tokens_estimated"] == [True, True]
    assert turns["tokens_total"] == [None, None]
    assert turns["reasoning_tokens"] == [30, 0]


def test_the_sessions_metrics_round_floats_and_say_unknown_for_an_unpriced_cost():
    from profiler_core.viewer.session import metrics_html
    from synthetic_runs import row_of

    cell = Cell(mode="m", scenario="s", iteration=0, reward=0.75,
                extensions=(("latency_tools_ms", 0.1 + 0.2), ("cost_source", "unknown")))  # fmt: skip
    html = metrics_html(row_of("r", cell))
    assert "0.30000000000000004" not in html and "<dd>0.3</dd>" in html
    assert (
        "<dt>Cost</dt><dd>unknown</dd>" in html
        and "<dt>Reward</dt><dd>0.75</dd>" in html
    )
