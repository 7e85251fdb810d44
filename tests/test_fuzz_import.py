"""Fuzzing `profiler import` (every format): any file gives rows or one error line per
file, never a traceback,
and an import with any invalid input writes nothing (issue 15.12)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from tests.fuzzing import FUZZ, dumps, mutated, mutated_text

from profiler_core.cli import cli
from profiler_core.importers import FORMATS
from profiler_core.report import write_report
from profiler_core.report.load import load_rows

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
SOURCES = {
    fmt: sorted((FIXTURES / fmt).iterdir())
    for fmt in ("openai", "anthropic", "claude-code", "codex", "opencode", "trace")
}


def _parsed(path: Path) -> tuple[bool, object]:
    """(is JSONL, the parsed document or list of line documents)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return True, [json.loads(line) for line in text.splitlines() if line.strip()]
    return False, json.loads(text)


@st.composite
def hostile_file(draw: st.DrawFn, fmt: str) -> tuple[str, str]:
    """(file name, text): a fixture of ``fmt`` with hostile values, or its text damaged."""
    source = draw(st.sampled_from(SOURCES[fmt]))
    if draw(st.integers(0, 4)) == 0:
        return source.name, draw(mutated_text(source.read_text(encoding="utf-8")))
    jsonl, doc = _parsed(source)
    if jsonl:
        lines = list(doc)  # type: ignore[call-overload]
        index = draw(st.integers(0, len(lines) - 1))
        lines[index] = draw(mutated(lines[index]))
        return source.name, "".join(dumps(line) + "\n" for line in lines)
    return source.name, dumps(draw(mutated(doc)))


def _check_import(fmt: str, files: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = []
        for i, (name, text) in enumerate(files):
            path = folder / "in" / f"{i}-{name}"
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            inputs.append(str(path))
        out = folder / "out" / "run.jsonl"
        result = CliRunner().invoke(cli, ["import", fmt, *inputs, "--out", str(out)])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exc_info
        )
        assert result.exit_code in (0, 1), result.output
        assert "Traceback" not in result.output
        if result.exit_code == 1:
            errors = [
                line
                for line in result.stderr.splitlines()
                if line.startswith("Error: ")
            ]
            assert errors, result.stderr
            assert all(len(line) < 2000 for line in result.stderr.splitlines())
            assert not (folder / "out").exists() or not any(
                (folder / "out").iterdir()
            ), "a failed import wrote files"
            return
        table = load_rows(out, parallel=False)
        assert table.n >= 1 and not table.problems, table.problems
        write_report(out, folder / "report", parallel=False)


@pytest.mark.parametrize("fmt", list(SOURCES))
@FUZZ
@given(data=st.data())
def test_import_of_a_hostile_file(fmt, data):
    assert fmt in FORMATS
    _check_import(fmt, [data.draw(hostile_file(fmt))])


@FUZZ
@given(data=st.data())
def test_one_bad_file_among_good_ones_writes_nothing(data):
    fmt = data.draw(st.sampled_from(list(SOURCES)))
    good = [(p.name, p.read_text(encoding="utf-8")) for p in SOURCES[fmt]]
    bad = (
        "bad.json",
        data.draw(st.sampled_from(['{"messages": 1', "", '{"x": 10e400}', "\x00"])),
    )
    files = [*good, bad] if data.draw(st.booleans()) else [bad, *good]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i, (name, text) in enumerate(files):
            (folder / f"{i}-{name}").write_text(text, encoding="utf-8")
        out = folder / "out" / "run.jsonl"
        result = CliRunner().invoke(
            cli,
            ["import", fmt, *sorted(map(str, folder.glob("*-*"))), "--out", str(out)],
        )
        assert result.exit_code == 1, result.output
        assert not (folder / "out").exists()


@pytest.mark.parametrize("tokens", [10**400, 2**64, -5])
def test_a_token_count_no_column_can_hold_is_refused_before_anything_is_written(
    tmp_path, tokens
):
    doc = json.loads((FIXTURES / "openai" / "overdue-invoice.json").read_text())
    usage = doc["messages"][1]["usage"]
    usage["prompt_tokens"], usage["total_tokens"] = (
        tokens,
        tokens + usage["completion_tokens"],
    )  # consistent
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "out" / "run.jsonl"
    result = CliRunner().invoke(cli, ["import", "openai", str(path), "--out", str(out)])
    assert (result.exit_code == 1 and result.exception is None) or isinstance(
        result.exception, SystemExit
    )
    (line, *_) = result.stderr.splitlines()
    assert line.startswith(f"Error: {path}") and len(line) < 400
    assert not (tmp_path / "out").exists()
