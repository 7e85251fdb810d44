"""The ``cli/`` package: the plugin manager in ctx.obj, plugin commands,
``list-plugins``, one ``Error:`` style."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from profiler_core import hookimpl
from profiler_core.cli import cli, plugin_manager
from profiler_core.plugins.manager import get_plugin_manager

SRC = Path(__file__).resolve().parents[1] / "src"
FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


class Hello:
    """A plugin adding ``profiler hello``, which reports the manager it was given."""

    @hookimpl
    def profiler_register_commands(self, cli):
        @cli.command("hello")
        @click.pass_context
        def hello(ctx):
            """Say hello and count the plugins of this invocation."""
            click.echo(
                f"hello from a manager with {len(plugin_manager(ctx).plugins)} plugins"
            )
            click.echo(f"same manager: {ctx.obj is plugin_manager(ctx)}")


class Broken:
    @hookimpl
    def profiler_register_commands(self, cli):
        raise RuntimeError("no commands today")


class Usurper:
    @hookimpl
    def profiler_register_commands(self, cli):
        @cli.command("run")
        def run():
            click.echo("not the real run")


def manager_with(*plugins):
    return get_plugin_manager(entrypoints=False, plugins=plugins)


def test_a_plugin_command_runs_with_the_invocations_manager():
    manager = manager_with(("hello", Hello()))
    result = CliRunner().invoke(cli, ["hello"], obj=manager)
    assert result.exit_code == 0, result.output
    assert f"a manager with {len(manager.plugins)} plugins" in result.stdout
    assert "same manager: True" in result.stdout
    assert "hello" in CliRunner().invoke(cli, ["--help"], obj=manager).stdout


def test_plugin_commands_do_not_leak_between_invocations():
    assert (
        CliRunner()
        .invoke(cli, ["hello"], obj=manager_with(("hello", Hello())))
        .exit_code
        == 0
    )
    other = CliRunner().invoke(cli, ["hello"], obj=manager_with())
    assert other.exit_code == 2 and "No such command 'hello'" in other.stderr
    assert "hello" not in cli.commands


def test_a_failing_plugin_is_named_and_the_others_still_add_commands():
    manager = manager_with(
        ("broken", Broken()), ("hello", Hello()), ("usurper", Usurper())
    )
    result = CliRunner().invoke(cli, ["hello"], obj=manager)
    assert result.exit_code == 0, result.output
    assert (
        "plugin 'broken' failed to add commands: RuntimeError: no commands today"
        in result.stderr
    )
    assert "plugin 'usurper': command 'run' already exists" in result.stderr
    run_help = CliRunner().invoke(cli, ["run", "--help"], obj=manager)
    assert "Run a profile" in run_help.stdout


def test_list_plugins_is_a_table_with_whole_rows_when_captured():
    class ManyComponents:
        @hookimpl
        def profiler_register_scorers(self):
            return [
                type(
                    f"S{i}",
                    (),
                    {
                        "id": f"a-rather-long-scorer-name-{i}",
                        "evaluate": lambda self, *a: None,
                    },
                )
                for i in range(6)
            ]

    result = CliRunner().invoke(
        cli, ["list-plugins"], obj=manager_with(("many", ManyComponents()))
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "VERSION", "DISTRIBUTION", "PROVIDES"]
    # Plain lines: no rule, and no padding after the last column (issue 31.20: 260
    # columns when piped).
    assert all(line == line.rstrip() and "─" not in line for line in lines)
    assert len(lines[0]) == lines[0].index("PROVIDES") + len("PROVIDES")
    (many,) = [line for line in lines if line.startswith("many ")]
    assert many.rstrip().endswith(
        "a-rather-long-scorer-name-5"
    )  # one line, however wide
    assert any(line.startswith("core.scorers.checks (builtin)") for line in lines)


@pytest.fixture
def project(tmp_path):
    """A plugin adding ``profiler hello`` through a real entry point (a dist-info on PYTHONPATH)."""
    site = tmp_path / "site"
    (site / "helloplugin-0.2.dist-info").mkdir(parents=True)
    (site / "helloplugin.py").write_text(
        textwrap.dedent(
            """
            import click
            from profiler_core import hookimpl
            from profiler_core.cli import pass_manager

            @hookimpl
            def profiler_register_commands(cli):
                @cli.command("hello")
                @pass_manager
                def hello(manager):
                    '''Greet.'''
                    click.echo("hello; plugins: " + ", ".join(sorted(manager.plugins)))
            """
        )
    )
    dist = site / "helloplugin-0.2.dist-info"
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: helloplugin\nVersion: 0.2\n"
    )
    (dist / "entry_points.txt").write_text("[agent_profiler]\nhello = helloplugin\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(site), str(SRC), env.get("PYTHONPATH", "")]
    )
    env["PROFILER_LOAD_PLUGINS"] = "hello"
    return tmp_path, env


def profiler(args, cwd, env):
    return subprocess.run(
        [sys.executable, "-m", "profiler_core", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_entry_point_plugin_command_and_list_plugins_in_a_subprocess(project):
    tmp_path, env = project
    hello = profiler(["hello"], tmp_path, env)
    assert hello.returncode == 0, hello.stderr
    assert (
        hello.stdout.startswith("hello; plugins: ")
        and "hello" in hello.stdout.split(": ", 1)[1]
    )
    listed = json.loads(profiler(["list-plugins", "--json"], tmp_path, env).stdout)
    mine = next(p for p in listed if p["name"] == "hello")
    assert mine == {
        "name": "hello",
        "distribution": "helloplugin",
        "version": "0.2",
        "module": "helloplugin",
        "builtin": False,
        "hooks": ["profiler_register_commands"],
        "components": {},
        "error": None,
    }


@pytest.mark.slow
def test_error_lines_start_with_Error_in_every_command(project):
    tmp_path, env = project
    bad_profile = tmp_path / "bad.yaml"
    bad_profile.write_text(
        "modes: {a: {}}\nscenarios: {path: nowhere}\nprovider: {id: simulatd}\n"
    )
    truncated = tmp_path / "cut.jsonl"
    truncated.write_text(
        (FIXTURES / "claude-code" / "api-error.jsonl").read_text()[:-50]
    )
    not_a_trace = tmp_path / "notes.json"
    not_a_trace.write_text("hello")
    for args in (
        ["validate", bad_profile],
        ["run", bad_profile],
        ["import", "claude-code", truncated, "--out", tmp_path / "out" / "r.jsonl"],
        ["analyze", not_a_trace],
        ["report", tmp_path / "missing.jsonl"],
    ):
        proc = profiler(args, tmp_path, env)
        assert proc.returncode == 1, (args, proc.stderr)
        problems = [
            line for line in proc.stderr.splitlines() if "problem(s) found" not in line
        ]
        problems = [line for line in problems if "could not be imported" not in line]
        assert problems and all(line.startswith("Error: ") for line in problems), (
            args,
            proc.stderr,
        )
    assert not (tmp_path / "out").exists()
