"""The five built-in analyzers on hand-built traces: every classification branch, empty
and error-only traces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import profiler_builtin_analyzers.plugin as builtin_plugin
from profiler_builtin_analyzers import (
    ANALYZERS,
    EfficiencyAnalyzer,
    ErrorAnalyzer,
    ReasoningAnalyzer,
    StrategyAnalyzer,
    ToolPatternAnalyzer,
    classify_error,
    is_shell_tool,
    make_tool_pattern_analyzer,
    resolve_tool_display_name,
)
from profiler_core import (
    AnalysisResult,
    ConfigError,
    ErrorEvent,
    ProfilerError,
    ReasoningEvent,
    SessionTrace,
    TextOutputEvent,
    TokenBreakdown,
    ToolCallEvent,
    TraceSummary,
    Turn,
    TurnBoundaryEvent,
)
from profiler_core.plugins.manager import get_plugin_manager
from profiler_core.storage.serde import from_json, to_json

SRC = Path(__file__).resolve().parent.parent / "src"


# -- trace builders -----------------------------------------------------------------


def think(text: str = "Plan the next step.", tokens: int = 10) -> ReasoningEvent:
    return ReasoningEvent(content=text, token_count=tokens)


def call(
    name: str = "read_file", ok: bool = True, error: str | None = None, **tool_input
) -> ToolCallEvent:
    return ToolCallEvent(
        name=name,
        input=tool_input or {"path": "a.py"},
        output={"ok": ok},
        success=ok,
        error=error if error is not None else (None if ok else "failed"),
    )


def sh(command: str, ok: bool = True, error: str | None = None) -> ToolCallEvent:
    return call("bash", ok=ok, error=error, command=command)


def say(text: str = "Done.") -> TextOutputEvent:
    return TextOutputEvent(content=text, token_count=5)


def make_trace(
    *turns: list,
    reasoning_tokens: int = 0,
    total_tokens: int = 0,
    boundaries: bool = True,
) -> SessionTrace:
    """A trace whose turns are the given event lists (with boundary events between them)."""
    events: list = []
    turn_objects = []
    for number, turn_events in enumerate(turns, start=1):
        events.extend(turn_events)
        if boundaries:
            events.append(
                TurnBoundaryEvent(
                    turn_number=number, timestamp=f"2026-01-01T00:00:{number:02d}Z"
                )
            )
            turn_objects.append(
                Turn(
                    number=number,
                    events=turn_events,
                    start_timestamp="",
                    end_timestamp="",
                    duration_ms=0,
                )
            )
    tokens = TokenBreakdown(
        input=max(total_tokens - reasoning_tokens, 0), reasoning=reasoning_tokens
    )
    summary = TraceSummary(
        total_turns=len(turn_objects),
        total_tool_calls=sum(1 for e in events if isinstance(e, ToolCallEvent)),
        total_tokens=tokens,
        total_duration=0,
    )
    return SessionTrace(
        session_id="s", events=events, turns=turn_objects, summary=summary
    )


def findings(analyzer, trace: SessionTrace) -> dict:
    result = analyzer.analyze(trace, None, "m")
    assert isinstance(result, AnalysisResult)
    assert result.analyzer == analyzer.name
    return result.findings


# -- reasoning ----------------------------------------------------------------------


def test_planning_proactive_when_reasoning_precedes_tool_calls_in_each_turn():
    trace = make_trace(
        [think(), call(), call()], [think(), call()], [think(), call(), say()]
    )
    assert findings(ReasoningAnalyzer(), trace)["planning_quality"].value == "proactive"


def test_planning_reactive_when_tool_calls_come_before_reasoning():
    trace = make_trace([call(), think()], [call(), call(), think()], [call(), say()])
    assert findings(ReasoningAnalyzer(), trace)["planning_quality"].value == "reactive"


def test_planning_mixed_when_neither_dominates():
    # 2 of 4 calls planned: half is no dominant pattern.
    trace = make_trace([think(), call(), call()], [call(), think()], [call()])
    assert findings(ReasoningAnalyzer(), trace)["planning_quality"].value == "mixed"


def test_planning_judged_over_the_whole_session_not_the_first_event():
    # The original looked only at the first event: reasoning first -> "proactive",
    # although every later turn acts before thinking.
    trace = make_trace(
        [think(), call()], [call(), think()], [call(), think()], [call(), think()]
    )
    assert findings(ReasoningAnalyzer(), trace)["planning_quality"].value == "reactive"


def test_planning_without_turn_data_uses_the_event_stream_as_one_turn():
    trace = make_trace([think(), call(), call(), call()], boundaries=False)
    assert trace.turns == ()
    assert findings(ReasoningAnalyzer(), trace)["planning_quality"].value == "proactive"


def test_reasoning_density_per_call_and_excerpts():
    trace = make_trace(
        [think("I'm NOT SURE   which\nfile to open " + "x" * 80), call(), call()],
        [think("Clear plan: edit then test."), think("   "), call()],
        [think("This didn’t work, try again")],
        reasoning_tokens=300,
        total_tokens=1200,
    )
    f = findings(ReasoningAnalyzer(), trace)
    assert f["reasoning_density"].value == pytest.approx(0.25)
    assert f["reasoning_density"].label == "reasoning tokens / total tokens"
    assert f["reasoning_per_tool_call"].value == pytest.approx(100.0)
    assert f["reasoning_per_tool_call"].unit == "tokens/tool_call"
    decisions = f["key_decisions"].values
    # whitespace collapsed, cut at 50 characters, blank reasoning skipped
    assert decisions[0] == "I'm NOT SURE which file to open " + "x" * 18
    assert len(decisions) == 3
    assert f["confusion_signals"].values == (
        decisions[0],
        "This didn’t work, try again",
    )


# -- strategy -----------------------------------------------------------------------


def test_strategy_direct_for_few_calls_without_going_back():
    trace = make_trace(
        [think(), call(path="a"), call("edit", path="a")], [sh("npm test"), say()]
    )
    f = findings(StrategyAnalyzer(), trace)
    assert f["strategy_summary"].value == "direct"
    assert f["optimality_notes"].values == ()


def test_strategy_iterative_when_many_calls_over_few_tools():
    trace = make_trace(
        [call(path=str(i)) for i in range(4)]
        + [call("edit", path=str(i)) for i in range(4)]
    )
    assert findings(StrategyAnalyzer(), trace)["strategy_summary"].value == "iterative"


def test_strategy_iterative_when_going_back_even_with_few_calls():
    trace = make_trace([call(path="a"), call(path="b"), call(path="a")])
    assert findings(StrategyAnalyzer(), trace)["strategy_summary"].value == "iterative"


def test_strategy_exploratory_counts_shell_commands_as_tools():
    # One raw tool ("bash") but six different programs: that is exploration.
    commands = ["git status", "git log", "ls", "cat a", "grep -r x", "find ."]
    trace = make_trace([sh(c) for c in commands])
    assert (
        findings(StrategyAnalyzer(), trace)["strategy_summary"].value == "exploratory"
    )


def test_strategy_exploratory_by_reasoning_density_and_notes():
    trace = make_trace(
        [think(), call(ok=False), call(ok=False, path="b"), call(path="c")],
        [call(path="c"), call(path="c"), call(path="c"), call(path="c")],
        reasoning_tokens=400,
        total_tokens=1000,
    )
    f = findings(StrategyAnalyzer(), trace)
    assert f["strategy_summary"].value == "exploratory"
    # 2 of 7 failed (29%), 3 duplicates, density 0.4
    assert f["optimality_notes"].values == (
        "High error rate (29%)",
        "Many redundant calls",
        "Strong reasoning foundation",
    )


def test_strategy_phases_merge_runs_and_skip_other_events():
    trace = make_trace([think(), think(), call(), say(), call(), think()])
    assert findings(StrategyAnalyzer(), trace)["strategy_steps"].values == (
        "reasoning phase (2 events)",
        "tool execution phase (2 calls)",
        "reasoning phase (1 events)",
    )


# -- efficiency ---------------------------------------------------------------------


def test_productive_and_wasted_turns():
    trace = make_trace(
        [think(), call()],  # successful call: productive
        [think(), call(ok=False)],  # only a failure: wasted
        [say("  \n")],  # blank text is not output
        [say("Here is the fix.")],  # text: productive
    )
    f = findings(EfficiencyAnalyzer(), trace)
    assert (
        f["total_turns"].value,
        f["productive_turns"].value,
        f["wasted_turns"].value,
    ) == (4, 2, 2)
    assert f["turn_efficiency"].value == pytest.approx(0.5)


def test_redundancy_and_backtracking():
    trace = make_trace(
        [
            call(path="a"),
            call(path="a"),
        ],  # immediate repeat: redundant, not a step back
        [call(path="b"), call(path="a")],  # back to "a" after "b": one step back
        [
            sh("git status"),
            sh("git diff"),
            sh("git status"),
        ],  # back to git status: another
    )
    f = findings(EfficiencyAnalyzer(), trace)
    assert f["information_redundancy"].value == pytest.approx(3 / 7)
    assert f["backtracking_events"].value == 2


def test_backtracking_ignores_one_tool_with_new_input_and_key_order():
    trace = make_trace(
        [
            call(path="a", mode="r"),
            call(path="b"),
            call(path="c"),
            call(mode="r", path="a"),
        ]
    )
    f = findings(EfficiencyAnalyzer(), trace)
    assert f["backtracking_events"].value == 1  # the original counted 3
    assert f["information_redundancy"].value == pytest.approx(1 / 4)


# -- tool-pattern -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "tool_input", "expected"),
    [
        ("bash", {"command": "gh pr view 42 --json title"}, "gh pr"),
        ("Bash", {"command": "git status"}, "git status"),
        ("SHELL", {"cmd": "npm test"}, "npm test"),
        ("terminal", {"command": "GH_PAGER=cat A=1 gh api repos/x"}, "gh api"),
        ("run_command", {"command": "/usr/bin/git push origin HEAD"}, "git push"),
        ("execute_command", {"command": "cd repo && git log --oneline"}, "git log"),
        ("zsh", {"command": "sudo -E docker ps"}, "docker ps"),
        ("sh", {"command": "git -C repo --no-pager diff"}, "git diff"),
        ("bash", {"command": "ls -la"}, "ls"),
        ("bash", {"command": "npm --version"}, "npm"),
        ("bash", {"command": "python3 -m pytest -q"}, "python3 -m pytest"),
        ("bash", {"command": "timeout 30 cargo test"}, "cargo test"),
        ("bash", "git stash", "git stash"),
        ("shell", {"command": ["bash", "-lc", "make test"]}, "make test"),
        ("shell", {"command": ["git", "status"]}, "git status"),
        ("bash", {"command": "cd /tmp"}, "cd"),
        ("bash", {"command": ""}, "bash"),
        ("bash", {"path": "x"}, "bash"),
        ("read_file", {"command": "git status"}, "read_file"),
    ],
)
def test_display_names(name, tool_input, expected):
    assert resolve_tool_display_name(name, tool_input) == expected


def test_is_shell_tool_case_insensitive():
    assert (
        is_shell_tool("BASH")
        and is_shell_tool("Run_Command")
        and not is_shell_tool("read_file")
    )


def test_tool_pattern_findings():
    trace = make_trace(
        [sh("git status"), call(ok=False, path="x"), call(path="y")],
        [sh("npm test", ok=False), sh("npm test"), sh("git status"), call(path="y")],
    )
    f = findings(ToolPatternAnalyzer(), trace)
    assert f["tool_sequence"].values == (
        "git status",
        "read_file",
        "read_file",
        "npm test",
        "npm test",
        "git status",
        "read_file",
    )
    assert f["unique_tools_used"].value == 3
    assert f["tool_call_patterns"].rows[:2] == (
        ("git status -> read_file", "2"),
        ("read_file -> read_file", "1"),
    )
    assert f["redundant_calls"].headers == ("tool", "input_hash", "count")
    assert f["redundant_calls"].rows == (
        ("git status", '{"command":"git status"}', "2"),
        ("read_file", '{"path":"y"}', "2"),
        ("npm test", '{"command":"npm test"}', "2"),
    )
    assert f["failed_then_retried"].rows == (("read_file", "1"), ("npm test", "1"))


def test_redundant_call_input_is_shortened():
    big = "x" * 500
    trace = make_trace(
        [call("edit", path="a", text=big), call("edit", text=big, path="a")]
    )
    rows = findings(ToolPatternAnalyzer(), trace)["redundant_calls"].rows
    assert len(rows) == 1 and rows[0][2] == "2"
    assert len(rows[0][1]) == 120 and rows[0][1].endswith("…")


@pytest.fixture
def resolver_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable module with a resolver, as a profile's ``resolve_name: "mod:func"``
    names it."""
    (tmp_path / "my_resolvers.py").write_text(
        "def first_word(name, tool_input):\n"
        "    return tool_input.get('command', name).split()[0] if "
        "isinstance(tool_input, dict) else name\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_resolvers:first_word"


def test_custom_resolver_callable_and_import_string(resolver_module: str):
    trace = make_trace([call("read_file"), sh("git status")])
    upper = make_tool_pattern_analyzer(
        resolve_name=lambda name, tool_input: name.upper()
    )
    assert findings(upper, trace)["tool_sequence"].values == ("READ_FILE", "BASH")
    by_word = ToolPatternAnalyzer(resolve_name=resolver_module)
    assert findings(by_word, trace)["tool_sequence"].values == ("read_file", "git")


@pytest.mark.parametrize(
    "bad", ["no_colon", "json:does_not_exist", "no_such_module_xyz:f", 42]
)
def test_bad_resolver_option_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="tool-pattern.*resolve_name"):
        ToolPatternAnalyzer(resolve_name=bad)


def test_resolver_returning_a_non_string_or_failing_names_the_analyzer():
    analyzer = ToolPatternAnalyzer(resolve_name=lambda name, tool_input: None)
    with pytest.raises(
        ProfilerError, match="'tool-pattern'.*resolve_name\\('read_file'.*returned None"
    ):
        analyzer.analyze(make_trace([call()]), None, "m")
    analyzer = ToolPatternAnalyzer(resolve_name=lambda name, tool_input: 1 / 0)
    with pytest.raises(
        ProfilerError, match="'tool-pattern'.*failed: ZeroDivisionError"
    ):
        analyzer.analyze(make_trace([call()]), None, "m")


# -- error ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("HTTP 401: Bad credentials", "auth"),
        ("gh: HTTP 403 Forbidden", "auth"),
        ("Unauthorized", "auth"),
        ("auth token expired", "auth"),
        ("error: token expired, run gh auth login", "auth"),
        ("the token has expired", "auth"),
        ("ENOENT: no such file or directory", "not_found"),
        ("HTTP 404: Not Found", "not_found"),
        ("cat: x: No such file or directory", "not_found"),
        ("resource not found", "not_found"),
        ("operation timed out", "timeout"),
        ("request timeout after 30000ms", "timeout"),
        ("connect ETIMEDOUT 10.0.0.1:443", "timeout"),
        ("Unexpected token < in JSON at position 0", "parse_error"),
        ("failed to parse output", "parse_error"),
        ("SyntaxError: bad input", "parse_error"),
        ("exit code 1: 2 tests failed", "unknown"),
        (
            "tokens exhausted",
            "unknown",
        ),  # the original's "token" -> auth rule misfiled this
    ],
)
def test_error_classification(message, expected):
    assert classify_error(message) == expected


def test_error_types_from_failed_calls_and_error_events():
    trace = make_trace(
        [
            call(ok=False, error="HTTP 404"),
            think(),
            call(ok=False, error="Unexpected token }"),
        ],
        [
            ErrorEvent(message="401 Unauthorized"),
            call(path="b"),
            call(ok=False, error="404 not found"),
        ],
    )
    f = findings(ErrorAnalyzer(), trace)
    assert f["errors_encountered"].value == 4
    assert f["error_types"].headers == ("type", "count")
    assert f["error_types"].rows == (
        ("not_found", "2"),
        ("parse_error", "1"),
        ("auth", "1"),
    )


def test_failed_call_without_error_text_is_unknown():
    trace = make_trace([ToolCallEvent(name="x", input={}, output=None, success=False)])
    assert dict(findings(ErrorAnalyzer(), trace)["error_types"].rows) == {
        "unknown": "1"
    }


def test_recovery_retry_same_tool_next_even_after_reasoning_and_a_turn_boundary():
    trace = make_trace([sh("npm test", ok=False), think("retry")], [sh("npm test")])
    assert dict(findings(ErrorAnalyzer(), trace)["recovery_patterns"].rows) == {
        "retry": "1"
    }


def test_recovery_alternative_different_tool_after_failed_call():
    # gh api and gh pr are both "bash": the display name decides, as in tool-pattern.
    trace = make_trace(
        [
            sh("gh api repos/x/pulls/1", ok=False, error="HTTP 404"),
            think(),
            sh("gh pr view 1"),
        ]
    )
    assert dict(findings(ErrorAnalyzer(), trace)["recovery_patterns"].rows) == {
        "alternative": "1"
    }


def test_recovery_tool_followup_after_error_event():
    trace = make_trace([ErrorEvent(message="context overflow"), think(), call()])
    assert dict(findings(ErrorAnalyzer(), trace)["recovery_patterns"].rows) == {
        "tool_followup": "1"
    }


def test_recovery_give_up_when_no_tool_call_follows():
    trace = make_trace(
        [call(), call("edit", ok=False)], [think("I cannot do this"), say("Sorry.")]
    )
    assert dict(findings(ErrorAnalyzer(), trace)["recovery_patterns"].rows) == {
        "give_up": "1"
    }


def test_recovery_patterns_sorted_by_count():
    trace = make_trace(
        [call("a", ok=False), call("b"), call("c", ok=False), call("d")],
        [call("e", ok=False), call("e"), ErrorEvent(message="x")],
    )
    rows = findings(ErrorAnalyzer(), trace)["recovery_patterns"].rows
    assert rows == (("alternative", "2"), ("retry", "1"), ("give_up", "1"))


def test_cascades_are_runs_of_failed_actions_whatever_the_thinking_between():
    trace = make_trace(
        [
            call(ok=False),
            think(),
            call(ok=False, path="b"),
        ],  # run of 2 (reasoning does not break it)
        [call(path="ok")],
        [
            call(ok=False),
            ErrorEvent(message="x"),
            call(ok=False),
            say(),
        ],  # run of 3 crossing nothing
        [call(path="ok2"), call(ok=False)],  # a single failure is no cascade
    )
    f = findings(ErrorAnalyzer(), trace)
    assert f["error_cascades"].value == 2
    assert f["error_cascades"].unit == "cascades"


def test_cascade_at_the_end_of_the_session_counts():
    trace = make_trace([call()], [call(ok=False), call(ok=False, path="z")])
    assert findings(ErrorAnalyzer(), trace)["error_cascades"].value == 1


def test_wasted_turns_from_errors():
    trace = make_trace(
        [think(), call(ok=False), say("trying")],  # errors and no success: wasted
        [call(ok=False), call()],  # recovered within the turn: not wasted
        [ErrorEvent(message="boom")],  # wasted
        [think(), say()],  # no error at all: not wasted by errors
    )
    assert findings(ErrorAnalyzer(), trace)["wasted_turns_from_errors"].value == 2


# -- empty and error-only traces ----------------------------------------------------


def test_empty_trace():
    trace = make_trace()
    results = {cls.name: cls().analyze(trace, None, "m") for cls in ANALYZERS}
    f = {name: r.findings for name, r in results.items()}
    assert f["reasoning"]["reasoning_density"].value == 0
    assert f["reasoning"]["reasoning_per_tool_call"].value == 0
    assert f["reasoning"]["planning_quality"].value == "mixed"
    assert f["reasoning"]["key_decisions"].values == ()
    assert f["strategy"]["strategy_summary"].value == "direct"
    assert f["strategy"]["strategy_steps"].values == ()
    turn_keys = ("total_turns", "productive_turns", "wasted_turns", "turn_efficiency")
    assert [f["efficiency"][k].value for k in turn_keys] == [0, 0, 0, 0]
    assert f["efficiency"]["backtracking_events"].value == 0
    assert f["tool-pattern"]["tool_sequence"].values == ()
    assert f["tool-pattern"]["tool_call_patterns"].rows == ()
    assert f["error"]["errors_encountered"].value == 0
    assert (
        f["error"]["error_types"].rows == ()
        and f["error"]["recovery_patterns"].rows == ()
    )
    assert results["error"].summary == "0 errors, 0 cascades, 0 wasted turns."


def test_trace_with_only_errors():
    events = [
        ErrorEvent(message="HTTP 401"),
        ErrorEvent(message="timed out"),
        ErrorEvent(message="boom"),
    ]
    trace = SessionTrace(
        session_id="e",
        events=events,
        turns=(),
        summary=TraceSummary(
            total_turns=0,
            total_tool_calls=0,
            total_tokens=TokenBreakdown(),
            total_duration=0,
        ),
    )
    err = findings(ErrorAnalyzer(), trace)
    assert err["errors_encountered"].value == 3
    assert dict(err["error_types"].rows) == {
        "auth": "1",
        "timeout": "1",
        "unknown": "1",
    }
    assert dict(err["recovery_patterns"].rows) == {"give_up": "3"}
    assert err["error_cascades"].value == 1
    assert err["wasted_turns_from_errors"].value == 1  # the unsplit session is one turn
    eff = findings(EfficiencyAnalyzer(), trace)
    assert (
        eff["total_turns"].value,
        eff["productive_turns"].value,
        eff["wasted_turns"].value,
    ) == (1, 0, 1)
    assert findings(StrategyAnalyzer(), trace)["optimality_notes"].values == (
        "High error rate (100%)",
    )


# -- shared properties --------------------------------------------------------------


def _parity_like_trace() -> SessionTrace:
    return make_trace(
        [think("not sure"), sh("git status"), call(ok=False, error="ENOENT")],
        [ErrorEvent(message="x"), call(path="b"), say()],
        reasoning_tokens=50,
        total_tokens=500,
    )


def test_finding_keys_never_collide_across_analyzers():
    keys = [
        key
        for cls in ANALYZERS
        for key in cls().analyze(_parity_like_trace(), None, "m").findings
    ]
    assert len(keys) == len(set(keys)) == 5 + 3 + 6 + 5 + 5


@pytest.mark.parametrize("cls", ANALYZERS, ids=lambda c: c.name)
def test_summary_is_one_sentence_and_results_round_trip(cls):
    result = cls().analyze(_parity_like_trace(), None, "m")
    assert result.summary.endswith(".") and "\n" not in result.summary
    assert ". " not in result.summary[:-1]
    assert from_json(to_json(result), AnalysisResult) == result


def test_analysis_is_linear_in_events():
    # 40,000 events; a quadratic step would take minutes, linear takes a fraction of a second.
    turns = [
        [
            think(f"step {i}"),
            sh(f"git show {i % 50}"),
            call(path=str(i % 300), ok=i % 7 != 0),
            say(),
        ]
        for i in range(8000)
    ]
    trace = make_trace(*turns)
    assert len(trace.events) == 40_000
    start = time.perf_counter()
    for cls in ANALYZERS:
        cls().analyze(trace, None, "m")
    assert time.perf_counter() - start < 3.0


# -- plugin registration ------------------------------------------------------------


def test_plugin_registers_the_five_analyzers():
    manager = get_plugin_manager(
        entrypoints=False, plugins=[("builtin_analyzers", builtin_plugin)]
    )
    registry = manager.registry
    assert list(registry.analyzers) == [
        "reasoning",
        "strategy",
        "efficiency",
        "tool-pattern",
        "error",
    ]
    assert {info.plugin for info in registry.analyzers.values()} == {
        "builtin_analyzers"
    }
    analyzer = registry.create(
        "analyzers",
        "tool-pattern",
        options={"resolve_name": lambda name, tool_input: "T"},
    )
    assert analyzer.analyze(make_trace([sh("git status")]), None, "m").findings[
        "tool_sequence"
    ].values == ("T",)
    with pytest.raises(ConfigError):
        registry.create("analyzers", "reasoning", options={"nope": 1})


def _run_python(
    code: str, extra_path: Path | None = None, **env: str
) -> subprocess.CompletedProcess:
    path = os.pathsep.join(str(p) for p in (SRC, extra_path) if p)
    environment = {k: v for k, v in os.environ.items() if k != "PROFILER_LOAD_PLUGINS"}
    environment.update(PYTHONPATH=path, **env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )


def test_core_never_imports_the_builtin_analyzers():
    proc = _run_python(
        """
        import sys
        import profiler_core, profiler_core.plugins, profiler_core.cli, profiler_core.cli.analyze
        from profiler_core.plugins import get_plugin_manager
        get_plugin_manager(entrypoints=False).registry
        assert "profiler_builtin_analyzers" not in sys.modules, "core imported the analyzers"
        print("ok")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.fixture
def entry_point_dir(tmp_path: Path) -> Path:
    """A dist-info declaring the ``builtin_analyzers`` entry point, as the installed wheel does."""
    dist = tmp_path / "agent_profiler_fake-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agent-profiler-fake\nVersion: 0.1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[agent_profiler]\nbuiltin_analyzers = profiler_builtin_analyzers.plugin\n"
    )
    return tmp_path


_LIST_ANALYZERS = """
    import json
    from profiler_core.plugins import get_plugin_manager
    registry = get_plugin_manager().registry
    print(json.dumps({name: info.plugin for name, info in registry.analyzers.items()}))
"""


def test_analyzers_arrive_through_the_entry_point(entry_point_dir: Path):
    proc = _run_python(_LIST_ANALYZERS, entry_point_dir)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert sorted(found) == [
        "efficiency",
        "error",
        "reasoning",
        "strategy",
        "tool-pattern",
    ]
    assert set(found.values()) == {"builtin_analyzers"}


def test_analyzers_absent_when_plugins_are_switched_off(entry_point_dir: Path):
    proc = _run_python(_LIST_ANALYZERS, entry_point_dir, PROFILER_LOAD_PLUGINS="")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {}
