"""A trial's artifacts, collected into the run's reports before its environment is stopped.

As Harbor does after a trial, ``/logs/artifacts`` (what the agent and the
verifier left there) and the task's declared ``artifacts`` (paths inside the
environment, relative ones in its working folder) are copied out to
``reports/<runId>/artifacts/<cell>/``: the folder's files at its top, each
declared path under its own base name (made safe; the first of two with one
name is kept). The copy is bounded: a path larger than what is left of
``MAX_BYTES`` is skipped with a warning, measured inside before anything is
copied. A declared path that is a link is refused, and every link (or other
non-regular file) inside what was copied is removed: nothing in the report
leads anywhere else. A missing artifact is skipped (Harbor's rule). The row
keeps the list of files, relative to the run's report folder, as its
``artifacts`` extension; the reports list them with links.
"""

from __future__ import annotations

import logging
import os
import posixpath
import shutil
from pathlib import Path

from ..errors import SandboxError
from ..storage.paths import safe_name
from .trial import QUICK_S, TrialRun, call

log = logging.getLogger("agent_profiler")

__all__ = ["ARTIFACTS", "MAX_BYTES", "MAX_LISTED", "collect_artifacts"]

#: the trial's artifacts folder (Harbor's)
ARTIFACTS = "/logs/artifacts"
#: bytes of artifacts kept per trial (the rest is skipped, said in the log)
MAX_BYTES = 64 << 20
#: files of a trial named on its row (all are kept in the folder)
MAX_LISTED = 200

#: one line per path: LINK, MISSING, EMPTY (a folder with nothing in it: no copy), or its
#: size in KiB (``du -sk``), measured as root inside
_MEASURE = (
    'empty() { for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do '
    '[ -e "$f" ] || [ -L "$f" ] && return 1; done; return 0; }; '
    'for p in "$@"; do if [ -L "$p" ]; then echo LINK; '
    'elif [ -d "$p" ] && empty "$p"; then echo EMPTY; elif [ -e "$p" ]; then '
    'du -sk -- "$p" 2>/dev/null | cut -f1; else echo MISSING; fi; done'
)


async def collect_artifacts(run: TrialRun, keep: Path, reports: Path) -> list[str]:
    """Copy the trial's artifacts to ``keep``; the files kept, relative to ``reports``
    (the run's report folder)."""
    declared = [
        p if p.startswith("/") else posixpath.join(run.workdir, p)
        for p in run.scenario.artifacts
    ]
    sources = [ARTIFACTS, *dict.fromkeys(declared)]
    done = await run.exec(
        ["sh", "-c", _MEASURE, "sh", *sources], timeout_s=QUICK_S, user="0"
    )
    sizes = done.output.split() if done.ok else []
    if len(sizes) != len(sources):
        log.warning(
            "the artifacts of %s were not collected: %s",
            run.scenario.id,
            done.error or done.output.strip()[-200:],
        )
        return []
    if keep.exists():
        shutil.rmtree(
            keep, ignore_errors=True
        )  # a retried attempt: the last one is kept
    left = MAX_BYTES
    for source, size in zip(sources, sizes, strict=True):
        target = (
            keep
            if source == ARTIFACTS
            else keep / safe_name(posixpath.basename(source))
        )
        if size in ("MISSING", "EMPTY") or (target != keep and target.exists()):
            continue
        if size == "LINK" or not size.isdigit():
            log.warning("artifact %s of %s is a link: refused", source, run.scenario.id)
            continue
        if int(size) * 1024 > left:
            log.warning(
                "artifact %s of %s (%s KiB) is over what is left of the %d MiB "
                "kept per trial: skipped",
                source,
                run.scenario.id,
                size,
                MAX_BYTES >> 20,
            )
            continue
        left -= int(size) * 1024
        try:
            await call(run.environment.get, source, target)
        except SandboxError as exc:
            log.warning(
                "artifact %s of %s was not copied: %s", source, run.scenario.id, exc
            )
    return _plain_files(keep, reports, run.scenario.id)


def _plain_files(keep: Path, reports: Path, scenario: str) -> list[str]:
    """Remove every link (or other non-regular file) under ``keep``; the regular files
    left, relative to ``reports``."""
    if not keep.is_dir():
        return []
    files: list[str] = []
    for top, dirs, names in os.walk(keep):
        for name in [*dirs, *names]:
            path = Path(top) / name
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                log.warning(
                    "artifact %s of %s is a link: refused",
                    path.relative_to(keep),
                    scenario,
                )
                path.unlink()
                if name in dirs:
                    dirs.remove(name)
            elif path.is_file():
                files.append(path.relative_to(reports).as_posix())
    return sorted(files)[:MAX_LISTED]
