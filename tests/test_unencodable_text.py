"""Lone surrogates and NUL characters become U+FFFD where they enter, with a warning
naming file and line (issue 31.14)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import trio
import trio.testing
from click.testing import CliRunner

import profiler_builtin_analyzers.plugin as builtin_analyzers
from profiler_core import ModeConfig, Scenario
from profiler_core.cli import cli
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.storage.store import read_jsonl
from profiler_core.testing import FakeProvider, FixedScorer
from profiler_core.util.textclean import clean_json_bytes

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
HALF_EMOJI = "\\ud83d"  # as JSON text: a high surrogate with no low one after it


@pytest.fixture
def analyzers_manager():
    return get_plugin_manager(
        entrypoints=False, plugins=[("builtin_analyzers", builtin_analyzers)]
    )


def _all_text_is_utf8(folder: Path) -> list[str]:
    texts = []
    for path in folder.rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode(
                "utf-8"
            )  # raises on anything that is not UTF-8
            assert "\x00" not in text, path
            texts.append(text)
    return texts


def test_an_import_with_half_an_emoji_is_imported_with_a_warning(
    tmp_path, profiler_plugin_manager, caplog
):
    lines = (FIXTURES / "claude-code" / "fix-dst-test.jsonl").read_text().splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if '"text":"' in line)
    lines[number - 1] = lines[number - 1].replace(
        '"text":"', f'"text":"{HALF_EMOJI} cut off ', 1
    )
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out" / "r.jsonl"
    with caplog.at_level(logging.WARNING, logger="agent_profiler"):
        result = CliRunner().invoke(
            cli,
            ["import", "claude-code", str(transcript), "--out", str(out)],
            obj=profiler_plugin_manager,
        )
    assert result.exit_code == 0, result.output
    assert (
        f"{transcript}:{number}: 1 lone surrogate(s) or NUL character(s) replaced by U+FFFD"
        in caplog.text
    )
    texts = _all_text_is_utf8(out.parent)
    assert any("\ufffd cut off" in text or "\\ufffd cut off" in text for text in texts)


def test_analyze_and_traces_export_name_the_file(
    tmp_path, profiler_plugin_manager, analyzers_manager, caplog
):
    source = (FIXTURES / "trace" / "pr-review.json").read_text()
    trace = tmp_path / "trace.json"
    trace.write_text(source.replace('"content": "', f'"content": "{HALF_EMOJI}', 1))
    with caplog.at_level(logging.WARNING, logger="agent_profiler"):
        analyzed = CliRunner().invoke(
            cli, ["analyze", str(trace), "--json"], obj=analyzers_manager
        )
    assert analyzed.exit_code == 0, analyzed.output
    assert (
        f"{trace}: 1 lone surrogate(s) or NUL character(s) replaced by U+FFFD"
        in caplog.text
    )
    json.loads(analyzed.stdout)

    record = {
        "scenarioId": "s1",
        "mode": "a",
        "model": "m",
        "iteration": 0,
        "trace": json.loads(source),
    }
    store = tmp_path / "run" / "sessions" / "traces.jsonl"
    store.parent.mkdir(parents=True)
    store.write_text(
        json.dumps(record)
        + "\n"
        + json.dumps(record).replace('"content": "', f'"content": "{HALF_EMOJI}', 1)
        + "\n"
    )
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="agent_profiler"):
        exported = CliRunner().invoke(
            cli,
            ["traces", "export", str(store), "--out", str(tmp_path / "files")],
            obj=profiler_plugin_manager,
        )
    assert exported.exit_code == 0, exported.output
    assert f"{store}:2: 1 lone surrogate(s)" in caplog.text
    assert any("\ufffd" in text for text in _all_text_is_utf8(tmp_path / "files"))


def test_nul_in_row_strings_never_reaches_the_report(tmp_path, profiler_plugin_manager):
    options = RunOptions(
        provider=FakeProvider(),
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do")],
        modes={"a": ModeConfig()},
        repetitions=3,
        warmup=False,
        run_id="r1",
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    results = tmp_path / "results" / "r1.jsonl"
    rows = results.read_text().splitlines()
    row = json.loads(rows[1])
    row["error"], row["errorCode"] = (
        "agent wrote \x00 here and half an emoji \ud83d",
        "error",
    )
    rows[1] = json.dumps(row)
    results.write_text("\n".join(rows) + "\n")
    report = CliRunner().invoke(
        cli,
        ["report", str(results), "--out", str(tmp_path / "rep")],
        obj=profiler_plugin_manager,
    )
    assert report.exit_code == 0, report.output
    assert (
        f"{results}:2: 2 lone surrogate(s) or NUL character(s) replaced by U+FFFD"
        in report.output
    )
    texts = _all_text_is_utf8(tmp_path / "rep")
    assert any("agent wrote \ufffd here" in text for text in texts)
    read = read_jsonl(
        results
    )  # resume reads the row the same way: kept, cleaned, named
    assert (
        len(read.rows) == 3
        and read.rows[1].error == "agent wrote \ufffd here and half an emoji \ufffd"
    )
    assert read.problems == [
        f"{results}:2: 2 lone surrogate(s) or NUL character(s) replaced by U+FFFD"
    ]


def test_a_provider_handing_over_half_an_emoji_does_not_fail_the_run(
    tmp_path, profiler_plugin_manager
):
    options = RunOptions(
        provider=FakeProvider(text="answer with half an emoji \ud83d"),
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do")],
        modes={"a": ModeConfig()},
        repetitions=2,
        warmup=False,
        run_id="r1",
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    result = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    assert result.status == "completed" and [r.error for r in result.rows] == [
        None,
        None,
    ]
    assert any(
        "half an emoji \ufffd" in text
        for text in _all_text_is_utf8(tmp_path / "reports")
    )


def test_escapes_are_told_apart():
    assert clean_json_bytes(rb'"\ud83d\ude00 \\u0000 ok"') == (
        rb'"\ud83d\ude00 \\u0000 ok"',
        0,
    )  # a pair; a backslash
    assert clean_json_bytes(rb'"\ude00\ud83d \u0000"') == (rb'"\ufffd\ufffd \ufffd"', 3)
