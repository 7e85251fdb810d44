"""Contract checks for the components used outside a session: importers, scenario
formats, judge providers.

Like the runner-driven checks (:mod:`profiler_core.testing.contract`), each
``check_*`` builds the component from its factory and options as the registry
would, checks it against its Protocol, calls it on the caller's samples and on
bad input of its own making, and raises :class:`ContractError` naming the
component and the broken rule.
"""

from __future__ import annotations

import copy
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import trio

from ..errors import ProfilerError
from ..model import (
    JudgeRequest,
    JudgeResponse,
    PromptResult,
    RecordedSession,
    Scenario,
    TokenBreakdown,
)
from ..plugins.contracts import CONTRACTS, ImporterDefaults, optional_method
from ..util.asyncs import await_me_maybe
from .contract import ContractError, _build, check_trace

__all__ = ["check_importer", "check_judge_provider", "check_scenario_format"]

#: What a judge is asked when the caller gives no requests.
DEFAULT_JUDGE_REQUEST = JudgeRequest(
    system_prompt="You grade an agent's answer. Reply with JSON.",
    user_prompt='The agent answered "done". Reply {"verdicts": [{"id": "c1", "passed": '
    'true, "reason": "ok"}]}',
)


# -- importers -----------------------------------------------------------------------


def check_importer(
    factory: Callable[..., Any], /, *, samples: Sequence[str | Path], **options: Any
) -> list[RecordedSession]:
    """Load each sample file and assert the importer's contract; return every session loaded.

    Asserted: ``suffixes``, when declared, are file name endings (``".jsonl"``);
    ``load`` returns a non-empty list of ``RecordedSession`` whose result is a
    ``PromptResult``, whose trace is well formed (:func:`check_trace`) and whose
    ``format`` is the importer's id; loading twice gives the same sessions.
    Error paths, in files of the importer's first suffix: a foreign JSON
    document, binary garbage and a missing file raise a ``ProfilerError`` whose
    message names the file; a sample cut in half either does the same or loads
    well-formed sessions — never another exception.
    """
    if not samples:
        raise ContractError("check_importer needs at least one sample file")
    importer = _build(factory, "importers", options)
    label = f"importer {importer.id!r}"
    suffixes = _suffixes(importer, label)
    loaded: list[RecordedSession] = []
    for sample in samples:
        sessions = _load(importer, Path(sample), label)
        if not sessions:
            raise ContractError(f"{label}: {sample} loaded no session")
        if _load(importer, Path(sample), label) != sessions:
            raise ContractError(
                f"{label}: loading {sample} twice gave different sessions"
            )
        loaded.extend(sessions)
    with tempfile.TemporaryDirectory(prefix="profiler-contract-") as folder:
        _check_bad_files(importer, label, Path(folder), suffixes[0], Path(samples[0]))
    return loaded


def _suffixes(importer: Any, label: str) -> tuple[str, ...]:
    suffixes = getattr(importer, "suffixes", ImporterDefaults.suffixes)
    if isinstance(suffixes, str) or not isinstance(suffixes, Sequence) or not suffixes:
        raise ContractError(
            f"{label}: suffixes is {suffixes!r}, expected a tuple of file name "
            "endings such as ('.jsonl',)"
        )
    for suffix in suffixes:
        if not isinstance(suffix, str) or not suffix.startswith(".") or "/" in suffix:
            raise ContractError(
                f"{label}: suffix {suffix!r} is not a file name ending such as '.jsonl'"
            )
    return tuple(suffixes)


def _load(importer: Any, path: Path, label: str) -> list[RecordedSession]:
    try:
        sessions = importer.load(path)
    except ProfilerError as exc:
        raise ContractError(f"{label}: the sample {path} was refused: {exc}") from exc
    _check_sessions(sessions, label, importer.id, where=str(path))
    return list(sessions)


def _check_sessions(sessions: Any, label: str, importer_id: str, *, where: str) -> None:
    if not isinstance(sessions, list):
        raise ContractError(
            f"{label}: load({where}) returned {type(sessions).__name__}, "
            "expected a list of RecordedSession"
        )
    for i, session in enumerate(sessions):
        at = f"{label}: load({where})[{i}]"
        if not isinstance(session, RecordedSession):
            raise ContractError(
                f"{at} is {type(session).__name__}, expected RecordedSession"
            )
        if not isinstance(session.result, PromptResult):
            raise ContractError(
                f"{at}.result is {type(session.result).__name__}, expected PromptResult"
            )
        if session.format != importer_id:
            raise ContractError(
                f"{at}.format is {session.format!r}, expected the importer's id {importer_id!r}"
            )
        check_trace(session.trace, where=f"{at}.trace")


def _check_bad_files(
    importer: Any, label: str, folder: Path, suffix: str, sample: Path
) -> None:
    foreign = folder / f"foreign{suffix}"
    foreign.write_text(
        '{"kind": "not a session", "items": [1, 2, 3]}\n', encoding="utf-8"
    )
    garbage = folder / f"garbage{suffix}"
    garbage.write_bytes(bytes(range(256)) * 4)
    missing = folder / f"missing{suffix}"
    for path in (foreign, garbage, missing):
        _expect_refusal(importer, label, path, sessions_allowed=False)
    data = sample.read_bytes()
    truncated = folder / f"truncated{suffix}"
    truncated.write_bytes(data[: len(data) // 2])
    _expect_refusal(importer, label, truncated, sessions_allowed=True)


def _expect_refusal(
    importer: Any, label: str, path: Path, *, sessions_allowed: bool
) -> None:
    what = path.stem
    try:
        sessions = importer.load(path)
    except ProfilerError as exc:
        if str(path) not in str(exc) and path.name not in str(exc):
            raise ContractError(
                f"{label}: a {what} file was refused without naming it: {exc}"
            ) from exc
        return
    except Exception as exc:
        raise ContractError(
            f"{label}: a {what} file raised {type(exc).__name__} ({exc}), "
            "expected a ProfilerError naming it"
        ) from exc
    if not sessions_allowed:
        raise ContractError(
            f"{label}: a {what} file was loaded ({len(sessions)} sessions), "
            "expected a ProfilerError naming it"
        )
    _check_sessions(sessions, label, importer.id, where=str(path))


# -- scenario formats ---------------------------------------------------------------------


def check_scenario_format(
    factory: Callable[..., Any],
    /,
    *,
    samples: Sequence[Mapping[str, Any]],
    **options: Any,
) -> list[Scenario]:
    """Parse each sample (one scenario file's data) and assert the format's contract;
    return the scenarios.

    Asserted: ``parse`` returns a ``Scenario`` with a non-empty id and a prompt,
    leaves its input unchanged, and gives the same scenario twice. Error paths:
    an empty mapping, and each sample with one key's value swapped for a value
    of a kind no field takes, either parse or raise a ``ProfilerError`` naming
    the source — never another exception; the empty mapping must be refused.
    """
    if not samples:
        raise ContractError("check_scenario_format needs at least one sample")
    fmt = _build(factory, "scenario_formats", options)
    label = f"scenario format {fmt.id!r}"
    scenarios = []
    for i, sample in enumerate(samples):
        source = f"sample-{i}.json"
        data = copy.deepcopy(dict(sample))
        scenario = _parse(fmt, data, source, label)
        if scenario is None:
            raise ContractError(f"{label}: {source} was refused")
        if data != sample:
            raise ContractError(f"{label}: parse changed its input ({source})")
        if _parse(fmt, copy.deepcopy(dict(sample)), source, label) != scenario:
            raise ContractError(
                f"{label}: parsing {source} twice gave different scenarios"
            )
        scenarios.append(scenario)
        for key in sample:
            _parse(
                fmt,
                {**copy.deepcopy(dict(sample)), key: [[{"unexpected": True}]]},
                f"{source} ({key} broken)",
                label,
            )
    if _parse(fmt, {}, "empty.json", label) is not None:
        raise ContractError(
            f"{label}: an empty mapping was parsed into a scenario, expected a ProfilerError"
        )
    return scenarios


def _parse(fmt: Any, data: dict[str, Any], source: str, label: str) -> Scenario | None:
    try:
        scenario = fmt.parse(data, source)
    except ProfilerError as exc:
        if source.split(" ")[0] not in str(exc):
            raise ContractError(
                f"{label}: refused {source} without naming it: {exc}"
            ) from exc
        return None
    except Exception as exc:
        raise ContractError(
            f"{label}: {source} raised {type(exc).__name__} ({exc}), expected a "
            "ProfilerError naming it"
        ) from exc
    if not isinstance(scenario, Scenario):
        raise ContractError(
            f"{label}: parse returned {type(scenario).__name__}, expected Scenario"
        )
    if not scenario.id or not isinstance(scenario.prompt, str):
        raise ContractError(
            f"{label}: parse of {source} gave a scenario without an id or a prompt"
        )
    return scenario


# -- judge providers ------------------------------------------------------------------


def check_judge_provider(
    factory: Callable[..., Any],
    /,
    *,
    requests: Sequence[JudgeRequest] | None = None,
    **options: Any,
) -> list[JudgeResponse]:
    """Ask the judge each request (between its optional ``init`` and ``shutdown``) and
    assert its contract.

    Asserted: ``judge`` returns a ``JudgeResponse`` with text, a token count and
    cost that are absent or non-negative finite numbers, usage that is absent or
    a ``TokenBreakdown``; ``shutdown`` runs even when a question fails.
    """
    judge = _build(factory, "judge_providers", options)
    label = f"{CONTRACTS['judge_providers'].singular} {judge.id!r}"

    async def ask_each() -> list[JudgeResponse]:
        init, shutdown = (
            optional_method(judge, "init"),
            optional_method(judge, "shutdown"),
        )
        if init is not None:
            await await_me_maybe(init())
        try:
            return [
                _check_response(await await_me_maybe(judge.judge(r)), label)
                for r in requests or [DEFAULT_JUDGE_REQUEST]
            ]
        finally:
            if shutdown is not None:
                await await_me_maybe(shutdown())

    return trio.run(ask_each)


def _check_response(response: Any, label: str) -> JudgeResponse:
    if not isinstance(response, JudgeResponse):
        raise ContractError(
            f"{label}: judge returned {type(response).__name__}, expected JudgeResponse"
        )
    if not isinstance(response.text, str):
        raise ContractError(
            f"{label}: the response's text is {type(response.text).__name__}, expected str"
        )
    for name in ("token_count", "cost_usd"):
        value = getattr(response, name)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise ContractError(
                f"{label}: the response's {name} is {value!r}, expected None or a number >= 0"
            )
    if response.usage is not None and not isinstance(response.usage, TokenBreakdown):
        raise ContractError(
            f"{label}: the response's usage is {type(response.usage).__name__}, "
            "expected TokenBreakdown"
        )
    return response
