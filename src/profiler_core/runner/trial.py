"""One trial, one environment: set-up, the agent, then the verifier, in one environment
started per attempt.

Under a container kind (``docker``, ``podman``) or a plugin's environment, a
scenario with its own environment (a Harbor task) gets, for each attempt of a
cell, one environment started from the task's image (docs/environments.md):

1. ``/logs/verifier``, ``/logs/agent`` and ``/logs/artifacts`` are made;
   the scenario's ``setup`` commands run (with the network);
2. the network becomes the agent's (the task's policy combined with
   ``execution.network``) and the agent runs inside (a trial-aware provider:
   the ``oracle``, the ``simulated`` agent). Its timeout is recorded on the
   row, and the verifier still runs on what it left (Harbor's rule);
3. what the agent left is listed inside the environment (``git`` run there,
   or ``find``): the host never runs anything in the agent's files;
4. the network becomes the verifier's (the task environment's, public by
   default, unless ``execution.verifier_network`` overrides it); each
   verifier's folders (``tests/`` at ``/tests``) are uploaded only now,
   replacing whatever the agent left there; scripts are made executable and
   started by their shebang in the working folder; every file it writes
   under its logs folder is copied to ``reports/<runId>/verifier/<cell>/``
   and its reward read from there;
5. the environment is stopped (a container is killed at once).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, cast

import attrs
import trio

from ..config.harbor_fields import task_env
from ..errors import ProfilerError, SandboxError
from ..model import (
    CheckpointResult,
    EnvironmentCapabilities,
    PromptMetrics,
    PromptResult,
    SandboxSettings,
    Scenario,
    TimingBreakdown,
    TokenBreakdown,
    TrialSpec,
    VerifierSpec,
    WorkspaceReport,
)
from ..model.environment import BUILTIN_ENVIRONMENTS
from ..storage.paths import safe_name
from ..util.asyncs import call_off_loop
from .outcome import PLUGIN_ERRORS, IterationError
from .verify import Verification, VerifierError, checkpoint, read_reward

log = logging.getLogger("agent_profiler")

#: where Harbor's trial keeps its logs; all three exist before the agent starts
LOG_DIRS = ("/logs/verifier", "/logs/agent", "/logs/artifacts")
#: files listed for a working folder that is not a git tree
MAX_FILES = 200
#: seconds the runner's own short commands in a trial (mkdir, chmod, a listing) may take
QUICK_S = 60.0
#: networks from the most closed to the most open
_OPENNESS = {"none": 0, "model": 1, "full": 2}
#: what an agent asks of a trial: its program's folders (``TrialMount``) and its model endpoints
AgentNeeds = tuple[tuple[Any, ...], tuple[str, ...]]
#: the image's user id, then (when it is root) the working folder ``$2`` made ``$1``'s
_GIVE_WORKDIR = (
    'u=$(id -u); echo "$u"; [ "$u" = 0 ] && [ -n "$2" ] || exit 0; '
    'exec chown -R -- "$1" "$2" 2>&1'
)
#: Harbor's network modes in this project's words
_HARBOR = {"public": "full", "no-network": "none", "allowlist": "model"}


class Trials:
    """The run's trials: the environment kind, the run's settings, and where verifier
    files are kept."""

    def __init__(
        self, kind: Any, settings: SandboxSettings, reports: Path, run_id: str
    ) -> None:
        self.kind = kind
        self.settings = settings
        #: ``reports/<runId>/verifier``: every file a verifier wrote under its logs folder, per cell
        self.verifier_dir = reports / run_id / "verifier"
        #: ``reports/<runId>/artifacts``: each trial's ``/logs/artifacts`` and declared
        #: artifacts (trial_artifacts.py)
        self.artifacts_dir = reports / run_id / "artifacts"
        self.capabilities = getattr(kind, "capabilities", None)
        self._warned: set[str] = set()

    def applies(self, scenario: Scenario, provider: Any) -> bool:
        """Whether ``scenario``'s attempts run as trials: a task with its own
        environment under a container or plugin kind."""
        plugin = self.settings.sandbox not in BUILTIN_ENVIRONMENTS
        if plugin and scenario.environment is None:
            # never the built-ins' confinement in its place: a plugin's kind runs trials only
            raise IterationError(
                f"execution.sandbox: {self.settings.sandbox} runs tasks with an "
                "environment of their own (a Harbor task); "
                f"scenario {scenario.id!r} has none",
                code="setup_error",
            )
        if scenario.environment is None or self.settings.sandbox == "none":
            return False
        inner = getattr(provider, "provider", provider)
        if getattr(inner, "runs_in_trial", False):
            if hasattr(inner, "trial_needs") and self.settings.sandbox == "bwrap":
                # an agent program enters a bwrap trial when it is one sandbox (its tools
                # are here); else it stays beside (docs/environments.md)
                caps = self.capabilities
                return bool(caps is not None and caps.persistent_processes)
            return True
        if self.settings.sandbox in BUILTIN_ENVIRONMENTS:
            return False  # the agent programs still run beside the container (docs/environments.md)
        raise IterationError(
            f"provider {getattr(provider, 'id', '?')!r} cannot run inside a "
            f"{self.settings.sandbox!r} trial yet "
            "(trial-aware providers: oracle, simulated, claude-code, codex, opencode)",
            code="setup_error",
        )

    def warn_once(self, message: str) -> None:
        """Log ``message`` once per run."""
        if message not in self._warned:
            self._warned.add(message)
            log.warning("%s", message)


#: call an environment's method: an ``async def`` awaited, a ``def`` in a worker thread
call = call_off_loop


def _network(value: Any) -> str | None:
    """A Harbor ``NetworkPolicy`` (or None) in this project's words."""
    if value is None:
        return None
    return _HARBOR.get(getattr(value, "mode", "public"), "full")


def _closest(*networks: str | None) -> str:
    """The most closed of the given networks (None: no say)."""
    given = [n for n in networks if n is not None]
    return min(given, key=_OPENNESS.__getitem__) if given else "full"


def phase_networks(
    settings: SandboxSettings, scenario: Scenario, endpoints: tuple[str, ...] = ()
) -> tuple[str, str]:
    """``(agent, verifier)`` networks: the agent's is the task's combined with the
    profile's (``endpoints``: the
    agent's model, which ``model`` relays); the verifier inherits the task's."""
    env = scenario.environment
    task = _network(getattr(env, "network", None))
    agent_task = _network(getattr(scenario, "agent_policy", None)) or task
    agent = _closest(agent_task, settings.network_mode)
    if agent == "model" and not settings.allow_hosts and not endpoints:
        agent = "none"  # an agent without a model (the oracle, the simulated one): nothing to relay
    verifier = settings.verifier_network
    if verifier is None:
        steps = getattr(scenario, "steps", ())
        policies = [
            _network(getattr(v, "policy", None))
            for v in (*scenario.verify, *(v for s in steps for v in s.verify))
        ]
        verifier = (
            _closest(*policies)
            if any(p is not None for p in policies)
            else (task or "full")
        )
    return agent, verifier


def trial_spec(
    settings: SandboxSettings,
    scenario: Scenario,
    name: str,
    agent_network: str,
    switch: bool,
    needs: AgentNeeds = ((), ()),
) -> TrialSpec:
    """What the trial asks of its environment: the task's image (built by
    ``task_images``), env, workdir and limits."""
    env = scenario.environment
    assert env is not None
    templates = dict(getattr(env, "env", {}) or {})
    try:
        values = _expand(templates, scenario.id)
    except (
        ProfilerError
    ) as exc:  # config.harbor's expansion: a variable missing on the host
        raise IterationError(
            f"setup failed: scenario {scenario.id!r}: {exc}", code="setup_error"
        ) from None
    return TrialSpec(
        name=name,
        image=settings.image,
        workdir=getattr(env, "workdir", None) or settings.workdir,
        root=_root(scenario),
        root_exclude=tuple(
            getattr(getattr(scenario, "workspace", None), "exclude", ()) or ()
        ),
        env=values,
        network=agent_network,
        network_switch=switch,
        mounts=tuple(needs[0]),
        hide=tuple(settings.hide_paths),
        endpoints=tuple(needs[1]),
        allow_hosts=tuple(settings.allow_hosts),
        cpus=getattr(env, "cpus", None),
        memory_mb=getattr(env, "memory_mb", None),
        host_toolchain=settings.host_toolchain,
        labels={"agent-profiler.scenario": scenario.id[:60]},
        folders=LOG_DIRS,
    )


def _root(scenario: Scenario) -> str | None:
    """The folder a folder trial starts with: the scenario's workspace folder (a Harbor
    task's environment folder)."""
    workspace = getattr(scenario, "workspace", None)
    return workspace.path if workspace is not None else None


def _expand(templates: dict[str, str], scenario_id: str) -> dict[str, str]:
    """``[environment].env`` with ``${VAR}`` / ``${VAR:-default}`` taken from the host
    (config.harbor_fields' rules)."""
    return task_env(templates, True, "[environment].env")


@attrs.define
class TrialRun:
    """One attempt's trial while it runs: the environment and what the phases need of it."""

    trials: Trials
    scenario: Scenario
    environment: Any
    workdir: str
    agent_network: str
    verifier_network: str
    switch: bool

    async def exec(
        self,
        argv: list[str],
        *,
        timeout_s: float,
        user: str | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> Any:
        """One command in the trial, in its working folder unless ``cwd`` says otherwise."""
        return await call(
            self.environment.exec,
            argv,
            env=env,
            cwd=cwd or self.workdir,
            user=user,
            timeout_s=timeout_s,
        )

    async def network(self, network: str) -> None:
        """Switch the trial to ``network`` between phases (nothing to do when the phases
        share one)."""
        if self.switch:
            await call(self.environment.set_network, network)


def agent_needs(provider: Any, mode: str) -> AgentNeeds:
    """What the agent asks of a trial (a subprocess agent: its program's folder, its
    model endpoint); else nothing."""
    needs = getattr(getattr(provider, "provider", provider), "trial_needs", None)
    if not callable(needs):
        return (), ()
    mounts, endpoints = cast("AgentNeeds", needs(mode))
    return tuple(mounts), tuple(endpoints)


async def start_trial(
    trials: Trials,
    scenario: Scenario,
    settings: SandboxSettings,
    name: str,
    needs: AgentNeeds = ((), ()),
) -> TrialRun:
    """Start the environment of one attempt and make Harbor's log folders;
    ``IterationError`` (set-up) when it cannot."""
    agent, verifier = phase_networks(settings, scenario, tuple(needs[1]))
    caps = trials.capabilities or EnvironmentCapabilities()
    agent, verifier = (
        _enforceable(trials, caps, settings.sandbox, agent),
        _enforceable(trials, caps, settings.sandbox, verifier),
    )
    networks = {
        "full",
        agent,
        verifier,
    }  # set-up runs with the network, as the image's build did
    switch = len(networks) > 1
    if switch and not caps.network_switch:
        trials.warn_once(
            f"execution.sandbox: {settings.sandbox} cannot change a trial's "
            "network between phases: every phase runs with 'full'"
        )
        agent = verifier = "full"
        switch = False
    if (
        scenario.environment is not None
        and not caps.resource_limits
        and (
            getattr(scenario.environment, "cpus", None)
            or getattr(scenario.environment, "memory_mb", None)
        )
    ):
        trials.warn_once(
            f"execution.sandbox: {settings.sandbox} does not enforce "
            f"[environment].cpus / memory_mb (scenario {scenario.id!r})"
        )
    if getattr(scenario.environment, "storage_mb", None):
        # docker's --storage-opt size= works only on some storage drivers: not asked, said
        trials.warn_once(
            f"execution.sandbox: {settings.sandbox} does not enforce "
            f"[environment].storage_mb (scenario {scenario.id!r})"
        )
    spec = trial_spec(settings, scenario, name, "full", switch, needs)
    try:
        start = trials.kind.start
        if getattr(scenario.environment, "compose", None):
            from .trial_compose import compose_starter  # a compose task: its project

            start = compose_starter(settings, scenario)
        environment = await call(start, spec)
    except SandboxError as exc:
        raise IterationError(
            f"setup failed: environment of {scenario.id!r}: {exc}", code="setup_error"
        ) from None
    run = TrialRun(trials, scenario, environment, "", agent, verifier, switch)
    try:
        run.workdir = await _workdir(run, spec)
    except BaseException:
        await stop_trial(run)
        raise
    return run


def _enforceable(
    trials: Trials, caps: EnvironmentCapabilities, kind: str, network: str
) -> str:
    """``network`` when the kind can enforce it; else ``full``, said once (the kind
    declares what it can)."""
    if network in caps.networks or network == "full":
        return network
    trials.warn_once(
        f"execution.sandbox: {kind} cannot enforce the network {network!r} (it "
        f"declares {', '.join(caps.networks)}): 'full' is used"
    )
    return "full"


async def _workdir(run: TrialRun, spec: TrialSpec) -> str:
    """The trial's working folder: the spec's, the environment's own (a folder trial),
    else the image's (``pwd``)."""
    if spec.workdir:
        return spec.workdir
    own = getattr(run.environment, "workdir", None)
    if isinstance(own, str) and own:
        return own
    done = await call(run.environment.exec, ["pwd"], timeout_s=QUICK_S)
    return (
        done.output.strip().splitlines()[-1] if done.ok and done.output.strip() else "/"
    )


async def copy_workdir(run: TrialRun, sessions: Path) -> Path | None:
    """The trial's working folder copied to a fresh folder under ``sessions`` (None when
    it cannot be copied: said in the log)."""
    folder = sessions / f"{safe_name(run.scenario.id)}-{uuid.uuid4().hex[:8]}"
    try:
        await call(run.environment.get, run.workdir, folder)
    except SandboxError as exc:
        log.warning(
            "the working folder of %s's trial was not kept: %s", run.scenario.id, exc
        )
        shutil.rmtree(folder, ignore_errors=True)
        return None
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def stop_trial(run: TrialRun) -> None:
    """Stop the environment, shielded: a timeout or Ctrl-C around it must not leave it running."""
    with trio.CancelScope(shield=True):
        try:
            await call(run.environment.stop)
        except PLUGIN_ERRORS as exc:  # a plugin's failed stop must not lose the row
            log.warning("stopping the trial of %s failed: %s", run.scenario.id, exc)


async def setup(run: TrialRun) -> None:
    """The scenario's set-up commands, in the working folder, with the network."""
    for command in run.scenario.setup:
        done = await run.exec(
            ["bash", "-c", command], timeout_s=run.scenario.timeout_ms / 1000
        )
        if not done.ok:
            how = done.error or (
                "timed out"
                if done.timed_out
                else f"exited {done.exit_code}: {done.output.strip()[-300:]}"
            )
            raise IterationError(
                f"setup failed: setup command {command!r} {how}", code="setup_error"
            )


async def agent_user(run: TrialRun, settings: SandboxSettings) -> str | None:
    """Whom the agent runs as: the task's ``[agent].user``; else, when the profiler and
    the image's user are root,
    ``execution.agent_user`` in a docker / podman trial (the working folder made its
    own, inside it); else the image's user (None)."""
    named = getattr(run.scenario, "agent_user", None)
    if named:
        return str(named)
    if (
        os.getuid() != 0
        or settings.agent_user in ("root", "0")
        or not settings.container
    ):
        # the image's user, as Harbor does: a rootless runtime's root is the profiler's
        # own user, and a folder
        # trial's commands run as the profiler (a chown there would change the host's files)
        return None
    # One command: whom the image runs as and, when that is root, the working folder given
    # to the agent's user. chown, not chmod: the files' modes (what git records) stay as
    # the task left them.
    done = await run.exec(
        ["sh", "-c", _GIVE_WORKDIR, "sh", settings.agent_user, run.workdir.rstrip("/")],
        timeout_s=QUICK_S,
    )
    lines = done.output.strip().splitlines()
    if lines[:1] != ["0"]:
        return None  # the image names its own user: it stands
    if not done.ok:  # root, and the folder could not be given: never the agent as root
        why = done.error or (
            "timed out" if done.timed_out else "\n".join(lines[1:])[-300:]
        )
        raise IterationError(
            f"setup failed: cannot give {run.workdir} to "
            f"execution.agent_user {settings.agent_user!r}: {why}",
            code="setup_error",
        )
    return settings.agent_user


def timed_out_result() -> PromptResult:
    """The agent's result when its time ran out before it answered: nothing said, the
    timeout recorded."""
    return PromptResult(
        text="",
        metrics=PromptMetrics(
            tokens=TokenBreakdown(), timing=TimingBreakdown(wall_ms=0.0)
        ),
        completion_reason="timeout",
    )


async def agent_phase(run: TrialRun, session: Callable[[], Awaitable[None]]) -> bool:
    """Run the agent (``session``) on the agent's network, its model relayed for the
    phase when the environment
    can (docker, podman); True when its time ran out (the verifier still runs)."""
    await run.network(run.agent_network)
    relay = getattr(run.environment, "open_relay", None)
    try:
        if relay is not None:
            try:
                await call(relay, run.agent_network)
            except SandboxError as exc:
                raise IterationError(
                    f"setup failed: the agent's model relay: {exc}", code="setup_error"
                ) from None
        await session()
    except IterationError as exc:
        if exc.code != "timeout":
            raise
        return True
    finally:
        if relay is not None:
            with trio.CancelScope(shield=True):
                await call(run.environment.close_relay)
    return False


async def report(run: TrialRun) -> WorkspaceReport:
    """What the agent left, listed inside the trial (``git`` there, else ``find``):
    nothing runs on the host."""
    script = (
        "if [ -d .git ] && command -v git >/dev/null 2>&1; then git add --all "
        "--intent-to-add >/dev/null 2>&1; "
        "echo GIT; git -c core.fsmonitor=false diff --stat; else echo FILES; "
        'find . -path ./.git -prune -o -type f -print | sort | head -n "$1"; fi'
    )
    done = await run.exec(["sh", "-c", script, "sh", str(MAX_FILES)], timeout_s=QUICK_S)
    lines = done.output.splitlines() if done.ok else []
    if not lines:
        return WorkspaceReport()
    if lines[0] == "GIT":
        return WorkspaceReport(diff_stat="\n".join(lines[1:]).strip() or None)
    return WorkspaceReport(
        files=tuple(line.removeprefix("./") for line in lines[1:] if line.strip())
    )


async def verify(
    run: TrialRun, keep: Path, scenario: Scenario | None = None
) -> Verification:
    """Every verifier of ``scenario`` (a step's view; default the trial's), on the
    verifier's network; its logs folder
    copied to ``keep``; ``VerifierError`` when one cannot run."""
    await run.network(run.verifier_network)
    verifiers = (scenario or run.scenario).verify
    checks: list[CheckpointResult] = []
    rewards: list[float] = []
    scores: dict[str, float] = {}
    for spec in verifiers:
        result = await _one_verifier(run, spec)
        folder = keep / spec.name if len(verifiers) > 1 else keep
        logs = spec.logs_dir or "/logs/verifier"
        await _keep_logs(run, logs, folder)
        reward, named = read_reward(folder, spec.name)
        if reward is not None:
            rewards.append(reward)
        scores.update(named)
        checks.append(checkpoint(spec, result, reward, logs="/logs/verifier"))
    reward = sum(rewards) / len(rewards) if rewards else None
    return Verification(checks=tuple(checks), reward=reward, scores=scores)


async def _one_verifier(run: TrialRun, spec: VerifierSpec) -> Any:
    """Upload the verifier's folders (replacing what is there), make its scripts
    executable, run it by its shebang."""
    ready = bool(spec.mounts)  # the scripts executable and the logs folder made
    for target, source in spec.mounts.items():
        logs = (spec.logs_dir,) if spec.logs_dir else ()
        try:
            with _layered(spec.base_mounts.get(target), source) as folder:
                ready &= await upload(run.environment, folder, target, logs)
        except (SandboxError, OSError) as exc:
            raise VerifierError(f"verifier {spec.name!r}: {exc}") from None
    if not ready:
        # one command: the uploaded scripts made executable (an environment without
        # ``put_scripts``), a logs folder the trial did not start with made
        script = (
            'logs=$1; shift; for t in "$@"; do find "$t" -type f -name "*.sh" -exec '
            "chmod +x {} +; done; "
        )
        script += '[ -z "$logs" ] || [ -d "$logs" ] || '
        script += '{ mkdir -p "$logs" && chmod 777 "$logs"; }'
        await run.exec(
            ["sh", "-c", script, "sh", spec.logs_dir or "", *spec.mounts],
            timeout_s=QUICK_S,
            user="0",
        )
    for destination, source in spec.files.items():
        try:
            await call(
                run.environment.put,
                Path(source),
                f"{run.workdir.rstrip('/')}/{destination}",
            )
        except SandboxError as exc:
            raise VerifierError(f"verifier {spec.name!r}: {exc}") from None
    try:
        own = task_env(spec.env, spec.env_templates, f"verifier {spec.name!r}: env")
    except ProfilerError as exc:
        raise VerifierError(str(exc)) from None
    env = {
        **own,
        "PROFILER_VERIFIER_DIR": spec.logs_dir or "/logs/verifier",
        "PROFILER_WORKSPACE": run.workdir,
    }
    user = getattr(spec, "user", None)
    result = await run.exec(
        _argv(spec), timeout_s=spec.timeout_ms / 1000, user=user, env=env
    )
    if result.error:
        raise VerifierError(f"verifier {spec.name!r} could not start: {result.error}")
    if result.timed_out:
        raise VerifierError(
            f"verifier {spec.name!r} timed out after {spec.timeout_ms / 1000:g} s"
        )
    return result


async def upload(
    environment: Any, local: Path, remote: str, folders: tuple[str, ...] = ()
) -> bool:
    """Copy a task's folder (``tests/``) in; True when its ``*.sh`` scripts arrived
    executable and ``folders`` were made where missing, by the same call (the
    environment's optional ``put_scripts``: docker, podman)."""
    put_scripts = getattr(environment, "put_scripts", None)
    if callable(put_scripts):
        await call(put_scripts, local, remote, folders)
        return True
    await call(environment.put, local, remote)
    return False


@contextlib.contextmanager
def _layered(base: str | None, top: str) -> Iterator[Path]:
    """``top``, or a temporary folder with ``base`` and then ``top`` copied over it (the
    task's own files, never the agent's)."""
    if base is None:
        yield Path(top)
        return
    with tempfile.TemporaryDirectory(prefix="profiler-tests-") as scratch:
        merged = Path(scratch) / "tests"
        shutil.copytree(base, merged, symlinks=True)
        shutil.copytree(top, merged, symlinks=True, dirs_exist_ok=True)
        yield merged


def _argv(spec: VerifierSpec) -> list[str]:
    """``bash /tests/test.sh`` of an uploaded script becomes the script itself, started
    by its shebang (as Harbor runs it)."""
    words = shlex.split(spec.command) if spec.command.count("\n") == 0 else []
    if (
        len(words) == 2
        and words[0] in ("bash", "sh")
        and any(words[1].startswith(t.rstrip("/") + "/") for t in spec.mounts)
    ):
        return [words[1]]
    return ["bash", "-c", spec.command]


async def _keep_logs(run: TrialRun, logs: str, folder: Path) -> None:
    """Copy the verifier's logs folder out (links as links): the reward and every file
    beside it stay with the row."""
    if folder.exists():
        shutil.rmtree(
            folder, ignore_errors=True
        )  # a retried attempt: the last one is kept
    try:
        await call(run.environment.get, logs, folder)
    except SandboxError as exc:
        raise VerifierError(f"cannot copy {logs} out of the trial: {exc}") from None
    folder.mkdir(parents=True, exist_ok=True)


__all__ = [
    "LOG_DIRS",
    "TrialRun",
    "Trials",
    "agent_needs",
    "agent_phase",
    "agent_user",
    "call",
    "copy_workdir",
    "phase_networks",
    "report",
    "setup",
    "start_trial",
    "stop_trial",
    "timed_out_result",
    "trial_spec",
    "upload",
    "verify",
]
