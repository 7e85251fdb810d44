"""Display names of tool calls: shell-like tools are shown by the command they ran.

``bash {"command": "GH_PAGER=cat gh api repos/x/pulls"}`` reads as ``gh api``:
an agent that does everything through one shell tool would otherwise show a
single tool, ``bash``, and no pattern at all. A ghx capability is a tool of its
own: ``ghx run pr.review.submit --input -`` reads as ``ghx:pr.review.submit`` (any name
ghx takes: ``ghx run pr-review-submit`` is ``ghx:pr-review-submit``),
so patterns and findings tell one capability from another.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from profiler_core import ConfigError, ProfilerError

#: Tool names (lower-cased) whose input is a shell command.
SHELL_TOOL_NAMES = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "fish",
        "shell",
        "terminal",
        "run_command",
        "execute_command",
        "run_shell_command",
        "run_terminal_cmd",
        "exec_command",
        "local_shell",
        "powershell",
        "pwsh",
    }
)

#: Programs whose first argument is a subcommand worth showing (``git status``, ``npm test``).
SUBCOMMAND_PROGRAMS = frozenset(
    {
        "gh",
        "ghx",
        "git",
        "docker",
        "docker-compose",
        "podman",
        "kubectl",
        "helm",
        "terraform",
        "npm",
        "npx",
        "pnpm",
        "yarn",
        "bun",
        "deno",
        "cargo",
        "go",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "conda",
        "make",
        "dotnet",
        "mvn",
        "gradle",
        "brew",
        "apt",
        "apt-get",
        "systemctl",
        "aws",
        "gcloud",
        "az",
        "rustup",
        "hatch",
        "tox",
        "nox",
        "just",
    }
)

#: Commands that only set the scene; the display name comes from what follows them.
_PRELUDE = frozenset(
    {"cd", "pushd", "popd", "export", "set", "unset", "source", ".", "alias", "true"}
)
#: Wrappers that run the next word as the real program.
_WRAPPERS = frozenset(
    {"sudo", "env", "time", "nohup", "command", "exec", "nice", "timeout"}
)
#: git options that take a value (``git -C repo status``).
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})

_SHELLS = frozenset({"bash", "sh", "zsh", "fish", "dash"})
_SEGMENT_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: A capability name as ghx takes it after ``run``: any name, dotted
#: (``pr.review.submit``) or not (``pr-review-submit``).
_CAPABILITY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_COMMAND_KEYS = ("command", "cmd", "script", "commandLine", "command_line", "input")


def is_shell_tool(name: str) -> bool:
    """True when ``name`` (any case) is a shell-like tool whose input is a command."""
    return name.lower() in SHELL_TOOL_NAMES


def resolve_tool_display_name(name: str, tool_input: Any) -> str:
    """The name a tool call is shown under: ``gh pr`` for ``bash`` running ``gh pr view
    42``, else ``name``."""
    if name.lower() not in SHELL_TOOL_NAMES:
        return name
    command = _command_of(tool_input)
    if isinstance(command, list):
        return _display_for_argv(tuple(command)) or name
    if isinstance(command, str):
        return _display_for_command(command) or name
    return name


def _command_of(tool_input: Any) -> str | list[str] | None:
    if isinstance(tool_input, str):
        return tool_input
    if isinstance(tool_input, list):
        return tool_input if all(isinstance(t, str) for t in tool_input) else None
    if isinstance(tool_input, dict):
        for key in _COMMAND_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) or (
                isinstance(value, list) and all(isinstance(t, str) for t in value)
            ):
                return value
    return None


@lru_cache(maxsize=8192)
def _display_for_argv(argv: tuple[str, ...]) -> str | None:
    # ["bash", "-lc", "git status"] (Codex-style argv): the script is the last word.
    if (
        len(argv) >= 3
        and argv[0].rsplit("/", 1)[-1] in _SHELLS
        and argv[1].startswith("-")
        and "c" in argv[1]
    ):
        return _display_for_command(argv[-1])
    return _display_for_tokens(list(argv))


@lru_cache(maxsize=8192)
def _display_for_command(command: str) -> str | None:
    fallback = None
    for segment in _SEGMENT_SPLIT.split(command.strip()):
        display = _display_for_tokens(segment.split())
        if display is None:
            continue
        if display in _PRELUDE:
            fallback = fallback or display
            continue
        return display
    return fallback


def _display_for_tokens(tokens: list[str]) -> str | None:
    tokens = [t.strip("'\"") for t in tokens]
    tokens = [t for t in tokens if t not in ("(", "{")]
    rest = tokens[_program_index(tokens) :]
    if not rest or not rest[0]:
        return None
    program = rest[0].lstrip("({").rsplit("/", 1)[-1]
    if not program:
        return None
    special = _module_or_capability(program, rest)
    if special:
        return special
    if program in SUBCOMMAND_PROGRAMS:
        subcommand = _subcommand(program, rest)
        if subcommand:
            return f"{program} {subcommand}"
    return program


def _module_or_capability(program: str, rest: list[str]) -> str | None:
    """`python -m module` and `ghx run capability`, named by what they run."""
    if len(rest) < 3:
        return None
    if program in ("python", "python3") and rest[1] == "-m":
        return f"{program} -m {rest[2]}"
    if program == "ghx" and rest[1] == "run" and _CAPABILITY.match(rest[2]):
        return f"ghx:{rest[2]}"
    return None


def _program_index(tokens: list[str]) -> int:
    """Where the program starts, past `VAR=value` assignments and wrappers like `sudo`."""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if _ENV_ASSIGNMENT.match(token):
            index += 1
        elif token in _WRAPPERS:
            # The wrapper's own options (`sudo -E`, `timeout 30s`) are not the program either.
            index += 1
            while index < len(tokens) and _wrapper_option(token, tokens[index]):
                index += 1
        else:
            break
    return index


def _wrapper_option(wrapper: str, token: str) -> bool:
    return token.startswith("-") or (wrapper == "timeout" and token[:1].isdigit())


def _subcommand(program: str, rest: list[str]) -> str | None:
    """The subcommand after the program (past git's global options), if there is one."""
    position = 1
    if program == "git":
        while position < len(rest) and rest[position].startswith("-"):
            position += 2 if rest[position] in _GIT_VALUE_OPTIONS else 1
    if position >= len(rest):
        return None
    word = rest[position]
    if not word or word.startswith("-"):
        return None
    return word


#: A tool-name resolver: ``(tool name, tool input) -> display name``.
Resolver = Callable[[str, Any], str]


def load_resolver(resolve_name: Resolver | str | None, analyzer: str) -> Resolver:
    """The resolver given as an option: a callable, ``"package.module:function"``, or
    None for the default."""
    if resolve_name is None:
        return resolve_tool_display_name
    if isinstance(resolve_name, str):
        module_name, _, attr = resolve_name.partition(":")
        if not module_name or not attr:
            raise ConfigError(
                f"analyzer {analyzer!r}: option resolve_name: expected "
                f"'package.module:function', got {resolve_name!r}"
            )
        try:
            target: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                target = getattr(target, part)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"analyzer {analyzer!r}: option resolve_name: cannot load {resolve_name!r}: {exc}"
            ) from None
        resolve_name = target
    if not callable(resolve_name):
        raise ConfigError(
            f"analyzer {analyzer!r}: option resolve_name: expected a callable "
            "(name, input) -> str, "
            f"got {type(resolve_name).__name__}"
        )
    return _checked(resolve_name, analyzer)


def _checked(resolve: Resolver, analyzer: str) -> Resolver:
    # A custom resolver returning a non-string would corrupt every table; say whose fault it is.
    def checked(name: str, tool_input: Any) -> str:
        try:
            display = resolve(name, tool_input)
        except Exception as exc:
            raise ProfilerError(
                f"analyzer {analyzer!r}: resolve_name({name!r}, ...) failed: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(display, str) or not display:
            raise ProfilerError(
                f"analyzer {analyzer!r}: resolve_name({name!r}, ...) returned "
                f"{display!r}; expected a non-empty string"
            )
        return display

    checked.__wrapped__ = resolve  # type: ignore[attr-defined]
    return checked
