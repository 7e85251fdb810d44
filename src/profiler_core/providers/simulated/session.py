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
        rng = self.rng
        kind = force
        if (
            kind is None
            and may_fail
            and op.errors
            and rng.random() < self.opts.tool_error_rate
        ):
            kind = rng.choice(op.errors)
            if kind == exclude:
                kind = None  # a recovery step does not hit the error it works around
        category = self.categories.get(op.tool, "other")
        if op.tool == "bash" and op.label not in self.commands_run:
            self.commands_run.append(op.label)
        if kind is None:
            ms = round(lognormal(rng, op.duration_ms, 0.35) * self.slow, 1)
            tokens = lognormal(rng, op.result_tokens, 0.45)
            output = op.output
            if op.kind == "test":
                output = output.replace("{secs}", f"{ms / 1000:.2f}")
                self.last_test = (op.label, output.rsplit("\n", 1)[-1])
            if op.tool in ("edit", "write_file") and op.label not in self.files_changed:
                self.files_changed.append(op.label)
            event = ToolCallEvent(
                name=op.tool,
                input=op.input,
                output=output,
                duration_ms=ms,
                success=True,
            )
            return (
                event,
                ToolCallRecord(
                    name=op.tool, category=category, success=True, duration_ms=ms
                ),
                ms,
                tokens,
                None,
            )
        secs = rng.choice((20, 30)) if op.kind == "test" else rng.choice((10, 15, 30))
        ms = round(
            (
                float(secs * 1000)
                if kind == "timeout"
                else lognormal(rng, min(op.duration_ms, 300), 0.4)
            )
            * self.slow,
            1,
        )
        if kind == "not_found" and force is None and op.tool in ("read_file", "edit"):
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
        rng, opts, task = self.rng, self.opts, self.task
        n_turns, finished, reason = self.plan()
        verbosity = opts.verbosity
        start = parse_iso(opts.start_time) or datetime(2025, 1, 1, tzinfo=UTC)
        src = task.sources[0]
        fmt = {
            "summary": task.summary,
            "project": task.project,
            "src": src,
            "test": task.test_cmd,
        }

        turns: list[SimTurn] = []
        elapsed_ms = 0.0
        context = self.system_tokens  # tokens already in the (cached) conversation
        pending = self.prompt_tokens  # tokens appended since the last model request
        edited = False
        seen: set[Op] = set()

        for index in range(n_turns):
            last = index == n_turns - 1
            phase = index / (n_turns - 1) if n_turns > 1 else 1.0
            # Plan this turn's calls: (op, forced error kind).
            planned: list[tuple[Op, str | None]] = []
            if last:
                if finished and not edited:
                    planned.append((edit_op(rng.choice(task.sources)), None))
                if reason != "tool_limit":
                    planned.append(
                        (run_tests_op(task, failing=0 if finished else 1), None)
                    )
                if finished and rng.random() < 0.3:
                    planned.append(
                        (
                            bash_op(
                                "git diff --stat",
                                f" {src} | 2 +-",
                                60,
                                40,
                                ("not_found",),
                                "git",
                            ),
                            None,
                        )
                    )
                if not finished and reason != "tool_limit":
                    # An unfinished session ends on a failure the agent does not get past.
                    planned.append(blocker(task, rng))
                thought = VERIFY_THOUGHTS
            else:
                k = min(5, 1 + poisson(rng, opts.tools_per_turn - 1))
                if index == 0 or phase < 0.34:
                    name, thought = "explore", EXPLORE_THOUGHTS
                elif phase < 0.6:
                    name, thought = "investigate", INVESTIGATE_THOUGHTS
                else:
                    name, thought = "edit", EDIT_THOUGHTS
                pool = phase_pool(task, name, rng.choice(task.sources))
                planned = [(pick(rng, pool, seen), None) for _ in range(k)]

            # The model request of this turn.
            reasoning = max(
                8,
                round(
                    lognormal(rng, 160 * self.profile.reasoning_factor * verbosity, 0.5)
                ),
            )
            text_tokens = 0
            text = None
            if not last and rng.random() < 0.45:
                text = rng.choice(PROGRESS).format(**fmt)
                text_tokens = max(4, round(len(text) / 4 * verbosity))
            events: list[Any] = [
                ReasoningEvent(
                    content=(thought[0] if index == 0 else rng.choice(thought)).format(
                        **fmt
                    ),
                    duration_ms=round(reasoning / self.tps * 1000 * self.slow, 1),
                    token_count=reasoning,
                )
            ]
            args_tokens = 0
            tool_ms = 0.0
            result_tokens = 0.0
            records: list[ToolCallRecord] = []
            # Queue entries: (op, forced error kind, the error kind it recovers from).
            queue: list[tuple[Op, str | None, str | None]] = [
                (op, force, None) for op, force in planned
            ]
            while queue and len(records) < 12:
                op, force, recovering = queue.pop(0)
                # The closing turn of a finished session recovers cleanly (its answer
                # says the tests pass).
                may_fail = not (last and finished and recovering)
                event, record, ms, tokens, kind = self._call(
                    op, force=force, may_fail=may_fail, exclude=recovering
                )
                events.append(event)
                records.append(record)
                args_tokens += 18 + (60 if op.tool in ("edit", "write_file") else 0)
                tool_ms += ms
                result_tokens += tokens
                if op.tool in ("edit", "write_file") and record.success:
                    edited = True
                # Mid-session failures are usually retried or worked around; the closing turn of a
                # finished session always is, and an unfinished one stops trying.
                if (
                    kind is not None
                    and force is None
                    and ((last and finished) or (not last and rng.random() < 0.9))
                ):
                    thinking = max(8, round(lognormal(rng, 40 * verbosity, 0.4)))
                    reasoning += thinking
                    events.append(
                        ReasoningEvent(
                            content=RECOVER_THOUGHTS[kind],
                            duration_ms=round(
                                thinking / self.tps * 1000 * self.slow, 1
                            ),
                            token_count=thinking,
                        )
                    )
                    failing = 0 if finished and (edited or last) else 1
                    queue[0:0] = [
                        (step, None, kind)
                        for step in recovery(op, kind, task, rng, failing)
                    ]

            final_text = None
            if last:
                final_text = self._final_text(finished, reason, n_turns)
                text_tokens = max(10, round(len(final_text) / 4 * verbosity * 1.5))
                events.append(
                    TextOutputEvent(content=final_text, token_count=text_tokens)
                )
            elif text is not None:
                events.append(TextOutputEvent(content=text, token_count=text_tokens))

            output = text_tokens + args_tokens
            cache_read = context
            cache_write = int(pending * 0.8)
            fresh = pending - cache_write
            prefill_ms = (
                context / 150 + pending / 10
            )  # cached prefixes are processed ~15x faster
            model_ms = (
                lognormal(rng, self.profile.first_token_ms, 0.3)
                + prefill_ms
                + (reasoning + output) / self.tps * 1000
            )
            model_ms = round(model_ms * self.slow, 1)
            turns.append(
                SimTurn(
                    events=events,
                    records=records,
                    tokens=(fresh, output, reasoning, cache_read, cache_write),
                    start=elapsed_ms,
                    model_ms=model_ms,
                    tool_ms=tool_ms,
                    final=final_text,
                    last_text=final_text or text,
                )
            )
            elapsed_ms += model_ms + tool_ms
            context += pending + output
            pending = round(result_tokens) + 4 * len(records)

        return assemble(turns, start, reason, self.timeout_ms)

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
