"""A separate verifier (Harbor's ``environment_mode = "separate"``): its own
environment, started after the agent.

The verifier's image is built from its environment (``tests/Dockerfile``, or
the ``docker_image`` of ``[verifier.environment]`` / ``[environment]``, as
config.harbor reads them). What it gets of the agent's environment is what the
task declares: its ``artifacts`` and the agent's ``/logs/artifacts``, copied
out of the agent's environment as plain files (links stay links, nothing of the
agent's runs on the host) and uploaded to ``/logs/artifacts`` in the
verifier's. Then the verifier runs there as a shared one would (``/tests``
uploaded fresh, its logs kept, its reward read), and its environment is stopped.
A multi-step task's step may have a separate verifier of its own: it runs after
that step's agent turn, handed what the agent's environment holds by then.
"""

from __future__ import annotations

import hashlib
import posixpath
import tempfile
from pathlib import Path

import attrs

from ..errors import SandboxError
from ..model import CheckpointResult, Scenario, VerifierSpec
from .outcome import IterationError
from .state import RunState
from .trial import TrialRun, call, start_trial, stop_trial, verify
from .verify import Verification, VerifierError
from .workspace import SetupError

#: where the verifier's environment gets what the agent's environment handed over
#: (Harbor's artifacts folder)
ARTIFACTS = "/logs/artifacts"


def verifier_scenario(scenario: Scenario, spec: VerifierSpec) -> Scenario:
    """The verifier's environment as a scenario of its own (its image cached apart from the task's).

    Its id names the environment's definition: each step's separate verifier may have its own
    (``steps/<name>/tests/Dockerfile``), and task images are cached by scenario id.
    """
    assert spec.separate is not None
    where = f"{spec.separate.dockerfile}\0{spec.separate.image}"
    return attrs.evolve(
        scenario,
        id=f"{scenario.id}-verifier-{hashlib.sha256(where.encode()).hexdigest()[:8]}",
        environment=spec.separate,
        workspace=None,
        setup=(),
        steps=(),
        verify=(attrs.evolve(spec, separate=None),),
        solution=None,
        agent_policy=spec.policy,
    )


async def verify_apart(
    state: RunState, run: TrialRun, scenario: Scenario, keep: Path, name: str
) -> Verification:
    """Each verifier of ``scenario`` in its own environment (a shared one where the
    agent ran); ``VerifierError`` when one cannot run."""
    checks: list[CheckpointResult] = []
    rewards: list[float] = []
    scores: dict[str, float] = {}
    for spec in scenario.verify:
        folder = keep / spec.name if len(scenario.verify) > 1 else keep
        if spec.separate is None:
            found = await verify(run, folder, attrs.evolve(scenario, verify=(spec,)))
        else:
            found = await _apart(
                state,
                run,
                verifier_scenario(scenario, spec),
                folder,
                f"{name}-verifier",
            )
        checks += found.checks
        if found.reward is not None:
            rewards.append(found.reward)
        scores.update(found.scores)
    return Verification(
        checks=tuple(checks),
        reward=sum(rewards) / len(rewards) if rewards else None,
        scores=scores,
    )


async def _apart(
    state: RunState, agent: TrialRun, view: Scenario, keep: Path, name: str
) -> Verification:
    try:
        task = await state.workspaces.task_sandbox(view)
    except SetupError as exc:
        raise VerifierError(f"the verifier's environment: {exc}") from None
    assert task.settings is not None
    with tempfile.TemporaryDirectory(prefix="profiler-artifacts-") as scratch:
        handed = await _artifacts(agent, Path(scratch))
        try:
            run = await start_trial(agent.trials, view, task.settings, name)
        except IterationError as exc:
            raise VerifierError(f"the verifier's environment: {exc}") from None
        try:
            for entry in sorted(handed.iterdir()):
                await call(run.environment.put, entry, f"{ARTIFACTS}/{entry.name}")
            return await verify(run, keep, view)
        except SandboxError as exc:
            raise VerifierError(f"the verifier's environment: {exc}") from None
        finally:
            await stop_trial(run)


async def _artifacts(agent: TrialRun, scratch: Path) -> Path:
    """The task's declared artifacts and the agent's ``/logs/artifacts``, copied out of
    the agent's environment (a missing one skipped)."""
    handed = scratch / "artifacts"
    handed.mkdir()
    for path in (*agent.scenario.artifacts, ARTIFACTS):
        source = path if path.startswith("/") else posixpath.join(agent.workdir, path)
        target = (
            handed
            if source.rstrip("/") == ARTIFACTS
            else handed / posixpath.basename(source.rstrip("/"))
        )
        if target.exists() and target != handed:
            continue  # two artifacts of one name: the first declared is kept
        try:
            if target == handed:
                await call(agent.environment.get, source, scratch / "logs")
                if (scratch / "logs").is_dir():
                    for entry in (scratch / "logs").iterdir():
                        if not (handed / entry.name).exists():
                            entry.rename(handed / entry.name)
            else:
                await call(agent.environment.get, source, target)
        except SandboxError:
            # an artifact the agent did not make is not handed over (Harbor's verifier
            # judges its absence)
            continue
    return handed


__all__ = ["ARTIFACTS", "verifier_scenario", "verify_apart"]
