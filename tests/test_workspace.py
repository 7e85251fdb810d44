"""Per-session workspaces, set-up commands and verifiers: the runner judges the work,
not the words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from tests.sandbox_runtimes import require

from profiler_core import ModeConfig, ProviderConfig, Scenario
from profiler_core.config.loader import load_profile
from profiler_core.errors import ProfilerError
from profiler_core.model import (
    ScorerCheckResult,
    ScorerResult,
    VerifierSpec,
    WorkspaceSpec,
)
from profiler_core.providers.simulated import SimulatedProvider
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.sandbox import SandboxSettings
from profiler_core.scorers.checks import ChecksScorer
from profiler_core.scorers.composite import CompositeScorer
from profiler_core.scorers.verify import VerifyScorer
from profiler_core.storage.tracestore import iter_records
from profiler_core.testing import FakeProvider

ROOT = Path(__file__).resolve().parent.parent

FIX = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def task(tmp_path):
    """A scenario folder: a workspace with a broken function, and hidden tests the agent
    never sees."""
    scenarios = tmp_path / "scenarios"
    (scenarios / "repo").mkdir(parents=True)
    (scenarios / "repo" / "calc.py").write_text(BROKEN)
    (scenarios / "hidden").mkdir()
    (scenarios / "hidden" / "test_calc.py").write_text(TEST)
    return scenarios


def _scenario(scenarios: Path, **kw) -> Scenario:
    verify = VerifierSpec(
        name="tests",
        command=f"{sys.executable} -m pytest -q -p no:cacheprovider tests",
        files={"tests": str(scenarios / "hidden")},
        timeout_ms=60_000,
    )
    base = dict(
        id="fix-add",
        name="Fix add",
        prompt="Make the tests pass.",
        workspace=WorkspaceSpec(path=str(scenarios / "repo")),
        verify=(verify,),
        timeout_ms=60_000,
    )
    base.update(kw)
    return Scenario(**base)


def _run(tmp_path, manager, scenario, *, provider=None, scorer=None, modes=None, **kw):
    options = RunOptions(
        provider=provider or SimulatedProvider(),
        scorer=scorer or VerifyScorer(),
        scenarios=[scenario],
        modes=modes
        or {
            "fixes": ModeConfig(provider_overrides={"writes": {"calc.py": FIX}}),
            "talks": ModeConfig(),
        },
        repetitions=kw.pop("repetitions", 1),
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        run_id=kw.pop("run_id", "ws"),
        **kw,
    )
    options.plugin_manager = manager
    return trio.run(run_profile_suite, options)


def test_a_verifier_decides_success_by_running_the_tests(
    tmp_path, task, profiler_plugin_manager
):
    result = _run(tmp_path, profiler_plugin_manager, _scenario(task))
    rows = {r.mode: r for r in result.rows}
    fixed, talked = rows["fixes"], rows["talks"]
    assert fixed.success and not fixed.error
    assert [(d.id, d.passed) for d in fixed.checkpoint_details] == [
        ("verify:tests", True)
    ]
    assert "1 passed" in fixed.checkpoint_details[0].actual
    # The simulated agent's final text may well claim success: the verifier says it failed.
    assert not talked.success and talked.error is None
    assert [(d.id, d.passed) for d in talked.checkpoint_details] == [
        ("verify:tests", False)
    ]
    assert "assert -1 == 5" in talked.checkpoint_details[0].actual
    # The source folder is untouched: every session worked on its own copy.
    assert (task / "repo" / "calc.py").read_text() == BROKEN


def test_the_checks_scorer_counts_verifiers_beside_its_checks(
    tmp_path, task, profiler_plugin_manager
):
    scenario = _scenario(
        task,
        extensions={
            "checks": [
                {
                    "id": "said",
                    "target": "output",
                    "condition": {"type": "matches", "pattern": ""},
                }
            ]
        },
    )
    result = _run(tmp_path, profiler_plugin_manager, scenario, scorer=ChecksScorer())
    rows = {r.mode: r for r in result.rows}
    assert [d.id for d in rows["talks"].checkpoint_details] == ["said", "verify:tests"]
    assert rows["fixes"].success and not rows["talks"].success


class _Recorder:
    """Run hooks: the workspace each session was given and what was in it when its prompt came."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []


class _LookingProvider(FakeProvider):
    """A fake agent that lists its workspace when prompted and writes a file of its
    session there."""

    def __init__(self, recorder: _Recorder) -> None:
        super().__init__()
        self.recorder = recorder
        self.workspaces: dict[str, str | None] = {}

    def create_session(self, params):
        handle = super().create_session(params)
        self.workspaces[handle.session_id] = params.workspace
        return handle

    async def prompt(self, handle, text, timeout_ms=None):
        folder = self.workspaces[handle.session_id]
        self.recorder.seen.append((folder, sorted(os.listdir(folder))))
        Path(folder, f"made-by-{handle.session_id}").write_text("x")
        return await super().prompt(handle, text, timeout_ms)


def test_every_session_gets_a_fresh_workspace_and_never_sees_the_hidden_files(
    tmp_path, task, profiler_plugin_manager, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    recorder = _Recorder()
    scenario = _scenario(task)
    _run(
        tmp_path,
        profiler_plugin_manager,
        scenario,
        provider=_LookingProvider(recorder),
        scorer=ChecksScorer(),
        modes={"a": ModeConfig(), "b": ModeConfig()},
        repetitions=2,
        concurrency=4,
    )
    folders = [folder for folder, _ in recorder.seen]
    assert len(folders) == len(set(folders)) == 4
    for folder, listing in recorder.seen:
        assert listing == ["calc.py"]  # no other session's file, no hidden tests
        assert Path(folder).resolve() != tmp_path.resolve()


def test_without_a_workspace_each_session_gets_an_empty_folder_not_the_current_directory(
    tmp_path, profiler_plugin_manager, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    recorder = _Recorder()
    scenario = Scenario(id="plain", name="P", prompt="hi")
    _run(
        tmp_path,
        profiler_plugin_manager,
        scenario,
        provider=_LookingProvider(recorder),
        scorer=ChecksScorer(),
        modes={"a": ModeConfig()},
        repetitions=3,
    )
    assert [listing for _, listing in recorder.seen] == [
        [],
        [],
        [],
    ]  # empty when given (a folder left empty is reused)
    folders = {Path(folder) for folder, _ in recorder.seen}
    assert all(
        f.resolve() != tmp_path.resolve() and not f.exists() for f in folders
    )  # and gone after the run


def test_failed_workspaces_are_kept_for_inspection_and_the_trace_lists_the_files(
    tmp_path, task, profiler_plugin_manager
):
    _run(tmp_path, profiler_plugin_manager, _scenario(task))
    kept = tmp_path / "reports" / "ws" / "workspaces" / "fix-add"
    assert sorted(p.name for p in kept.iterdir()) == [
        "talks-iter-0"
    ]  # the passing one is removed
    assert (kept / "talks-iter-0" / "calc.py").read_text() == BROKEN
    assert (kept / "talks-iter-0" / "tests" / "test_calc.py").is_file()
    records = {
        r.mode: r.trace
        for r in iter_records(tmp_path / "reports" / "ws" / "sessions" / "traces.jsonl")
    }
    assert records["fixes"].workspace.files == ("calc.py",)


@pytest.mark.parametrize(
    "keep, expected", [("all", ["fixes-iter-0", "talks-iter-0"]), ("none", [])]
)
def test_keep_workspaces_all_and_none(
    tmp_path, task, profiler_plugin_manager, keep, expected
):
    _run(tmp_path, profiler_plugin_manager, _scenario(task), keep_workspaces=keep)
    kept = tmp_path / "reports" / "ws" / "workspaces" / "fix-add"
    assert (sorted(p.name for p in kept.iterdir()) if kept.exists() else []) == expected


def _git(*args, cwd):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_a_git_workspace_is_cloned_at_its_ref_and_the_trace_records_the_diff(
    tmp_path, task, profiler_plugin_manager
):
    repo = tmp_path / "upstream"
    repo.mkdir()
    _git("init", "-q", "-b", "main", cwd=repo)
    (repo / "calc.py").write_text(BROKEN)
    _git("add", ".", cwd=repo)
    _git("commit", "-qm", "broken", cwd=repo)
    _git("tag", "v1", cwd=repo)
    (repo / "calc.py").write_text("raise SystemExit('later commit')\n")
    _git("commit", "-qam", "later", cwd=repo)
    scenario = _scenario(task, workspace=WorkspaceSpec(git=str(repo), ref="v1"))
    modes = {
        "fixes": ModeConfig(
            provider_overrides={"writes": {"calc.py": FIX, "NOTES.md": "new\n"}}
        )
    }
    result = _run(
        tmp_path, profiler_plugin_manager, scenario, modes=modes, repetitions=2
    )
    assert [r.success for r in result.rows] == [True, True]
    traces = list(
        iter_records(tmp_path / "reports" / "ws" / "sessions" / "traces.jsonl")
    )
    stat = traces[0].trace.workspace.diff_stat
    assert "calc.py" in stat and "NOTES.md" in stat and "2 files changed" in stat


def test_a_failing_setup_command_is_a_setup_error_and_is_retried(
    tmp_path, task, profiler_plugin_manager
):
    scenario = _scenario(task, setup=("echo preparing", "exit 3"), allowed_retries=1)
    result = _run(
        tmp_path, profiler_plugin_manager, scenario, modes={"fixes": ModeConfig()}
    )
    (row,) = result.rows
    assert row.error_code == "setup_error" and row.attempts == 2 and not row.success
    assert "setup command 'exit 3' exited 3" in row.error


def test_setup_commands_run_in_the_workspace_before_the_agent(
    tmp_path, task, profiler_plugin_manager
):
    scenario = _scenario(task, setup=("cp calc.py calc_original.py",))
    recorder = _Recorder()
    _run(
        tmp_path,
        profiler_plugin_manager,
        scenario,
        provider=_LookingProvider(recorder),
        scorer=ChecksScorer(),
        modes={"a": ModeConfig()},
    )
    assert recorder.seen[0][1] == ["calc.py", "calc_original.py"]


@pytest.mark.parametrize(
    "command, timeout_ms, message",
    [
        ("sleep 30", 500, "verifier 'tests' timed out after 0.5 s"),
        (
            "no-such-interpreter tests",
            10_000,
            "verifier 'tests' could not run its command (exit 127)",
        ),
    ],
)
def test_a_verifier_that_cannot_run_is_an_error_never_a_pass(
    tmp_path, task, profiler_plugin_manager, command, timeout_ms, message
):
    scenario = _scenario(
        task,
        verify=(VerifierSpec(name="tests", command=command, timeout_ms=timeout_ms),),
    )
    result = _run(
        tmp_path,
        profiler_plugin_manager,
        scenario,
        modes={"fixes": ModeConfig(provider_overrides={"writes": {"calc.py": FIX}})},
    )
    (row,) = result.rows
    assert (
        row.error_code == "verifier_error" and message in row.error and not row.success
    )


def test_a_reward_file_becomes_the_rows_reward_with_named_sub_scores(
    tmp_path, task, profiler_plugin_manager
):
    write = 'echo \'{"tests": 0.5, "style": 1}\' > "$PROFILER_VERIFIER_DIR/reward.json"'
    scenario = _scenario(task, verify=(VerifierSpec(name="graded", command=write),))
    result = _run(
        tmp_path,
        profiler_plugin_manager,
        scenario,
        modes={"a": ModeConfig()},
        scorer=VerifyScorer(min_reward=0.8),
    )
    (row,) = result.rows
    assert (
        row.reward == 0.75
        and row.extensions["reward_tests"] == 0.5
        and row.extensions["reward_style"] == 1
    )
    assert not row.success and [d.id for d in row.checkpoint_details] == [
        "verify:graded",
        "verify:reward",
    ]


def test_a_reward_outside_zero_to_one_is_a_verifier_error(
    tmp_path, task, profiler_plugin_manager
):
    scenario = _scenario(
        task,
        verify=(
            VerifierSpec(
                name="graded", command='echo 7 > "$PROFILER_VERIFIER_DIR/reward.txt"'
            ),
        ),
    )
    (row,) = _run(
        tmp_path, profiler_plugin_manager, scenario, modes={"a": ModeConfig()}
    ).rows
    assert (
        row.error_code == "verifier_error"
        and "reward.txt: expected a number from 0 to 1, got 7" in row.error
    )


def _profile(tmp_path: Path, scenario: dict, scorer: str = "verify") -> Path:
    (tmp_path / "scenarios").mkdir(exist_ok=True)
    (tmp_path / "scenarios" / "task.json").write_text(
        json.dumps({"id": "t", "name": "T", "prompt": "p", **scenario})
    )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        f"modes: {{a: {{}}}}\nscenarios: {{path: scenarios}}\nscorer: {{id: {scorer}}}\n"
    )
    return profile


@pytest.mark.parametrize(
    "scenario, message",
    [
        (
            {"workspace": {"path": "../elsewhere"}},
            "$.workspace.path: '../elsewhere' is outside the scenario folder",
        ),
        (
            {"workspace": {"path": "missing"}},
            "$.workspace.path: 'missing' is not a folder",
        ),
        (
            {"workspace": {"path": "x", "git": "y"}},
            "expected exactly one of `path` (a folder) or `git`",
        ),
        (
            {
                "verify": [
                    {"name": "v", "command": "true", "files": {"../out": "task.json"}}
                ]
            },
            "expected a path inside the workspace",
        ),
        (
            {
                "verify": [
                    {"name": "v", "command": "true", "files": {"t": "/etc/passwd"}}
                ]
            },
            "is outside the scenario folder",
        ),
        (
            {"verify": [{"name": "v", "command": "true", "network": "internet"}]},
            "$.verify[0].network",
        ),
    ],
)
def test_bad_task_definitions_are_one_line(tmp_path, scenario, message):
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(ProfilerError) as caught:
        load_profile(_profile(tmp_path, scenario))
    assert message in str(caught.value)


def test_the_verify_scorer_refuses_a_scenario_without_verifiers(tmp_path):
    profile = _profile(tmp_path, {})
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core", "validate", str(profile)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert (
        "scenario 't' has no `verify` commands; the verify scorer scores by verifiers alone"
        in result.stderr
    )
    assert "Traceback" not in result.stderr


def test_a_deprecated_workdir_template_still_seeds_workspaces_with_a_warning(
    tmp_path, task, profiler_plugin_manager
):
    recorder = _Recorder()
    provider = _LookingProvider(recorder)
    scenario = Scenario(id="plain", name="P", prompt="hi")
    result = _run(
        tmp_path,
        profiler_plugin_manager,
        scenario,
        provider=provider,
        scorer=ChecksScorer(),
        modes={"a": ModeConfig()},
        provider_options={"workdir_template": str(task / "repo")},
    )
    assert recorder.seen[0][1] == ["calc.py"]
    manifest = json.loads(Path(result.manifest_path).read_text())
    assert any(
        "'workdir_template'" in w and "deprecated" in w for w in manifest["warnings"]
    )


def test_the_deprecated_workdir_options_in_a_modes_overrides_are_warned_about_too(
    tmp_path, task, profiler_plugin_manager
):
    recorder = _Recorder()
    modes = {
        "old": ModeConfig(
            provider_overrides={
                "workdir_template": str(task / "repo"),
                "workdir_per_session": True,
            }
        ),
        "new": ModeConfig(),
    }
    result = _run(
        tmp_path,
        profiler_plugin_manager,
        Scenario(id="plain", name="P", prompt="hi"),
        provider=_LookingProvider(recorder),
        scorer=ChecksScorer(),
        modes=modes,
    )
    assert [listing for _, listing in recorder.seen] == [
        [],
        [],
    ]  # the runner's fresh folder, not the template
    warnings = json.loads(Path(result.manifest_path).read_text())["warnings"]
    assert [w for w in warnings if "deprecated" in w] == [
        "mode 'old': provider_overrides 'workdir_template', "
        "'workdir_per_session' are deprecated and do not choose its sessions' "
        "folder: every session gets a fresh workspace from the runner; give "
        "the scenarios a `workspace` instead"
    ]


# -- one server for many sessions (OpenCode) in a sandbox
# ---------------------------------------------


class _ServerLikeProvider(_LookingProvider):
    """A provider that, like ``opencode serve``, gets one folder for all its sessions:
    what else is in it?"""

    def __init__(self, recorder: _Recorder) -> None:
        super().__init__(recorder)
        self.beside: list[list[str]] = []

    async def prompt(self, handle, text, timeout_ms=None):
        self.beside.append(sorted(os.listdir(self.configs[-1].workdir)))
        return await super().prompt(handle, text, timeout_ms)


def test_a_server_in_a_sandbox_gets_the_sessions_folder_only_and_the_answers_hidden(
    tmp_path, task, profiler_plugin_manager
):
    require("bwrap")
    repo = tmp_path / "upstream"
    repo.mkdir()
    _git("init", "-q", "-b", "main", cwd=repo)
    (repo / "calc.py").write_text(BROKEN)
    _git("add", ".", cwd=repo)
    _git("commit", "-qm", "broken", cwd=repo)
    provider = _ServerLikeProvider(_Recorder())
    verify = VerifierSpec(
        name="tests",
        command="test -f tests/test_calc.py",
        files={"tests": str(task / "hidden")},
    )
    scenario = _scenario(task, workspace=WorkspaceSpec(git=str(repo)), verify=(verify,))
    result = _run(
        tmp_path,
        profiler_plugin_manager,
        scenario,
        provider=provider,
        scorer=ChecksScorer(),
        modes={"a": ModeConfig()},
        repetitions=2,
        sandbox=SandboxSettings(sandbox="bwrap"),
    )
    assert [(r.error, r.success) for r in result.rows] == [
        (None, True)
    ] * 2  # the verifiers ran, in bwrap, with their files
    [config] = provider.configs
    sessions = Path(config.workdir)
    assert {Path(folder).parent for folder, _ in provider.recorder.seen} == {sessions}
    # Only the session's own folder is there: the clone cache and the verifiers' copies
    # live beside it.
    assert [len(listing) for listing in provider.beside] == [1, 1], provider.beside
    hidden = {Path(p) for p in config.sandbox.hide_paths}
    expected = {
        task / "hidden",
        tmp_path / "results",
        tmp_path / "reports",
        sessions.parent,
    }
    assert {p.resolve() for p in expected} <= hidden


def test_the_deprecated_workdir_does_not_replace_the_runners_folder_in_a_sandbox(
    tmp_path, monkeypatch
):
    from profiler_core.providers.opencode import provider as opencode

    binary = tmp_path / "opencode"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    mine, runners = tmp_path / "mine", tmp_path / "sessions"
    mine.mkdir()
    runners.mkdir()
    given: list[Path] = []

    async def start_server(*args, workdir, **kw):
        given.append(workdir)
        raise RuntimeError("not started")

    monkeypatch.setattr(opencode, "start_server", start_server)
    for sandbox in (SandboxSettings(sandbox="bwrap"), None):
        config = ProviderConfig(
            model="p/m",
            mode="a",
            workdir=str(runners),
            sandbox=sandbox,
            options={"binary": str(binary), "workdir": str(mine)},
        )
        with pytest.raises(RuntimeError):
            trio.run(opencode.OpenCodeProvider(binary=str(binary)).init, config)
    # In a sandbox the server may write its folder only: the runner's; on the host the
    # old option still counts.
    assert given == [runners.resolve(), mine.resolve()]


# -- the composite scorer counts the verifiers
# ------------------------------------------------------


class _Claims:
    """A scorer that believes the agent: one check of its own, whose id happens to end
    like a verifier's."""

    id = "claims"

    def evaluate(self, scenario, context):
        check = ScorerCheckResult(
            id="pre-verify:tests", description="the agent said so", passed=True
        )
        return ScorerResult(success=True, passed=1, total=1, details=[check])


@pytest.mark.parametrize(
    "scorers, ids",
    [
        # A scorer that ignores the verifiers: their checkpoint is added beside its checks, once.
        ([_Claims()], ["claims:pre-verify:tests", "verify:tests"]),
        # `checks` counts them itself: not twice.
        (
            [{"id": "checks"}, _Claims()],
            ["checks:said", "checks:verify:tests", "claims:pre-verify:tests"],
        ),
    ],
)
def test_the_composite_scorer_counts_verifiers_once(
    tmp_path, task, profiler_plugin_manager, scorers, ids
):
    scenario = _scenario(
        task,
        extensions={
            "checks": [
                {
                    "id": "said",
                    "target": "output",
                    "condition": {"type": "matches", "pattern": ""},
                }
            ]
        },
    )
    scorer = CompositeScorer(scorers=scorers, registry=profiler_plugin_manager.registry)
    rows = {
        r.mode: r
        for r in _run(tmp_path, profiler_plugin_manager, scenario, scorer=scorer).rows
    }
    assert [d.id for d in rows["talks"].checkpoint_details] == ids
    assert rows["fixes"].success and (
        rows["fixes"].checkpoints_passed,
        rows["fixes"].checkpoints_total,
    ) == (len(ids), len(ids))
    assert not rows["talks"].success and (
        rows["talks"].checkpoints_passed,
        rows["talks"].checkpoints_total,
    ) == (len(ids) - 1, len(ids))
