"""What a cell attempt needs, assembled in one place for every executor.

The driver (``runner/run.py``, the local executors) and a Ray worker
(``runner/executors/ray.py``) build the run's workspaces, its trials, the
shared ``RunState`` and each provider's ``ProviderConfig`` with these
functions, from the same ``RunOptions``. A cell therefore runs the same way
whichever executor runs it: a Harbor task under a container or plugin kind is
one trial per attempt on a Ray worker as on the driver (docs/runner.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..errors import SandboxError
from ..model import ModeConfig, PermissionConfig, ProviderConfig, RunContext
from ..plugins.manager import get_plugin_manager
from ..sandbox import SandboxSettings
from ..util.redact import Redactor
from .hidden import hidden_from_agents
from .hooks import HookCaller
from .options import RunOptions
from .state import RunState
from .workspace import KeepWorkspaces, Workspaces

if TYPE_CHECKING:
    from ..plugins.manager import PluginManager
    from .trial import Trials


def environment_kind(sandbox: SandboxSettings, manager: PluginManager | None) -> Any:
    """The environment kind ``execution.sandbox`` names; an unknown one is one line
    listing the known."""
    registry = (manager or get_plugin_manager()).registry
    if registry.find("environments", sandbox.sandbox) is None:
        known = ", ".join(sorted(registry.ids("environments")))
        raise SandboxError(
            f"execution.sandbox: expected one of {known}, got {sandbox.sandbox!r}"
        )
    return registry.create("environments", sandbox.sandbox)


def workspace_template(provider_options: Mapping[str, Any]) -> str | None:
    """A provider's deprecated ``workdir_template`` (or ``workdir``): the default workspace."""
    return provider_options.get("workdir_template") or provider_options.get("workdir")


def run_workspaces(
    options: RunOptions,
    run_id: str,
    *,
    redactor: Redactor,
    warnings: list[str] | None = None,
) -> Workspaces:
    """The run's session workspaces; kept ones go to ``reports/<runId>/workspaces``."""
    endpoint = options.provider_options.get("base_url")
    return Workspaces(
        keep=cast(KeepWorkspaces, options.keep_workspaces),
        keep_dir=Path(options.reports_dir) / run_id / "workspaces",
        template=workspace_template(options.provider_options),
        sandbox=options.sandbox,
        endpoints=(str(endpoint),) if endpoint else (),
        warnings=warnings,
        hide=hidden_from_agents(
            options.scenarios, options.results_dir, options.reports_dir
        ),
        redact=redactor,
    )


def run_trials(
    options: RunOptions,
    run_id: str,
    workspaces: Workspaces,
    manager: PluginManager | None,
) -> Trials | None:
    """The run's trials when its environment kind starts one environment per attempt."""
    sandbox = options.sandbox
    if sandbox is None or sandbox.sandbox == "none":
        return None
    # the trial machinery: only for runs that start environments
    from .trial import Trials

    trials = Trials(
        environment_kind(sandbox, manager), sandbox, Path(options.reports_dir), run_id
    )
    capabilities = trials.capabilities
    if capabilities is not None and capabilities.images and not sandbox.container:
        # a plugin's kind that runs images: the task images are built locally, by docker
        workspaces.environments.builder = "docker"
    return trials


def run_state(
    options: RunOptions,
    *,
    run_id: str,
    run_ctx: RunContext,
    provider_id: str,
    hooks: HookCaller,
    redactor: Redactor,
    sessions_dir: Path,
    workspaces: Workspaces | None,
    trials: Trials | None,
    **driver: Any,
) -> RunState:
    """What every cell of the run shares; ``driver``: what only the driver has (pacer, warnings)."""
    return RunState(
        run_id=run_id,
        run_ctx=run_ctx,
        provider_id=provider_id,
        scorer=options.scorer,
        collectors=list(options.collectors),
        analyzers=list(options.analyzers),
        hooks=hooks,
        writer=None,  # the driver opens it once the manifest is written
        redactor=redactor,
        default_retries=options.allowed_retries,
        session_export=options.session_export,
        sessions_dir=sessions_dir,
        multi_model=len(run_ctx.models) > 1,
        destroy_timeout_s=options.destroy_timeout_s,
        time_limit_ms=options.time_limit_ms,
        workspaces=workspaces,
        trials=trials,
        **driver,
    )


def provider_config(
    *,
    model: str,
    mode: str,
    mode_config: ModeConfig,
    provider_options: Mapping[str, Any],
    port: int,
    workspaces: Workspaces | None,
    sandbox: SandboxSettings | None,
    with_overrides: bool = True,
) -> ProviderConfig:
    """What a provider instance is ``init``-ed with for (model, mode)."""
    options = dict(provider_options)
    if with_overrides:
        options.update(mode_config.provider_overrides)
    return ProviderConfig(
        port=port,
        model=model,
        mode=mode,
        permissions=PermissionConfig(auto_approve=True),
        environment=dict(mode_config.environment),
        options=options,
        sandbox=sandbox,
        # The folder the run's session workspaces are made in (a server serving many sessions
        # works there); the run's clone cache, task images and verifiers' copies are beside it.
        workdir=str(workspaces.sessions) if workspaces is not None else ".",
    )


__all__ = [
    "environment_kind",
    "provider_config",
    "run_state",
    "run_trials",
    "run_workspaces",
    "workspace_template",
]
