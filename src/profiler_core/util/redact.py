"""Keep secrets off disk and off the terminal: one object knows every secret value and masks it.

A :class:`Redactor` masks each secret it knows in every form text can carry it:
raw, JSON-escaped (once and twice, ASCII or not) and URL-encoded; plus strings
shaped like API keys. The rule for short values (docs/reliability.md, "Secrets"):

* a secret shorter than ``MIN_SECRET_LENGTH`` (4) characters is never masked;
* one shorter than ``ANYWHERE_LENGTH`` (8) is masked only as a whole word (not
  touching a letter, digit, ``_`` or ``.``), and not at all when it is a JSON
  number or ``true``/``false``/``null`` (masking it would corrupt the JSON rows);
* a longer one is masked wherever it appears (a number only as a whole number).

Secrets a profile declares (``profile_secrets``) that fall under these rules
are named, never shown, in a warning. Values of secret-named variables of the
process environment are a guess, so only those of ``ANYWHERE_LENGTH`` or more
count. Every secret a redactor learns is also remembered for the process, so
log lines (:class:`RedactingFilter`) and the CLI's error lines
(:func:`redact_text`) mask the run's secrets too.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

REDACTED = "[REDACTED]"

#: Environment variable names whose values are secrets.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)

#: Option names (``api_key``, ``token``, ``password``...) whose string values are secrets.
SECRET_OPTION = re.compile(
    r"(?:^|_)(?:api_?key|access_?key|private_?key|secret(?:_?key)?|token|password|passwd|credentials?)$",
    re.IGNORECASE,
)

#: Shapes of common API keys and bearer tokens (matched anywhere in text).
KEY_SHAPES = re.compile(
    r"""
    sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{16,}   # OpenAI / Anthropic / Stripe style
    | gh[pousr]_[A-Za-z0-9]{20,}                        # GitHub tokens
    | github_pat_[A-Za-z0-9_]{20,}
    | xox[abprs]-[A-Za-z0-9\-]{10,}                     # Slack
    | AKIA[0-9A-Z]{16}                                  # AWS access key id
    | AIza[0-9A-Za-z_\-]{35}                            # Google API key
    | hf_[A-Za-z0-9]{30,}                               # Hugging Face
    | (?P<bearer>Bearer\ )[A-Za-z0-9._\-]{16,}          # bearer tokens in headers/logs
    """,
    re.VERBOSE,
)

#: The shapes above again, each found from one literal (``-``, ``_``, ``AKIA``...) with what
#: precedes it as a look-behind: text holds a key shape if and only if one of these matches it.
#: CPython's regex engine scans for a pattern's literal first character at memchr speed, but
#: tries every position whose character starts *any* alternative of an alternation: one
#: alternation of the shapes costs ~12x more on a 16 KB trace than these four scans.
KEY_ANCHORS = (
    re.compile(
        r"-(?:(?<=sk-)(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{16,}|(?<=xox[abprs]-)[A-Za-z0-9\-]{10,})"
    ),
    re.compile(
        r"_(?:(?<=gh[pousr]_)[A-Za-z0-9]{20,}|(?<=github_)pat_[A-Za-z0-9_]{20,}|(?<=hf_)[A-Za-z0-9]{30,})"
    ),
    re.compile(r"A(?:KIA[0-9A-Z]{16}|Iza[0-9A-Za-z_\-]{35})"),
    re.compile(r"Bearer [A-Za-z0-9._\-]{16,}"),
)

#: Characters that every spelling of a secret keeps as they are (JSON and URL escapes leave them).
_KEPT = re.compile(r"[A-Za-z0-9_.~-]+")
#: A kept run at least this long stands for all the spellings of its secret in the first look.
_RUN_LENGTH = 4

#: Shorter secrets are never masked: every occurrence of "ab" would go.
MIN_SECRET_LENGTH = 4
#: From this length a secret is masked inside other text; shorter ones only as whole words.
ANYWHERE_LENGTH = 8

_JSON_TOKEN = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
#: what may not touch a secret masked only whole: a word's characters; for a number also
#: its sign and point
_WORD = "A-Za-z0-9_"
_NUMBER = "A-Za-z0-9_.+\\-"


def unmaskable(value: str) -> str | None:
    """Why a declared secret cannot be masked (``None`` when it can); the reason never
    shows the value."""
    if len(value) < MIN_SECRET_LENGTH:
        return f"shorter than {MIN_SECRET_LENGTH} characters"
    if len(value) < ANYWHERE_LENGTH and _JSON_TOKEN.fullmatch(value):
        return f"a number or JSON word shorter than {ANYWHERE_LENGTH} characters"
    return None


def _mask(match: re.Match[str]) -> str:
    # Keep "Bearer " so the masked header still reads as one (a lookbehind would slow every search).
    return (match.group("bearer") or "") + REDACTED


class Redactor:
    """Knows every secret value of a run and masks it in raw, JSON-escaped and URL-encoded forms."""

    def __init__(
        self, environ: Mapping[str, str] | None = None, extra_values: Iterable[str] = ()
    ) -> None:
        environ = os.environ if environ is None else environ
        self._anywhere: set[str] = set()
        self._words: set[str] = set()
        self._numbers: set[str] = set()
        #: one substring per secret (or each spelling of one without a long kept run):
        #: the first look
        self._needles: tuple[str, ...] = ()
        self._patterns: tuple[re.Pattern[str], ...] = ()
        self.learn_environment(environ)
        self.add(extra_values)

    def learn_environment(self, environ: Mapping[str, str]) -> None:
        """Mask the secrets of a process environment too (a worker's, beside the driver's)."""
        self._learn(
            v
            for k, v in environ.items()
            if SECRET_NAME.search(k) and len(v) >= ANYWHERE_LENGTH
        )

    def add(self, secrets: Iterable[str] | Mapping[str, str]) -> list[str]:
        """Mask these values from now on; a mapping gives each a label. Returns the
        labels it cannot mask."""
        labelled = (
            secrets.items()
            if isinstance(secrets, Mapping)
            else ((None, v) for v in secrets)
        )
        refused, values = [], []
        for label, value in labelled:
            if not value:
                continue
            if unmaskable(value) is not None:
                if label is not None:
                    refused.append(f"{label} ({unmaskable(value)})")
                continue
            values.append(value)
        _remember(values)
        self._learn(values)
        return refused

    def _learn(self, values: Iterable[str]) -> None:
        needles = set(self._needles)
        for value in values:
            forms = spellings(value)
            if _JSON_TOKEN.fullmatch(value):
                self._numbers.update(forms)
            else:
                (
                    self._words if len(value) < ANYWHERE_LENGTH else self._anywhere
                ).update(forms)
            encoded = base64_spellings(value)
            needles.update(_needles(value, forms - encoded) | encoded)
        self._needles = tuple(sorted(needles, key=len, reverse=True))
        patterns = []
        for forms, edge in (
            (self._anywhere, None),
            (self._words, _WORD),
            (self._numbers, _NUMBER),
        ):
            if forms:
                # Longest first so a secret containing another is masked whole.
                either = "|".join(map(re.escape, sorted(forms, key=len, reverse=True)))
                patterns.append(
                    re.compile(
                        either
                        if edge is None
                        else f"(?<![{edge}])(?:{either})(?![{edge}])"
                    )
                )
        self._patterns = tuple(patterns)

    def __call__(self, text: str) -> str:
        """Return ``text`` with every secret replaced by ``[REDACTED]``."""
        # Most text holds no secret: one scan per needle and per key anchor, at memchr speed, says
        # so. Only text that may hold one goes through the (much slower) masking patterns.
        if self._needles and any(needle in text for needle in self._needles):
            for pattern in self._patterns:
                text = pattern.sub(REDACTED, text)
        if holds_key_shape(text):
            text = KEY_SHAPES.sub(_mask, text)
        return text


def holds_key_shape(text: str) -> bool:
    """Whether ``KEY_SHAPES`` matches somewhere in ``text`` (each anchor's scan starts
    where memchr first finds it)."""
    for anchor in KEY_ANCHORS:
        start = text.find(anchor.pattern[0])
        if start >= 0 and anchor.search(text, start):
            return True
    return False


def _needles(value: str, forms: set[str]) -> set[str]:
    """Substrings that every spelling of ``value`` contains: its longest kept run, else
    the spellings themselves."""
    run = max(_KEPT.findall(value), key=len, default="")
    return {run} if len(run) >= _RUN_LENGTH else forms


def spellings(value: str) -> set[str]:
    """Every form a secret takes in text we write: raw, JSON-escaped (once, twice, ASCII
    or not), URL-encoded."""
    forms = {
        value,
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1],
    }
    # Escaped once more: a secret inside a JSON string that is itself serialised (a tool input).
    forms |= {json.dumps(f, ensure_ascii=False)[1:-1] for f in list(forms)}
    # In URLs and form bodies (a key in a query string, credentials in a base URL).
    forms |= {quote(value, safe=""), quote(value), quote_plus(value)}
    return forms | base64_spellings(value)


def base64_spellings(value: str) -> set[str]:
    """The parts of ``value``'s base64 (standard and URL-safe) that do not depend on
    what surrounds it.

    Base64 encodes three bytes as four characters, so a secret inside a larger encoded
    text (``Basic``
    credentials ``user:key``, a config file written as base64) is spelled one of three
    ways, by its offset
    modulo 3; each spelling's first and last characters mix in the neighbours' bits and
    are left out.
    Only for secrets masked anywhere (``ANYWHERE_LENGTH`` or longer): a shorter core
    would mask chance text.
    """
    if len(value) < ANYWHERE_LENGTH:
        return set()
    raw = value.encode("utf-8")
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode("ascii")
        core = encoded[(8 * offset + 5) // 6 : (8 * (offset + len(raw))) // 6]
        cores |= {core, core.translate(_URLSAFE)}
    return cores


_URLSAFE = str.maketrans("+/", "-_")


def secret_env_values(environment: Mapping[str, Any]) -> list[str]:
    """The values of secret-named variables in a mapping (a mode's environment)."""
    return [str(v) for k, v in environment.items() if SECRET_NAME.search(k)]


# -- what a profile marks or passes as secret -----------------------------------


def profile_secrets(
    options: Any, where: str, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Every secret an options mapping marks or passes, labelled by where it is (never
    by its value).

    Found: the value of each variable a ``*_env`` option names (``api_key_env``), values of
    secret-named variables in ``env``/``environment`` mappings (e.g. ``mcp_servers.x.env``),
    ``Authorization`` headers, options named like ``api_key``/``token``/``password``, and
    credentials inside URLs (``https://user:pass@host``, ``?api_key=...``).
    """
    environ = os.environ if environ is None else environ
    return dict(_walk(options, where, environ))


def _walk(
    value: Any, where: str, environ: Mapping[str, str]
) -> Iterator[tuple[str, str]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            path = f"{where}.{key}"
            name = str(key)
            if isinstance(item, str) and name.endswith("_env"):
                if environ.get(item):
                    yield f"${item} (named by {path})", environ[item]
            elif isinstance(item, Mapping) and name in (
                "env",
                "environment",
                "headers",
            ):
                yield from _variables(item, path)
                yield from _walk(
                    {
                        k: v
                        for k, v in item.items()
                        if not isinstance(v, str | int | float)
                    },
                    path,
                    environ,
                )
            elif isinstance(item, str) and SECRET_OPTION.search(name):
                yield path, item
            else:
                yield from _walk(item, path, environ)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _walk(item, f"{where}[{i}]", environ)
    elif isinstance(value, str) and "://" in value:
        yield from url_secrets(value, where)


def _variables(variables: Mapping[str, Any], where: str) -> Iterator[tuple[str, str]]:
    for name, value in variables.items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            continue
        text = str(value)
        if SECRET_NAME.search(name) or name.lower() in (
            "authorization",
            "proxy-authorization",
            "cookie",
        ):
            yield f"{where}.{name}", text
            scheme, _, credential = text.partition(" ")
            if credential and scheme.lower() in ("bearer", "basic", "token"):
                yield f"{where}.{name} (credential)", credential


def url_secrets(url: str, where: str) -> Iterator[tuple[str, str]]:
    """Credentials inside a URL: the password (or a lone user name, often a token) and
    secret-named query values."""
    try:
        parts = urlsplit(url.strip())
        password, username = parts.password, parts.username
    except ValueError:
        return
    if password:
        yield f"{where} (password in the URL)", password
    elif username:
        yield f"{where} (user in the URL)", username
    for key, value in parse_qsl(parts.query):
        if value and (
            SECRET_OPTION.search(key)
            or SECRET_NAME.search(key)
            or key.lower() in ("sig", "signature", "auth")
        ):
            yield f"{where} (query parameter {key})", value


def run_redactor(
    provider_options: Mapping[str, Any],
    modes: Mapping[str, Any],
    judge: Any = None,
    scenarios: Iterable[Any] = (),
) -> tuple[Redactor, list[str]]:
    """The redactor of one run and a warning per declared secret it cannot mask.

    It knows the process environment's secrets, the provider's options, every mode's
    environment and ``provider_overrides``, the judge's ``base_url`` / ``api_key_env``, and the
    secret-named variables of every scenario's verifiers' and solution's ``env``.
    """
    secrets = profile_secrets(provider_options, "provider.options")
    for name, mode in modes.items():
        environment = getattr(mode, "environment", None) or {}
        secrets.update(
            {
                f"modes.{name}.environment.{k}": str(v)
                for k, v in environment.items()
                if SECRET_NAME.search(k)
            }
        )
        secrets.update(
            profile_secrets(
                getattr(mode, "provider_overrides", None) or {},
                f"modes.{name}.provider_overrides",
            )
        )
    if judge is not None:
        judge_options = {
            key: getattr(judge, key)
            for key in ("base_url", "api_key_env")
            if isinstance(getattr(judge, key, None), str)
        }
        secrets.update(profile_secrets(judge_options, "judge.options"))
    for scenario in scenarios:
        secrets.update(scenario_secrets(scenario))
    redactor = Redactor()
    warnings = [
        f"secret {label} is not redacted: see docs/reliability.md (Secrets) for the rule"
        for label in redactor.add(secrets)
    ]
    for warning in warnings:
        logging.getLogger("agent_profiler").warning("%s", warning)
    return redactor, warnings


def scenario_secrets(scenario: Any) -> dict[str, str]:
    """The secret-named variables (and ``Authorization`` credentials) of a scenario's
    verifiers' and solution's ``env``."""
    where = f"scenarios.{getattr(scenario, 'id', '?')}"
    found: dict[str, str] = {}
    for verifier in getattr(scenario, "verify", ()) or ():
        found.update(
            _variables(
                getattr(verifier, "env", None) or {},
                f"{where}.verify.{getattr(verifier, 'name', '?')}.env",
            )
        )
    solution = getattr(scenario, "solution", None)
    if solution is not None:
        found.update(
            _variables(getattr(solution, "env", None) or {}, f"{where}.solution.env")
        )
    return found


# -- text outside a run's files: log lines and error lines ------------------------

#: every secret a redactor learned in this process (in order; a dict as an ordered set)
_REMEMBERED: dict[str, None] = {}
_PROCESS: dict[str, Any] = {"key": None, "redactor": None}


def _remember(values: Iterable[str]) -> None:
    for value in values:
        _REMEMBERED.setdefault(value, None)


def redact_text(text: str) -> str:
    """Mask in ``text`` every secret of the process environment and every secret any run
    declared."""
    key = (
        len(_REMEMBERED),
        tuple(sorted((k, v) for k, v in os.environ.items() if SECRET_NAME.search(k))),
    )
    if _PROCESS["key"] != key:
        _PROCESS["redactor"] = Redactor(extra_values=list(_REMEMBERED))
        _PROCESS["key"] = key
    return _PROCESS["redactor"](text)


class RedactingFilter(logging.Filter):
    """A logging filter (put it on a handler) that masks secrets in the message and its
    traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Replace the record's message with its redacted text (arguments merged in)."""
        message = record.getMessage()
        redacted = redact_text(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        return True


def redact_log_handlers(logger: logging.Logger | None = None) -> None:
    """Put a :class:`RedactingFilter` on every handler of ``logger`` (default: the root
    logger), once."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
