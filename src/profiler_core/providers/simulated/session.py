"""The simulation: one session's turns, tool calls, tokens and times."""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime
from typing import Any

import attrs

from ...model import (
    CompletionReason,
    CreateSessionParams,
    ReasoningEvent,
    TextOutputEvent,
    ToolCallEvent,
    ToolCallRecord,
)
from ...util.timestamps import parse_iso
from .costs import model_profile
from .draws import lognormal, poisson, stable_seed
from .ops import (
    Op,
    bash_op,
    blocker,
    edit_op,
    error_text,
    phase_pool,
    pick,
    recovery,
    run_tests_op,
    wrong_path,
)
from .options import DEFAULT_TOOL_CATEGORIES, SimulatedOptions
from .prompt import read_task
from .texts import (
    EDIT_THOUGHTS,
    ERROR_NAMES,
    EXPLORE_THOUGHTS,
    INVESTIGATE_THOUGHTS,
    PROGRESS,
    RECOVER_THOUGHTS,
    VERIFY_THOUGHTS,
)
from .trace import Assembled, SimTurn, assemble

_EDIT_TOOLS = ("edit", "write_file")


@attrs.define
class _Arc:
    """The session's course: its length and ending, and what it has done so far."""

    n_turns: int
    finished: bool
    reason: CompletionReason
    edited: bool = False
    seen: set[Op] = attrs.Factory(set)


@attrs.define
class _Clock:
    """The conversation so far: time spent and tokens cached or waiting to be sent."""

    #: tokens already in the (cached) conversation
    context: int
    #: tokens appended since the last model request
    pending: int
    elapsed_ms: float = 0.0


@attrs.define
class _Calls:
    """One turn's events and tool records as they accumulate, with their sums."""

    reasoning: int
    events: list[Any] = attrs.Factory(list)
    records: list[ToolCallRecord] = attrs.Factory(list)
    args_tokens: int = 0
    tool_ms: float = 0.0
    result_tokens: float = 0.0

    def add(
        self,
        op: Op,
        event: ToolCallEvent,
        record: ToolCallRecord,
        ms: float,
        tokens: float,
    ) -> None:
        """Count one call in."""
        self.events.append(event)
        self.records.append(record)
        self.args_tokens += 18 + (60 if op.tool in _EDIT_TOOLS else 0)
        self.tool_ms += ms
        self.result_tokens += tokens


_PHASES = (
    (0.34, "explore", EXPLORE_THOUGHTS),
    (0.6, "investigate", INVESTIGATE_THOUGHTS),
)


def _phase(index: int, phase: float) -> tuple[str, tuple[str, ...]]:
    """The kind of work at this point of the session, and its thoughts."""
    if index == 0:
        return "explore", EXPLORE_THOUGHTS
    for upto, name, thoughts in _PHASES:
        if phase < upto:
            return name, thoughts
    return "edit", EDIT_THOUGHTS


class Session:
    """Generates one session: turns of events, tool records, tokens and times."""

    def __init__(
        self,
        opts: SimulatedOptions,
        params: CreateSessionParams,
        attempt: int,
        prompt: str,
        timeout_ms: int,
    ):
        self.opts = opts
        self.params = params
        self.rng = random.Random(
            stable_seed(
                opts.seed,
                params.model,
                params.mode,
                params.scenario_id,
                params.iteration,
                attempt,
            )
        )
        self.task = read_task(prompt, params.scenario_id, opts.seed)
        #: the fields progress notes and thoughts are formatted with
        self.fmt = {
            "summary": self.task.summary,
            "project": self.task.project,
            "src": self.task.sources[0],
            "test": self.task.test_cmd,
        }
        self.profile = model_profile(params.model)
        self.tps = opts.tokens_per_second or self.profile.tokens_per_second
        #: every duration is multiplied by it (``time_factor``), so the wall time is too
        self.slow = opts.time_factor
        self.categories = {**DEFAULT_TOOL_CATEGORIES, **opts.tool_categories}
        self.timeout_ms = timeout_ms
        self.prompt_tokens = max(8, len(prompt) // 4) + 12
        self.system_tokens = (
            8000 + len(params.system_instructions) // 4
        )  # system prompt + tool definitions
        self.errors: list[tuple[str, Op, str]] = []  # (kind, op, text)
        self.commands_run: list[str] = []
        self.files_changed: list[str] = []
        self.last_test: tuple[str, str] | None = None  # (command, summary line)

    # -- one tool call --------------------------------------------------------

    def _call(
        self,
        op: Op,
        *,
        force: str | None = None,
        may_fail: bool = True,
        exclude: str | None = None,
    ) -> tuple[ToolCallEvent, ToolCallRecord, float, float, str | None]:
        """Run one simulated call: its event, record, duration, result tokens and error
        kind (or None)."""
        kind = force
        if kind is None and may_fail:
            kind = self._drawn_error(op, exclude)
        if op.tool == "bash" and op.label not in self.commands_run:
            self.commands_run.append(op.label)
        if kind is None:
            return self._succeeded(op)
        return self._failed(op, kind, forced=force is not None)

    def _drawn_error(self, op: Op, exclude: str | None) -> str | None:
        """The error this call hits, drawn at the tool error rate (None: it succeeds)."""
        rng = self.rng
        if not op.errors or rng.random() >= self.opts.tool_error_rate:
            return None
        kind = rng.choice(op.errors)
        # A recovery step does not hit the error it works around.
        return None if kind == exclude else kind

    def _succeeded(
        self, op: Op
    ) -> tuple[ToolCallEvent, ToolCallRecord, float, float, str | None]:
        rng = self.rng
        ms = round(lognormal(rng, op.duration_ms, 0.35) * self.slow, 1)
        tokens = lognormal(rng, op.result_tokens, 0.45)
        output = op.output
        if op.kind == "test":
            output = output.replace("{secs}", f"{ms / 1000:.2f}")
            self.last_test = (op.label, output.rsplit("\n", 1)[-1])
        if op.tool in _EDIT_TOOLS and op.label not in self.files_changed:
            self.files_changed.append(op.label)
        event = ToolCallEvent(
            name=op.tool, input=op.input, output=output, duration_ms=ms, success=True
        )
        category = self.categories.get(op.tool, "other")
        record = ToolCallRecord(
            name=op.tool, category=category, success=True, duration_ms=ms
        )
        return event, record, ms, tokens, None

    def _failed(
        self, op: Op, kind: str, *, forced: bool
    ) -> tuple[ToolCallEvent, ToolCallRecord, float, float, str | None]:
        rng = self.rng
        secs = rng.choice((20, 30)) if op.kind == "test" else rng.choice((10, 15, 30))
        if kind == "timeout":
            ms = float(secs * 1000)
        else:
            ms = lognormal(rng, min(op.duration_ms, 300), 0.4)
        ms = round(ms * self.slow, 1)
        if kind == "not_found" and not forced and op.tool in ("read_file", "edit"):
            # The agent guessed a path that does not exist; recovery finds the real one.
            op = attrs.evolve(op, input={**op.input, "path": wrong_path(op.label)})
        text = error_text(kind, op, rng, secs)
        self.errors.append((kind, op, text))
        event = ToolCallEvent(
            name=op.tool,
            input=op.input,
            output=None,
            duration_ms=ms,
            success=False,
            error=text,
        )
        category = self.categories.get(op.tool, "other")
        record = ToolCallRecord(
            name=op.tool, category=category, success=False, duration_ms=ms, error=text
        )
        return event, record, ms, 30 + 10 * rng.random(), kind

    # -- the whole session ------------------------------------------------------

    def plan(self) -> tuple[int, bool, CompletionReason]:
        """Number of turns, whether the task gets finished, and the completion reason."""
        rng, opts = self.rng, self.opts
        finished = rng.random() < opts.success_rate
        mean = max(1.0, opts.mean_turns * self.profile.turn_factor)
        turns = 1 + poisson(rng, mean - 1)
        if not finished:
            turns += poisson(rng, 2.0)  # struggling sessions run longer
        if turns > opts.max_turns:
            return opts.max_turns, False, "tool_limit"
        return turns, finished, "stop"

    def run(self) -> Assembled:
        """Generate every turn, then assemble the prompt result's and the trace's parts."""
        n_turns, finished, reason = self.plan()
        start = parse_iso(self.opts.start_time) or datetime(2025, 1, 1, tzinfo=UTC)
        arc = _Arc(n_turns=n_turns, finished=finished, reason=reason)
        clock = _Clock(context=self.system_tokens, pending=self.prompt_tokens)
        turns = [self._turn(index, arc, clock) for index in range(n_turns)]
        return assemble(turns, start, reason, self.timeout_ms)

    def _turn(self, index: int, arc: _Arc, clock: _Clock) -> SimTurn:
        """One turn: plan its calls, think, run the calls, then answer or note progress."""
        rng, verbosity = self.rng, self.opts.verbosity
        last = index == arc.n_turns - 1
        if last:
            planned, thought = self._closing_plan(arc), VERIFY_THOUGHTS
        else:
            planned, thought = self._working_plan(index, arc)
        factor = 160 * self.profile.reasoning_factor * verbosity
        reasoning = max(8, round(lognormal(rng, factor, 0.5)))
        text, text_tokens = None, 0
        if not last and rng.random() < 0.45:
            text = rng.choice(PROGRESS).format(**self.fmt)
            text_tokens = max(4, round(len(text) / 4 * verbosity))
        content = thought[0] if index == 0 else rng.choice(thought)
        calls = _Calls(reasoning=reasoning)
        calls.events.append(self._thinking(content.format(**self.fmt), reasoning))
        self._run_calls(planned, calls, arc, last)
        final_text = None
        if last:
            final_text = self._final_text(arc.finished, arc.reason, arc.n_turns)
            text_tokens = max(10, round(len(final_text) / 4 * verbosity * 1.5))
            calls.events.append(
                TextOutputEvent(content=final_text, token_count=text_tokens)
            )
        elif text is not None:
            calls.events.append(TextOutputEvent(content=text, token_count=text_tokens))
        return self._timed(calls, clock, text_tokens, final_text, final_text or text)

    def _closing_plan(self, arc: _Arc) -> list[tuple[Op, str | None]]:
        """The last turn's calls: the missing edit, the tests, maybe a diff, or a blocker."""
        rng, task = self.rng, self.task
        planned: list[tuple[Op, str | None]] = []
        if arc.finished and not arc.edited:
            planned.append((edit_op(rng.choice(task.sources)), None))
        if arc.reason != "tool_limit":
            failing = 0 if arc.finished else 1
            planned.append((run_tests_op(task, failing=failing), None))
        if arc.finished and rng.random() < 0.3:
            diff = f" {task.sources[0]} | 2 +-"
            git = bash_op("git diff --stat", diff, 60, 40, ("not_found",), "git")
            planned.append((git, None))
        if not arc.finished and arc.reason != "tool_limit":
            # An unfinished session ends on a failure the agent does not get past.
            planned.append(blocker(task, rng))
        return planned

    def _working_plan(
        self, index: int, arc: _Arc
    ) -> tuple[list[tuple[Op, str | None]], tuple[str, ...]]:
        """A turn before the last: a few calls of its phase, and the thoughts to pick from."""
        rng = self.rng
        k = min(5, 1 + poisson(rng, self.opts.tools_per_turn - 1))
        # Not the last turn, so there are at least two.
        name, thought = _phase(index, index / (arc.n_turns - 1))
        pool = phase_pool(self.task, name, rng.choice(self.task.sources))
        return [(pick(rng, pool, arc.seen), None) for _ in range(k)], thought

    def _run_calls(
        self, planned: list[tuple[Op, str | None]], calls: _Calls, arc: _Arc, last: bool
    ) -> None:
        """Run the planned calls; a failure the agent works around queues its recovery."""
        closing = last and arc.finished
        # Queue entries: (op, forced error kind, the error kind it recovers from).
        queue: list[tuple[Op, str | None, str | None]] = [
            (op, force, None) for op, force in planned
        ]
        while queue and len(calls.records) < 12:
            op, force, recovering = queue.pop(0)
            # The closing turn of a finished session recovers cleanly (its answer
            # says the tests pass).
            may_fail = not (closing and recovering)
            event, record, ms, tokens, kind = self._call(
                op, force=force, may_fail=may_fail, exclude=recovering
            )
            calls.add(op, event, record, ms, tokens)
            if op.tool in _EDIT_TOOLS and record.success:
                arc.edited = True
            if (
                kind is None
                or force is not None
                or not self._works_around(last, closing)
            ):
                continue
            thinking = max(8, round(lognormal(self.rng, 40 * self.opts.verbosity, 0.4)))
            calls.reasoning += thinking
            calls.events.append(self._thinking(RECOVER_THOUGHTS[kind], thinking))
            failing = 0 if arc.finished and (arc.edited or last) else 1
            steps = recovery(op, kind, self.task, self.rng, failing)
            queue[0:0] = [(step, None, kind) for step in steps]

    def _works_around(self, last: bool, closing: bool) -> bool:
        """Whether the agent retries or works around a failure it just hit."""
        # Mid-session failures are usually retried or worked around; the closing turn of a
        # finished session always is, and an unfinished one stops trying.
        if closing:
            return True
        return not last and self.rng.random() < 0.9

    def _thinking(self, content: str, tokens: int) -> ReasoningEvent:
        """A reasoning event, timed at the model's speed."""
        ms = round(tokens / self.tps * 1000 * self.slow, 1)
        return ReasoningEvent(content=content, duration_ms=ms, token_count=tokens)

    def _timed(
        self,
        calls: _Calls,
        clock: _Clock,
        text_tokens: int,
        final_text: str | None,
        last_text: str | None,
    ) -> SimTurn:
        """The turn with its tokens and times; the clock moves on past it."""
        output = text_tokens + calls.args_tokens
        cache_read = clock.context
        cache_write = int(clock.pending * 0.8)
        fresh = clock.pending - cache_write
        # Cached prefixes are processed ~15x faster.
        prefill_ms = clock.context / 150 + clock.pending / 10
        model_ms = (
            lognormal(self.rng, self.profile.first_token_ms, 0.3)
            + prefill_ms
            + (calls.reasoning + output) / self.tps * 1000
        )
        model_ms = round(model_ms * self.slow, 1)
        turn = SimTurn(
            events=calls.events,
            records=calls.records,
            tokens=(fresh, output, calls.reasoning, cache_read, cache_write),
            start=clock.elapsed_ms,
            model_ms=model_ms,
            tool_ms=calls.tool_ms,
            final=final_text,
            last_text=last_text,
        )
        clock.elapsed_ms += model_ms + calls.tool_ms
        clock.context += clock.pending + output
        clock.pending = round(calls.result_tokens) + 4 * len(calls.records)
        return turn

    def _final_text(self, finished: bool, reason: str, n_turns: int) -> str:
        task = self.task
        cmd, tests = self.last_test or (task.test_cmd, "not run")
        changed = ", ".join(self.files_changed[:4]) or "no files"
        if finished:
            text = f"Done: {task.summary}. Changed {changed}; ran `{cmd}` ({tests})."
            status, error = "done", None
        elif reason == "tool_limit":
            text = (
                f"Could not finish: {task.summary}. Stopped after {n_turns} turns (turn "
                f"limit); changed {changed}."
            )
            status, error = "failed", f"turn limit of {n_turns} reached"
        else:
            kind, op, message = (
                self.errors[-1] if self.errors else ("test", None, tests)
            )
            what = (
                (op.label if op.tool == "bash" else f"{op.tool} {op.label}")
                if op is not None
                else cmd
            )
            first_line = message.splitlines()[0]
            name = ERROR_NAMES.get(kind, kind)
            detail = (
                first_line
                if name.casefold() in first_line.casefold()
                else f"{name}: {first_line}"
            )
            text = (
                f"Could not finish: {task.summary}. Gave up after `{what}` failed "
                f"({detail}); last test run: {tests}."
            )
            status, error = "failed", first_line
        if self.opts.output_format == "json" or (
            self.opts.output_format == "auto" and task.wants_json
        ):
            passed, failed = test_counts(tests)
            payload = {
                "status": status,
                "summary": task.summary,
                "filesChanged": list(self.files_changed),
                "commands": list(self.commands_run),
                "tests": {"command": cmd, "passed": passed, "failed": failed},
                "turns": n_turns,
                "error": error,
            }
            text += "\n\n```json\n" + json.dumps(payload, indent=2) + "\n```"
        return text


def test_counts(summary: str) -> tuple[int, int]:
    failed = re.search(r"(\d+) failed", summary)
    passed = re.search(r"(\d+) passed", summary)
    return (
        int(passed.group(1)) if passed else 0,
        int(failed.group(1)) if failed else 0,
    )
