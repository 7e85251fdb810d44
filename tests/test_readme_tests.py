"""The README's test command installs what the tests drive or stops, and the tests carry
their own data (issue 31.21)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from conftest import PARITY

ROOT = Path(__file__).resolve().parent.parent


def readme_test_command() -> str:
    """The command under "Install and run the tests" in the README."""
    section = (
        (ROOT / "README.md")
        .read_text(encoding="utf-8")
        .split("Install and run the tests", 1)[1]
    )
    return re.search(r"```bash[^\n]*\n(.+?)\n```", section, re.S).group(1).strip()


def test_ci_runs_exactly_the_readme_test_command():
    lines = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert lines[-1] == readme_test_command()


def pytest_step(steps: list[str]) -> int:
    """The index of the step that runs the tests."""
    return next(
        i
        for i, step in enumerate(steps)
        if step.startswith(".venv/bin/python -m pytest ")
    )


def test_the_readme_test_command_installs_the_agents_and_the_browser_before_pytest():
    steps = [step.strip() for step in readme_test_command().split("&&")]
    assert steps.index("bash .ci/install-browser") < pytest_step(steps)
    assert steps.index("bash .ci/install-agents") < pytest_step(steps)


def test_the_readme_test_command_runs_the_tests_on_every_core_keeping_the_groups_together():
    steps = [step.strip() for step in readme_test_command().split("&&")]
    options = steps[pytest_step(steps)].split()
    assert options[options.index("-n") + 1] == "auto"
    assert (
        options[options.index("--dist") + 1] == "loadgroup"
    )  # the xdist_group marks are honoured only so


def test_install_browser_stops_the_command_in_one_line_when_it_cannot_install(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = subprocess.run(
        ["/bin/bash", str(ROOT / ".ci" / "install-browser")],
        env={"PATH": str(empty)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1 and out.stdout == ""
    assert (
        len(out.stderr.splitlines()) == 1
        and "browser tests need chromium and chromedriver" in out.stderr
    )


def test_install_browser_does_nothing_when_both_are_there(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("chromium", "chromedriver"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    # apt-get is not on this PATH: reaching it would fail the script.
    out = subprocess.run(
        ["/bin/bash", str(ROOT / ".ci" / "install-browser")],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and out.stderr == ""


def test_the_parity_data_is_in_the_repository():
    assert PARITY.resolve().is_relative_to(ROOT.resolve())
    listed = re.findall(
        r"^\| ([\w.-]+\.(?:json|gz)) \|", (PARITY / "README.md").read_text(), re.M
    )
    assert len(listed) == 7 and all((PARITY / name).is_file() for name in listed)
    # Small enough to live in git: the report rows are a 1,000-row cut of the original's 10,000.
    assert sum((PARITY / name).stat().st_size for name in listed) < 400_000


def test_no_test_or_benchmark_looks_for_data_outside_the_repository():
    for path in sorted([*(ROOT / "tests").glob("*.py"), *(ROOT / "bench").glob("*.*")]):
        if path.name == Path(__file__).name:
            continue
        text = path.read_text(encoding="utf-8")
        assert '"shared"' not in text and "shared/anchor-parity" not in text, path.name
    assert os.access(ROOT / ".ci" / "install-browser", os.X_OK)
