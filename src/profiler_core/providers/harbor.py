"""The ``harbor`` provider: each cell is one Harbor trial, run by Harbor's own CLI in
its own interpreter.

::

    provider:
      id: harbor
      options:
        agent: oracle                 # a Harbor agent name (harbor run -a), or:
        agent_import_path: null       # module:Class of a custom agent (harbor run
        --agent-import-path)
        environment: docker           # docker | podman | daytona | modal | e2b | ...
        (harbor run -e)
        harbor: harbor                # the harbor program (Harbor needs Python >= 3.12:
        its own venv's bin/harbor)
        agent_kwargs: {}              # harbor run --ak key=value
        keep_jobs: null               # a folder to keep Harbor's job folders in
        (default: a temporary one)
        preflight: true               # ask Harbor's preflight whether the environment
        is ready (credentials ...)

Harbor cannot be imported here (it needs Python >= 3.12, this package
supports 3.11), so the boundary is a process: ``harbor run -p TASK -a AGENT
-e ENV -o JOBS --job-name NAME -n 1 -y -q`` in its own process group, ended
as a group at the scenario's timeout. The trial is then read back by the
``harbor`` importer (``importers/harbor_job.py``), so a cell's row is the row
``profiler import harbor`` would make of the same job — tokens, cost, phases,
exceptions, the trajectory as trace — and Harbor's verifier decides success
(``session_verification``: the runner runs no verifier of its own for it).
Before any trial, Harbor's own preflight of the environment runs in Harbor's
interpreter (``harbor_probe.py``), so ``profiler validate`` names missing
credentials (``E2B_API_KEY``, ``DAYTONA_API_KEY``, Modal's token ...) in one line.
The mode's ``environment`` reaches the agent (``--ae``); its
``provider_overrides`` set these options for the mode (``{agent: nop}``,
``{agent_kwargs: {...}}``: each mode gets its own provider instance). The matrix,
warm-up, retries, stop
rules, budgets and statistics stay the runner's.

The scenarios are Harbor task folders (``scenarios: {format: harbor}`` or a
dataset by name): a scenario without its task folder is an error row naming it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ProfilerError
from ..model import (
    CreateSessionParams,
    PromptResult,
    ProviderConfig,
    RecordedSession,
    RecordedVerification,
    Scenario,
    SessionHandle,
    SessionTrace,
)
from .harbor_probe import environment_problem, find_harbor, harbor_path

__all__ = ["HarborProvider"]

#: seconds Harbor gets beyond the scenario's timeout for environment set-up, the
#: verifier and teardown
HARBOR_OVERHEAD_S = 600.0


class HarborProvider:
    """Runs each session as a Harbor trial through Harbor's CLI and reads the trial back."""

    id = "harbor"
    init_scope = "mode"  # each mode's environment and agent kwargs

    def __init__(
        self,
        *,
        agent: str | None = None,
        agent_import_path: str | None = None,
        environment: str = "docker",
        harbor: str = "harbor",
        agent_kwargs: dict[str, Any] | None = None,
        keep_jobs: str | None = None,
        preflight: bool = True,
    ) -> None:
        """Check the options now, so ``profiler validate`` names a bad one (or a missing
        Harbor) in one line."""
        if bool(agent) == bool(agent_import_path):
            raise ConfigError(
                "provider 'harbor': give one of the options agent (a Harbor "
                "agent name) or agent_import_path"
            )
        if not isinstance(environment, str) or not environment:
            raise ConfigError(
                "provider 'harbor': option 'environment': expected a Harbor "
                f"environment type, got {environment!r}"
            )
        install = find_harbor(harbor)
        if install is None:
            raise ConfigError(
                f"provider 'harbor': the harbor program {harbor!r} is not "
                "found; install Harbor in a Python >= 3.12 "
                "(e.g. python3.12 -m venv h && h/bin/pip install harbor) and "
                "give option harbor: h/bin/harbor"
            )
        if agent_kwargs is not None and not isinstance(agent_kwargs, dict):
            raise ConfigError(
                "provider 'harbor': option 'agent_kwargs': expected a mapping, "
                f"got {agent_kwargs!r}"
            )
        self.install = install
        self.harbor, self.agent, self.import_path, self.environment = (
            str(install.program),
            agent,
            agent_import_path,
            environment,
        )
        self.preflight = bool(preflight)
        self._ready: set[str] = set()
        self._check_environment(environment)
        self.kwargs = dict(agent_kwargs or {})
        self.keep = Path(keep_jobs).resolve() if keep_jobs else None
        self.jobs: Path | None = None
        self.model: str | None = None
        self.env: dict[str, str] = {}
        self.sessions: dict[str, tuple[Scenario, RecordedSession | None]] = {}

    def init(self, config: ProviderConfig) -> None:
        """A folder for this mode's jobs; the mode's environment and overrides noted."""
        self.model = config.model or None
        self.env = {str(k): str(v) for k, v in config.environment.items()}
        # The mode's provider_overrides arrive merged into the options (checked when the
        # profile was built).
        options = config.options
        if "agent" in options or "agent_import_path" in options:
            self.agent, self.import_path = (
                options.get("agent"),
                options.get("agent_import_path"),
            )
        self.environment = str(options.get("environment", self.environment))
        self._check_environment(self.environment)
        self.kwargs = dict(options.get("agent_kwargs") or self.kwargs)
        if self.keep is not None:
            self.keep.mkdir(parents=True, exist_ok=True)
            self.jobs = self.keep
        else:
            self.jobs = Path(tempfile.mkdtemp(prefix="profiler-harbor-"))

    def _check_environment(self, environment: str) -> None:
        """Harbor's own preflight of the environment (credentials, extras, CLIs), once
        per environment: one line when not ready."""
        if not self.preflight or environment in self._ready:
            return
        problem = environment_problem(self.install, environment)
        if problem is not None:
            raise ConfigError(
                f"provider 'harbor': environment {environment!r} is not ready: {problem}"
            )
        self._ready.add(environment)

    def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """Remember the task; the trial starts at ``prompt``."""
        if params.scenario is None or _task_folder(params.scenario) is None:
            raise ProfilerError(
                f"provider 'harbor': scenario {params.scenario_id!r} is not a "
                f"Harbor task folder (scenarios: {{format: harbor}})"
            )
        handle = SessionHandle(
            session_id=f"harbor-{uuid.uuid4().hex[:12]}",
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )
        self.sessions[handle.session_id] = (params.scenario, None)
        return handle

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Run the trial with Harbor and answer with what its job folder says."""
        from ..importers.harbor_job import load_job
        from ..sandbox.commands import run_command
        from .transcripts import replayed_result

        scenario, _ = self.sessions[handle.session_id]
        assert self.jobs is not None, "init() first"
        name = handle.session_id
        argv = self._argv(_task_folder(scenario), name)  # type: ignore[arg-type]
        timeout_s = (timeout_ms or scenario.timeout_ms) / 1000 + HARBOR_OVERHEAD_S
        # Harbor's own venv first on PATH: its helpers (podman-compose) live beside it.
        path = harbor_path(self.harbor)
        done = await run_command(
            argv,
            cwd=self.jobs,
            env={**os.environ, "PATH": path, "PYTHONUNBUFFERED": "1"},
            timeout_s=timeout_s,
        )
        job = self.jobs / name
        if not (job / "result.json").is_file() and not any(job.glob("*/result.json")):
            why = done.error or (
                "timed out" if done.timed_out else f"exit status {done.exit_code}"
            )
            raise ProfilerError(
                f"provider 'harbor': harbor run wrote no job ({why}): {done.output.strip()[-300:]}"
            )
        loaded = load_job(job)
        if len(loaded.sessions) != 1:
            raise ProfilerError(
                f"provider 'harbor': {job}: expected one trial, found {len(loaded.sessions)}"
            )
        session = loaded.sessions[0]
        self.sessions[handle.session_id] = (scenario, session)
        return replayed_result(session)

    def _argv(self, task: Path, name: str) -> list[str]:
        assert self.jobs is not None
        argv = [
            self.harbor,
            "run",
            "-p",
            str(task),
            "-e",
            self.environment,
            "-o",
            str(self.jobs),
            "--job-name",
            name,
            "-n",
            "1",
            "-y",
            "-q",
        ]
        argv += (
            ["-a", self.agent]
            if self.agent
            else ["--agent-import-path", str(self.import_path)]
        )
        if self.model and self.model != "unknown":
            argv += ["-m", self.model]
        for key, value in self.kwargs.items():
            argv += ["--ak", f"{key}={value}"]
        for key, value in self.env.items():
            argv += ["--ae", f"{key}={value}"]
        return argv

    def export_session(self, handle: SessionHandle) -> SessionTrace | None:
        """The trial's trajectory, as the importer reads it."""
        session = self.sessions[handle.session_id][1]
        return session.trace if session is not None else None

    def session_verification(
        self, handle: SessionHandle
    ) -> RecordedVerification | None:
        """Harbor's verifier outcome: the row's reward and ``verify:harbor`` check."""
        entry = self.sessions.get(handle.session_id)
        return (
            entry[1].verification
            if entry is not None and entry[1] is not None
            else None
        )

    def destroy_session(self, handle: SessionHandle) -> None:
        """Forget the session (its job folder stays until ``shutdown``, or in ``keep_jobs``)."""
        self.sessions.pop(handle.session_id, None)

    def shutdown(self) -> None:
        """Remove the temporary jobs folder."""
        if self.jobs is not None and self.keep is None:
            shutil.rmtree(self.jobs, ignore_errors=True)
        self.jobs = None


def _task_folder(scenario: Scenario) -> Path | None:
    """The Harbor task folder a scenario was read from (its verifier's ``/tests`` is the
    task's ``tests/``)."""
    for spec in scenario.verify:
        tests = spec.mounts.get("/tests")
        if tests:
            folder = Path(tests).parent
            if (folder / "task.toml").is_file():
                return folder
    return None
