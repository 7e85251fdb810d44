"""Cost of preparing a session's workspace from a 50 MB git repository: copy, clone,
hard links, reflinks (not a test).

Run: ``python bench/bench_workspace.py [--size-mb 50] [--sessions 5] [--json] [--quick]``.

A repository of ``--size-mb`` MB of incompressible text (in files of 100 KB,
one commit) is generated in a temporary folder. Each session then prepares a
fresh workspace from it, four ways:

- ``copy``: ``shutil.copytree`` of the checkout, ``.git`` included — what a
  ``workspace: {path: ...}`` scenario gets;
- ``clone``: ``git clone`` from a bare clone made once per run (its cost is
  printed apart) — what a ``workspace: {git: ...}`` scenario gets (objects
  hard-linked, the files checked out);
- ``clone-copy``: the same with ``--no-hardlinks`` — what the runner does
  since an agent could make git's hard-linked objects writable and change
  the user's repository through them;
- ``hardlink``: ``cp -al`` (every file a hard link of the source's);
- ``reflink``: ``cp -a --reflink=auto`` (copy-on-write clones where the file
  system has them, else a plain copy).

With ``--docker`` it also measures a Harbor task's image
(``examples/tasks/fix-median``, its build context changed each time so it is
built, not found): the first use in a run (``docker build`` + copying its
working folder out) and the use in a later run (the image found, copied out).

After the agent, on a clone with one file changed: ``report in place``
(``git add -N`` and ``git diff --stat`` in the workspace's own ``.git``, as
the runner did), ``report private`` (``runner.hostgit.diff_stat``: a private
repository and index, the agent's configuration never read — what it does
now) and ``keep`` (``util.safefiles.make_safe_to_keep`` with the run's
redactor: modes, special files, secrets masked in every file).

Figures are medians over ``--sessions`` sessions after one warm-up, in
milliseconds, prepare and removal apart. The script also checks what each
way means for the source when the agent edits a file in place (``open(path,
"r+")``, as many editors and ``open(path, "w")`` do): with hard links the
edit changes the source — and every later session's workspace.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

FILE_BYTES = 100 * 1024
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "advice.detachedHead=false", *args],
        cwd=cwd,
        env=GIT_ENV,
        check=True,
        capture_output=True,
    )


def make_repository(folder: Path, size_mb: float) -> Path:
    """A git repository of ``size_mb`` MB of random text in 100 KB files, committed once."""
    repo = folder / "repo"
    repo.mkdir()
    files = max(1, int(size_mb * 1024 * 1024 // FILE_BYTES))
    for index in range(files):
        sub = repo / f"pkg{index % 20:02d}"
        sub.mkdir(exist_ok=True)
        # base64 of random bytes: text, and as incompressible as text gets (git stores it at ~75%).
        (sub / f"module_{index:04d}.txt").write_bytes(
            base64.b64encode(os.urandom(FILE_BYTES * 3 // 4))
        )
    git("init", "--quiet", "-b", "main", cwd=repo)
    git("add", "--all", cwd=repo)
    git("commit", "--quiet", "-m", "bench", cwd=repo)
    return repo


def prepare_copy(source: Path, target: Path, _cache: Path) -> None:
    shutil.copytree(source, target, symlinks=True)


def prepare_clone(_source: Path, target: Path, cache: Path) -> None:
    git("clone", "--quiet", str(cache), str(target), cwd=target.parent)


def prepare_clone_copied(_source: Path, target: Path, cache: Path) -> None:
    git(
        "clone", "--quiet", "--no-hardlinks", str(cache), str(target), cwd=target.parent
    )


def prepare_hardlink(source: Path, target: Path, _cache: Path) -> None:
    subprocess.run(["cp", "-al", str(source), str(target)], check=True)


def prepare_reflink(source: Path, target: Path, _cache: Path) -> None:
    subprocess.run(["cp", "-a", "--reflink=auto", str(source), str(target)], check=True)


WAYS: dict[str, Callable[[Path, Path, Path], None]] = {
    "copy": prepare_copy,
    "clone": prepare_clone,
    "clone-copy": prepare_clone_copied,
    "hardlink": prepare_hardlink,
    "reflink": prepare_reflink,
}


def one_session(
    way: str, source: Path, cache: Path, root: Path, index: int
) -> tuple[float, float]:
    """(prepare, remove) of one workspace, in ms."""
    target = root / f"{way}-{index}"
    t0 = time.perf_counter()
    WAYS[way](source, target, cache)
    t1 = time.perf_counter()
    shutil.rmtree(target)
    t2 = time.perf_counter()
    return (t1 - t0) * 1000, (t2 - t1) * 1000


def edit_reaches_source(way: str, source: Path, cache: Path, root: Path) -> bool:
    """Whether an in-place edit of a file in a workspace prepared ``way`` changes the
    source's file."""
    target = root / f"{way}-edit"
    WAYS[way](source, target, cache)
    relative = next(p for p in sorted(source.rglob("*.txt"))).relative_to(source)
    before = (source / relative).read_bytes()
    with open(
        target / relative, "r+b"
    ) as handle:  # an in-place write, as `open(path, "w")` or many editors do
        handle.write(b"EDITED BY THE AGENT")
    changed = (source / relative).read_bytes() != before
    (source / relative).write_bytes(before)
    shutil.rmtree(target)
    return changed


def reflink_supported(source: Path, root: Path) -> bool:
    """Whether this file system makes copy-on-write clones (``cp --reflink=always`` succeeds)."""
    one = next(p for p in sorted(source.rglob("*.txt")))
    done = subprocess.run(
        ["cp", "--reflink=always", str(one), str(root / "reflink-probe")],
        capture_output=True,
        check=False,
    )
    (root / "reflink-probe").unlink(missing_ok=True)
    return done.returncode == 0


def measure(size_mb: float, sessions: int) -> dict:
    """Every figure: medians per way, the bare cache's one-off cost, and what an
    in-place edit does."""
    with tempfile.TemporaryDirectory(prefix="bench-workspace-") as folder:
        root = Path(folder)
        source = make_repository(root, size_mb)
        t0 = time.perf_counter()
        cache = root / "cache.git"
        git("clone", "--quiet", "--bare", str(source), str(cache), cwd=root)
        cache_ms = (time.perf_counter() - t0) * 1000
        sessions_dir = root / "sessions"
        sessions_dir.mkdir()
        figures: dict[str, dict[str, float | bool]] = {}
        for way in WAYS:
            one_session(way, source, cache, sessions_dir, -1)  # warm-up (file cache)
            samples = [
                one_session(way, source, cache, sessions_dir, i)
                for i in range(sessions)
            ]
            prepare, remove = zip(*samples)
            figures[way] = {
                "prepare_ms": statistics.median(prepare),
                "remove_ms": statistics.median(remove),
                "edit_changes_source": edit_reaches_source(
                    way, source, cache, sessions_dir
                ),
            }
        after = measure_after(cache, sessions_dir, sessions)
        files = [p for p in source.rglob("*") if p.is_file()]
        git_bytes = sum(
            p.stat().st_size for p in files if ".git" in p.relative_to(source).parts
        )
        tree_bytes = sum(p.stat().st_size for p in files) - git_bytes
        return {
            "checkout_mb": round(tree_bytes / 2**20, 1),
            "git_mb": round(git_bytes / 2**20, 1),
            "sessions": sessions,
            "bare_cache_ms": cache_ms,
            "reflink_supported": reflink_supported(source, sessions_dir),
            "ways": figures,
            "after": after,
        }


def measure_after(cache: Path, root: Path, sessions: int) -> dict[str, float]:
    """Median ms of the report in place (before #38), the private report (after) and
    making a workspace safe to keep."""
    import trio

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from profiler_core.runner.hostgit import diff_stat
    from profiler_core.util.redact import Redactor
    from profiler_core.util.safefiles import make_safe_to_keep, scrub_secrets

    redact = Redactor(environ={}, extra_values=["sk-bench-secret-0123456789abcdef"])
    private = root / "report.git"
    times: dict[str, list[float]] = {
        "report in place": [],
        "report private": [],
        "keep": [],
    }
    for index in range(sessions + 1):
        target = root / f"after-{index}"
        prepare_clone_copied(target, target, cache)
        one = next(p for p in sorted(target.rglob("*.txt")))
        one.write_text("changed by the agent\n")
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=target,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        t0 = time.perf_counter()
        git("add", "--all", "--intent-to-add", cwd=target)
        git("diff", "--stat", cwd=target)
        t1 = time.perf_counter()
        trio.run(diff_stat, private, cache / "objects", commit, target)
        t2 = time.perf_counter()
        make_safe_to_keep(target, lambda path: scrub_secrets(path, redact))
        t3 = time.perf_counter()
        shutil.rmtree(target)
        if index:  # the first is a warm-up
            for name, ms in zip(
                times,
                ((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000),
                strict=True,
            ):
                times[name].append(ms)
    return {name: statistics.median(values) for name, values in times.items()}


def measure_task_image(sessions: int) -> dict[str, float]:
    """Median first use (build + copy-out) and reuse (found + copy-out) of a task's
    image, in ms (docker)."""
    import uuid

    import trio

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from profiler_core.config.harbor import load_task
    from profiler_core.runner.task_images import TaskEnvironments
    from profiler_core.sandbox import SandboxSettings

    settings = SandboxSettings(sandbox="docker")
    first: list[float] = []
    again: list[float] = []

    async def one(task: Path, root: Path) -> None:
        (task / "environment" / "bench-token.txt").write_text(
            uuid.uuid4().hex
        )  # a new tag: built, not found
        scenario = load_task(task, timeout_default_ms=60_000)
        runs = [root / "run-1", root / "run-2"]
        for folder in runs:
            folder.mkdir()
        t0 = time.perf_counter()
        built = await TaskEnvironments(settings, runs[0]).sandbox_for(scenario)
        t1 = time.perf_counter()
        await TaskEnvironments(settings, runs[1]).sandbox_for(scenario)
        t2 = time.perf_counter()
        first.append((t1 - t0) * 1000)
        again.append((t2 - t1) * 1000)
        assert built.settings is not None and built.settings.image
        subprocess.run(
            ["docker", "image", "rm", "--force", built.settings.image],
            capture_output=True,
            check=False,
        )
        for folder in runs:
            shutil.rmtree(folder)

    with tempfile.TemporaryDirectory(prefix="bench-task-image-") as folder:
        task = Path(folder) / "fix-median"
        shutil.copytree(
            Path(__file__).resolve().parents[1] / "examples" / "tasks" / "fix-median",
            task,
        )
        for _ in range(sessions + 1):
            trio.run(one, task, Path(folder))
    return {
        "first_use_ms": statistics.median(first[1:]),
        "reuse_ms": statistics.median(again[1:]),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=50.0)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="2 MB, 2 sessions: a smoke test, not figures",
    )
    parser.add_argument(
        "--docker",
        action="store_true",
        help="also a Harbor task's image: build + copy-out (needs dockerd)",
    )
    args = parser.parse_args(argv)
    size, sessions = (2.0, 2) if args.quick else (args.size_mb, args.sessions)
    result = measure(size, sessions)
    if args.docker:
        result["task_image"] = measure_task_image(sessions)
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"workspace from a git repository of {result['checkout_mb']} MB "
        f"(checkout) + {result['git_mb']} MB (.git), "
        f"median of {sessions} sessions (ms)"
    )
    print(
        f"{'way':10} {'prepare':>9} {'remove':>9}  an in-place edit changes the source"
    )
    for way, f in result["ways"].items():
        print(
            f"{way:10} {f['prepare_ms']:9.1f} {f['remove_ms']:9.1f}  "
            f"{'YES' if f['edit_changes_source'] else 'no'}"
        )
    print(f"clone: the bare cache, once per run: {result['bare_cache_ms']:.1f} ms")
    for name, ms in result["after"].items():
        print(f"after the agent: {name:16} {ms:9.1f} ms")
    print(
        "reflink: copy-on-write clones on this file system: "
        f"{'yes' if result['reflink_supported'] else 'no (cp falls back to a copy)'}"
    )
    if "task_image" in result:
        image = result["task_image"]
        print(
            "task image (docker): first use in a run "
            f"{image['first_use_ms']:.1f} ms (build + copy-out), "
            f"later runs {image['reuse_ms']:.1f} ms (found + copy-out)"
        )


if __name__ == "__main__":
    sys.exit(main())
