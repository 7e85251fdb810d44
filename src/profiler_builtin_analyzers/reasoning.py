"""The ``reasoning`` analyzer: how much the agent thought, whether it planned, where it
was confused."""

from __future__ import annotations

import bisect
import re

from profiler_core import (
    AnalysisResult,
    ListFinding,
    NumberFinding,
    RatioFinding,
    ReasoningEvent,
    Scenario,
    SessionTrace,
    StringFinding,
    ToolCallEvent,
)

from ._common import facts, plural, ratio

#: Phrases that show the agent is unsure or correcting itself (matched case-insensitively).
CONFUSION_KEYWORDS = (
    "confused",
    "confusing",
    "unclear",
    "not sure",
    "unsure",
    "don't understand",
    "do not understand",
    "retry",
    "wrong",
    "mistake",
    "stuck",
    "try again",
    "didn't work",
    "doesn't work",
    "not working",
)
_CONFUSION = re.compile("|".join(re.escape(k) for k in CONFUSION_KEYWORDS))

#: Share of tool calls preceded by reasoning in their turn at or above which planning is proactive.
PROACTIVE_SHARE = 2 / 3
#: ... and at or below which it is reactive; in between it is mixed.
REACTIVE_SHARE = 1 / 3

#: Characters of a reasoning block kept in ``key_decisions`` / ``confusion_signals`` (as
#: the original).
EXCERPT_CHARS = 50


def _excerpt(content: str) -> str:
    """The first ``EXCERPT_CHARS`` characters of ``content`` with its whitespace
    collapsed (``\\s+`` -> one space)."""
    # Only the head can reach the excerpt. A head whose only whitespace is single ASCII spaces
    # (printable text holds no other) after its first character collapses to itself, bar one
    # trailing space; collapsing the whole block would cost one string per word of it.
    head = content[: EXCERPT_CHARS + 1]
    if head.isprintable() and "  " not in head and head[:1] != " ":
        return head.rstrip(" ")[:EXCERPT_CHARS]
    # str.split() collapses whitespace like `\s+` does, ~2.5x faster than the regex.
    return " ".join(content.split())[:EXCERPT_CHARS]


def _is_confused(content: str) -> bool:
    # Typographic apostrophes ("don’t understand") are common in model output.
    return _CONFUSION.search(content.lower().replace("\u2019", "'")) is not None


#: Joins the reasoning blocks for one search: no keyword holds it, so no match spans two blocks.
_SEPARATOR = "\x00"


def _confused(contents: list[str]) -> list[int]:
    """The indices of the blocks that hold a confusion keyword (``_is_confused``), from
    one text of them all."""
    # The regex engine tries every position whose letter starts a keyword (most letters of
    # English): finding each keyword with str.find in the joined, lowered blocks costs less.
    # Lowering is per character (bar a final sigma, which no keyword holds), so a block's
    # part of the joined text reads as the block does; the separator is no letter at all.
    text = _SEPARATOR.join(contents).lower().replace("\u2019", "'")
    bounds = []  # where each separator is
    at = text.find(_SEPARATOR)
    while at >= 0:
        bounds.append(at)
        at = text.find(_SEPARATOR, at + 1)
    if (
        len(bounds) != len(contents) - 1
    ):  # a block holds the separator itself: one search each
        return [
            index for index, content in enumerate(contents) if _is_confused(content)
        ]
    found: set[int] = set()
    for keyword in CONFUSION_KEYWORDS:
        at = text.find(keyword)
        while at >= 0:
            index = bisect.bisect_right(bounds, at)
            found.add(index)
            if index == len(bounds):
                break
            at = text.find(
                keyword, bounds[index] + 1
            )  # the block's other occurrences change nothing
    return sorted(found)


def planning_quality(trace: SessionTrace) -> tuple[str, float]:
    """``proactive`` / ``reactive`` / ``mixed`` and the share of tool calls preceded by
    reasoning in their turn."""
    planned = calls = 0
    for events in facts(trace).turn_groups:
        thought = False
        for event in events:
            kind = type(event)
            if kind is ReasoningEvent:
                thought = True
            elif kind is ToolCallEvent:
                calls += 1
                planned += thought
    if calls == 0:
        return "mixed", 0.0  # nothing was done, so nothing was planned or reacted to
    share = planned / calls
    if share >= PROACTIVE_SHARE:
        return "proactive", share
    if share <= REACTIVE_SHARE:
        return "reactive", share
    return "mixed", share


class ReasoningAnalyzer:
    """Reasoning density, reasoning per tool call, planning quality, key decisions,
    confusion signals."""

    name = "reasoning"

    def analyze(
        self, trace: SessionTrace, scenario: Scenario | None = None, mode: str = ""
    ) -> AnalysisResult:
        """Analyse one trace."""
        tokens = trace.summary.total_tokens
        reasoning_events = [e for e in trace.events if type(e) is ReasoningEvent]
        call_count = len(facts(trace).calls)
        density = ratio(tokens.reasoning, tokens.total)
        per_call = ratio(tokens.reasoning, call_count)
        planning, _share = planning_quality(trace)
        contents = [e.content for e in reasoning_events]
        excerpts = [_excerpt(content) for content in contents]
        decisions = [x for x in excerpts if x]
        confusion = [excerpts[index] for index in _confused(contents)]
        summary = (
            f"Reasoning density {density * 100:.1f}% over "
            f"{plural(len(reasoning_events), 'reasoning event')}, "
            f"{planning} planning, {plural(len(confusion), 'confusion signal')}."
        )
        return AnalysisResult(
            analyzer=self.name,
            findings={
                "reasoning_density": RatioFinding(
                    value=density, label="reasoning tokens / total tokens"
                ),
                "reasoning_per_tool_call": NumberFinding(
                    value=per_call, unit="tokens/tool_call"
                ),
                "planning_quality": StringFinding(value=planning),
                "key_decisions": ListFinding(values=decisions),
                "confusion_signals": ListFinding(values=confusion),
            },
            summary=summary,
        )
