"""Every fenced block in docs/ and the README marked `runnable` runs as written (issue 16.17).

Mark a block with an info string such as ```` ```python runnable ```` or
```` ```console runnable ````. A python block is executed on its own (so it must
carry its imports); its `assert` lines are the checks. A console block's
`$ ` lines run in bash, in a fresh folder holding a copy of `examples/`, and
must each exit 0.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.M | re.S)


def _blocks():
    for path in sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]):
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            words = match.group(1).split()
            if "runnable" in words[1:]:
                line = text.count("\n", 0, match.start()) + 1
                yield pytest.param(
                    words[0], match.group(2), id=f"{path.relative_to(ROOT)}:{line}"
                )


BLOCKS = list(_blocks())


def test_some_blocks_are_marked():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize(("language", "code"), BLOCKS)
def test_block_runs(language, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if language == "python":
        exec(compile(code, "<doc snippet>", "exec"), {"__name__": "__doc_snippet__"})
        return
    assert language in ("console", "bash"), (
        f"runnable blocks are python or console, not {language!r}"
    )
    shutil.copytree(
        ROOT / "examples",
        tmp_path / "examples",
        ignore=shutil.ignore_patterns("results", "reports"),
    )
    env = dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    commands = [line[2:] for line in code.splitlines() if line.startswith("$ ")]
    assert commands, "a runnable console block needs `$ ` lines"
    for command in commands:
        out = subprocess.run(
            ["bash", "-c", command],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, f"$ {command}\n{out.stdout}\n{out.stderr}"
