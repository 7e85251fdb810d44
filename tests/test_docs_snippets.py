"""Every code block of docs/ and the README runs as written unless it says it cannot (16.17, 43).

A ```` ```python ```` block runs as a script of its own (so it carries its
imports; its `assert` lines are the checks). A ```` ```console ```` or
```` ```bash ```` block runs in bash: its `$ ` lines one by one when it has
some (the other lines are their output), else the whole block as one script;
each must exit 0. Every block runs in a fresh folder holding a copy of
`examples/`, with this interpreter's `profiler` first on PATH.

A block that cannot run here (it needs a real agent, an API key, Docker, a
cluster, or it shows a fragment) says so in its info string:
```` ```python norun ```` (the word `norun` after the language). They are
counted: `NORUN` below is their number, so a new one is a decision, not an
accident. docs/api/ is left out: its blocks are signatures, written by
docs/_tools/gen_api.py and checked by tests/test_api_reference.py.
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
LANGUAGES = ("python", "console", "bash")

#: The blocks marked ``norun``; change it with the marker, saying why in the block's text.
NORUN = 56


def _documents() -> list[Path]:
    docs = ROOT / "docs"
    return sorted(
        [
            ROOT / "README.md",
            *(p for p in docs.rglob("*.md") if docs / "api" not in p.parents),
        ]
    )


def _blocks() -> tuple[list, list[str]]:
    runnable, skipped = [], []
    for path in _documents():
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            words = match.group(1).split()
            if not words or words[0] not in LANGUAGES:
                continue
            line = text.count("\n", 0, match.start()) + 1
            where = f"{path.relative_to(ROOT)}:{line}"
            if "norun" in words[1:]:
                skipped.append(where)
            else:
                runnable.append(pytest.param(words[0], match.group(2), id=where))
    return runnable, skipped


BLOCKS, SKIPPED = _blocks()


def test_blocks_that_cannot_run_are_marked_and_counted():
    assert len(BLOCKS) >= 20
    assert len(SKIPPED) == NORUN, (
        f"{len(SKIPPED)} blocks are marked norun, NORUN says {NORUN}: {SKIPPED}"
    )


def _env() -> dict[str, str]:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = dict(os.environ, PATH=path, PROFILER_PROGRESS="none", NO_COLOR="1")
    env.pop("PYTHONPATH", None)
    return env


def _run(argv: list[str], cwd: Path, what: str) -> None:
    out = subprocess.run(
        argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, f"{what}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"


@pytest.mark.parametrize(("language", "code"), BLOCKS)
def test_block_runs(language, code, tmp_path):
    shutil.copytree(
        ROOT / "examples",
        tmp_path / "examples",
        ignore=shutil.ignore_patterns("results", "reports"),
    )
    if language == "python":
        _run([sys.executable, "-c", code], tmp_path, code)
        return
    commands = [line[2:] for line in code.splitlines() if line.startswith("$ ")]
    if not commands:
        _run(["bash", "-euo", "pipefail", "-c", code], tmp_path, code)
        return
    for command in commands:
        _run(["bash", "-c", command], tmp_path, f"$ {command}")


#: ``profiler ...`` in a shell block (after ``$ ``, ``&&`` or at the start) or in inline code
_COMMAND = re.compile(r"(?:^|&&\s*)(?:\.venv/bin/)?profiler\s+(.*)$")
_INLINE = re.compile(r"`((?:\.venv/bin/)?profiler [^`]+)`")


def _shown_commands():
    """Every ``profiler ...`` command the pages show, run or not: (where, arguments)."""
    for path in _documents():
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if (match.group(1).split() or [""])[0] not in ("", *LANGUAGES[1:]):
                continue
            first = text.count("\n", 0, match.start()) + 2
            for number, line in enumerate(match.group(2).splitlines(), first):
                line = line.split(" #")[0].strip().removeprefix("$ ")
                found = _COMMAND.search(line)
                if found:
                    yield f"{path.relative_to(ROOT)}:{number}", found.group(1)
        for match in _INLINE.finditer(FENCE.sub("", text)):
            yield f"{path.relative_to(ROOT)}", match.group(1).split(None, 1)[-1]


def _resolve(ctx, words: list[str]):
    import click

    command, path = ctx.command, []
    while isinstance(command, click.Group) and words and not words[0].startswith("-"):
        sub = command.get_command(ctx, words[0])
        if sub is None:
            return None, path, words
        path.append(words.pop(0))
        command, ctx = sub, click.Context(sub, parent=ctx)
    return command, path, words


def _problems(where: str, arguments: str, ctx) -> list[str]:
    import shlex

    try:
        words = shlex.split(arguments)
    except ValueError:
        return []
    for stop in ("&&", "|", ";", ">", "&", "2>&1"):
        words = words[: words.index(stop)] if stop in words else words
    command, path, rest = _resolve(ctx, words)
    if command is None:
        name = rest[0]
        if name.islower() and name.replace("-", "").isalpha():  # not PROFILE, not a|b
            return [f"{where}: no command `profiler {' '.join([*path, name])}`"]
        return []
    options = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    return [
        f"{where}: `profiler {' '.join(path)}` has no option {word.split('=')[0]}"
        for word in rest
        if word.startswith("--") and word.split("=")[0] not in {*options, "--help"}
    ]


def test_the_commands_the_docs_show_have_the_options_they_show():
    import click

    from profiler_core.cli import cli
    from profiler_core.plugins import get_plugin_manager

    ctx = click.Context(cli, obj=get_plugin_manager())
    shown = list(_shown_commands())
    assert len(shown) > 100
    problems = [p for where, args in shown for p in _problems(where, args, ctx)]
    assert not problems, "\n".join(problems)
    # the check can fail: an option no command has is named
    assert _problems("x.md:1", "run p.yaml --no-such-option", ctx) == [
        "x.md:1: `profiler run` has no option --no-such-option"
    ]
    assert _problems("x.md:1", "runn p.yaml", ctx) == [
        "x.md:1: no command `profiler runn`"
    ]
