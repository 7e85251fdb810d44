"""Fuzzing the report reader: any results file gives a report, bad rows skipped with
their line named,
or one ProfilerError line; never another exception (issue 15.12)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.fuzzing import FUZZ, dumps, mutated, mutated_text
from tests.test_report import all_rows

from profiler_core import to_json
from profiler_core.errors import ProfilerError
from profiler_core.report import write_report

ROWS = [json.loads(to_json(r)) for r in all_rows()]


@st.composite
def hostile_results(draw: st.DrawFn) -> tuple[str, set[int]]:
    """(JSONL text, numbers of the lines changed): a good run with a few rows made hostile."""
    lines = [dumps(r) for r in ROWS]
    changed = set()
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(lines) - 1))
        changed.add(index + 1)
        if draw(st.booleans()):
            lines[index] = dumps(draw(mutated(ROWS[index])))
        else:
            lines[index] = draw(mutated_text(lines[index])).replace("\n", " ")
    return "".join(line + "\n" for line in lines), changed


@FUZZ
@given(results=hostile_results())
def test_a_hostile_results_file_gives_a_report_naming_each_skipped_line(results):
    text, changed = results
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.jsonl"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            written = write_report(path, Path(tmp) / "report", parallel=False)
        except ProfilerError as exc:  # only when no row is left
            assert "no valid rows" in str(exc) and len(str(exc)) < 2000
            return
        assert written.rows >= len(ROWS) - len(changed)
        for warning in written.warnings:
            assert len(warning) < 2000
            numbered = re.match(rf"{re.escape(str(path))}:(\d+): ", warning)
            if numbered:
                assert int(numbered.group(1)) in changed, warning
        for page in (
            written.md,
            written.html,
            written.csv,
            written.summary,
            written.json,
        ):
            assert page.stat().st_size > 0


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("iteration",), 10**400),
        (("iteration",), 2**63),
        (("tokens", "input"), 2**64),
        (("cost", "totalUsd"), 1e308),
        (("toolCalls", "byCategory", "file"), 10**400),
        (("timing", "wallMs"), "slow"),
    ],
)
def test_one_unusable_row_is_skipped_with_its_line_named(tmp_path, path, value):
    row = json.loads(json.dumps(ROWS[3]))
    parent = row
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    lines = [json.dumps(r) for r in ROWS]
    lines[3] = json.dumps(row)
    results = tmp_path / "run.jsonl"
    results.write_text("\n".join(lines) + "\n")
    written = write_report(results, tmp_path / "report", parallel=False)
    assert written.rows == len(ROWS) - 1
    (warning,) = written.warnings
    assert warning.startswith(f"{results}:4: ") and len(warning) < 400
    written.md.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("path", "value", "kept"),
    [
        (("mode",), "bad\ud800x", True),
        (("extensions", "note"), "\ud800", True),
        (
            ("timing", "wallMs"),
            "\ud800",
            False,
        ),  # named in the warning: must not make report.md unwritable
    ],
)
def test_half_an_emoji_becomes_u_fffd_with_its_line_named(tmp_path, path, value, kept):
    """A lone surrogate is replaced where the row is read (issue 31.14); the row stays
    unless its type is wrong."""
    row = json.loads(json.dumps(ROWS[3]))
    parent = row
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    lines = [json.dumps(r) for r in ROWS]
    lines[3] = json.dumps(row)
    results = tmp_path / "run.jsonl"
    results.write_text("\n".join(lines) + "\n")
    written = write_report(results, tmp_path / "report", parallel=False)
    assert written.rows == len(ROWS) - (0 if kept else 1)
    assert (
        f"{results}:4: 1 lone surrogate(s) or NUL character(s) replaced by U+FFFD"
        in written.warnings
    )
    assert all(
        w.startswith(f"{results}:4: ") and len(w) < 400 for w in written.warnings
    )
    written.md.read_text(encoding="utf-8")
