"""A real outside plugin, built into a wheel and pip-installed into a fresh venv."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PLUGIN_MODULE = """
from datetime import UTC, datetime

from profiler_core import (
    AnalysisResult, JudgeResponse, ModeConfig, PromptMetrics, PromptResult, ScorerResult, SessionHandle,
    TimingBreakdown, TokenBreakdown, UnknownModeError, hookimpl,
)


class MyAgent:
    id = "my-agent"
    def init(self, config): pass
    def create_session(self, params):
        return SessionHandle(session_id=f"{params.scenario_id}-{params.iteration}", provider=self.id,
                             created_at=datetime.now(UTC).isoformat())
    async def prompt(self, handle, text, timeout_ms=None):
        n = len(text.split())
        return PromptResult(text=text, metrics=PromptMetrics(tokens=TokenBreakdown(input=n, output=n),
                                                             timing=TimingBreakdown(wall_ms=1)))
    def export_session(self, handle):
        from profiler_core.testing import simple_trace
        return simple_trace(handle.session_id, "echo", (), TokenBreakdown(input=1, output=1), 1)
    def destroy_session(self, handle): pass
    def shutdown(self): pass


class MyChecks:
    id = "my-checks"
    def evaluate(self, scenario, context):
        return ScorerResult(success=True, passed=0, total=0)


class MyCollector:
    id = "my-collector"
    def collect(self, result, scenario, mode, trace):
        return []


class MyAnalyzer:
    name = "my-analyzer"
    def analyze(self, trace, scenario, mode):
        return AnalysisResult(analyzer=self.name, findings={}, summary="nothing")


class MyModes:
    id = "my-modes"
    def resolve(self, mode):
        if mode != "fast":
            raise UnknownModeError(mode)
        return ModeConfig()


class MyJudge:
    id = "my-judge"
    def judge(self, request):
        return JudgeResponse(text="{}")


@hookimpl
def profiler_register_providers(register):
    register(MyAgent)

@hookimpl
def profiler_register_scorers():
    return [MyChecks]

@hookimpl
def profiler_register_collectors():
    return [MyCollector]

@hookimpl
def profiler_register_analyzers():
    return [MyAnalyzer]

@hookimpl
def profiler_register_mode_resolvers():
    return [MyModes]

@hookimpl
def profiler_register_judge_providers():
    return [MyJudge]

@hookimpl
def profiler_before_run(ctx):
    pass

@hookimpl
def profiler_after_scenario(ctx):
    pass

@hookimpl
def profiler_report_sections(summary, rows):
    from profiler_core import ReportSection

    modes = sorted({row.mode for row in rows})
    return ReportSection(title="Mine's modes", text=f"Run {summary['runId']}.", header=("mode",),
                         rows=[(mode,) for mode in modes])
"""


PLUGIN_TESTS = """
from agent_profiler_mine import MyAgent, MyAnalyzer, MyChecks, MyCollector, MyModes

pytest_plugins = ["profiler_core.testing.pytest_plugin"]


def test_provider(check_provider):
    check_provider(MyAgent)


def test_scorer(check_scorer):
    check_scorer(MyChecks)


def test_collector(check_collector):
    check_collector(MyCollector)


def test_analyzer(check_analyzer):
    check_analyzer(MyAnalyzer)


def test_modes(check_mode_resolver):
    check_mode_resolver(MyModes, modes=["fast"])


def test_report_section(check_report_section):
    import agent_profiler_mine

    (section,) = check_report_section(agent_profiler_mine)
    assert section.rows == (("baseline",), ("candidate",))
"""

HALF_PLUGIN = """
from profiler_core import hookimpl


class HalfAgent:
    id = "half-agent"
    def init(self, config): pass


@hookimpl
def profiler_register_providers():
    return [HalfAgent]
"""


def _distribution(root: Path, name: str, version: str, module: str, code: str) -> Path:
    folder = root / name
    (folder / "src" / module).mkdir(parents=True)
    (folder / "src" / module / "__init__.py").write_text(code)
    (folder / "pyproject.toml").write_text(
        textwrap.dedent(f"""
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "{name}"
        version = "{version}"
        dependencies = ["agent-profiler"]

        [project.entry-points.agent_profiler]
        {module.removeprefix("agent_profiler_")} = "{module}"

        [tool.hatch.build.targets.wheel]
        packages = ["src/{module}"]
    """)
    )
    return folder


def _wheel(source: Path, out: Path, dist_name: str | None = None) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    name = (dist_name or source.name).replace("-", "_")
    (wheel,) = [
        p for p in out.glob("*.whl") if p.name.lower().startswith(name.lower() + "-")
    ]
    return wheel


@pytest.mark.slow
def test_outside_plugin_wheel_is_discovered_in_a_fresh_venv(tmp_path):
    wheels = tmp_path / "wheels"
    ours = _wheel(ROOT, wheels, "agent-profiler")
    mine = _wheel(
        _distribution(
            tmp_path,
            "agent-profiler-mine",
            "1.2.0",
            "agent_profiler_mine",
            PLUGIN_MODULE,
        ),
        wheels,
    )
    broken = _wheel(
        _distribution(
            tmp_path,
            "agent-profiler-broken",
            "0.0.1",
            "agent_profiler_broken",
            "import requests_that_do_not_exist\n",
        ),
        wheels,
    )
    half = _wheel(
        _distribution(
            tmp_path, "agent-profiler-half", "0.2.0", "agent_profiler_half", HALF_PLUGIN
        ),
        wheels,
    )
    with zipfile.ZipFile(ours) as wheel:
        assert {"profiler_core/py.typed", "profiler_builtin_analyzers/py.typed"} <= set(
            wheel.namelist()
        )

    venv = tmp_path / "venv"
    # No pip of its own (ensurepip alone takes ~3 s of CPU): the pip below comes through
    # _parent_env.pth
    # and installs into the running interpreter's prefix, the venv.
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True
    )
    python = venv / "bin" / "python"
    # Dependencies (pluggy, attrs, numpy...) come from this test environment, so nothing
    # is downloaded;
    # the project itself and both plugins are real wheels installed into the new venv.
    venv_site = Path(
        subprocess.run(
            [
                str(python),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (venv_site / "_parent_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(ours),
            str(mine),
            str(broken),
            str(half),
        ],
        check=True,
        capture_output=True,
    )

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PROFILER_LOAD_PLUGINS")
    }
    result = subprocess.run(
        [str(venv / "bin" / "profiler"), "list-plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    plugins = {p["name"]: p for p in json.loads(result.stdout)}

    mine_info = plugins["mine"]
    assert mine_info["distribution"] == "agent-profiler-mine"
    assert mine_info["version"] == "1.2.0"
    assert mine_info["builtin"] is False and mine_info["error"] is None
    assert mine_info["components"] == {
        "analyzers": ["my-analyzer"],
        "collectors": ["my-collector"],
        "judge_providers": ["my-judge"],
        "mode_resolvers": ["my-modes"],
        "providers": ["my-agent"],
        "scorers": ["my-checks"],
    }
    assert {
        "profiler_before_run",
        "profiler_after_scenario",
        "profiler_report_sections",
    } <= set(mine_info["hooks"])
    # the installed profiler_core is the wheel's, not the source tree's
    where = subprocess.run(
        [str(python), "-c", "import profiler_core; print(profiler_core.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert str(venv) in where.stdout

    broken_info = plugins["broken"]
    assert broken_info["distribution"] == "agent-profiler-broken"
    assert broken_info["error"].startswith("ModuleNotFoundError")
    assert "broken" in result.stderr  # warned about on stderr too

    # a provider missing methods is refused on its own plugin's row; the rest are unaffected
    assert plugins["half"]["error"] == (
        "provider 'half-agent' of plugin 'half' is refused: "
        "missing create_session, prompt, export_session, destroy_session, shutdown"
    )
    assert plugins["core.scorers.checks"]["components"] == {"scorers": ["checks"]}

    human = subprocess.run(
        [str(venv / "bin" / "profiler"), "list-plugins"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert human.returncode == 0
    assert (
        "agent-profiler-mine" in human.stdout and "providers: my-agent" in human.stdout
    )

    # the plugin's own tests use the contract kit against the installed wheels
    tests = tmp_path / "mine-tests"
    tests.mkdir()
    (tests / "test_mine.py").write_text(PLUGIN_TESTS)
    kit = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tests,
        timeout=300,
    )
    assert kit.returncode == 0, kit.stdout + kit.stderr
    assert "6 passed" in kit.stdout

    # `profiler report` of the installed wheels shows the installed plugin's section
    from profiler_core.testing.contract_report import sample_results

    results = sample_results(tmp_path)
    report = subprocess.run(
        [str(venv / "bin" / "profiler"), "report", str(results), "--out", "report"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert report.returncode == 0, report.stderr
    assert "report section failed" not in report.stderr
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "## Mine's modes\n\n*From plugin mine.*\n\nRun kit-run." in markdown
    assert (
        "<h2>Mine&#x27;s modes</h2>"
        in (tmp_path / "report" / "report.html").read_text()
    )
