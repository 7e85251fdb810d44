"""Tool calls: what the agent may call in each phase, and how it recovers."""

from __future__ import annotations

import bisect
import itertools
import random
import shlex
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import attrs

from .prompt import Task
from .texts import EDITS, ERROR_TEXTS, GH_JSON_ERROR, WRONG_TOP


@attrs.frozen(eq=False)  # identity equality: ops are cached and dict-valued
class Op:
    """A planned tool call: what it is, how big its result is, how it can fail."""

    tool: str
    input: dict[str, Any]
    label: str  # how the final answer names it (a command or a path)
    output: str
    result_tokens: float  # median size of the result fed back into the context
    duration_ms: float  # median duration
    errors: tuple[str, ...]  # error kinds that fit this call
    kind: str = ""  # "test", "edit", "gh", ... for the narrative
    error_texts: dict[str, str] | None = None  # call-specific error messages by kind


def bash_op(
    command: str,
    output: str,
    tokens: float,
    ms: float,
    errors: tuple[str, ...],
    kind: str = "",
    texts: dict[str, str] | None = None,
) -> Op:
    return Op(
        "bash",
        {"command": command},
        command,
        output,
        tokens,
        ms,
        errors,
        kind or "shell",
        texts,
    )


def grep_op(pattern: str, path: str, output: str, tokens: float, ms: float) -> Op:
    return Op(
        "grep",
        {"pattern": pattern, "path": path},
        path,
        output,
        tokens,
        ms,
        ("timeout",),
        "search",
    )


def glob_op(pattern: str, output: str, tokens: float) -> Op:
    return Op(
        "glob",
        {"pattern": pattern},
        pattern,
        output,
        tokens,
        25,
        ("timeout",),
        "search",
    )


@lru_cache(maxsize=1024)
def run_tests_op(task: Task, *, failing: int, narrow: bool = False) -> Op:
    cmd = task.test_cmd
    if narrow:
        cmd = (
            f"pytest -q {task.tests[0]} -x"
            if task.stack == "python"
            else f"npx vitest run {task.tests[0]}"
        )
    n = task.n_tests if not narrow else max(1, task.n_tests // 6)
    # "{secs}" is filled in with the call's own duration.
    if failing:
        out = (
            f"FAILED {task.tests[0]} - AssertionError\n{failing} failed, {n - failing} "
            f"passed in {{secs}}s"
        )
    else:
        out = f"{n} passed in {{secs}}s"
    return bash_op(
        cmd, out, 180 + 40 * failing, 2500 if narrow else 6000, ("timeout",), "test"
    )


@lru_cache(maxsize=1024)
def read_op(path: str) -> Op:
    return Op(
        "read_file",
        {"path": path},
        path,
        f"[{path}: file contents]",
        1300,
        35,
        ("not_found",),
        "read",
    )


@lru_cache(maxsize=1024)
def edit_op(path: str, variant: int = 0) -> Op:
    snippets = EDITS["py" if path.endswith(".py") else "ts"]
    old, new = snippets[variant % len(snippets)]
    return Op(
        "edit",
        {"path": path, "old_string": old, "new_string": new},
        path,
        f"The file {path} has been updated.",
        40,
        40,
        ("edit_mismatch", "not_found"),
        "edit",
    )


def _explore_ops(task: Task, src: str) -> list[tuple[float, Op]]:
    """Candidate calls for the exploring phase, with weights."""
    ext = "py" if task.stack == "python" else "ts"
    status = f"On branch main\nChanges not staged for commit:\n  modified:   {src}"
    ops: list[tuple[float, Op]] = [
        (3.0, read_op(src)),
        (1.5, read_op(task.tests[0])),
        (1.0, bash_op("git status", status, 90, 60, ("not_found",), "git")),
        (
            0.6,
            bash_op(
                "git log --oneline -5",
                "a1b2c3d Fix flaky test\n9f8e7d6 Add parser",
                80,
                45,
                ("not_found",),
                "git",
            ),
        ),
        (
            1.2,
            bash_op(
                "rg TODO src/",
                f"{src}:42:    # TODO: handle empty input",
                160,
                120,
                ("cmd_not_found", "timeout"),
                "search",
            ),
        ),
        (1.2, grep_op("def |function ", "src", f"{src}:12: ...", 350, 110)),
        (1.0, glob_op(f"**/*.{ext}", "\n".join(task.sources + task.tests), 90)),
    ]
    gh_errors = ("unauthorized", "timeout", "json_parse")
    if task.pr is not None:
        n = task.pr
        view = f'{{"title": "PR #{n}", "files": ["{src}"]}}'
        ops.append(
            (
                2.5,
                bash_op(
                    f"gh pr view {n} --json title,body,files",
                    view,
                    450,
                    900,
                    gh_errors,
                    "gh",
                    GH_JSON_ERROR,
                ),
            )
        )
        ops.append(
            (
                1.0,
                bash_op(
                    f"gh pr diff {n}",
                    f"diff --git a/{src} b/{src}",
                    900,
                    800,
                    gh_errors[:2],
                    "gh",
                ),
            )
        )
    if task.issue is not None:
        n = task.issue
        view = f'{{"title": "Issue #{n}", "labels": ["bug"]}}'
        ops.append(
            (
                2.5,
                bash_op(
                    f"gh issue view {n} --json title,body,labels",
                    view,
                    400,
                    850,
                    gh_errors,
                    "gh",
                    GH_JSON_ERROR,
                ),
            )
        )
    if task.url is not None:
        fetch = Op(
            "web_fetch",
            {"url": task.url},
            task.url,
            "[page text]",
            1500,
            1400,
            ("unauthorized", "timeout"),
            "web",
        )
        ops.append((1.5, fetch))
    for cmd in task.commands:
        ops.append(
            (
                2.0,
                bash_op(
                    cmd, f"$ {cmd}\n(ok)", 250, 1500, ("timeout", "not_found"), "cmd"
                ),
            )
        )
    return ops


def _investigate_ops(task: Task, src: str) -> list[tuple[float, Op]]:
    return [
        (1.4, run_tests_op(task, failing=1)),
        (0.6, run_tests_op(task, failing=2)),
        (3.0, read_op(src)),
        (1.0, read_op(task.tests[0])),
        (1.0, grep_op("assert|expect\\(", task.tests[0], "...", 250, 60)),
        (
            0.5,
            bash_op(
                f'rg -n "def |export " {src}',
                f"{src}:12",
                200,
                90,
                ("cmd_not_found",),
                "search",
            ),
        ),
    ]


def _edit_ops(task: Task, src: str) -> list[tuple[float, Op]]:
    test = task.tests[0]
    new_test = (
        test.replace("test_", "test_new_")
        if task.stack == "python"
        else test.replace(".test.", ".extra.test.")
    )
    write = Op(
        "write_file",
        {"path": new_test, "content": "..."},
        new_test,
        f"Wrote {new_test}",
        30,
        30,
        ("permission", "not_found"),
        "write",
    )
    return [
        (2.0, edit_op(src, 0)),
        (1.2, edit_op(src, 1)),
        (0.8, edit_op(src, 2)),
        (0.8, edit_op(test, 1)),
        (0.6, write),
        (1.0, read_op(src)),
    ]


_PHASES = {"explore": _explore_ops, "investigate": _investigate_ops, "edit": _edit_ops}


@lru_cache(maxsize=1024)
def phase_pool(
    task: Task, phase: str, src: str
) -> tuple[tuple[float, ...], tuple[Op, ...]]:
    """The weighted calls of a phase, built once per task (cumulative weights, ops)."""
    weighted = _PHASES[phase](task, src)
    return tuple(itertools.accumulate(w for w, _ in weighted)), tuple(
        op for _, op in weighted
    )


def pick(
    rng: random.Random, pool: tuple[tuple[float, ...], tuple[Op, ...]], seen: set[Op]
) -> Op:
    """A weighted pick that avoids repeating a call already made (agents rarely re-run
    the same thing)."""
    cumulative, ops = pool
    for _ in range(3):
        op = ops[
            min(
                len(ops) - 1,
                bisect.bisect_right(cumulative, rng.random() * cumulative[-1]),
            )
        ]
        if op not in seen:
            break
    seen.add(op)
    return op


def recovery(
    op: Op, kind: str, task: Task, rng: random.Random, failing: int
) -> list[Op]:
    """What a sensible agent does next after ``op`` failed with ``kind`` (retry or alternative)."""
    if kind == "not_found" and op.tool in ("read_file", "edit", "write_file"):
        return _find_the_file(op, task)
    recover = _RECOVERIES.get(kind)
    if recover is None:
        return [op]
    return recover(op, task, failing)


def _find_the_file(op: Op, task: Task) -> list[Op]:
    """A missing file: make its folder before writing, else look for the real one."""
    stem = op.label.rsplit("/", 1)[-1].split(".")[0]
    real = next((p for p in task.sources + task.tests if stem in p), task.sources[0])
    if op.tool == "write_file":
        folder = op.label.rsplit("/", 1)[0] if "/" in op.label else "."
        denied = {
            "permission": f"mkdir: cannot create directory '{folder}': Permission denied"
        }
        mkdir = bash_op(f"mkdir -p {folder}", "", 5, 15, ("permission",), texts=denied)
        return [mkdir, op]
    glob = glob_op(f"**/*{stem}*", real, 40)
    if op.tool == "read_file":
        return [glob, read_op(real)]
    return [glob, attrs.evolve(op, input={**op.input, "path": real}, label=real)]


def _reread(op: Op, task: Task, failing: int) -> list[Op]:
    """An edit that did not match: read the file again, then edit."""
    return [read_op(op.label), op]


def _search_instead(op: Op, task: Task, failing: int) -> list[Op]:
    """A command that does not exist: search the code for its first argument."""
    args = [a for a in shlex.split(op.label)[1:] if not a.startswith("-")]
    pattern = args[0] if args else "TODO"
    return [grep_op(pattern, "src", "...", 200, 120)]


def _after_timeout(op: Op, task: Task, failing: int) -> list[Op]:
    """Tests that timed out run again, narrowed; anything else is transient: retry."""
    if op.kind == "test":
        return [run_tests_op(task, failing=failing, narrow=True)]
    return [op]


def _after_unauthorized(op: Op, task: Task, failing: int) -> list[Op]:
    """A refused gh call: check the login, then retry."""
    if op.kind != "gh":
        return [op]
    status = bash_op(
        "gh auth status",
        "Logged in to github.com account bot (GH_TOKEN)",
        60,
        400,
        ("unauthorized",),
    )
    return [status, op]


def _after_json_parse(op: Op, task: Task, failing: int) -> list[Op]:
    """gh output that did not parse as JSON: the same call without ``--json``."""
    if op.kind != "gh":
        return [op]
    base = op.label.split(" --json")[0]
    errors = ("unauthorized", "timeout")
    return [bash_op(base, op.output, op.result_tokens, op.duration_ms, errors, "gh")]


def _after_permission(op: Op, task: Task, failing: int) -> list[Op]:
    """A permission error: look at the folder's modes, then retry."""
    folder = op.label.rsplit("/", 1)[0]
    return [bash_op(f"ls -la {folder}", "drwxr-xr-x ...", 80, 20, ()), op]


_RECOVERIES: dict[str, Callable[[Op, Task, int], list[Op]]] = {
    "edit_mismatch": _reread,
    "cmd_not_found": _search_instead,
    "timeout": _after_timeout,
    "unauthorized": _after_unauthorized,
    "json_parse": _after_json_parse,
    "permission": _after_permission,
}


def wrong_path(path: str) -> str:
    """A plausible wrong guess for ``path`` (another top folder)."""
    top, _, rest = path.partition("/")
    if not rest:
        return f"src/{path}"
    return f"{WRONG_TOP.get(top, 'src')}/{rest}"


def error_text(kind: str, op: Op, rng: random.Random, secs: int) -> str:
    if op.error_texts and kind in op.error_texts:
        template = op.error_texts[kind]
    elif kind == "timeout" and op.tool != "bash":
        template = "{tool} timed out after {secs}s ({label})"
    elif kind == "not_found" and op.tool == "bash":
        template = (
            "fatal: not a git repository (or any of the parent directories): .git"
            if op.label.startswith("git")
            else "bash: line 1: {cmd}: No such file or directory (exit code 127)"
        )
    else:
        template = rng.choice(ERROR_TEXTS[kind])
    return template.format(
        path=op.input.get("path", op.label),
        label=op.label,
        cmd=op.label.split()[0],
        secs=secs,
        tool=op.tool,
    )


def blocker(task: Task, rng: random.Random) -> tuple[Op, str]:
    """The failure an unfinished session gives up on, and its kind."""
    install = "pip install -e ." if task.stack == "python" else "npm ci"
    install_error = (
        "ERROR: HTTP error 401 while getting "
        "https://pypi.internal.example/simple/{project}-utils/ (401 Unauthorized)"
        if task.stack == "python"
        else (
            'npm ERR! code E401 - Unable to authenticate, need: Basic realm="registry" '
            "(401 Unauthorized)"
        )
    ).replace("{project}", task.project)
    number = task.pr or task.issue
    gh_view = (
        f"gh {'pr' if task.pr else 'issue'} view {number} --json title,body | jq -r .title"
        if number
        else None
    )
    choices: list[tuple[float, tuple[Op, str]]] = [
        (2.0, (run_tests_op(task, failing=1, narrow=True), "timeout")),
        (1.5, (edit_op(task.sources[0]), "edit_mismatch")),
        (
            1.0,
            (
                bash_op(
                    install,
                    "",
                    300,
                    9000,
                    ("unauthorized",),
                    "install",
                    {"unauthorized": install_error},
                ),
                "unauthorized",
            ),
        ),
        (0.7, (read_op(f"config/{task.project}.json"), "not_found")),
    ]
    if gh_view is not None:
        kind = rng.choice(("unauthorized", "json_parse"))
        choices.append(
            (
                2.5,
                (
                    bash_op(
                        gh_view, "", 200, 900, ("unauthorized", "json_parse"), "gh"
                    ),
                    kind,
                ),
            )
        )
    else:
        choices.append(
            (
                0.8,
                (
                    bash_op(
                        "gh pr create --fill", "", 120, 1200, ("unauthorized",), "gh"
                    ),
                    "unauthorized",
                ),
            )
        )
    total = sum(w for w, _ in choices)
    x = rng.random() * total
    for w, choice in choices:
        x -= w
        if x <= 0:
            return choice
    return choices[-1][1]
