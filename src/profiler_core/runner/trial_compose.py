"""A compose task's trial: its ``docker-compose.yaml`` project (environments/compose.py).

The trial's phases are a container trial's (runner/trial.py): only the start
differs. Compose tasks run under ``execution.sandbox: docker`` or ``podman``;
under another kind the cell is a set-up error saying so in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import SandboxError
from ..model import SandboxSettings, Scenario, TrialSpec

#: the environment kinds compose tasks run under (Compose v2 talks to Docker's API,
#: which podman serves too)
COMPOSE_KINDS = ("docker", "podman")


def compose_starter(
    settings: SandboxSettings, scenario: Scenario
) -> Callable[[TrialSpec], Any]:
    """What starts ``scenario``'s trial: its compose project; ``SandboxError`` elsewhere."""
    env = scenario.environment
    assert env is not None and env.compose is not None
    if settings.sandbox not in COMPOSE_KINDS:
        raise SandboxError(
            "environment/docker-compose.yaml: compose tasks run under "
            f"execution.sandbox: {' or '.join(COMPOSE_KINDS)}, not {settings.sandbox}"
        )
    compose_file = env.compose
    timeout_s = env.build_timeout_ms / 1000

    def start(spec: TrialSpec) -> Any:
        from ..environments.compose import start_compose

        return start_compose(
            spec,
            compose_file,
            pull=settings.pull,
            timeout_s=timeout_s,
            kind=settings.sandbox,
        )

    return start


__all__ = ["COMPOSE_KINDS", "compose_starter"]
