"""Token total and active are derived in one place, so the model and the report's row
loader agree (issue 26.2)."""

from __future__ import annotations

import json

import pytest

from profiler_core import TokenBreakdown, to_json
from profiler_core.model.metrics import token_totals
from profiler_core.report.load import load_rows
from report_cases import row

COUNTS = {
    "input": 1200,
    "output": 340,
    "reasoning": 56,
    "cache_read": 7000,
    "cache_write": 800,
}


def test_token_totals_derives_what_is_missing_and_keeps_what_is_given():
    fresh = 1200 + 340 + 56
    assert token_totals(*COUNTS.values()) == (fresh + 7000 + 800, fresh)
    assert token_totals(*COUNTS.values(), total=5) == (5, fresh)
    assert token_totals(*COUNTS.values(), active=6) == (fresh + 7800, 6)
    assert token_totals(*COUNTS.values(), total=0, active=0) == (
        0,
        0,
    )  # 0 is a given number, not "missing"


@pytest.mark.parametrize(
    "given", [{}, {"total": 99_999}, {"active": 1}, {"total": 10, "active": 2}]
)
def test_the_row_loader_and_the_model_agree_on_rows_without_totals(tmp_path, given):
    """A row written by hand (or by an older writer) may leave out total, active or both."""
    lines = []
    expected = []
    for i, scale in enumerate((1, 3, 0)):
        counts = {k: v * scale for k, v in COUNTS.items()}
        data = json.loads(
            to_json(row("base", "s1", i, tokens=TokenBreakdown(**counts)))
        )
        data["tokens"] = {
            k: v for k, v in data["tokens"].items() if k not in ("total", "active")
        } | given
        lines.append(json.dumps(data))
        model = TokenBreakdown(**counts, **given)
        expected.append((model.total, model.active))
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = load_rows(path, parallel=False)
    assert table.n == 3 and not table.problems
    loaded = list(
        zip(
            table.numeric["tokens_total"].tolist(),
            table.numeric["tokens_active"].tolist(),
            strict=True,
        )
    )
    assert loaded == expected
