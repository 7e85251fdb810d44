"""A multi-step Harbor task's steps in one trial: each step's files, agent turn and
verifier, then the row's reward.

Every step runs in the same environment, in order (docs/harbor.md): its
``workdir/`` is copied into the working folder and its ``setup.sh`` run there,
the agent gets the step's instruction (the ``oracle`` runs the step's
solution), then the step's verifier runs with ``/tests`` uploaded fresh (the
task's ``tests/`` with the step's own over it). A step that does not reach its
``min_reward`` ends the trial. The row's reward follows
``multi_step_reward_strategy``: ``mean`` of every declared step's reward (a
step that did not run counts 0), or ``final``, the last step's (none when it
did not run); each step's reward is the named sub-reward ``reward_<step>``.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from ..errors import SandboxError
from ..model import CheckpointResult, Scenario, StepSpec
from .outcome import IterationError
from .trial import QUICK_S, TrialRun, call
from .verify import Verification

#: a step's script run in the working folder after its ``workdir/`` arrived (Harbor's name)
STEP_SETUP = "setup.sh"


def step_scenario(scenario: Scenario, step: StepSpec) -> Scenario:
    """What one step is to the agent and its verifier: the step's instruction, timeout,
    verifier and solution."""
    return attrs.evolve(
        scenario,
        prompt=step.prompt,
        timeout_ms=step.timeout_ms or scenario.timeout_ms,
        verify=step.verify,
        solution=step.solution,
        steps=(),
        reward_strategy=None,
    )


async def step_files(run: TrialRun, step: StepSpec) -> None:
    """Copy ``steps/<name>/workdir/`` into the working folder and run its ``setup.sh``
    there (a set-up error when it fails)."""
    if step.workdir_files is None:
        return
    source = Path(step.workdir_files)
    for entry in sorted(source.iterdir()):
        try:
            await call(
                run.environment.put, entry, f"{run.workdir.rstrip('/')}/{entry.name}"
            )
        except SandboxError as exc:
            raise IterationError(
                f"setup failed: step {step.name!r}: {exc}", code="setup_error"
            ) from None
    if not (source / STEP_SETUP).is_file():
        return
    done = await run.exec(
        ["bash", f"./{STEP_SETUP}"],
        timeout_s=max(QUICK_S, run.scenario.timeout_ms / 1000),
    )
    if not done.ok:
        how = done.error or (
            "timed out"
            if done.timed_out
            else f"exited {done.exit_code}: {done.output.strip()[-300:]}"
        )
        raise IterationError(
            f"setup failed: step {step.name!r}: steps/{step.name}/workdir/{STEP_SETUP} {how}",
            code="setup_error",
        )


def reached(step: StepSpec, verification: Verification | None) -> bool:
    """Whether the step reached its ``min_reward`` (every named minimum; ``reward`` is
    the step's reward)."""
    if not step.min_reward:
        return True
    if verification is None:
        return False
    for name, minimum in step.min_reward.items():
        value = (
            verification.reward if name == "reward" else verification.scores.get(name)
        )
        if value is None or value < minimum:
            return False
    return True


def combine(
    scenario: Scenario, results: list[tuple[StepSpec, Verification]]
) -> Verification:
    """The row's verification: every step's checks (``verify:<step>:<name>``), the
    reward by the task's strategy,
    and each step's reward as the named sub-reward ``<step>``."""
    checks: list[CheckpointResult] = []
    by_step: dict[str, float | None] = {}
    for step, verification in results:
        checks += [
            attrs.evolve(c, id=f"verify:{step.name}:{c.id.removeprefix('verify:')}")
            for c in verification.checks
        ]
        by_step[step.name] = verification.reward
    declared = [step.name for step in scenario.steps]
    if scenario.reward_strategy == "final":
        reward = by_step.get(declared[-1])
    else:  # mean, Harbor's default: a step that did not run counts 0
        reward = sum(by_step.get(name) or 0.0 for name in declared) / len(declared)
    scores = {name: value for name, value in by_step.items() if value is not None}
    return Verification(checks=tuple(checks), reward=reward, scores=scores)


__all__ = ["STEP_SETUP", "combine", "reached", "step_files", "step_scenario"]
