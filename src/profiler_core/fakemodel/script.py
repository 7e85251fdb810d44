"""The fake model's script file: YAML naming, reply by reply, the text, tool calls and
usage it answers.

```yaml
model: fake                       # the model name the server reports (optional)
replies:                          # reply n answers a conversation holding n tool
results; the last repeats
  - shell: echo hello             # a call of the agent's shell tool (bash, Bash or exec_command)
    thinking: I should run it.    # optional, sent as reasoning where the API has it
    usage: {input: 120, output: 15, cache_read: 40}
  - tool: read                    # any other tool, by the agent's name for it...
    arguments: {filePath: notes.txt}   # ...with its arguments
  - text: "Done: the command printed hello."
  - fail: 503                     # an HTTP error status
    message: overloaded
```

Every reply may carry ``usage`` (``input``, ``output``, ``cache_read``,
``cache_write``, ``reasoning``: tokens as the profiler counts them) and
``delay_s``. A bad file is one ``ConfigError`` naming the file and the field.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .replies import Fail, Reply, Shell, Text, ToolCall, Usage, steps

#: The reply kinds: exactly one of these keys per reply.
KINDS = ("text", "shell", "tool", "fail")
#: The keys every kind may have besides its own.
COMMON = ("thinking", "usage", "delay_s")
_OWN = {"text": (), "shell": (), "tool": ("arguments",), "fail": ("message",)}


def load_script(
    path: str | Path,
) -> tuple[Callable[[dict[str, Any]], Reply], str | None]:
    """The script of a YAML file (a :func:`~.replies.steps` callable) and the model name
    it gives, if any."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{path}: not valid YAML ({str(exc).splitlines()[0]})"
        ) from None
    return parse_script(data, str(path))


def parse_script(
    data: Any, source: str
) -> tuple[Callable[[dict[str, Any]], Reply], str | None]:
    """The script of already-parsed YAML data (see :func:`load_script`)."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: expected a mapping with `replies` (and optionally `model`)"
        )
    unknown = sorted(set(data) - {"model", "replies"})
    if unknown:
        raise ConfigError(
            f"{source}: unknown key(s) {', '.join(map(str, unknown))}; expected "
            "`model` and `replies`"
        )
    model = data.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ConfigError(f"{source}: model: expected a non-empty string")
    replies = data.get("replies")
    if not isinstance(replies, list) or not replies:
        raise ConfigError(f"{source}: replies: expected a non-empty list of replies")
    return steps(
        [parse_reply(item, f"{source}: replies[{i}]") for i, item in enumerate(replies)]
    ), model


def parse_reply(item: Any, where: str) -> Reply:
    """One reply of a script; ``where`` names it in errors (``file: replies[2]``)."""
    if not isinstance(item, dict):
        raise ConfigError(f"{where}: expected a mapping with one of {', '.join(KINDS)}")
    kinds = [k for k in KINDS if k in item]
    if len(kinds) != 1:
        found = f"got {', '.join(kinds)}" if kinds else "got none"
        raise ConfigError(
            f"{where}: expected exactly one of {', '.join(KINDS)} ({found})"
        )
    kind = kinds[0]
    allowed = {kind, *COMMON, *_OWN[kind]}
    extra = sorted(map(str, set(item) - allowed))
    if extra:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(extra)} for a `{kind}` reply "
            f"(allowed: {', '.join(sorted(allowed))})"
        )
    thinking = _string(item, "thinking", where, default="")
    usage = _usage(item.get("usage"), f"{where}.usage")
    delay = _delay(item.get("delay_s", 0), f"{where}.delay_s")
    if kind == "text":
        return Text(
            _string(item, "text", where), thinking=thinking, usage=usage, delay_s=delay
        )
    if kind == "shell":
        return Shell(
            _string(item, "shell", where, non_empty=True),
            thinking=thinking,
            usage=usage,
            delay_s=delay,
        )
    if kind == "tool":
        arguments = item.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ConfigError(
                f"{where}.arguments: expected a mapping of the tool's arguments"
            )
        return ToolCall(
            _string(item, "tool", where, non_empty=True),
            arguments,
            thinking=thinking,
            usage=usage,
            delay_s=delay,
        )
    status = item["fail"]
    if (
        isinstance(status, bool)
        or not isinstance(status, int)
        or not 400 <= status <= 599
    ):
        raise ConfigError(
            f"{where}.fail: expected an HTTP error status (400-599), got {status!r}"
        )
    return Fail(
        status,
        _string(item, "message", where, default="fake model: scripted failure"),
        delay_s=delay,
    )


def _string(
    item: dict[str, Any],
    key: str,
    where: str,
    *,
    default: str | None = None,
    non_empty: bool = False,
) -> str:
    value = item.get(key, default)
    if not isinstance(value, str) or (non_empty and not value.strip()):
        raise ConfigError(
            f"{where}.{key}: expected a {'non-empty ' if non_empty else ''}string, got {value!r}"
        )
    return value


def _usage(value: Any, where: str) -> Usage | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConfigError(
            f"{where}: expected a mapping of token counts ({', '.join(Usage.__dataclass_fields__)})"
        )
    unknown = sorted(map(str, set(value) - set(Usage.__dataclass_fields__)))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; expected some of "
            f"{', '.join(Usage.__dataclass_fields__)}"
        )
    for key, count in value.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ConfigError(
                f"{where}.{key}: expected a whole number >= 0, got {count!r}"
            )
    return Usage(**value)


def _delay(value: Any, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= 3600
    ):
        raise ConfigError(
            f"{where}: expected seconds between 0 and 3600, got {value!r}"
        )
    return float(value)


#: The script ``profiler fake-model`` serves without a file, and ``profiler init --agent`` writes.
DEFAULT_SCRIPT = """\
# The fake model's script: what it answers, reply by reply (docs/fake-model.md).
# Reply n answers a conversation that already holds n tool results; the last one repeats.
model: fake
replies:
  - shell: echo hello                 # the agent's shell tool (bash, Bash or exec_command)
    thinking: I should run the command first.
    usage: {input: 120, output: 15, cache_read: 40}
  - text: "Done: the command printed hello."
    usage: {input: 150, output: 20, cache_read: 160}
"""
