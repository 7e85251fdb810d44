"""Nothing the agent leaves is trusted by the host: git, copies, reward files,
transcripts, kept workspaces.

Each test drives a real run whose "agent" is the ``oracle`` provider running a hostile
solution command
(what an agent could do with a shell), or calls the host-side helper the run uses.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import attrs
import pytest
import trio
from tests.sandbox_runtimes import require

from profiler_core import ModeConfig, Scenario
from profiler_core.model import SolutionSpec, VerifierSpec, WorkspaceSpec
from profiler_core.providers._agent_process import AgentError
from profiler_core.providers.oracle import OracleProvider
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.runner.hidden import hidden_from_agents
from profiler_core.runner.workspace import Workspaces
from profiler_core.sandbox import SandboxSettings
from profiler_core.scorers.checks import ChecksScorer
from profiler_core.scorers.verify import VerifyScorer
from profiler_core.storage.tracestore import iter_records
from profiler_core.util.redact import Redactor
from profiler_core.util.safefiles import (
    UnsafeFileError,
    copy_beneath,
    read_beneath,
    read_limited,
)

BROKEN = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
#: a conftest.py that turns every failing test into a pass
CHEAT = (
    "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef "
    "pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
)


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def task(tmp_path: Path) -> Path:
    scenarios = tmp_path / "scenarios"
    (scenarios / "repo").mkdir(parents=True)
    (scenarios / "repo" / "calc.py").write_text(BROKEN)
    (scenarios / "hidden").mkdir()
    (scenarios / "hidden" / "test_calc.py").write_text(TEST)
    return scenarios


def _scenario(task: Path, solution: str, **kw) -> Scenario:
    verify = VerifierSpec(
        name="tests",
        command=f"{sys.executable} -m pytest -q -p no:cacheprovider tests",
        files={"tests": str(task / "hidden")},
        timeout_ms=60_000,
    )
    base = dict(
        id="fix-add",
        name="Fix add",
        prompt="Fix it.",
        workspace=WorkspaceSpec(path=str(task / "repo")),
        verify=(verify,),
        timeout_ms=60_000,
        solution=SolutionSpec(command=solution),
    )
    base.update(kw)
    return Scenario(**base)


def _run(tmp_path: Path, manager, scenario: Scenario, **kw):
    options = RunOptions(
        provider=OracleProvider(),
        scorer=VerifyScorer() if scenario.verify else ChecksScorer(),
        scenarios=[scenario],
        modes={"m": ModeConfig()},
        repetitions=kw.pop("repetitions", 1),
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        run_id="r",
        **kw,
    )
    options.plugin_manager = manager
    return trio.run(run_profile_suite, options)


def _traces(tmp_path: Path) -> list:
    return [
        r.trace
        for r in iter_records(tmp_path / "reports" / "r" / "sessions" / "traces.jsonl")
    ]


# -- 1. host git runs nothing the agent wrote
# ----------------------------------------------------------


def _hostile_git(marker: Path) -> str:
    """A solution that arms every git configuration hook it can reach, then changes a file."""
    return (
        "git init -q . 2>/dev/null; "
        f"git config core.fsmonitor 'touch {marker}-fsmonitor; false'; "
        f"git config filter.evil.clean 'touch {marker}-filter; cat'; git config "
        "filter.evil.required true; "
        f"git config diff.external 'touch {marker}-diff'; "
        "echo '* filter=evil' > .gitattributes; mkdir -p .git/info; echo '* "
        "filter=evil' > .git/info/attributes; "
        f"printf '[core]\\n\\tfsmonitor = touch {marker}-home\\n' > .gitconfig; "
        "echo fixed >> calc.py"
    )


@pytest.mark.parametrize("kind", ["clone", "agent-init"])
def test_host_git_never_runs_the_agents_fsmonitor_filters_or_diff_driver(
    tmp_path, task, profiler_plugin_manager, kind
):
    marker = tmp_path / "pwned"
    workspace = None
    if kind == "clone":
        repo = task / "repo"
        _git("init", "-q", "-b", "main", cwd=repo)
        _git("add", ".", cwd=repo)
        _git("commit", "-qm", "broken", cwd=repo)
        workspace = WorkspaceSpec(git=str(repo))
    scenario = _scenario(task, _hostile_git(marker), verify=(), workspace=workspace)
    _run(tmp_path, profiler_plugin_manager, scenario, keep_workspaces="none")
    assert (
        sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("pwned")) == []
    )
    [trace] = _traces(tmp_path)
    assert (
        trace.workspace.diff_stat is not None and "calc.py" in trace.workspace.diff_stat
    )


def test_a_git_file_leading_into_another_repository_is_not_followed(
    tmp_path, task, profiler_plugin_manager
):
    other = tmp_path / "other"
    other.mkdir()
    _git("init", "-q", cwd=other)
    marker = tmp_path / "pwned-other"
    _git("config", "core.fsmonitor", f"touch {marker}; false", cwd=other)
    scenario = _scenario(
        task,
        f"echo 'gitdir: {other / '.git'}' > .git; echo x > new.txt",
        verify=(),
        workspace=None,
    )
    _run(tmp_path, profiler_plugin_manager, scenario, keep_workspaces="none")
    assert not marker.exists()
    [trace] = _traces(tmp_path)
    assert trace.workspace.diff_stat is None


def test_diff_stat_counts_what_the_agent_staged_and_committed(
    tmp_path, task, profiler_plugin_manager
):
    repo = task / "repo"
    _git("init", "-q", "-b", "main", cwd=repo)
    _git("add", ".", cwd=repo)
    _git("commit", "-qm", "broken", cwd=repo)
    solution = (
        "echo fixed >> calc.py && echo n > staged.txt && git add -A && "
        "git -c user.name=a -c user.email=a@a commit -qm agent"
    )
    _run(
        tmp_path,
        profiler_plugin_manager,
        _scenario(task, solution, verify=(), workspace=WorkspaceSpec(git=str(repo))),
    )
    [trace] = _traces(tmp_path)
    assert (
        "calc.py" in trace.workspace.diff_stat
        and "staged.txt" in trace.workspace.diff_stat
    )


def test_a_ref_starting_with_a_dash_is_refused_not_passed_as_an_option(
    tmp_path, task, profiler_plugin_manager
):
    repo = task / "repo"
    _git("init", "-q", "-b", "main", cwd=repo)
    _git("add", ".", cwd=repo)
    _git("commit", "-qm", "broken", cwd=repo)
    scenario = _scenario(
        task,
        "true",
        verify=(),
        workspace=WorkspaceSpec(git=str(repo), ref="--orphan=x"),
    )
    [row] = _run(tmp_path, profiler_plugin_manager, scenario, allowed_retries=0).rows
    assert row.error_code == "setup_error" and "cannot start with '-'" in row.error


# -- 2. no inode shared with the source
# ----------------------------------------------------------------


def _inodes(folder: Path) -> set[tuple[int, int]]:
    found = set()
    for top, _dirs, files in os.walk(folder):
        for name in files:
            info = os.lstat(Path(top, name))
            found.add((info.st_dev, info.st_ino))
    return found


def test_a_git_workspace_shares_no_inode_with_the_users_repository(tmp_path, task):
    repo = task / "repo"
    _git("init", "-q", "-b", "main", cwd=repo)
    _git("add", ".", cwd=repo)
    _git("commit", "-qm", "broken", cwd=repo)
    workspaces = Workspaces(keep_dir=tmp_path / "kept")
    try:
        scenario = Scenario(
            id="s", name="s", prompt="p", workspace=WorkspaceSpec(git=str(repo))
        )
        first = trio.run(workspaces.prepare, scenario)
        second = trio.run(workspaces.prepare, scenario)
        users = _inodes(repo / ".git" / "objects")
        assert users
        for folder in (
            first / ".git" / "objects",
            second / ".git" / "objects",
            workspaces.root / ".git-cache",
        ):
            assert not users & _inodes(folder), folder
        assert not _inodes(first / ".git" / "objects") & _inodes(
            second / ".git" / "objects"
        )
        assert all(
            os.lstat(Path(t, n)).st_nlink == 1
            for t, _, fs in os.walk(repo / ".git" / "objects")
            for n in fs
        )
    finally:
        workspaces.close()


# -- 3, 4, 6. verifier files: never through a link, replacing what the agent left
# ------------------------


@pytest.mark.parametrize("plant", ["at", "below"])
def test_a_link_at_or_below_a_files_destination_writes_nothing_outside(
    tmp_path, task, profiler_plugin_manager, plant
):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_calc.py").write_text("precious\n")
    if plant == "at":
        solution = f"ln -s {outside} tests"
    else:
        solution = f"mkdir tests && ln -s {outside / 'test_calc.py'} tests/test_calc.py"
    rows = _run(tmp_path, profiler_plugin_manager, _scenario(task, solution)).rows
    assert sorted(p.name for p in outside.iterdir()) == ["test_calc.py"]
    assert (outside / "test_calc.py").read_text() == "precious\n"
    assert [(r.error, r.success) for r in rows] == [
        (None, False)
    ]  # the verifier's own tests replaced the link, and ran


def test_the_verifiers_tests_replace_the_agents_conftest(
    tmp_path, task, profiler_plugin_manager
):
    cheat = tmp_path / "cheat.py"
    cheat.write_text(CHEAT)
    [row] = _run(
        tmp_path,
        profiler_plugin_manager,
        _scenario(task, f"mkdir -p tests && cp {cheat} tests/conftest.py"),
    ).rows
    assert (
        row.error is None and not row.success
    )  # calc.py is still broken: the agent's conftest must not make it pass


@pytest.mark.parametrize(
    "solution, verifier, message",
    [
        ("touch tests", None, "not a folder"),
        (
            None,
            "ln -s /proc/self/mem $PROFILER_VERIFIER_DIR/reward.txt",
            "symbolic link",
        ),
        (
            None,
            "ln -s /etc/hostname $PROFILER_VERIFIER_DIR/reward.json",
            "symbolic link",
        ),
        (None, "truncate -s 1G $PROFILER_VERIFIER_DIR/reward.json", "larger than"),
        (None, "mkfifo $PROFILER_VERIFIER_DIR/reward.txt", "not a regular file"),
    ],
)
def test_one_hostile_session_is_its_cells_error_and_the_run_goes_on(
    tmp_path, task, profiler_plugin_manager, solution, verifier, message
):
    files = (
        {"tests/unit": str(task / "hidden")}
        if solution == "touch tests"
        else {"tests": str(task / "hidden")}
    )
    spec = VerifierSpec(
        name="v", command=verifier or "true", files=files, timeout_ms=30_000
    )
    scenario = _scenario(task, solution or "true", verify=(spec,))
    rows = _run(
        tmp_path, profiler_plugin_manager, scenario, repetitions=2, allowed_retries=0
    ).rows
    assert len(rows) == 2
    assert [r.error_code for r in rows] == ["verifier_error"] * 2, [
        r.error for r in rows
    ]
    assert all(message in r.error for r in rows), rows[0].error
    hostname = Path("/etc/hostname").read_text().strip()
    assert not hostname or all(hostname not in r.error for r in rows)


def test_a_fifo_and_a_socket_in_a_kept_workspace_on_another_file_system_end_nothing(
    tmp_path, task, profiler_plugin_manager, monkeypatch
):
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")
    monkeypatch.setenv("TMPDIR", str(shm))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    solution = (
        f'mkfifo pipe && {sys.executable} -c "import socket; '
        "socket.socket(socket.AF_UNIX).bind('sock')\""
    )
    rows = _run(
        tmp_path,
        profiler_plugin_manager,
        _scenario(task, solution),
        repetitions=2,
        keep_workspaces="all",
    ).rows
    assert len(rows) == 2 and all(r.error is None for r in rows), [
        r.error for r in rows
    ]
    kept = tmp_path / "reports" / "r" / "workspaces" / "fix-add"
    for folder in kept.iterdir():
        assert (folder / "calc.py").is_file() and not os.path.lexists(folder / "pipe")


# -- 8. reading back: bounded, regular files, no link
# ---------------------------------------------------


def test_read_limited_refuses_links_fifos_and_large_files(tmp_path):
    (tmp_path / "ok").write_bytes(b"1")
    assert read_limited(tmp_path / "ok", 10) == b"1"
    (tmp_path / "link").symlink_to(tmp_path / "ok")
    os.mkfifo(tmp_path / "fifo")
    with open(tmp_path / "sparse", "wb") as f:
        f.truncate(1 << 30)
    for name, why in (
        ("link", "symbolic link"),
        ("fifo", "not a regular file"),
        ("sparse", "larger than"),
    ):
        with pytest.raises(UnsafeFileError, match=why):
            read_limited(tmp_path / name, 1 << 20)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x")
    (tmp_path / "via").symlink_to(tmp_path / "d")
    assert read_beneath(tmp_path, "d/f", 10) == b"x"
    with pytest.raises(UnsafeFileError, match="not a folder"):
        read_beneath(tmp_path, "via/f", 10)


def test_copy_beneath_replaces_and_never_writes_through_a_link(tmp_path):
    root, outside, source = tmp_path / "ws", tmp_path / "outside", tmp_path / "src"
    for folder in (root, outside, source):
        folder.mkdir()
    (source / "a.txt").write_text("new")
    (outside / "a.txt").write_text("old")
    (root / "sub").symlink_to(outside)
    with pytest.raises(UnsafeFileError, match="not a folder"):
        copy_beneath(source, root, "sub/inner")
    (root / "dest").symlink_to(outside)
    copy_beneath(source, root, "dest")
    assert (outside / "a.txt").read_text() == "old" and (
        root / "dest" / "a.txt"
    ).read_text() == "new"
    assert not (root / "dest").is_symlink()


@pytest.mark.parametrize("target", ["host-file", "/dev/zero", "fifo"])
def test_claude_codes_transcript_is_not_read_through_a_link_or_from_a_fifo(
    tmp_path, target
):
    from profiler_core.providers.claude_code import ClaudeCodeProvider

    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-ws"
    project.mkdir(parents=True)
    if target == "fifo":
        os.mkfifo(project / "s1.jsonl")
    else:
        secret = tmp_path / "elsewhere.jsonl"
        secret.write_text(
            json.dumps(
                {
                    "type": "user",
                    "sessionId": "s1",
                    "message": {"role": "user", "content": "host"},
                }
            )
            + "\n"
        )
        (project / "s1.jsonl").symlink_to(secret if target == "host-file" else target)
    live = SimpleNamespace(dirs=SimpleNamespace(home=home))
    with pytest.raises(
        AgentError, match="symbolic link" if target != "fifo" else "not a regular file"
    ):
        ClaudeCodeProvider.transcript(
            ClaudeCodeProvider.__new__(ClaudeCodeProvider), live, "s1"
        )


def test_codexs_rollout_is_not_read_through_a_linked_folder(tmp_path):
    from profiler_core.providers.codex import CodexProvider

    home = tmp_path / "home"
    elsewhere = tmp_path / "elsewhere" / "01"
    elsewhere.mkdir(parents=True)
    (elsewhere / "rollout-2026-t1.jsonl").write_text(
        '{"type": "session_meta", "payload": {"id": "t1"}}\n'
    )
    (home / ".codex" / "sessions" / "2026" / "01").mkdir(parents=True)
    (home / ".codex" / "sessions" / "2026" / "01" / "01").symlink_to(elsewhere)
    live = SimpleNamespace(dirs=SimpleNamespace(home=home))
    with pytest.raises(AgentError, match="not a folder"):
        CodexProvider.rollout(live, "t1")


# -- 6. hidden: the repository holding the tasks, and bwrap's command line
# ------------------------------


def test_the_git_folder_of_the_repository_holding_hidden_files_is_hidden_too(
    tmp_path, task
):
    _git("init", "-q", cwd=task)
    scenario = _scenario(task, "true")
    hidden = hidden_from_agents([scenario])
    assert (task / ".git").resolve() in hidden


@pytest.fixture
def host_task(tmp_path):
    """The task folder outside /tmp (a fresh tmpfs inside bwrap), where the sandbox
    shows host files read-only."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="profiler-test-", dir="/var/tmp"))
    try:
        (base / "repo").mkdir()
        (base / "repo" / "calc.py").write_text(BROKEN)
        (base / "hidden").mkdir()
        (base / "hidden" / "test_calc.py").write_text(TEST)
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_in_bwrap_the_agent_reads_neither_the_tasks_git_history_nor_bwraps_command_line(
    tmp_path, host_task, profiler_plugin_manager
):
    require("bwrap")
    _git("init", "-q", cwd=host_task)
    _git("add", ".", cwd=host_task)
    _git("commit", "-qm", "tasks", cwd=host_task)
    solution = (
        f"git -C {host_task} show HEAD:hidden/test_calc.py > shown.txt 2>&1; ls "
        f"-a {host_task} {host_task}/.git > listed.txt; "
        "tr '\\0' ' ' < /proc/1/cmdline > cmdline.txt"
    )
    _run(
        tmp_path,
        profiler_plugin_manager,
        _scenario(host_task, solution),
        keep_workspaces="all",
        sandbox=SandboxSettings(sandbox="bwrap"),
    )
    [kept] = (tmp_path / "reports" / "r" / "workspaces" / "fix-add").iterdir()
    assert (
        "repo" in (kept / "listed.txt").read_text()
    )  # the task folder is there, read-only
    assert "assert add" not in (kept / "shown.txt").read_text()
    cmdline = (kept / "cmdline.txt").read_text()
    assert (
        "bwrap" in cmdline
        and str(host_task / "hidden") not in cmdline
        and "--ro-bind" not in cmdline
    ), cmdline


# -- 9. kept workspaces are safe to keep
# ------------------------------------------------------------------


def test_a_kept_workspace_has_no_setuid_bit_no_other_readers_and_no_secret(
    tmp_path, task, profiler_plugin_manager, monkeypatch
):
    key = "sk-ant-profilerTESTkey0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    solution = (
        "cp /bin/true mine && chmod 6755 mine && mkdir -p sub && chmod 777 sub && "
        f"echo 'key={key}' > sub/notes.txt"
    )
    _run(
        tmp_path,
        profiler_plugin_manager,
        _scenario(task, solution, verify=()),
        keep_workspaces="all",
    )
    kept = tmp_path / "reports" / "r" / "workspaces"
    assert stat.S_IMODE(os.stat(kept).st_mode) & 0o077 == 0
    [folder] = (kept / "fix-add").iterdir()
    mode = stat.S_IMODE(os.stat(folder / "mine").st_mode)
    assert mode & (stat.S_ISUID | stat.S_ISGID) == 0 and mode & 0o077 == 0
    assert stat.S_IMODE(os.stat(folder / "sub").st_mode) == 0o700
    text = (folder / "sub" / "notes.txt").read_text()
    assert key not in text and "[REDACTED]" in text
    assert Redactor  # the run's redactor is what masks it


# -- minor: base64 of a key, secrets in a task's env
# -------------------------------------------------------


@pytest.mark.parametrize("prefix", ["", "u:", "us:", "user:"])
def test_the_base64_of_a_key_is_masked_wherever_it_starts(prefix):
    import base64

    key = "profiler-test-secret-0123456789"
    redact = Redactor(environ={}, extra_values=[key])
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = "Authorization: Basic " + encode(f"{prefix}{key}".encode()).decode()
        masked = redact(text)
        assert masked.startswith("Authorization: Basic ") and "[REDACTED]" in masked, (
            prefix,
            text,
        )


def test_secret_named_variables_of_verifiers_and_solutions_are_redacted(task):
    from profiler_core.util.redact import run_redactor

    spec = VerifierSpec(
        name="v",
        command="true",
        env={"GRADER_TOKEN": "grader-token-value-123", "LEVEL": "3"},
    )
    scenario = _scenario(task, "true", verify=(spec,))
    scenario = attrs.evolve(
        scenario,
        solution=SolutionSpec(command="true", env={"DB_PASSWORD": "db-password-9876"}),
    )
    redactor, _ = run_redactor({}, {}, None, [scenario])
    masked = redactor("grader-token-value-123 db-password-9876 LEVEL=3")
    assert masked == "[REDACTED] [REDACTED] LEVEL=3"


def test_a_hard_link_in_a_kept_workspace_does_not_carry_the_scrub_to_its_other_name(
    tmp_path, task, profiler_plugin_manager, monkeypatch
):
    key = "sk-ant-profilerTESTkey0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    other = tmp_path / "users-notes.txt"
    other.write_text(f"my key {key}\n")
    other.chmod(0o644)
    _run(
        tmp_path,
        profiler_plugin_manager,
        _scenario(task, f"ln {other} linked.txt", verify=()),
        keep_workspaces="all",
    )
    assert (
        other.read_text() == f"my key {key}\n"
        and stat.S_IMODE(os.stat(other).st_mode) == 0o644
    )
    [folder] = (tmp_path / "reports" / "r" / "workspaces" / "fix-add").iterdir()
    assert "[REDACTED]" in (folder / "linked.txt").read_text()


def test_verifier_files_inside_the_workspace_source_are_warned_about(
    tmp_path, task, profiler_plugin_manager
):
    (task / "repo" / "tests").mkdir()
    (task / "repo" / "tests" / "test_calc.py").write_text(TEST)
    spec = VerifierSpec(
        name="tests", command="true", files={"tests": str(task / "repo" / "tests")}
    )
    result = _run(
        tmp_path,
        profiler_plugin_manager,
        _scenario(task, "true", verify=(spec,)),
        repetitions=2,
    )
    warned = [
        w
        for w in json.loads(Path(result.manifest_path).read_text())["warnings"]
        if "inside its workspace source" in w
    ]
    assert len(warned) == 1 and "the agent gets a copy of them" in warned[0]


def test_a_hostile_reward_file_ends_neither_the_run_nor_its_resume(
    tmp_path, task, profiler_plugin_manager
):
    spec = VerifierSpec(
        name="v",
        command="ln -s /proc/self/mem $PROFILER_VERIFIER_DIR/reward.txt",
        files={"tests": str(task / "hidden")},
    )
    scenario = _scenario(task, "true", verify=(spec,))
    first = _run(
        tmp_path, profiler_plugin_manager, scenario, repetitions=2, allowed_retries=0
    )
    again = _run(
        tmp_path,
        profiler_plugin_manager,
        scenario,
        repetitions=2,
        allowed_retries=0,
        resume=True,
    )
    for result in (first, again):
        assert [r.error_code for r in result.rows] == ["verifier_error"] * 2


def test_the_agents_head_is_read_without_git_and_without_following_links(tmp_path):
    from profiler_core.runner.hostgit import agent_head

    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", "-b", "main", cwd=repo)
    (repo / "f").write_text("x")
    _git("add", ".", cwd=repo)
    _git("commit", "-qm", "c", cwd=repo)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert agent_head(repo / ".git") == commit
    _git("pack-refs", "--all", cwd=repo)
    assert agent_head(repo / ".git") == commit  # from packed-refs
    (repo / ".git" / "HEAD").write_text("ref: ../../../etc/passwd\n")
    assert agent_head(repo / ".git") is None
    (repo / ".git" / "HEAD").unlink()
    os.mkfifo(repo / ".git" / "HEAD")
    assert agent_head(repo / ".git") is None  # a FIFO: refused at once, never waited on
