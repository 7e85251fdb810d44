"""Harbor job folders -> recorded sessions, one per trial (``profiler import harbor JOB_DIR...``).

A Harbor job folder holds the job's ``config.json`` (``JobConfig``) and
``result.json`` (``JobResult``), and one folder per trial with its
``result.json`` (``TrialResult``), ``agent/trajectory.json`` (ATIF),
``verifier/reward.txt|reward.json`` and ``verifier/test-stdout.txt``
(docs/importing.md cites Harbor's models). Each finished trial becomes a
:class:`RecordedSession`:

- scenario: ``task_name``; mode: ``agent_info.name`` (or the job's
  ``--as-mode``); model: ``agent_info.model_info.name``;
- the trace, the prompt and per-response usage: the ATIF trajectory;
- tokens and cost: ``agent_result`` (``n_input_tokens`` includes
  ``n_cache_tokens``), else the trajectory's ``final_metrics``, else its steps;
- timing: ``started_at``..``finished_at``, with one segment per phase
  (``environment_setup``, ``agent_setup``, ``agent``, ``verifier``);
- the verifier: ``verifier_result.rewards`` (else the reward files), a check
  ``verify:harbor`` passed at reward 1, and the reward itself;
- ``exception_info``: an error row ``<exception_type>: <message>``.

A trial folder without ``result.json`` (or with one that has no
``finished_at`` and no exception) did not finish: it is left out and named in
a warning, so a killed job imports what finished. Every file is read through
:func:`read_file`, the one place that touches the disk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from ..errors import ValidationError
from ..metrics.pricing import price_tokens
from ..model import (
    CheckpointResult,
    CompletionReason,
    CostBreakdown,
    PromptMetrics,
    RecordedSession,
    RecordedVerification,
    TimingBreakdown,
    TimingSegment,
    TokenBreakdown,
)
from ..model.record import Record
from ..traces.builder import SessionBuilder
from ..traces.readers import json_problem, load_json, parse_time, read_text
from .atif import check_trajectory, feed_steps, final_totals

#: Harbor's phases of a trial (``TrialResult`` fields) -> our timing segment labels.
PHASES = {
    "environment_setup": "environment_setup",
    "agent_setup": "agent_setup",
    "agent_execution": "agent",
    "verifier": "verifier",
}
#: How much of ``verifier/test-stdout.txt`` a check keeps (its end: where test runners
#: print their summary).
STDOUT_TAIL = 2000


@attrs.frozen(kw_only=True, repr=False, eq=False)
class HarborJob(Record):
    """One Harbor job folder, read: its finished trials as sessions and what it told us."""

    path: Path
    sessions: tuple[RecordedSession, ...]
    #: the mode of each session (its agent's name, or the job's ``--as-mode``)
    modes: tuple[str, ...]
    #: the files read (for the run's input hash)
    files: tuple[Path, ...]
    #: one line each: trials that did not finish, what an older Harbor's job lacked
    warnings: tuple[str, ...] = ()


def read_file(path: Path) -> str:
    """The one way this importer reads a file (a ValidationError names a missing or
    unreadable one)."""
    return read_text(path)


def _json(path: Path) -> Any:
    text = read_file(path)
    try:
        return load_json(text, str(path))
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"{path}: not valid JSON ({json_problem(exc, line=True)})"
        ) from None


def is_job(folder: Path) -> bool:
    """Whether ``folder`` looks like a Harbor job: its own result.json or config.json (a
    ``JobConfig``), or trial folders with a result.json."""
    if (folder / "agent").is_dir():
        return False  # a trial's folder
    if (folder / "result.json").is_file():
        return True
    config = folder / "config.json"
    if config.is_file():
        data = _json(config)
        if isinstance(data, Mapping) and "job_name" in data:
            return True  # a job killed before any trial finished
    return any((child / "result.json").is_file() for child in _children(folder))


def _children(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())


def load_job(folder: Path, *, as_mode: str | None = None) -> HarborJob:
    """Read one job folder; a ValidationError (one line naming the file) when it is not
    one or a file is bad."""
    if not folder.is_dir():
        raise ValidationError(f"{folder}: not a folder (expected a Harbor job folder)")
    if not is_job(folder):
        hint = (
            " (it looks like one trial's folder: give the job folder that holds it)"
            if (folder / "agent").is_dir()
            else ""
        )
        raise ValidationError(
            f"{folder}: not a Harbor job folder (expected result.json and "
            f"config.json of a job, and trial folders with result.json){hint}"
        )
    sessions: list[RecordedSession] = []
    modes: list[str] = []
    files: list[Path] = []
    unfinished: list[str] = []
    lacking: dict[str, None] = {}
    for trial in _children(folder):
        result_file = trial / "result.json"
        if not result_file.is_file():
            if (trial / "config.json").is_file() or (trial / "agent").is_dir():
                unfinished.append(trial.name)
            continue
        data = _json(result_file)
        files.append(result_file)
        if not isinstance(data, Mapping) or "trial_name" not in data:
            raise ValidationError(
                f"{result_file}: expected a Harbor TrialResult (task_name, "
                f"trial_name, agent_info, ...), got {_keys(data)}"
            )
        if data.get("finished_at") is None and data.get("exception_info") is None:
            unfinished.append(trial.name)
            continue
        session, trajectory = _trial(trial, data, lacking)
        if trajectory is not None:
            files.append(trajectory)
        sessions.append(session)
        modes.append(as_mode or _agent(data, result_file)["name"])
    warnings = _job_warnings(folder, len(sessions), unfinished, lacking)
    return HarborJob(
        path=folder,
        sessions=tuple(sessions),
        modes=tuple(modes),
        files=tuple(files),
        warnings=tuple(warnings),
    )


def load_jobs(
    folders: list[Path], as_modes: list[str]
) -> tuple[list[HarborJob], list[str]]:
    """Every job folder read (``as_modes``: none, or one mode per folder); one problem
    line per folder that failed."""
    jobs: list[HarborJob] = []
    problems: list[str] = []
    for index, folder in enumerate(folders):
        try:
            jobs.append(load_job(folder, as_mode=as_modes[index] if as_modes else None))
        except ValidationError as exc:
            problems.append(str(exc))
    return jobs, problems


def _job_warnings(
    folder: Path, finished: int, unfinished: list[str], lacking: dict[str, None]
) -> list[str]:
    warnings = []
    total = _total_trials(folder)
    if unfinished or (total is not None and total > finished + len(unfinished)):
        missing = (total - finished) if total is not None else len(unfinished)
        named = (
            f": {', '.join(unfinished[:10])}{', ...' if len(unfinished) > 10 else ''}"
            if unfinished
            else ""
        )
        warnings.append(
            f"{folder}: the job did not finish: {missing} trial(s) have no "
            f"result (imported the {finished} that finished){named}"
        )
    if lacking:
        warnings.append(
            f"{folder}: imported without what newer Harbor jobs hold: {'; '.join(lacking)}"
        )
    return warnings


def _total_trials(folder: Path) -> int | None:
    """``n_total_trials`` of the job's result.json, when it has one."""
    path = folder / "result.json"
    if not path.is_file():
        return None
    data = _json(path)
    total = data.get("n_total_trials") if isinstance(data, Mapping) else None
    return total if isinstance(total, int) and not isinstance(total, bool) else None


def _agent(data: Mapping[str, Any], where: Path) -> Mapping[str, Any]:
    agent = data.get("agent_info")
    if (
        not isinstance(agent, Mapping)
        or not isinstance(agent.get("name"), str)
        or not agent["name"]
    ):
        raise ValidationError(f"{where}: $.agent_info.name: expected the agent's name")
    return agent


def _trial(
    trial: Path, data: Mapping[str, Any], lacking: dict[str, None]
) -> tuple[RecordedSession, Path | None]:
    """One finished trial as a session (and the trajectory file it read, if any)."""
    where = trial / "result.json"
    agent = _agent(data, where)
    task = _task_name(data, where)
    model_info = agent.get("model_info")
    # none for the oracle
    model = model_info.get("name") if isinstance(model_info, Mapping) else None
    builder = SessionBuilder(
        price=price_tokens, file=where, source=str(where), format="harbor"
    )
    trajectory_file = trial / "agent" / "trajectory.json"
    trajectory = _trajectory(trajectory_file, lacking)
    totals, final_cost = None, None
    if trajectory is not None:
        totals, final_cost = _feed_trajectory(builder, trajectory, model)
    started = _time(data, "started_at", where)
    finished = _time(data, "finished_at", where)
    error, reason = _exception(data, where)
    tokens, cost = _usage(data, where, lacking)
    # The trial's own cost wins over the trajectory's final metrics.
    own_cost = cost if cost is not None else final_cost
    if own_cost is not None:
        builder.provider_cost = own_cost
    session = builder.build(
        session_id=str(data.get("id") or data["trial_name"]),
        model=model,
        started_at=started,
        completed_at=finished,
        total_usage=tokens or totals,
        completion_reason=reason,
        error=error,
        scenario_hint=task,
    )
    metrics = _timed_metrics(session, data, where, lacking, own_cost)
    if tokens is None and totals is None and not builder.usage:
        lacking[
            "token counts (neither agent_result nor a trajectory has them; tokens are 0)"
        ] = None
    session = attrs.evolve(
        session,
        result=attrs.evolve(session.result, metrics=metrics),
        verification=_verification(trial, data, where, lacking),
        cost_source="provider" if own_cost is not None else session.cost_source,
        # said once for the job (above), not once per trial
        warnings=tuple(
            w for w in session.warnings if "no token usage recorded" not in w
        ),
    )
    return session, trajectory_file if trajectory is not None else None


def _task_name(data: Mapping[str, Any], where: Path) -> str:
    task = data.get("task_name")
    if not isinstance(task, str) or not task:
        raise ValidationError(f"{where}: $.task_name: expected the task's name")
    return task


def _feed_trajectory(
    builder: SessionBuilder, trajectory: Mapping[str, Any], model: str | None
) -> tuple[TokenBreakdown | None, float | None]:
    """Feed the trajectory's steps to the builder; its final token totals and cost."""
    default_model = trajectory["agent"].get("model_name") or model
    feed_steps(builder, trajectory["steps"], default_model)
    return final_totals(trajectory.get("final_metrics"))


def _timed_metrics(
    session: RecordedSession,
    data: Mapping[str, Any],
    where: Path,
    lacking: dict[str, None],
    own_cost: float | None,
) -> PromptMetrics:
    """The session's metrics with Harbor's phase timings, and its own cost when it has one."""
    timing = TimingBreakdown(
        wall_ms=session.result.metrics.timing.wall_ms,
        segments=_segments(data, where, lacking),
    )
    metrics = attrs.evolve(session.result.metrics, timing=timing)
    if own_cost is None:
        return metrics
    cost = CostBreakdown(total_usd=round(float(own_cost), 10))
    return attrs.evolve(metrics, cost=cost)


def _trajectory(path: Path, lacking: dict[str, None]) -> Mapping[str, Any] | None:
    if not path.is_file():
        lacking["agent/trajectory.json (no session trace)"] = None
        return None
    data = _json(path)
    problems = check_trajectory(data)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ValidationError(
            f"{path}: not a valid ATIF trajectory: {problems[0]}{more}"
        )
    return data


def _time(data: Mapping[str, Any], key: str, where: Path) -> datetime | None:
    value = data.get(key)
    return parse_time(value, f"{where}: $.{key}") if value is not None else None


def _exception(
    data: Mapping[str, Any], where: Path
) -> tuple[str | None, CompletionReason]:
    """The trial's exception as the row's error (``Type: message``), and its completion reason."""
    info = data.get("exception_info")
    if info is None:
        return None, "stop"
    if not isinstance(info, Mapping) or not isinstance(info.get("exception_type"), str):
        raise ValidationError(
            f"{where}: $.exception_info.exception_type: expected the exception's type"
        )
    kind, message = (
        info["exception_type"],
        str(info.get("exception_message") or "").strip(),
    )
    return (f"{kind}: {message}" if message else kind), (
        "timeout" if "Timeout" in kind else "error"
    )


def _usage(
    data: Mapping[str, Any], where: Path, lacking: dict[str, None]
) -> tuple[Any, float | None]:
    """The trial's tokens and cost: ``agent_result``, or (a multi-step trial) the sum
    over ``step_results``, as Harbor sums them."""
    steps = data.get("step_results")
    if data.get("agent_result") is not None or not isinstance(steps, list) or not steps:
        return _agent_usage(data.get("agent_result"), where)
    lacking[
        "the trajectories of multi-step trials (steps/<name>/agent/trajectory.json are not read)"
    ] = None
    tokens, cost = None, None
    for index, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise ValidationError(
                f"{where}: $.step_results[{index}]: expected an object"
            )
        step_tokens, step_cost = _agent_usage(step.get("agent_result"), where)
        if step_tokens is not None:
            tokens = step_tokens if tokens is None else tokens + step_tokens
        if step_cost is not None:
            cost = (cost or 0.0) + step_cost
    return tokens, cost


def _agent_usage(context: Any, where: Path) -> tuple[Any, float | None]:
    """Tokens and cost of ``agent_result`` (Harbor's ``AgentContext``); None where it
    records none."""
    if not isinstance(context, Mapping):
        return None, None
    counts = {
        key: _count(context.get(key), f"{where}: $.agent_result.{key}")
        for key in ("n_input_tokens", "n_cache_tokens", "n_output_tokens")
    }
    cost = context.get("cost_usd")
    if cost is not None and (not _number(cost) or cost < 0):
        raise ValidationError(
            f"{where}: $.agent_result.cost_usd: expected a number >= 0, got {cost!r}"
        )
    if all(v is None for v in counts.values()):
        return None, cost
    cached = counts["n_cache_tokens"] or 0
    if cached > (counts["n_input_tokens"] or 0):
        raise ValidationError(
            f"{where}: $.agent_result.n_cache_tokens: {cached} is more than "
            "n_input_tokens, which include them"
        )
    tokens = TokenBreakdown(
        input=(counts["n_input_tokens"] or 0) - cached,
        cache_read=cached,
        output=counts["n_output_tokens"] or 0,
    )
    return tokens, cost


def _count(value: Any, where: str) -> int | None:
    """A token count of ``agent_result``: an integer >= 0, or None when not recorded."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(f"{where}: expected a count >= 0, got {value!r}")
    return value


def _segments(
    data: Mapping[str, Any], where: Path, lacking: dict[str, None]
) -> tuple[TimingSegment, ...]:
    segments = []
    for field, label in PHASES.items():
        phase = data.get(field)
        if (
            not isinstance(phase, Mapping)
            or phase.get("started_at") is None
            or phase.get("finished_at") is None
        ):
            continue
        start = _time(phase, "started_at", where)
        end = _time(phase, "finished_at", where)
        if start is not None and end is not None:
            segments.append(
                TimingSegment(
                    label=label,
                    start_ms=start.timestamp() * 1000,
                    end_ms=max(start, end).timestamp() * 1000,
                )
            )
    if not segments and data.get("exception_info") is None:
        lacking[
            "phase timings (environment_setup, agent_setup, agent_execution, verifier)"
        ] = None
    return tuple(segments)


def _verification(
    trial: Path, data: Mapping[str, Any], where: Path, lacking: dict[str, None]
) -> RecordedVerification | None:
    """The verifier's rewards (``verifier_result``, else
    ``verifier/reward.json|reward.txt``) as a verification."""
    rewards = _rewards(trial, _verifier_result(data), lacking)
    if rewards is None:
        return None
    if not isinstance(rewards, Mapping) or not all(
        _number(v) for v in rewards.values()
    ):
        raise ValidationError(
            f"{where}: $.verifier_result.rewards: expected an object of named "
            f"numbers, got {rewards!r}"
        )
    values = {str(k): float(v) for k, v in rewards.items()}
    if not values:
        return None
    if "reward" in values:
        reward = values["reward"]
    else:
        reward = sum(values.values()) / len(values)
    return RecordedVerification(
        checks=(_verifier_check(trial, reward),),
        reward=reward if 0 <= reward <= 1 else None,
        scores={k: v for k, v in values.items() if k != "reward"},
    )


def _verifier_result(data: Mapping[str, Any]) -> Any:
    """The trial's ``verifier_result``; in a multi-step trial, its last step's has the say."""
    verifier = data.get("verifier_result")
    steps = data.get("step_results")
    if verifier is not None or not isinstance(steps, list):
        return verifier
    for step in reversed(steps):
        if isinstance(step, Mapping) and step.get("verifier_result"):
            return step["verifier_result"]
    return None


def _rewards(trial: Path, verifier: Any, lacking: dict[str, None]) -> Any:
    """The rewards as recorded (not yet checked), or None when the trial has none."""
    if isinstance(verifier, Mapping):
        rewards = verifier.get("rewards")
        if rewards is not None:
            return rewards
        if verifier.get("reward") is not None:
            # Before named rewards, Harbor's VerifierResult had one ``reward``.
            lacking["verifier_result.rewards (read its single reward)"] = None
            return {"reward": verifier["reward"]}
    rewards = _reward_files(trial / "verifier")
    if rewards is not None:
        lacking["verifier_result (read the reward from verifier/)"] = None
    return rewards


def _verifier_check(trial: Path, reward: float) -> CheckpointResult:
    """The verifier as one check: passed at reward 1, with the tail of the tests' output."""
    stdout = trial / "verifier" / "test-stdout.txt"
    actual = f"reward {reward:g}"
    if stdout.is_file():
        actual += "\n" + read_file(stdout)[-STDOUT_TAIL:]
    return CheckpointResult(
        id="verify:harbor",
        description="Harbor's verifier (tests/test.sh)",
        passed=reward >= 1,
        actual=actual,
        expected="reward 1",
    )


def _reward_files(folder: Path) -> dict[str, float] | None:
    """Rewards from the verifier's own files (reward.json first, as Harbor reads them)."""
    json_file, text_file = folder / "reward.json", folder / "reward.txt"
    if json_file.is_file():
        data = _json(json_file)
        if _number(data):
            return {"reward": float(data)}
        if isinstance(data, Mapping) and all(_number(v) for v in data.values()):
            return {str(k): float(v) for k, v in data.items()}
        raise ValidationError(
            f"{json_file}: expected a number or an object of named numbers"
        )
    if text_file.is_file():
        raw = read_file(text_file).strip()
        try:
            return {"reward": float(raw)}
        except ValueError:
            raise ValidationError(
                f"{text_file}: expected a number, got {raw[:60]!r}"
            ) from None
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _keys(value: Any) -> str:
    return (
        f"keys {sorted(value)[:8]}"
        if isinstance(value, Mapping)
        else type(value).__name__
    )


__all__ = ["HarborJob", "is_job", "load_job", "load_jobs", "read_file"]
