"""Verifiers: the scenario's commands that decide, after the agent, whether the task is really done.

Each verifier gets the files the agent never saw copied into the workspace
(``files``), a fresh folder of its own in ``$PROFILER_VERIFIER_DIR`` (Harbor's
``/logs/verifier``) and runs its command in the workspace. Its exit status is
the checkpoint ``verify:<name>`` (passed on 0, its output's end as
``actual``). A reward it writes there — ``reward.txt`` (one number) or
``reward.json`` (a number, or named sub-scores) — becomes the row's
``reward``. A verifier that cannot run (a timeout, a missing program: exit
126/127) is a verifier *error* on the row: never a pass, never the agent's
failure.

In a sandbox, a verifier may also see folders of its task at paths of their
own (``mounts``: Harbor's ``tests/`` at ``/tests``, a fresh copy per run)
and its folder at ``logs_dir`` (``/logs/verifier``); with ``passed_by:
reward`` its reward decides the checkpoint (1 passes; none written is a
verifier error), as in Harbor, where ``test.sh``'s exit status means nothing.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any, Protocol

import attrs

from ..config.harbor_fields import task_env
from ..errors import ConfigError
from ..model import CheckpointResult, Scenario, VerifierSpec
from ..model.record import Record
from ..sandbox import Mount
from ..sandbox.commands import CommandResult
from ..util.safefiles import copy_beneath, read_limited
from .workspace import SetupError, Workspaces

#: Characters of a verifier's output kept as its checkpoint's ``actual``.
ACTUAL_TAIL = 1500
#: The largest reward file read (a verifier's reward is a number or a few named ones).
MAX_REWARD_BYTES = 1 << 20
#: Exit statuses of a shell that could not run the command (not executable, not found).
CANNOT_RUN = (126, 127)


class VerifierError(Exception):
    """A verifier could not run or wrote a reward that is not one: the row's error, not
    a verdict."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Verification(Record):
    """What the verifiers of one session said."""

    checks: tuple[CheckpointResult, ...] = ()
    #: the reward (0-1): the one reward written, or the mean of several; None when none was written
    reward: float | None = None
    #: named sub-scores of ``reward.json`` (``reward_<name>`` on the row)
    scores: dict[str, float] = attrs.Factory(dict)


async def run_verifiers(
    workspaces: Workspaces, scenario: Scenario, folder: Path
) -> Verification:
    """Run every verifier of ``scenario`` in ``folder``; ``VerifierError`` when one cannot run."""
    checks: list[CheckpointResult] = []
    rewards: list[float] = []
    scores: dict[str, float] = {}
    try:
        task = await workspaces.task_sandbox(scenario) if scenario.verify else None
    except SetupError as exc:
        raise VerifierError(str(exc)) from None
    for spec in scenario.verify:
        scratch = Path(tempfile.mkdtemp(prefix="verifier-", dir=workspaces.root))
        logs = scratch / "logs"
        logs.mkdir()
        try:
            _copy_in(spec, folder)
            try:
                own = task_env(
                    spec.env, spec.env_templates, f"verifier {spec.name!r}: env"
                )
            except ConfigError as exc:
                raise VerifierError(str(exc)) from None
            env = {
                **own,
                "PROFILER_VERIFIER_DIR": str(logs),
                "PROFILER_WORKSPACE": str(folder),
            }
            where = workspaces.where(
                spec.network,
                _mounts(spec, logs, scratch),
                settings=task.settings if task else None,
            )
            inside = [*spec.mounts, *([spec.logs_dir] if spec.logs_dir else [])]
            if inside and not where.confined:
                # /tests, /logs/verifier cannot exist on the host: never write there.
                raise VerifierError(
                    f"verifier {spec.name!r} needs a sandbox (it uses {', '.join(inside)})"
                )
            result = await workspaces.run(
                spec.command,
                folder,
                timeout_s=spec.timeout_ms / 1000,
                env=env,
                where=where,
            )
            _refuse_unrunnable(spec, result)
            reward, named = read_reward(logs, spec.name)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if reward is not None:
            rewards.append(reward)
        scores.update(named)
        checks.append(checkpoint(spec, result, reward))
    reward = sum(rewards) / len(rewards) if rewards else None
    return Verification(checks=tuple(checks), reward=reward, scores=scores)


def _mounts(spec: VerifierSpec, logs: Path, scratch: Path) -> tuple[Mount, ...]:
    """The verifier's folder (at its host path and ``logs_dir``), and a fresh copy of
    each of its ``mounts``."""
    mounts = [Mount(source=logs, writable=True)]
    if spec.logs_dir:
        mounts.append(Mount(source=logs, target=spec.logs_dir, writable=True))
    for index, (target, source) in enumerate(spec.mounts.items()):
        # A copy per run, writable (as Harbor uploads its tests): a verifier writing
        # there changes no task file.
        copy = scratch / f"mount-{index}"
        try:
            if Path(source).is_dir():
                shutil.copytree(source, copy, symlinks=True)
            else:
                shutil.copy2(source, copy)
        except OSError as exc:
            raise VerifierError(
                f"verifier {spec.name!r}: cannot copy {source!r} for {target}: "
                f"{exc.strerror or exc}"
            ) from None
        mounts.append(Mount(source=copy, target=target, writable=True))
    return tuple(mounts)


class _Ran(Protocol):
    """What a verifier's command left: its output's end and whether it exited 0."""

    @property
    def output(self) -> str: ...

    @property
    def ok(self) -> bool: ...


def checkpoint(
    spec: VerifierSpec,
    result: _Ran,
    reward: float | None,
    *,
    logs: str = "$PROFILER_VERIFIER_DIR",
) -> CheckpointResult:
    """``verify:<name>``: passed on exit status 0, or (``passed_by: reward``) on a
    reward of 1, whatever the status; ``logs`` names where a missing reward was looked
    for (a trial's ``/logs/verifier``)."""
    actual = result.output.strip()[-ACTUAL_TAIL:]
    if spec.passed_by == "reward":
        if reward is None:
            raise VerifierError(
                f"verifier {spec.name!r} wrote no reward (reward.txt or "
                f"reward.json in {spec.logs_dir or logs}){_how_it_ended(result)}"
            )
        return CheckpointResult(
            id=f"verify:{spec.name}",
            description=spec.command,
            passed=reward >= 1,
            actual=f"reward {reward:g}\n{actual[-(ACTUAL_TAIL - 40) :]}",
            expected="reward 1",
        )
    return CheckpointResult(
        id=f"verify:{spec.name}",
        description=spec.command,
        passed=result.ok,
        actual=actual,
        expected="exit status 0",
    )


def _how_it_ended(result: _Ran) -> str:
    """What a verifier that wrote no reward said last: why, when it failed to start or
    stopped early."""
    lines = [line.strip() for line in result.output.splitlines() if line.strip()]
    status = "" if result.ok else "; it exited with an error"
    return f"{status}; its output ended {lines[-1][-200:]!r}" if lines else status


def _copy_in(spec: VerifierSpec, folder: Path) -> None:
    """The verifier's hidden files, copied into the workspace now (never before the
    agent ran). Each replaces
    what the agent left at its destination (an agent's ``tests/conftest.py`` is gone);
    no link the agent made
    is followed, and a link or file where a folder should be is the verifier's error."""
    for destination, source in spec.files.items():
        try:
            # Checked without resolving: a link the agent made there must not turn into
            # an error that ends the run.
            copy_beneath(source, folder, destination)
        except OSError as exc:
            raise VerifierError(
                f"verifier {spec.name!r}: cannot copy {source!r} to "
                f"{destination!r}: {exc.strerror or exc}"
            ) from None


def _refuse_unrunnable(spec: VerifierSpec, result: CommandResult) -> None:
    if result.error:
        raise VerifierError(f"verifier {spec.name!r} could not start: {result.error}")
    if result.timed_out:
        raise VerifierError(
            f"verifier {spec.name!r} timed out after {spec.timeout_ms / 1000:g} s"
        )
    if result.exit_code in CANNOT_RUN:
        tail = result.output.strip().splitlines()[-1:] or [""]
        raise VerifierError(
            f"verifier {spec.name!r} could not run its command (exit "
            f"{result.exit_code}): {tail[0][:300]}"
        )


def read_reward(logs: Path, name: str) -> tuple[float | None, dict[str, float]]:
    """The reward a verifier wrote in ``logs`` and its named numbers, read as Harbor
    reads them: ``reward.json``
    first (a number, or an object of named numbers), else ``reward.txt`` (one number).
    Each file is read only
    when it is a regular file of at most ``MAX_REWARD_BYTES`` (a link is refused, never
    followed)."""
    for file_name in ("reward.json", "reward.txt"):
        try:
            raw = read_limited(logs / file_name, MAX_REWARD_BYTES)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise VerifierError(
                f"verifier {name!r}: {file_name}: cannot read it ({exc.strerror or exc})"
            ) from None
        text = raw.decode("utf-8", errors="replace")
        if file_name == "reward.txt":
            return _unit(_number(text.strip(), name, file_name), name, file_name), {}
        return _from_json(text, name)
    return None, {}


def _from_json(text: str, name: str) -> tuple[float | None, dict[str, float]]:
    """A reward.json's reward (0 to 1): the number it is, or its ``reward`` entry, or
    without one the mean of its
    entries when all lie from 0 to 1 (else none); its other entries, any finite numbers,
    are the named numbers."""
    try:
        data: Any = json.loads(text)
    except ValueError as exc:
        raise VerifierError(
            f"verifier {name!r}: reward.json: not JSON ({exc})"
        ) from None
    if _is_number(data):
        return _unit(float(data), name, "reward.json"), {}
    if isinstance(data, dict) and data and all(_is_number(v) for v in data.values()):
        named = {
            str(k): _finite(float(v), name, f"reward.json: {k}")
            for k, v in data.items()
        }
        if "reward" in named:
            total: float | None = _unit(
                named.pop("reward"), name, "reward.json: reward"
            )
        # Harbor takes any numbers: they are the row's reward only when they can be one
        # (0 to 1)
        else:
            mean = sum(named.values()) / len(named)
            total = mean if all(0 <= v <= 1 for v in named.values()) else None
        return total, named
    raise VerifierError(
        f"verifier {name!r}: reward.json: expected a number or an object of named numbers"
    )


def _is_number(value: Any) -> bool:
    return isinstance(
        value, (int, float)
    )  # true/false count as 1/0, as Harbor's parsing takes them


def _number(raw: str, name: str, where: str) -> float:
    try:
        return _finite(float(raw), name, where)
    except ValueError:
        raise VerifierError(
            f"verifier {name!r}: {where}: expected a number, got {raw[:60]!r}"
        ) from None


def _unit(value: float, name: str, where: str) -> float:
    if not 0 <= value <= 1:
        raise VerifierError(
            f"verifier {name!r}: {where}: expected a number from 0 to 1, got {value:g}"
        )
    return value


def _finite(value: float, name: str, where: str) -> float:
    if not math.isfinite(value):
        raise VerifierError(
            f"verifier {name!r}: {where}: expected a finite number, got {value}"
        )
    return value


__all__ = ["Verification", "VerifierError", "read_reward", "run_verifiers"]
