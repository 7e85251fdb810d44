"""Names and messages from data reach the terminal as text: no rich markup, no raw control characters (issue 31.9)."""

from __future__ import annotations

import json
import logging

from click.testing import CliRunner

from profiler_core.cli import cli
from profiler_core.cli.terminal import PrintableFilter
from profiler_core.util.textcut import printable

ESC = "\x1b"
MODES = ["[/x]", "[bold red]boom", f"esc{ESC}[31mred{ESC}[0m", "rtl\u202eevil"]


def _project(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "s-1.json").write_text(json.dumps({"id": "s-1", "name": "s", "prompt": "Fix the parser."}))
    profile = tmp_path / "profile.yaml"
    profile.write_text(json.dumps({
        "modes": {mode: {} for mode in MODES},
        "scenarios": {"path": "scenarios"},
        "provider": {"id": "simulated", "model": "sim-small", "options": {"seed": 1, "time_scale": 0}},
        "execution": {"repetitions": 1, "warmup": False},
        "analyzers": [],
        "output": {"results_dir": str(tmp_path / "results"), "reports_dir": str(tmp_path / "reports")},
    }))
    return profile


def test_markup_and_escape_codes_in_mode_names_are_printed_as_text(tmp_path, profiler_plugin_manager):
    profile = _project(tmp_path)
    result = CliRunner().invoke(
        cli, ["run", str(profile), "--run-id", "r1", "--progress", "rich"], obj=profiler_plugin_manager, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    out = result.stdout + result.stderr
    assert ESC not in out and "\u202e" not in out  # nothing from data moves the cursor, recolours or reverses the terminal
    for shown in ("[/x]", "[bold red]boom", "esc\\x1b[31mred\\x1b[0m", "rtl\\u202eevil"):
        assert shown in result.stdout, shown
    assert (tmp_path / "reports" / "r1" / "report.html").is_file()  # the run went on to its report


def test_error_lines_show_control_characters_escaped(tmp_path, profiler_plugin_manager):
    name = tmp_path / f"clear{ESC}[2Jscreen.jsonl"
    result = CliRunner().invoke(cli, ["report", str(name)], obj=profiler_plugin_manager)
    assert result.exit_code == 1
    assert ESC not in result.output and "clear\\x1b[2Jscreen.jsonl" in result.output


def test_log_lines_show_control_characters_escaped():
    record = logging.LogRecord("agent_profiler", logging.WARNING, __file__, 1, "retrying after: %s", (f"{ESC}]0;pwned{ESC}\\ red",), None)
    PrintableFilter().filter(record)
    assert record.getMessage() == "retrying after: \\x1b]0;pwned\\x1b\\ red"


def test_printable_keeps_text_and_escapes_the_rest():
    assert printable("plain, ünïcode and 🙂\n\ttabs") == "plain, ünïcode and 🙂\n\ttabs"
    assert printable("a\rb\x00c\x7fd\x9be\ud83d") == "a\\x0db\\x00c\\x7fd\\x9be\\ud83d"
    assert printable("two\nlines", one_line=True) == "two\\x0alines"
