"""``profiler analyze`` through click's CliRunner: human and --json output, bad files,
analyzer choice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import profiler_builtin_analyzers.plugin as builtin_plugin
from profiler_builtin_analyzers import ErrorAnalyzer
from profiler_core import (
    AnalysisResult,
    ErrorEvent,
    ListFinding,
    NumberFinding,
    RatioFinding,
    SessionTrace,
    StringFinding,
    TableFinding,
    TokenBreakdown,
    ToolCallEvent,
    TraceSummary,
    hookimpl,
)
from profiler_core.cli import cli
from profiler_core.plugins.manager import PluginManager, get_plugin_manager
from profiler_core.storage.serde import structure, to_json

ANALYZER_NAMES = ["reasoning", "strategy", "efficiency", "tool-pattern", "error"]


def _use_plugins(*plugins: tuple[str, object]) -> PluginManager:
    """A manager with exactly these plugins (core built-ins plus the given ones), for
    the command's ctx.obj."""
    return get_plugin_manager(entrypoints=False, plugins=plugins)


@pytest.fixture
def builtin() -> PluginManager:
    return _use_plugins(("builtin_analyzers", builtin_plugin))


def _small_trace(session_id: str = "ses_small") -> SessionTrace:
    events = [
        ToolCallEvent(name="bash", input={"command": "git status"}, output="clean"),
        ToolCallEvent(
            name="read_file",
            input={"path": "x"},
            output=None,
            success=False,
            error="ENOENT",
        ),
        ErrorEvent(message="HTTP 401 Unauthorized"),
    ]
    summary = TraceSummary(
        total_turns=0,
        total_tool_calls=2,
        total_tokens=TokenBreakdown(input=10),
        total_duration=5,
    )
    return SessionTrace(session_id=session_id, events=events, turns=(), summary=summary)


@pytest.fixture
def traces(tmp_path: Path, parity_dir: Path) -> dict[str, Path]:
    """The original's trace, one of ours, and three files that are not traces."""
    files = {
        "parity": parity_dir / "session-trace.json",
        "small": tmp_path / "small.json",
        "not_json": tmp_path / "notes.json",
        "wrong_shape": tmp_path / "row.json",
        "missing": tmp_path / "missing.json",
    }
    files["small"].write_text(to_json(_small_trace()))
    files["not_json"].write_text("this is not json\n")
    files["wrong_shape"].write_text(
        json.dumps({"sessionId": "x", "events": [{"type": "bogus"}]})
    )
    return files


def _run(manager: PluginManager, *args: str | Path) -> object:
    return CliRunner().invoke(
        cli, ["analyze", *(str(a) for a in args)], obj=manager, catch_exceptions=False
    )


def test_human_output_has_each_analyzers_summary_and_findings(builtin, traces):
    result = _run(builtin, traces["parity"])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "ses_fixture" in out and "60 events" in out
    for name in ANALYZER_NAMES:
        assert f"  {name}  " in out
    assert "10/10 productive turns (100.0% efficiency), 2 backtracking events." in out
    assert "4 errors (2 not_found, 1 unknown, 1 timeout)" in out
    assert (
        "15.0% (duplicate / total tool calls)" in out
    )  # a ratio, as a percentage with its label
    assert "90 tokens/tool_call" in out  # a number with its unit
    assert "read_file -> read_file ×2" in out  # a counted table, most frequent first
    assert "(+" in out and "more)" in out  # long lists are cut to stay on one screen
    assert len(out.splitlines()) < 60
    assert result.stderr == ""


def test_json_output_is_one_object_per_trace_with_camel_case_results(builtin, traces):
    result = _run(builtin, traces["parity"], traces["small"], "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [item["trace"] for item in data] == [
        str(traces["parity"]),
        str(traces["small"]),
    ]
    assert [item["sessionId"] for item in data] == ["ses_fixture", "ses_small"]
    assert all(list(item["results"]) == ANALYZER_NAMES for item in data)
    small = data[1]["results"]["error"]
    # Finding keys are data, not attributes: they stay snake_case as in the original.
    assert small["findings"]["errors_encountered"]["value"] == 2
    # The JSON is exactly our AnalysisResult, and reads back as one.
    parsed = structure(small, AnalysisResult)
    assert parsed == ErrorAnalyzer().analyze(_small_trace(), None, "")
    assert data[0]["results"]["efficiency"]["findings"]["backtracking_events"] == {
        "type": "number",
        "value": 2,
        "unit": "events",
    }


def test_bad_files_are_reported_one_line_each_and_the_rest_analysed(builtin, traces):
    args = [
        traces["not_json"],
        traces["parity"],
        traces["wrong_shape"],
        traces["missing"],
        traces["small"],
        "--json",
    ]
    result = _run(builtin, *args)
    assert result.exit_code == 1
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 3
    assert errors[0].startswith(f"Error: {traces['not_json']}: not valid JSON")
    assert errors[1].startswith(f"Error: {traces['wrong_shape']}: $.events")
    assert errors[2] == f"Error: {traces['missing']}: no such file"
    data = json.loads(result.stdout)
    assert [item["sessionId"] for item in data] == ["ses_fixture", "ses_small"]


def test_bad_file_in_human_mode(builtin, traces):
    result = _run(builtin, traces["small"], traces["not_json"])
    assert result.exit_code == 1
    assert "ses_small" in result.stdout
    assert (
        result.stderr.strip()
        == f"Error: {traces['not_json']}: not valid JSON (Expecting value at line 1 column 1)"
    )


def test_analyzer_option_chooses_and_orders(builtin, traces):
    result = _run(
        builtin,
        traces["small"],
        "--analyzer",
        "error",
        "--analyzer",
        "efficiency",
        "--analyzer",
        "error",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    assert list(json.loads(result.stdout)[0]["results"]) == ["error", "efficiency"]


def test_unknown_analyzer_is_one_line_and_exit_1(builtin, traces):
    result = _run(builtin, traces["small"], "--analyzer", "eror")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "unknown analyzer 'eror'; did you mean 'error'?" in result.stderr
    assert "Traceback" not in result.stderr


def test_no_analyzers_installed(traces):
    result = _run(_use_plugins(), traces["small"])
    assert result.exit_code == 1
    assert "no analyzers are installed" in result.stderr


class _ThirdParty:
    """A plugin with an async analyzer, a crashing one and one returning the wrong type."""

    class Async:
        name = "async-one"

        async def analyze(self, trace, scenario, mode):
            return AnalysisResult(
                analyzer=self.name,
                findings={
                    "events": NumberFinding(value=len(trace.events), unit="events"),
                    "scenario": StringFinding(value=scenario.id),
                    "share": RatioFinding(value=0.5, label="half"),
                    "items": ListFinding(values=["[bold]not markup[/bold]"]),
                    "table": TableFinding(headers=["a", "b"], rows=[["x", "y"]]),
                },
                summary="Async analysis done.",
            )

    class Crashing:
        name = "crashing"

        def analyze(self, trace, scenario, mode):
            raise KeyError("boom")

    class WrongType:
        name = "wrong-type"

        def analyze(self, trace, scenario, mode):
            return {"analyzer": "wrong-type"}

    @hookimpl
    def profiler_register_analyzers(self):
        return [self.Async, self.Crashing, self.WrongType]


def test_third_party_analyzers_async_and_failing(traces):
    result = _run(_use_plugins(("third", _ThirdParty())), traces["small"])
    assert result.exit_code == 1
    assert "Async analysis done." in result.stdout
    assert (
        "3 events" in result.stdout
        and "50.0% (half)" in result.stdout
        and "x y" in result.stdout
    )
    assert (
        "[bold]not markup[/bold]" in result.stdout
    )  # user text is printed, never interpreted
    assert (
        "scenario  small" in result.stdout
    )  # the stand-in scenario is named after the file
    assert result.stderr.splitlines() == [
        f"Error: {traces['small']}: analyzer 'crashing' failed: KeyError: 'boom'",
        f"Error: {traces['small']}: analyzer 'wrong-type' returned dict, expected AnalysisResult",
    ]


def test_help_has_an_example():
    result = CliRunner().invoke(cli, ["analyze", "--help"])
    assert result.exit_code == 0
    assert (
        "profiler analyze" in result.stdout
        and "--analyzer NAME" in result.stdout
        and "--json" in result.stdout
    )


def test_no_trace_argument_is_a_usage_error(builtin):
    result = CliRunner().invoke(cli, ["analyze"], obj=builtin)
    assert result.exit_code == 2


def test_a_results_jsonl_is_named_for_what_it_is(builtin, traces, tmp_path):
    results = tmp_path / "run.jsonl"
    results.write_text('{"runId": "r"}\n{"runId": "r"}\n')
    result = _run(builtin, results, traces["parity"])
    assert result.exit_code == 1
    assert "a JSONL file (one object per line), not a session trace" in result.stderr
    assert "ses_fixture" in result.stdout  # the good file is still analysed
