"""Names and messages from data reach the terminal as text: no rich markup, no raw
control characters (issue 31.9)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from click.testing import CliRunner

from profiler_core.cli import cli
from profiler_core.cli.terminal import PrintableFilter
from profiler_core.util.textcut import printable

ESC = "\x1b"
MODES = ["[/x]", "[bold red]boom", f"esc{ESC}[31mred{ESC}[0m", "rtl\u202eevil"]


def _project(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s-1.json").write_text(
        json.dumps({"id": "s-1", "name": "s", "prompt": "Fix the parser."})
    )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        json.dumps(
            {
                "modes": {mode: {} for mode in MODES},
                "scenarios": {"path": "scenarios"},
                "provider": {
                    "id": "simulated",
                    "model": "sim-small",
                    "options": {"seed": 1, "time_scale": 0},
                },
                "execution": {"repetitions": 1, "warmup": False},
                "analyzers": [],
                "output": {
                    "results_dir": str(tmp_path / "results"),
                    "reports_dir": str(tmp_path / "reports"),
                },
            }
        )
    )
    return profile


def test_markup_and_escape_codes_in_mode_names_are_printed_as_text(
    tmp_path, profiler_plugin_manager
):
    profile = _project(tmp_path)
    result = CliRunner().invoke(
        cli,
        ["run", str(profile), "--run-id", "r1", "--progress", "rich"],
        obj=profiler_plugin_manager,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    out = result.stdout + result.stderr
    assert (
        ESC not in out and "\u202e" not in out
    )  # nothing from data moves the cursor, recolours or reverses the terminal
    for shown in (
        "[/x]",
        "[bold red]boom",
        "esc\\x1b[31mred\\x1b[0m",
        "rtl\\u202eevil",
    ):
        assert shown in result.stdout, shown
    assert (
        tmp_path / "reports" / "r1" / "report.html"
    ).is_file()  # the run went on to its report


def test_on_a_terminal_the_summary_is_a_rich_table_showing_names_as_text(
    tmp_path, profiler_plugin_manager, monkeypatch
):
    # Captured output gets plain columns (rich is not imported); on a terminal, a rich
    # table, whose cells are text too.
    monkeypatch.setenv(
        "TTY_COMPATIBLE", "1"
    )  # rich's own switch: draw as on a terminal
    profile = _project(tmp_path)
    result = CliRunner().invoke(
        cli,
        ["run", str(profile), "--run-id", "r1", "--no-report"],
        obj=profiler_plugin_manager,
    )
    assert result.exit_code == 0, result.output
    assert (
        "┏━" in result.stdout and "Summary per mode" in result.stdout
    )  # rich's box, not the plain columns
    assert (
        f"esc{ESC}[31m" not in result.stdout and "\u202e" not in result.stdout
    )  # the data's escapes never reach it
    for shown in ("[/x]", "[bold red]boom", "esc\\x1b[31mred\\x1b[0m"):
        assert shown in result.stdout, shown


def test_whether_the_cli_draws_follows_riches_rules(monkeypatch):
    from profiler_core.cli.terminal import may_be_terminal

    for name in ("TTY_COMPATIBLE", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    assert may_be_terminal() is False  # pytest captures stdout: not a tty
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert may_be_terminal() is True
    monkeypatch.setenv("FORCE_COLOR", "")
    assert may_be_terminal() is False
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert may_be_terminal() is True
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    assert may_be_terminal() is False


def test_error_lines_show_control_characters_escaped(tmp_path, profiler_plugin_manager):
    name = tmp_path / f"clear{ESC}[2Jscreen.jsonl"
    result = CliRunner().invoke(cli, ["report", str(name)], obj=profiler_plugin_manager)
    assert result.exit_code == 1
    assert ESC not in result.output and "clear\\x1b[2Jscreen.jsonl" in result.output


def test_log_lines_show_control_characters_escaped():
    record = logging.LogRecord(
        "agent_profiler",
        logging.WARNING,
        __file__,
        1,
        "retrying after: %s",
        (f"{ESC}]0;pwned{ESC}\\ red",),
        None,
    )
    PrintableFilter().filter(record)
    assert record.getMessage() == "retrying after: \\x1b]0;pwned\\x1b\\ red"


def test_printable_keeps_text_and_escapes_the_rest():
    assert printable("plain, ünïcode and 🙂\n\ttabs") == "plain, ünïcode and 🙂\n\ttabs"
    assert printable("a\rb\x00c\x7fd\x9be\ud83d") == "a\\x0db\\x00c\\x7fd\\x9be\\ud83d"
    assert printable("two\nlines", one_line=True) == "two\\x0alines"


def _shows_names_as_text(output: str) -> None:
    assert ESC not in output and "\u202e" not in output
    for shown in (
        "[/x]",
        "[bold red]boom",
        "esc\\x1b[31mred\\x1b[0m",
        "rtl\\u202eevil",
    ):
        assert shown in output, shown


def test_compare_plan_analyze_and_import_print_names_as_text(
    tmp_path, profiler_plugin_manager
):
    profile = _project(tmp_path)
    runner = CliRunner()
    for run_id in ("r1", "r2"):
        run = runner.invoke(
            cli,
            ["run", str(profile), "--run-id", run_id, "--no-report"],
            obj=profiler_plugin_manager,
            catch_exceptions=False,
        )
        assert run.exit_code == 0, run.output
    results = str(tmp_path / "results")

    # The tables of `compare` (changes and gates) parse no markup: `[/x]` used to raise MarkupError.
    compared = runner.invoke(
        cli,
        ["compare", "r1", "r2", "--results-dir", results, "--fail-on", "cost:+10%"],
        obj=profiler_plugin_manager,
    )
    assert compared.exception is None or isinstance(compared.exception, SystemExit), (
        compared.exception
    )
    assert compared.exit_code == 3, compared.output  # inconclusive: one row per mode
    _shows_names_as_text(compared.stdout)
    assert (
        compared.stdout.count("[bold red]boom") == 7
    )  # six metrics and one gate, none of them turned red

    planned = runner.invoke(
        cli, ["plan", str(profile), "--pilot", "r1"], obj=profiler_plugin_manager
    )
    assert planned.exit_code == 0, planned.output
    _shows_names_as_text(planned.stdout)
    assert "esc\\x1b[31mred\\x1b[0m vs [/x]" in planned.stdout

    # click drops ANSI sequences it recognises when not on a terminal; on one they went out raw.
    from profiler_builtin_analyzers import plugin as analyzers_plugin

    profiler_plugin_manager.register(analyzers_plugin, "builtin_analyzers")
    analyzed = runner.invoke(
        cli,
        ["analyze", str(tmp_path / f"no{ESC}[2Jsuch\u202e.json")],
        obj=profiler_plugin_manager,
    )
    assert analyzed.exit_code != 0 and "no\\x1b[2Jsuch\\u202e.json" in analyzed.stderr

    transcript = (
        Path(__file__).parent
        / "fixtures"
        / "transcripts"
        / "openai"
        / "refund-001.jsonl"
    )
    imported = runner.invoke(
        cli,
        [
            "import",
            "openai",
            str(transcript),
            "--out",
            str(tmp_path / "imp.jsonl"),
            "--mode",
            MODES[2],
        ],
        obj=profiler_plugin_manager,
    )
    assert imported.exit_code == 0, imported.output
    assert ESC not in imported.stdout and "esc\\x1b[31mred\\x1b[0m" in imported.stdout


def test_printable_text_is_returned_without_compiling_the_escape_pattern():
    """Issue 44: the control-character classes reach past U+00FF (~1 ms to compile each);
    text str.isprintable() accepts holds none of their characters."""
    import subprocess
    import sys
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src"
    code = (
        "from profiler_core.util import textcut, textclean\n"
        "assert textcut.printable('plain text, ünïcode — fine') == "
        "'plain text, ünïcode — fine'\n"
        "assert textclean.clean_str('ascii') == ('ascii', 0)\n"
        "print(textcut._pattern.cache_info().currsize, textclean._bad.cache_info().currsize)\n"
        "print(textcut.printable('a\\x1b[31m\\u202eb'), textcut.printable('x\\ty', one_line=True))\n"
        "print(textclean.clean_str('a\\x00b'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "0 0"  # neither pattern compiled for clean text
    assert lines[1] == "a\\x1b[31m\\u202eb x\\x09y"  # escaped as before
    assert lines[2] == "('a\ufffdb', 1)"
