"""From a profile file to a ready ``Run``: what ``profiler run`` does before the matrix starts.

A resumed run is locked before its manifest is read, and the flags it was
started with (recorded in the manifest) apply again, the flags given now
winning; the checks that it may be resumed happen in the run's prepare phase.
The profile is read once per command: a second time only for a resume whose
recorded flags differ from those it was just loaded with (the results folder,
where the manifest is, comes from the profile). The workers (analysis, Ray)
get the loaded profile, never the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from ..config.profile import ProfilerConfig, profile_from_data, read_profile
from ..errors import ConfigError
from ..plugins.manager import PluginManager
from ..sandbox import SandboxSettings
from ..storage.store import RunLock, RunPaths, read_manifest
from .build import options_from_config
from .ids import new_run_id
from .run import Run, check_run_sandbox


def run_from_profile(
    profile: Path | str,
    manager: PluginManager,
    *,
    overrides: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    resume: str | None = None,
    force: bool = False,
    hooks: Sequence[Any] = (),
    on_prepared: Callable[[Run], None] | None = None,
    reuse: str | None = None,
    **extra: Any,
) -> tuple[Run, ProfilerConfig]:
    """The profile loaded, the run locked, and the ``Run`` ready to execute (its lock is
    released by it)."""
    if resume and run_id and run_id != resume:
        raise ConfigError("--run-id and --resume name different runs")
    overrides = dict(overrides or {})
    data = read_profile(
        profile
    )  # once: a resume applies its recorded flags to the same data
    config = profile_from_data(profile, data, overrides, registry=manager.registry)
    run_id = resume or run_id or new_run_id()
    check_run_sandbox(
        SandboxSettings.from_execution(config.execution), manager
    )  # before the lock makes the results folder
    results_dir = Path(config.output.results_dir)
    made = [d for d in (results_dir, *results_dir.parents) if not d.exists()]
    lock = RunLock(RunPaths(results_dir, run_id))
    # before the manifest is read: two `--resume` of one run cannot both pass the checks
    lock.acquire()
    try:
        manifest = None
        if resume:
            manifest = read_manifest(
                RunPaths(Path(config.output.results_dir), run_id).manifest
            )
            recorded = {**manifest.overrides, **overrides}
            if recorded != config.overrides:
                # Resume what was started, its flags included; flags given now win. Parsed
                # again (not read) only when they change what was loaded: the results folder
                # is the profile's.
                config = profile_from_data(
                    profile, data, recorded, registry=manager.registry
                )
        options = options_from_config(
            config,
            manager,
            run_id=run_id,
            resume=bool(resume),
            force=force,
            hooks=list(hooks),
            **extra,
        )
        from .reuse import (
            prepare_reuse,
        )  # the cells' fingerprints; --reuse: an earlier run's unchanged rows

        reused = prepare_reuse(reuse, config, run_id, resume=bool(resume))
        if manifest is not None and manifest.reused is not None:
            reused["reused"] = (
                manifest.reused
            )  # a resumed run still says where its reused rows came from
        options = attrs.evolve(options, **reused)
        return Run(options, lock=lock, on_prepared=on_prepared), config
    except BaseException:
        lock.release()
        for (
            folder
        ) in made:  # innermost first: a profile that cannot run leaves no folder behind
            try:
                folder.rmdir()
            except OSError:
                break
        raise


__all__ = ["run_from_profile"]
