"""Shell completion as the README documents it: click's `_PROFILER_COMPLETE` protocol on
the real script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROFILER = Path(sys.executable).with_name("profiler")


def _complete(words: str, cword: int) -> list[str]:
    env = dict(
        os.environ,
        _PROFILER_COMPLETE="bash_complete",
        COMP_WORDS=words,
        COMP_CWORD=str(cword),
    )
    out = subprocess.run(
        [str(PROFILER)], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    # bash_complete answers "type,value" lines.
    return [line.split(",", 1)[1] for line in out.stdout.splitlines() if "," in line]


def test_bash_source_script_is_printed():
    env = dict(os.environ, _PROFILER_COMPLETE="bash_source")
    out = subprocess.run(
        [str(PROFILER)], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    assert "_profiler_completion" in out.stdout
    assert "complete " in out.stdout


def test_commands_and_options_complete():
    assert "run" in _complete("profiler ru", 1)
    assert "--resume" in _complete("profiler run --res", 2)
