"""The ``simulated`` provider: a seeded model of a tool-using coding agent.

It is a simulator for demos, tests and load tests - no model is called and
nothing is executed. Each session is drawn from a random generator seeded by
``(seed, model, mode, scenario id, iteration, attempt)``, so the same inputs
always give the same session, and it looks like the work of a real agent:
several turns of reasoning, tool calls (``bash`` with real-looking commands,
``read_file``, ``edit``, ``grep``, ``glob``, ``write_file``), failures with
realistic errors followed by retries or alternatives, token usage whose cache
reads grow with the context, wall time from a latency model, cost from the
price table, and a final answer that says what was done and whether the task
was finished ("Done: ..." / "Could not finish: ...").

Options (profile ``provider.options``, changed per mode by
``provider_overrides``; see docs/simulated-provider.md): ``seed``,
``mean_turns``, ``max_turns``, ``tools_per_turn``, ``tool_error_rate``,
``success_rate``, ``verbosity``, ``time_scale``, ``output_format``,
``tool_categories``, ``tokens_per_second``, ``start_time``, ``prices``,
``cost_factor``, ``time_factor``.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import math
import random
import re
import shlex
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

import attrs

from ..errors import ConfigError, ProfilerError
from ..model import (
    CostBreakdown,
    CreateSessionParams,
    ErrorEvent,
    PromptMetrics,
    PromptResult,
    ProviderConfig,
    ReasoningEvent,
    SessionHandle,
    SessionTrace,
    TextOutputEvent,
    TimingBreakdown,
    TimingSegment,
    TokenBreakdown,
    ToolCallEvent,
    ToolCallRecord,
    TraceSummary,
    Turn,
    TurnBoundaryEvent,
)
from ..model.record import Record
from ..util.numbers import is_finite_number, is_int
from ..util.timestamps import iso, parse_iso

__all__ = ["DEFAULT_TOOL_CATEGORIES", "SimulatedOptions", "SimulatedProvider"]

DEFAULT_TIMEOUT_MS = 120_000

#: Tool name -> category (``tool_calls_category_<name>`` metrics); extend with the ``tool_categories`` option.
DEFAULT_TOOL_CATEGORIES: dict[str, str] = {
    "bash": "shell",
    "read_file": "file",
    "edit": "file",
    "write_file": "file",
    "grep": "search",
    "glob": "search",
    "web_fetch": "other",
}

# ---------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------


def _expect(
    description: str, accept: Callable[[Any], bool]
) -> Callable[[Any, attrs.Attribute, Any], None]:
    """An attrs validator: ``accept(value)`` must hold, else ``option 'name': expected <description>, got <value>``."""

    def validate(_inst: Any, attribute: attrs.Attribute, value: Any) -> None:
        if not accept(value):
            raise ValueError(
                f"option {attribute.name!r}: expected {description}, got {value!r}"
            )

    return validate


def _tool_categories(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
    )


_PROBABILITY = "a number between 0 and 1"


def _is_probability(value: Any) -> bool:
    return is_finite_number(value) and 0 <= value <= 1


@attrs.frozen(kw_only=True, repr=False, eq=False)
class SimulatedOptions(Record):
    """The behaviour of the simulated agent (all fields optional)."""

    #: Base seed; sessions are also keyed by model, mode, scenario, iteration and attempt.
    seed: int = attrs.field(default=0, validator=_expect("an integer", is_int))
    #: Average number of turns of a session (unfinished sessions run ~2 turns longer).
    mean_turns: float = attrs.field(
        default=6,
        validator=_expect("a number >= 1", lambda v: is_finite_number(v) and v >= 1),
    )
    #: Hard limit: a longer session stops with completion reason ``tool_limit``.
    max_turns: int = attrs.field(
        default=40, validator=_expect("an integer >= 1", lambda v: is_int(v) and v >= 1)
    )
    #: Average number of planned tool calls per turn (retries after failures come on top).
    tools_per_turn: float = attrs.field(
        default=1.6,
        validator=_expect("a number >= 1", lambda v: is_finite_number(v) and v >= 1),
    )
    #: Probability that a tool call fails (not found, timeout, 401, JSON parse...).
    tool_error_rate: float = attrs.field(
        default=0.1, validator=_expect(_PROBABILITY, _is_probability)
    )
    #: Probability that the agent finishes its task.
    success_rate: float = attrs.field(
        default=0.8, validator=_expect(_PROBABILITY, _is_probability)
    )
    #: Scales the agent's text and reasoning tokens (and so its latency and cost).
    verbosity: float = attrs.field(
        default=1.0,
        validator=_expect("a number > 0", lambda v: is_finite_number(v) and v > 0),
    )
    #: 0: no real sleeping; otherwise each prompt really sleeps simulated seconds x time_scale.
    time_scale: float = attrs.field(
        default=0.0,
        validator=_expect(
            "a number >= 0 (0: no real sleeping)",
            lambda v: is_finite_number(v) and v >= 0,
        ),
    )
    #: ``auto``: a JSON answer (in a ```json block) when the prompt mentions JSON; or always ``text`` / ``json``.
    output_format: str = attrs.field(
        default="auto",
        validator=_expect(
            "one of auto, text, json", lambda v: v in ("auto", "text", "json")
        ),
    )
    #: Extra or changed tool name -> category entries.
    tool_categories: dict[str, str] = attrs.field(
        factory=dict,
        validator=_expect("a mapping of tool name -> category", _tool_categories),
    )
    #: Output speed; None: from the model name (``sim-small`` fast ... ``sim-large`` slow).
    tokens_per_second: float | None = attrs.field(
        default=None,
        validator=_expect(
            "a number > 0 (or null: from the model)",
            lambda v: v is None or (is_finite_number(v) and v > 0),
        ),
    )
    #: Simulated clock of every session (timestamps are deterministic, not the real time).
    start_time: str = attrs.field(
        default="2025-01-01T00:00:00Z",
        validator=_expect(
            "an ISO 8601 timestamp",
            lambda v: isinstance(v, str) and parse_iso(v) is not None,
        ),
    )
    #: Multiplies every session's cost: a known effect for a mode (0.8: 20% cheaper, all else equal).
    cost_factor: float = attrs.field(
        default=1.0,
        validator=_expect("a number > 0", lambda v: is_finite_number(v) and v > 0),
    )
    #: Multiplies every duration (model and tool time, so the wall time): a known effect (0.8: 20% faster).
    time_factor: float = attrs.field(
        default=1.0,
        validator=_expect("a number > 0", lambda v: is_finite_number(v) and v > 0),
    )
    #: Price overrides passed to ``profiler_core.metrics.pricing.price_tokens`` (same format as the profile's ``prices``).
    prices: dict[str, Any] | None = attrs.field(
        default=None,
        validator=_expect(
            "a mapping of model -> prices (or null)",
            lambda v: v is None or isinstance(v, dict),
        ),
    )
    #: Files the agent writes into its session's workspace (relative path -> content), as its "edits".
    writes: dict[str, str] = attrs.field(
        factory=dict,
        validator=_expect("a mapping of relative path -> text", lambda v: _writes(v)),
    )


def _writes(value: Any) -> bool:
    """Relative paths inside the workspace mapped to text."""
    return isinstance(value, dict) and all(
        isinstance(k, str)
        and isinstance(v, str)
        and k
        and not Path(k).is_absolute()
        and ".." not in Path(k).parts
        for k, v in value.items()
    )


_OPTION_NAMES = tuple(a.name for a in attrs.fields(SimulatedOptions))


def _build_options(layers: list[dict[str, Any]], where: str) -> SimulatedOptions:
    merged: dict[str, Any] = {}
    for layer in layers:
        unknown = sorted(set(layer) - set(_OPTION_NAMES))
        if unknown:
            raise ConfigError(
                f"{where}: unknown option(s) {', '.join(unknown)} (valid: {', '.join(sorted(_OPTION_NAMES))})"
            )
        merged.update(layer)
    try:
        options = SimulatedOptions(**merged)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if options.prices:
        # Checked now, not at the first prompt (pricing is imported lazily: it may load genai-prices).
        from ..metrics.pricing import parse_price_overrides

        parse_price_overrides(options.prices, where=f"{where}: option 'prices'")
    return options


# ---------------------------------------------------------------------------
# Randomness
# ---------------------------------------------------------------------------


def _stable_seed(*parts: Any) -> int:
    """A seed from a stable hash (never Python's ``hash()``, which changes per process)."""
    digest = hashlib.blake2b(
        "\x1f".join(map(repr, parts)).encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big")


def _poisson(rng: random.Random, lam: float) -> int:
    """Poisson draw (Knuth for small means, a rounded normal for large ones)."""
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, round(rng.gauss(lam, math.sqrt(lam))))
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def _lognormal(rng: random.Random, median: float, sigma: float) -> float:
    return median * math.exp(rng.gauss(0.0, sigma))


# ---------------------------------------------------------------------------
# Models and tasks
# ---------------------------------------------------------------------------


@attrs.frozen(repr=False, eq=False)
class _ModelProfile(Record):
    tokens_per_second: float
    first_token_ms: float
    reasoning_factor: float
    turn_factor: float


def _model_profile(model: str) -> _ModelProfile:
    """Speed and style by model size, guessed from its name."""
    name = model.casefold()
    if any(w in name for w in ("small", "mini", "nano", "haiku", "flash", "lite")):
        return _ModelProfile(160.0, 400.0, 0.6, 1.15)
    if any(w in name for w in ("large", "opus", "-pro", "xl", "max")):
        return _ModelProfile(60.0, 1000.0, 1.5, 0.9)
    return _ModelProfile(90.0, 700.0, 1.0, 1.0)


_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|ts|tsx|js|jsx|mjs|go|rs|java|rb|md|json|ya?ml|toml|cfg|txt|css|html|sh))\b"
)
_BACKTICK = re.compile(r"`([^`\n]{2,100})`")
_PR = re.compile(r"\b(?:PR|pull request)\s*#?(\d{1,6})\b", re.IGNORECASE)
_ISSUE = re.compile(r"\bissue\s*#?(\d{1,6})\b", re.IGNORECASE)
_HASH_NUMBER = re.compile(r"(?<![\w&])#(\d{1,6})\b")
_URL = re.compile(r"https?://[^\s`'\")>]+")
_JSON_WORD = re.compile(r"\bjson\b", re.IGNORECASE)
_COMMAND_WORDS = {
    "npm", "npx", "pnpm", "yarn", "node", "pytest", "python", "python3", "pip", "uv", "git", "gh", "rg", "grep",
    "make", "cargo", "go", "tox", "ruff", "mypy", "eslint", "tsc", "docker", "ls", "cat", "jq", "curl",
}  # fmt: skip


@attrs.frozen(repr=False, eq=False)
class _Task(Record):
    """What the prompt is about, as far as the simulated agent is concerned (stable per scenario)."""

    summary: str
    stack: str
    sources: tuple[str, ...]
    tests: tuple[str, ...]
    test_cmd: str
    commands: tuple[str, ...]
    pr: int | None
    issue: int | None
    url: str | None
    n_tests: int
    wants_json: bool
    project: str


_PY_SOURCES = (
    "src/app/utils.py",
    "src/app/parser.py",
    "src/app/models.py",
    "src/app/cli.py",
    "src/app/config.py",
)
_TS_SOURCES = (
    "src/utils.ts",
    "src/parser.ts",
    "src/client.ts",
    "src/index.ts",
    "src/config.ts",
)


def _summary(prompt: str) -> str:
    text = " ".join(prompt.split())
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0].rstrip(".!? ")
    if len(first) > 110:
        first = first[:110].rsplit(" ", 1)[0] + "..."
    if first[:1].isupper() and not first[1:2].isupper():
        first = first[0].lower() + first[1:]
    return first or "the task"


@lru_cache(maxsize=512)
def _task(prompt: str, scenario_id: str, seed: int) -> _Task:
    """Read the prompt once: files, commands, PR/issue numbers, project kind."""
    rng = random.Random(_stable_seed("task", seed, scenario_id))
    paths = list(dict.fromkeys(m.group(1) for m in _PATH.finditer(prompt)))
    lowered = prompt.casefold()
    if any(p.endswith(".py") for p in paths) or any(
        w in lowered for w in ("pytest", "python", "pyproject")
    ):
        stack = "python"
    elif any(p.endswith((".ts", ".tsx", ".js", ".jsx", ".mjs")) for p in paths) or any(
        w in lowered
        for w in ("npm", "node", "typescript", "javascript", "vitest", "jest")
    ):
        stack = "node"
    else:
        stack = rng.choice(("python", "node"))
    code = [
        p
        for p in paths
        if not p.endswith((".md", ".json", ".yaml", ".yml", ".toml", ".cfg", ".txt"))
    ]
    tests = tuple(
        p for p in code if re.search(r"(^|/)(tests?/|test_)|\.(test|spec)\.", p)
    )
    sources = tuple(p for p in code if p not in tests) or tuple(
        p for p in paths if p not in tests
    )
    if not sources and tests:
        # The code under test, named after its test file (tests/test_parser.py -> src/app/parser.py).
        stem = re.sub(
            r"^test_|\.(test|spec)$", "", tests[0].rsplit("/", 1)[-1].rsplit(".", 1)[0]
        )
        sources = (f"src/app/{stem}.py",) if stack == "python" else (f"src/{stem}.ts",)
    if not sources:
        sources = (rng.choice(_PY_SOURCES if stack == "python" else _TS_SOURCES),)
    if not tests:
        stem = sources[0].rsplit("/", 1)[-1].split(".")[0]
        tests = (
            (f"tests/test_{stem}.py",)
            if stack == "python"
            else (f"test/{stem}.test.ts",)
        )
    commands = tuple(
        c.strip()
        for c in _BACKTICK.findall(prompt)
        if c.split() and c.split()[0] in _COMMAND_WORDS
    )
    test_cmd = next(
        (
            c
            for c in commands
            if re.search(r"\b(pytest|npm test|vitest|jest|tox|cargo test|go test)\b", c)
        ),
        None,
    )
    test_cmd = test_cmd or ("pytest -q" if stack == "python" else "npm test")
    pr = _PR.search(prompt)
    issue = _ISSUE.search(prompt)
    if pr is None and issue is None:
        bare = _HASH_NUMBER.search(prompt)
        pr = bare if bare and "pr" in lowered else None
        issue = bare if bare and pr is None else None
    url = _URL.search(prompt)
    return _Task(
        summary=_summary(prompt),
        stack=stack,
        sources=sources,
        tests=tests,
        test_cmd=test_cmd,
        commands=tuple(c for c in commands if c != test_cmd),
        pr=int(pr.group(1)) if pr else None,
        issue=int(issue.group(1)) if issue else None,
        url=url.group(0) if url else None,
        n_tests=rng.randint(8, 64),
        wants_json=bool(_JSON_WORD.search(prompt)),
        project=rng.choice(
            ("acme-api", "widgets", "billing-service", "toolkit", "webapp")
        ),
    )


# ---------------------------------------------------------------------------
# Tool calls
# ---------------------------------------------------------------------------


@attrs.frozen(eq=False)  # identity equality: ops are cached and dict-valued
class _Op:
    """A planned tool call: what it is, how big its result is, how it can fail."""

    tool: str
    input: dict[str, Any]
    label: str  # how the final answer names it (a command or a path)
    output: str
    result_tokens: float  # median size of the result fed back into the context
    duration_ms: float  # median duration
    errors: tuple[str, ...]  # error kinds that fit this call
    kind: str = ""  # "test", "edit", "gh", ... for the narrative
    error_texts: dict[str, str] | None = None  # call-specific error messages by kind


# Realistic error texts by kind; {label}/{path} are filled in per call.
_ERROR_TEXTS: dict[str, tuple[str, ...]] = {
    "not_found": (
        "ENOENT: no such file or directory, open '{path}'",
        "File not found: {path}",
    ),
    "edit_mismatch": (
        "String to replace not found in {path} (old_string did not match; re-read the file)",
    ),
    "cmd_not_found": ("bash: {cmd}: command not found (exit code 127)",),
    "timeout": (
        "Command timed out after {secs}s: {label}",
        "timed out after {secs}s waiting for {label}",
    ),
    "unauthorized": (
        "HTTP 401: Bad credentials (https://api.github.com/graphql) - try `gh auth login`",
        "401 Unauthorized: requires authentication",
    ),
    "json_parse": (
        'jq: error (at <stdin>:1): Cannot index string with "title"',
        "SyntaxError: Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON",
        "JSON parse error: Expecting value: line 1 column 1 (char 0)",
    ),
    "permission": ("EACCES: permission denied, open '{path}'",),
}

#: The kind of error shown in the final answer ("gave up after ...").
_ERROR_NAMES = {
    "not_found": "not found",
    "edit_mismatch": "edit mismatch",
    "cmd_not_found": "command not found",
    "timeout": "timeout",
    "unauthorized": "401 Unauthorized",
    "json_parse": "JSON parse error",
    "permission": "permission denied",
}


def _bash(
    command: str,
    output: str,
    tokens: float,
    ms: float,
    errors: tuple[str, ...],
    kind: str = "",
    texts: dict[str, str] | None = None,
) -> _Op:
    return _Op(
        "bash",
        {"command": command},
        command,
        output,
        tokens,
        ms,
        errors,
        kind or "shell",
        texts,
    )


def _grep(pattern: str, path: str, output: str, tokens: float, ms: float) -> _Op:
    return _Op(
        "grep",
        {"pattern": pattern, "path": path},
        path,
        output,
        tokens,
        ms,
        ("timeout",),
        "search",
    )


def _glob(pattern: str, output: str, tokens: float) -> _Op:
    return _Op(
        "glob",
        {"pattern": pattern},
        pattern,
        output,
        tokens,
        25,
        ("timeout",),
        "search",
    )


@lru_cache(maxsize=1024)
def _test_op(task: _Task, *, failing: int, narrow: bool = False) -> _Op:
    cmd = task.test_cmd
    if narrow:
        cmd = (
            f"pytest -q {task.tests[0]} -x"
            if task.stack == "python"
            else f"npx vitest run {task.tests[0]}"
        )
    n = task.n_tests if not narrow else max(1, task.n_tests // 6)
    # "{secs}" is filled in with the call's own duration.
    if failing:
        out = f"FAILED {task.tests[0]} - AssertionError\n{failing} failed, {n - failing} passed in {{secs}}s"
    else:
        out = f"{n} passed in {{secs}}s"
    return _bash(
        cmd, out, 180 + 40 * failing, 2500 if narrow else 6000, ("timeout",), "test"
    )


@lru_cache(maxsize=1024)
def _read_op(path: str) -> _Op:
    return _Op(
        "read_file",
        {"path": path},
        path,
        f"[{path}: file contents]",
        1300,
        35,
        ("not_found",),
        "read",
    )


_EDITS = {
    "py": (
        ("return a + b", "return a - b"),
        ("if not items:", "if items is None or not items:"),
        ("timeout=30", "timeout=settings.timeout"),
    ),
    "ts": (
        ("return a + b", "return a - b"),
        ("if (!items) {", "if (!items?.length) {"),
        ("const retries = 3", "const retries = config.retries ?? 3"),
    ),
}


@lru_cache(maxsize=1024)
def _edit_op(path: str, variant: int = 0) -> _Op:
    snippets = _EDITS["py" if path.endswith(".py") else "ts"]
    old, new = snippets[variant % len(snippets)]
    return _Op(
        "edit",
        {"path": path, "old_string": old, "new_string": new},
        path,
        f"The file {path} has been updated.",
        40,
        40,
        ("edit_mismatch", "not_found"),
        "edit",
    )


_GH_JSON_ERROR = {
    "json_parse": "failed to parse JSON response: invalid character '<' looking for beginning of value"
}


def _explore_ops(task: _Task, src: str) -> list[tuple[float, _Op]]:
    """Candidate calls for the exploring phase, with weights."""
    ext = "py" if task.stack == "python" else "ts"
    status = f"On branch main\nChanges not staged for commit:\n  modified:   {src}"
    ops: list[tuple[float, _Op]] = [
        (3.0, _read_op(src)),
        (1.5, _read_op(task.tests[0])),
        (1.0, _bash("git status", status, 90, 60, ("not_found",), "git")),
        (
            0.6,
            _bash(
                "git log --oneline -5",
                "a1b2c3d Fix flaky test\n9f8e7d6 Add parser",
                80,
                45,
                ("not_found",),
                "git",
            ),
        ),
        (
            1.2,
            _bash(
                "rg TODO src/",
                f"{src}:42:    # TODO: handle empty input",
                160,
                120,
                ("cmd_not_found", "timeout"),
                "search",
            ),
        ),
        (1.2, _grep("def |function ", "src", f"{src}:12: ...", 350, 110)),
        (1.0, _glob(f"**/*.{ext}", "\n".join(task.sources + task.tests), 90)),
    ]
    gh_errors = ("unauthorized", "timeout", "json_parse")
    if task.pr is not None:
        n = task.pr
        view = f'{{"title": "PR #{n}", "files": ["{src}"]}}'
        ops.append(
            (
                2.5,
                _bash(
                    f"gh pr view {n} --json title,body,files",
                    view,
                    450,
                    900,
                    gh_errors,
                    "gh",
                    _GH_JSON_ERROR,
                ),
            )
        )
        ops.append(
            (
                1.0,
                _bash(
                    f"gh pr diff {n}",
                    f"diff --git a/{src} b/{src}",
                    900,
                    800,
                    gh_errors[:2],
                    "gh",
                ),
            )
        )
    if task.issue is not None:
        n = task.issue
        view = f'{{"title": "Issue #{n}", "labels": ["bug"]}}'
        ops.append(
            (
                2.5,
                _bash(
                    f"gh issue view {n} --json title,body,labels",
                    view,
                    400,
                    850,
                    gh_errors,
                    "gh",
                    _GH_JSON_ERROR,
                ),
            )
        )
    if task.url is not None:
        fetch = _Op(
            "web_fetch",
            {"url": task.url},
            task.url,
            "[page text]",
            1500,
            1400,
            ("unauthorized", "timeout"),
            "web",
        )
        ops.append((1.5, fetch))
    for cmd in task.commands:
        ops.append(
            (
                2.0,
                _bash(
                    cmd, f"$ {cmd}\n(ok)", 250, 1500, ("timeout", "not_found"), "cmd"
                ),
            )
        )
    return ops


def _investigate_ops(task: _Task, src: str) -> list[tuple[float, _Op]]:
    return [
        (1.4, _test_op(task, failing=1)),
        (0.6, _test_op(task, failing=2)),
        (3.0, _read_op(src)),
        (1.0, _read_op(task.tests[0])),
        (1.0, _grep("assert|expect\\(", task.tests[0], "...", 250, 60)),
        (
            0.5,
            _bash(
                f'rg -n "def |export " {src}',
                f"{src}:12",
                200,
                90,
                ("cmd_not_found",),
                "search",
            ),
        ),
    ]


def _edit_ops(task: _Task, src: str) -> list[tuple[float, _Op]]:
    test = task.tests[0]
    new_test = (
        test.replace("test_", "test_new_")
        if task.stack == "python"
        else test.replace(".test.", ".extra.test.")
    )
    write = _Op(
        "write_file",
        {"path": new_test, "content": "..."},
        new_test,
        f"Wrote {new_test}",
        30,
        30,
        ("permission", "not_found"),
        "write",
    )
    return [
        (2.0, _edit_op(src, 0)),
        (1.2, _edit_op(src, 1)),
        (0.8, _edit_op(src, 2)),
        (0.8, _edit_op(test, 1)),
        (0.6, write),
        (1.0, _read_op(src)),
    ]


_PHASES = {"explore": _explore_ops, "investigate": _investigate_ops, "edit": _edit_ops}


@lru_cache(maxsize=1024)
def _pool(
    task: _Task, phase: str, src: str
) -> tuple[tuple[float, ...], tuple[_Op, ...]]:
    """The weighted calls of a phase, built once per task (cumulative weights, ops)."""
    weighted = _PHASES[phase](task, src)
    return tuple(itertools.accumulate(w for w, _ in weighted)), tuple(
        op for _, op in weighted
    )


def _pick(
    rng: random.Random, pool: tuple[tuple[float, ...], tuple[_Op, ...]], seen: set[_Op]
) -> _Op:
    """A weighted pick that avoids repeating a call already made (agents rarely re-run the same thing)."""
    cumulative, ops = pool
    for _ in range(3):
        op = ops[
            min(
                len(ops) - 1,
                bisect.bisect_right(cumulative, rng.random() * cumulative[-1]),
            )
        ]
        if op not in seen:
            break
    seen.add(op)
    return op


def _recovery(
    op: _Op, kind: str, task: _Task, rng: random.Random, failing: int
) -> list[_Op]:
    """What a sensible agent does next after ``op`` failed with ``kind`` (retry or alternative)."""
    if kind == "not_found" and op.tool in ("read_file", "edit", "write_file"):
        stem = op.label.rsplit("/", 1)[-1].split(".")[0]
        real = next(
            (p for p in task.sources + task.tests if stem in p), task.sources[0]
        )
        if op.tool == "write_file":
            folder = op.label.rsplit("/", 1)[0] if "/" in op.label else "."
            denied = {
                "permission": f"mkdir: cannot create directory '{folder}': Permission denied"
            }
            return [
                _bash(f"mkdir -p {folder}", "", 5, 15, ("permission",), texts=denied),
                op,
            ]
        glob = _glob(f"**/*{stem}*", real, 40)
        if op.tool == "read_file":
            return [glob, _read_op(real)]
        return [glob, attrs.evolve(op, input={**op.input, "path": real}, label=real)]
    if kind == "edit_mismatch":
        return [_read_op(op.label), op]
    if kind == "cmd_not_found":
        args = [a for a in shlex.split(op.label)[1:] if not a.startswith("-")]
        pattern = args[0] if args else "TODO"
        return [_grep(pattern, "src", "...", 200, 120)]
    if kind == "timeout":
        if op.kind == "test":
            return [_test_op(task, failing=failing, narrow=True)]
        return [op]  # transient: just retry
    if kind == "unauthorized":
        if op.kind == "gh":
            return [
                _bash(
                    "gh auth status",
                    "Logged in to github.com account bot (GH_TOKEN)",
                    60,
                    400,
                    ("unauthorized",),
                ),
                op,
            ]
        return [op]
    if kind == "json_parse":
        if op.kind == "gh":
            base = op.label.split(" --json")[0]
            return [
                _bash(
                    base,
                    op.output,
                    op.result_tokens,
                    op.duration_ms,
                    ("unauthorized", "timeout"),
                    "gh",
                )
            ]
        return [op]
    if kind == "permission":
        return [
            _bash(f"ls -la {op.label.rsplit('/', 1)[0]}", "drwxr-xr-x ...", 80, 20, ()),
            op,
        ]
    return [op]


_WRONG_TOP = {"src": "lib", "tests": "test", "test": "tests"}


def _wrong_path(path: str) -> str:
    """A plausible wrong guess for ``path`` (another top folder)."""
    top, _, rest = path.partition("/")
    if not rest:
        return f"src/{path}"
    return f"{_WRONG_TOP.get(top, 'src')}/{rest}"


def _error_text(kind: str, op: _Op, rng: random.Random, secs: int) -> str:
    if op.error_texts and kind in op.error_texts:
        template = op.error_texts[kind]
    elif kind == "timeout" and op.tool != "bash":
        template = "{tool} timed out after {secs}s ({label})"
    elif kind == "not_found" and op.tool == "bash":
        template = (
            "fatal: not a git repository (or any of the parent directories): .git"
            if op.label.startswith("git")
            else "bash: line 1: {cmd}: No such file or directory (exit code 127)"
        )
    else:
        template = rng.choice(_ERROR_TEXTS[kind])
    return template.format(
        path=op.input.get("path", op.label),
        label=op.label,
        cmd=op.label.split()[0],
        secs=secs,
        tool=op.tool,
    )


def _blocker(task: _Task, rng: random.Random) -> tuple[_Op, str]:
    """The failure an unfinished session gives up on, and its kind."""
    install = "pip install -e ." if task.stack == "python" else "npm ci"
    install_error = (
        "ERROR: HTTP error 401 while getting https://pypi.internal.example/simple/{project}-utils/ (401 Unauthorized)"
        if task.stack == "python"
        else 'npm ERR! code E401 - Unable to authenticate, need: Basic realm="registry" (401 Unauthorized)'
    ).replace("{project}", task.project)
    number = task.pr or task.issue
    gh_view = (
        f"gh {'pr' if task.pr else 'issue'} view {number} --json title,body | jq -r .title"
        if number
        else None
    )
    choices: list[tuple[float, tuple[_Op, str]]] = [
        (2.0, (_test_op(task, failing=1, narrow=True), "timeout")),
        (1.5, (_edit_op(task.sources[0]), "edit_mismatch")),
        (
            1.0,
            (
                _bash(
                    install,
                    "",
                    300,
                    9000,
                    ("unauthorized",),
                    "install",
                    {"unauthorized": install_error},
                ),
                "unauthorized",
            ),
        ),
        (0.7, (_read_op(f"config/{task.project}.json"), "not_found")),
    ]
    if gh_view is not None:
        kind = rng.choice(("unauthorized", "json_parse"))
        choices.append(
            (
                2.5,
                (
                    _bash(gh_view, "", 200, 900, ("unauthorized", "json_parse"), "gh"),
                    kind,
                ),
            )
        )
    else:
        choices.append(
            (
                0.8,
                (
                    _bash(
                        "gh pr create --fill", "", 120, 1200, ("unauthorized",), "gh"
                    ),
                    "unauthorized",
                ),
            )
        )
    total = sum(w for w, _ in choices)
    x = rng.random() * total
    for w, choice in choices:
        x -= w
        if x <= 0:
            return choice
    return choices[-1][1]


# ---------------------------------------------------------------------------
# Session generation
# ---------------------------------------------------------------------------


_EXPLORE_THOUGHTS: tuple[str, ...] = (
    "The user wants me to {summary}. Let me look at the code first.",
    "I should understand the layout of {project} before changing anything.",
    "First I need to find where this is implemented.",
)
_INVESTIGATE_THOUGHTS: tuple[str, ...] = (
    "Let me run the tests to see what fails.",
    "The helper in {src} looks suspicious; I'll read it closely.",
    "I need to confirm the failure before editing.",
)
_EDIT_THOUGHTS: tuple[str, ...] = (
    "The bug is in {src}: the wrong operator. I'll fix it.",
    "I'll make the minimal change in {src} and keep the API the same.",
)
_VERIFY_THOUGHTS: tuple[str, ...] = (
    "Now run the test suite again to verify the fix.",
    "Let me verify the change with `{test}`.",
)
_RECOVER_THOUGHTS = {
    "not_found": "That path does not exist; let me search for the right file.",
    "edit_mismatch": "The edit did not apply; the file must differ from what I assumed. Re-reading it.",
    "cmd_not_found": "rg is not installed here; I'll use the grep tool instead.",
    "timeout": "That timed out; I'll retry with a narrower scope.",
    "unauthorized": "Got 401 Unauthorized; let me check the GitHub auth status and retry.",
    "json_parse": "The output was not the JSON I expected; I'll run it without the JSON filter.",
    "permission": "Permission denied; let me check the directory permissions.",
}
_PROGRESS = (
    "Looked at {src}; the problem seems to be in the arithmetic helper.",
    "Found the relevant code. Continuing.",
    "Tests reproduce the failure. Working on a fix.",
    "Applied a change to {src}; verifying next.",
)


class _Session:
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
            _stable_seed(
                opts.seed,
                params.model,
                params.mode,
                params.scenario_id,
                params.iteration,
                attempt,
            )
        )
        self.task = _task(prompt, params.scenario_id, opts.seed)
        self.profile = _model_profile(params.model)
        self.tps = opts.tokens_per_second or self.profile.tokens_per_second
        #: every duration is multiplied by it (``time_factor``), so the wall time is too
        self.slow = opts.time_factor
        self.categories = {**DEFAULT_TOOL_CATEGORIES, **opts.tool_categories}
        self.timeout_ms = timeout_ms
        self.prompt_tokens = max(8, len(prompt) // 4) + 12
        self.system_tokens = (
            8000 + len(params.system_instructions) // 4
        )  # system prompt + tool definitions
        self.errors: list[tuple[str, _Op, str]] = []  # (kind, op, text)
        self.commands_run: list[str] = []
        self.files_changed: list[str] = []
        self.last_test: tuple[str, str] | None = None  # (command, summary line)

    # -- one tool call --------------------------------------------------------

    def _call(
        self,
        op: _Op,
        *,
        force: str | None = None,
        may_fail: bool = True,
        exclude: str | None = None,
    ) -> tuple[ToolCallEvent, ToolCallRecord, float, float, str | None]:
        """Run one simulated call: its event, record, duration, result tokens and error kind (or None)."""
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
            ms = round(_lognormal(rng, op.duration_ms, 0.35) * self.slow, 1)
            tokens = _lognormal(rng, op.result_tokens, 0.45)
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
                else _lognormal(rng, min(op.duration_ms, 300), 0.4)
            )
            * self.slow,
            1,
        )
        if kind == "not_found" and force is None and op.tool in ("read_file", "edit"):
            # The agent guessed a path that does not exist; recovery finds the real one.
            op = attrs.evolve(op, input={**op.input, "path": _wrong_path(op.label)})
        text = _error_text(kind, op, rng, secs)
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

    def plan(self) -> tuple[int, bool, str]:
        """Number of turns, whether the task gets finished, and the completion reason."""
        rng, opts = self.rng, self.opts
        finished = rng.random() < opts.success_rate
        mean = max(1.0, opts.mean_turns * self.profile.turn_factor)
        turns = 1 + _poisson(rng, mean - 1)
        if not finished:
            turns += _poisson(rng, 2.0)  # struggling sessions run longer
        if turns > opts.max_turns:
            return opts.max_turns, False, "tool_limit"
        return turns, finished, "stop"

    def run(self) -> dict[str, Any]:
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

        turns: list[dict[str, Any]] = []
        elapsed_ms = 0.0
        context = self.system_tokens  # tokens already in the (cached) conversation
        pending = self.prompt_tokens  # tokens appended since the last model request
        edited = False
        seen: set[_Op] = set()

        for index in range(n_turns):
            last = index == n_turns - 1
            phase = index / (n_turns - 1) if n_turns > 1 else 1.0
            # Plan this turn's calls: (op, forced error kind).
            planned: list[tuple[_Op, str | None]] = []
            if last:
                if finished and not edited:
                    planned.append((_edit_op(rng.choice(task.sources)), None))
                if reason != "tool_limit":
                    planned.append((_test_op(task, failing=0 if finished else 1), None))
                if finished and rng.random() < 0.3:
                    planned.append(
                        (
                            _bash(
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
                    planned.append(_blocker(task, rng))
                thought = _VERIFY_THOUGHTS
            else:
                k = min(5, 1 + _poisson(rng, opts.tools_per_turn - 1))
                if index == 0 or phase < 0.34:
                    name, thought = "explore", _EXPLORE_THOUGHTS
                elif phase < 0.6:
                    name, thought = "investigate", _INVESTIGATE_THOUGHTS
                else:
                    name, thought = "edit", _EDIT_THOUGHTS
                pool = _pool(task, name, rng.choice(task.sources))
                planned = [(_pick(rng, pool, seen), None) for _ in range(k)]

            # The model request of this turn.
            reasoning = max(
                8,
                round(
                    _lognormal(
                        rng, 160 * self.profile.reasoning_factor * verbosity, 0.5
                    )
                ),
            )
            text_tokens = 0
            text = None
            if not last and rng.random() < 0.45:
                text = rng.choice(_PROGRESS).format(**fmt)
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
            queue: list[tuple[_Op, str | None, str | None]] = [
                (op, force, None) for op, force in planned
            ]
            while queue and len(records) < 12:
                op, force, recovering = queue.pop(0)
                # The closing turn of a finished session recovers cleanly (its answer says the tests pass).
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
                    thinking = max(8, round(_lognormal(rng, 40 * verbosity, 0.4)))
                    reasoning += thinking
                    events.append(
                        ReasoningEvent(
                            content=_RECOVER_THOUGHTS[kind],
                            duration_ms=round(
                                thinking / self.tps * 1000 * self.slow, 1
                            ),
                            token_count=thinking,
                        )
                    )
                    failing = 0 if finished and (edited or last) else 1
                    queue[0:0] = [
                        (step, None, kind)
                        for step in _recovery(op, kind, task, rng, failing)
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
                _lognormal(rng, self.profile.first_token_ms, 0.3)
                + prefill_ms
                + (reasoning + output) / self.tps * 1000
            )
            model_ms = round(model_ms * self.slow, 1)
            turns.append(
                {
                    "events": events,
                    "records": records,
                    "tokens": (fresh, output, reasoning, cache_read, cache_write),
                    "start": elapsed_ms,
                    "model_ms": model_ms,
                    "tool_ms": tool_ms,
                    "final": final_text,
                    "last_text": final_text or text,
                }
            )
            elapsed_ms += model_ms + tool_ms
            context += pending + output
            pending = round(result_tokens) + 4 * len(records)

        return self._assemble(turns, start, reason)

    def _final_text(self, finished: bool, reason: str, n_turns: int) -> str:
        task = self.task
        cmd, tests = self.last_test or (task.test_cmd, "not run")
        changed = ", ".join(self.files_changed[:4]) or "no files"
        if finished:
            text = f"Done: {task.summary}. Changed {changed}; ran `{cmd}` ({tests})."
            status, error = "done", None
        elif reason == "tool_limit":
            text = f"Could not finish: {task.summary}. Stopped after {n_turns} turns (turn limit); changed {changed}."
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
            name = _ERROR_NAMES.get(kind, kind)
            detail = (
                first_line
                if name.casefold() in first_line.casefold()
                else f"{name}: {first_line}"
            )
            text = f"Could not finish: {task.summary}. Gave up after `{what}` failed ({detail}); last test run: {tests}."
            status, error = "failed", first_line
        if self.opts.output_format == "json" or (
            self.opts.output_format == "auto" and task.wants_json
        ):
            passed, failed = _test_counts(tests)
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

    def _assemble(
        self, turns: list[dict[str, Any]], start: datetime, reason: str
    ) -> dict[str, Any]:
        """Cut at the timeout, then build the result and the trace from the same turns."""
        kept: list[dict[str, Any]] = []
        timed_out = False
        for turn in turns:
            if turn["start"] + turn["model_ms"] + turn["tool_ms"] > self.timeout_ms:
                timed_out = True
                break
            kept.append(turn)
        wall_ms = (
            self.timeout_ms
            if timed_out
            else sum(t["model_ms"] + t["tool_ms"] for t in kept)
        )
        wall_ms = round(wall_ms, 1)

        all_events: list[Any] = []
        trace_turns: list[Turn] = []
        records: list[ToolCallRecord] = []
        sums = [0, 0, 0, 0, 0]
        model_total = 0.0
        for number, turn in enumerate(kept, start=1):
            begin = start + timedelta(milliseconds=turn["start"])
            duration = round(turn["model_ms"] + turn["tool_ms"], 1)
            end = begin + timedelta(milliseconds=duration)
            trace_turns.append(
                Turn(
                    number=number,
                    events=turn["events"],
                    start_timestamp=iso(begin),
                    end_timestamp=iso(end),
                    duration_ms=duration,
                )
            )
            all_events.extend(turn["events"])
            all_events.append(TurnBoundaryEvent(turn_number=number, timestamp=iso(end)))
            records.extend(turn["records"])
            for i, value in enumerate(turn["tokens"]):
                sums[i] += value
            model_total += turn["model_ms"]

        if timed_out:
            text = next((t["last_text"] for t in reversed(kept) if t["last_text"]), "")
            all_events.append(
                ErrorEvent(
                    message=f"prompt timed out after {self.timeout_ms} ms",
                    recoverable=False,
                )
            )
            completion = "timeout"
            model_total = min(model_total, wall_ms)
        else:
            text = kept[-1]["final"] if kept else ""
            completion = reason
        tokens = TokenBreakdown(
            input=sums[0],
            output=sums[1],
            reasoning=sums[2],
            cache_read=sums[3],
            cache_write=sums[4],
        )
        begin_ms = start.timestamp() * 1000
        split = round(begin_ms + model_total, 1)
        # Model and tool time are summed over the turns and laid end to end, so the
        # segment durations are exact even though turns interleave the two.
        segments = (
            TimingSegment(label="model", start_ms=begin_ms, end_ms=split),
            TimingSegment(
                label="tools", start_ms=split, end_ms=round(begin_ms + wall_ms, 1)
            ),
        )
        return {
            "text": text,
            "completion": completion,
            "tokens": tokens,
            "wall_ms": wall_ms,
            "segments": segments,
            "records": tuple(records),
            "events": tuple(all_events),
            "turns": tuple(trace_turns),
        }


def _test_counts(summary: str) -> tuple[int, int]:
    failed = re.search(r"(\d+) failed", summary)
    passed = re.search(r"(\d+) passed", summary)
    return (
        int(passed.group(1)) if passed else 0,
        int(failed.group(1)) if failed else 0,
    )


# ---------------------------------------------------------------------------
# The provider
# ---------------------------------------------------------------------------


@attrs.define
class _LiveSession:
    params: CreateSessionParams
    attempt: int
    options: SimulatedOptions
    result: PromptResult | None = None
    trace: SessionTrace | None = None


def _price(
    model: str,
    tokens: TokenBreakdown,
    overrides: dict[str, Any] | None,
    factor: float = 1.0,
) -> CostBreakdown:
    # Imported here: pricing may pull in genai-prices, which `import profiler_core` must not.
    from ..metrics.pricing import price_tokens

    cost = price_tokens(model, tokens, overrides)
    if cost is None:
        return CostBreakdown()
    if factor == 1.0:
        return cost
    return CostBreakdown(
        total_usd=cost.total_usd * factor,
        input_usd=cost.input_usd * factor,
        output_usd=cost.output_usd * factor,
        reasoning_usd=cost.reasoning_usd * factor,
    )


class SimulatedProvider:
    """A seeded simulator of a tool-using coding agent (for demos, tests and load tests).

    Options come from the constructor (the profile's ``provider.options``) and
    from ``init(config)`` (``config.options``: the same options merged with the
    mode's ``provider_overrides``); ``config.options`` win. ``init`` is called
    once per mode (``init_scope = "mode"``), and the options of every mode seen
    are kept, so each session follows its own mode's behaviour.
    """

    id = "simulated"
    init_scope = "mode"
    #: it edits no file, so it may run inside any trial's environment (and fails a task's own tests there)
    runs_in_trial = True
    #: its synchronous methods return at once: the runner calls them inline, not in a thread
    nonblocking_sync = True

    def __init__(self, **options: Any) -> None:
        """Build with default options, changed by any of :class:`SimulatedOptions`' fields."""
        self._base = dict(options)
        self._defaults = _build_options([self._base], "provider 'simulated'")
        self._by_mode: dict[str, SimulatedOptions] = {}
        self._current: SimulatedOptions | None = None
        self._attempts: dict[tuple[str, str, str, int], int] = {}
        self._sessions: dict[str, _LiveSession] = {}

    def options_for(self, mode: str) -> SimulatedOptions:
        """The options sessions of ``mode`` run with."""
        return self._by_mode.get(mode) or self._current or self._defaults

    def init(self, config: ProviderConfig) -> None:
        """Take the options of ``config.mode`` (its overrides merged into ``config.options``)."""
        where = f"provider 'simulated' (mode {config.mode!r}, model {config.model!r})"
        options = _build_options([self._base, dict(config.options)], where)
        self._by_mode[config.mode] = options
        self._current = options

    def create_session(self, params: CreateSessionParams) -> SessionHandle:
        """Open a session; a retry of the same cell gets the next attempt number (and a fresh draw)."""
        key = (params.model, params.mode, params.scenario_id, params.iteration)
        attempt = self._attempts.get(key, 0) + 1
        self._attempts[key] = attempt
        options = self.options_for(params.mode)
        session_id = f"sim-{_stable_seed(options.seed, *key, attempt):016x}"
        self._sessions[session_id] = _LiveSession(
            params=params, attempt=attempt, options=options
        )
        return SessionHandle(
            session_id=session_id,
            provider=self.id,
            created_at=datetime.now(UTC).isoformat(),
        )

    def simulate(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Generate the session's answer without sleeping (``prompt`` = this + the scaled sleep)."""
        live = self._live(handle)
        session = _Session(
            live.options,
            live.params,
            live.attempt,
            text,
            timeout_ms or DEFAULT_TIMEOUT_MS,
        )
        out = session.run()
        result = PromptResult(
            text=out["text"],
            metrics=PromptMetrics(
                tokens=out["tokens"],
                timing=TimingBreakdown(
                    wall_ms=out["wall_ms"], segments=out["segments"]
                ),
                tool_calls=out["records"],
                cost=_price(
                    live.params.model,
                    out["tokens"],
                    live.options.prices,
                    live.options.cost_factor,
                ),
            ),
            completion_reason=out["completion"],
        )
        live.result = result
        live.trace = SessionTrace(
            session_id=handle.session_id,
            events=out["events"],
            turns=out["turns"],
            summary=TraceSummary(
                total_turns=len(out["turns"]),
                total_tool_calls=len(out["records"]),
                total_tokens=out["tokens"],
                total_duration=out["wall_ms"],
            ),
        )
        return result

    async def prompt(
        self, handle: SessionHandle, text: str, timeout_ms: int | None = None
    ) -> PromptResult:
        """Run the simulated session; with ``time_scale > 0`` really sleep its simulated wall time, scaled."""
        result = self.simulate(handle, text, timeout_ms)
        live = self._live(handle)
        if live.params.workspace is not None:
            _write_files(Path(live.params.workspace), live.options.writes)
        scale = live.options.time_scale
        if scale > 0:
            import trio

            await trio.sleep(result.metrics.timing.wall_ms / 1000 * scale)
        return result

    def export_session(self, handle: SessionHandle) -> SessionTrace:
        """The trace of the session (empty before the prompt), consistent with the prompt result."""
        live = self._live(handle)
        if live.trace is not None:
            return live.trace
        return SessionTrace(
            session_id=handle.session_id,
            events=(),
            turns=(),
            summary=TraceSummary(
                total_turns=0,
                total_tool_calls=0,
                total_tokens=TokenBreakdown(),
                total_duration=0,
            ),
        )

    def destroy_session(self, handle: SessionHandle) -> None:
        """Forget the session (whatever state it is in; unknown handles are ignored)."""
        self._sessions.pop(handle.session_id, None)

    def shutdown(self) -> None:
        """Drop live sessions; attempt counters survive so retries stay distinct."""
        self._sessions.clear()
        self._current = None

    def _live(self, handle: SessionHandle) -> _LiveSession:
        try:
            return self._sessions[handle.session_id]
        except KeyError:
            raise ProfilerError(
                f"provider 'simulated': unknown session {handle.session_id!r} (destroyed, or never created)"
            ) from None


def _write_files(workspace: Path, writes: dict[str, str]) -> None:
    """The simulated agent's edits: each file written into its workspace."""
    for relative, content in writes.items():
        target = workspace / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
