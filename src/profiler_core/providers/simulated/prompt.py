"""Reading the prompt: the files, commands, PR and issue numbers a task is about."""

from __future__ import annotations

import random
import re
from functools import lru_cache

import attrs

from ...model.record import Record
from .draws import stable_seed

_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py"
    r"|ts|tsx|js|jsx|mjs|go|rs|java|rb|md|json|ya?ml|toml|cfg|txt|css|html|sh))\b"
)
_BACKTICK = re.compile(r"`([^`\n]{2,100})`")
_PR = re.compile(r"\b(?:PR|pull request)\s*#?(\d{1,6})\b", re.IGNORECASE)
_ISSUE = re.compile(r"\bissue\s*#?(\d{1,6})\b", re.IGNORECASE)
_HASH_NUMBER = re.compile(r"(?<![\w&])#(\d{1,6})\b")
_URL = re.compile(r"https?://[^\s`'\")>]+")
_JSON_WORD = re.compile(r"\bjson\b", re.IGNORECASE)
_COMMAND_WORDS = {
    "npm", "npx", "pnpm", "yarn", "node", "pytest", "python", "python3", "pip", "uv",
    "git", "gh", "rg", "grep", "make", "cargo", "go", "tox", "ruff", "mypy", "eslint",
    "tsc", "docker", "ls", "cat", "jq", "curl",
}  # fmt: skip


@attrs.frozen(repr=False, eq=False)
class Task(Record):
    """What the prompt is about, as far as the simulated agent is concerned (stable per
    scenario)."""

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


_PY_WORDS = ("pytest", "python", "pyproject")
_NODE_WORDS = ("npm", "node", "typescript", "javascript", "vitest", "jest")
_NODE_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs")
_DATA_SUFFIXES = (".md", ".json", ".yaml", ".yml", ".toml", ".cfg", ".txt")
_TEST_PATH = re.compile(r"(^|/)(tests?/|test_)|\.(test|spec)\.")
_TEST_CMD = re.compile(r"\b(pytest|npm test|vitest|jest|tox|cargo test|go test)\b")


def _stack(paths: list[str], lowered: str, rng: random.Random) -> str:
    """The project's language: from the file names, then the words, else a draw."""
    if any(p.endswith(".py") for p in paths) or any(w in lowered for w in _PY_WORDS):
        return "python"
    if any(p.endswith(_NODE_SUFFIXES) for p in paths):
        return "node"
    if any(w in lowered for w in _NODE_WORDS):
        return "node"
    return rng.choice(("python", "node"))


def _sources_for_test(test: str, stack: str) -> tuple[str, ...]:
    """The code under test, named after its test file (tests/test_parser.py ->
    src/app/parser.py)."""
    name = test.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    stem = re.sub(r"^test_|\.(test|spec)$", "", name)
    if stack == "python":
        return (f"src/app/{stem}.py",)
    return (f"src/{stem}.ts",)


def _tests_for_source(source: str, stack: str) -> tuple[str, ...]:
    """A test file named after the code it tests."""
    stem = source.rsplit("/", 1)[-1].split(".")[0]
    if stack == "python":
        return (f"tests/test_{stem}.py",)
    return (f"test/{stem}.test.ts",)


def _files(
    paths: list[str], stack: str, rng: random.Random
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sources and tests the task touches; invented from each other when missing."""
    code = [p for p in paths if not p.endswith(_DATA_SUFFIXES)]
    tests = tuple(p for p in code if _TEST_PATH.search(p))
    sources = tuple(p for p in code if p not in tests)
    if not sources:
        sources = tuple(p for p in paths if p not in tests)
    if not sources and tests:
        sources = _sources_for_test(tests[0], stack)
    if not sources:
        sources = (rng.choice(_PY_SOURCES if stack == "python" else _TS_SOURCES),)
    if not tests:
        tests = _tests_for_source(sources[0], stack)
    return sources, tests


def _commands(prompt: str) -> tuple[str, ...]:
    """The back-quoted snippets that start with a known command."""
    found = []
    for snippet in _BACKTICK.findall(prompt):
        words = snippet.split()
        if words and words[0] in _COMMAND_WORDS:
            found.append(snippet.strip())
    return tuple(found)


def _test_cmd(commands: tuple[str, ...], stack: str) -> str:
    """The prompt's own test command, else the stack's usual one."""
    for command in commands:
        if _TEST_CMD.search(command):
            return command
    return "pytest -q" if stack == "python" else "npm test"


def _numbers(prompt: str, lowered: str) -> tuple[int | None, int | None]:
    """The PR and issue numbers; a bare #N is a PR when the prompt speaks of one."""
    pr = _PR.search(prompt)
    issue = _ISSUE.search(prompt)
    if pr is None and issue is None:
        bare = _HASH_NUMBER.search(prompt)
        if bare and "pr" in lowered:
            pr = bare
        else:
            issue = bare
    return _group_int(pr), _group_int(issue)


def _group_int(match: re.Match[str] | None) -> int | None:
    return int(match.group(1)) if match else None


@lru_cache(maxsize=512)
def read_task(prompt: str, scenario_id: str, seed: int) -> Task:
    """Read the prompt once: files, commands, PR/issue numbers, project kind."""
    rng = random.Random(stable_seed("task", seed, scenario_id))
    paths = list(dict.fromkeys(m.group(1) for m in _PATH.finditer(prompt)))
    lowered = prompt.casefold()
    stack = _stack(paths, lowered, rng)
    sources, tests = _files(paths, stack, rng)
    commands = _commands(prompt)
    test_cmd = _test_cmd(commands, stack)
    pr, issue = _numbers(prompt, lowered)
    url = _URL.search(prompt)
    return Task(
        summary=_summary(prompt),
        stack=stack,
        sources=sources,
        tests=tests,
        test_cmd=test_cmd,
        commands=tuple(c for c in commands if c != test_cmd),
        pr=pr,
        issue=issue,
        url=url.group(0) if url else None,
        n_tests=rng.randint(8, 64),
        wants_json=bool(_JSON_WORD.search(prompt)),
        project=rng.choice(
            ("acme-api", "widgets", "billing-service", "toolkit", "webapp")
        ),
    )
