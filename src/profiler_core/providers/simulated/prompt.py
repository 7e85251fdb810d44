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


@lru_cache(maxsize=512)
def read_task(prompt: str, scenario_id: str, seed: int) -> Task:
    """Read the prompt once: files, commands, PR/issue numbers, project kind."""
    rng = random.Random(stable_seed("task", seed, scenario_id))
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
        # The code under test, named after its test file (tests/test_parser.py ->
        # src/app/parser.py).
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
    return Task(
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
