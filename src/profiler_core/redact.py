"""Keep secrets off disk: environment secrets and API-key-shaped strings are masked."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping

REDACTED = "[REDACTED]"

#: Environment variable names whose values are secrets.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)

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

#: Literal prefixes of every shape above: text containing none of them skips the (slow) regex.
_KEY_PREFIXES = re.compile(r"sk-|gh[pousr]_|github_pat_|xox|AKIA|AIza|hf_|Bearer ")

# Short values ("1", "true") are not secrets worth masking and would mangle text.
_MIN_SECRET_LENGTH = 8


def _mask(match: re.Match[str]) -> str:
    # Keep "Bearer " so the masked header still reads as one (a lookbehind would slow every search).
    return (match.group("bearer") or "") + REDACTED


class Redactor:
    """Masks known secret values and key-shaped strings in text."""

    def __init__(self, environ: Mapping[str, str] | None = None, extra_values: Iterable[str] = ()) -> None:
        environ = os.environ if environ is None else environ
        values = {v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= _MIN_SECRET_LENGTH}
        values.update(v for v in extra_values if v and len(v) >= _MIN_SECRET_LENGTH)
        self._secrets: set[str] = set()
        self._values: re.Pattern[str] | None = None
        self.add(values)

    def add(self, values: Iterable[str]) -> None:
        """Also mask these values from now on (e.g. a mode's environment), in every form JSON writes them."""
        for value in values:
            if value and len(value) >= _MIN_SECRET_LENGTH:
                # Redaction runs on serialised JSON, where `"`, `\\`, control characters and (with
                # ensure_ascii) non-ASCII text appear escaped: mask those spellings too.
                self._secrets.update({value, *_json_forms(value)})
        # Longest first so a secret containing another is masked whole.
        ordered = sorted(self._secrets, key=len, reverse=True)
        self._values = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None

    def __call__(self, text: str) -> str:
        """Return ``text`` with every secret replaced by ``[REDACTED]``."""
        # Substring tests run in C and are ~50x cheaper than the regexes; most text has no secret.
        if self._values is not None and any(secret in text for secret in self._secrets):
            text = self._values.sub(REDACTED, text)
        if _KEY_PREFIXES.search(text):
            text = KEY_SHAPES.sub(_mask, text)
        return text


def _json_forms(value: str) -> set[str]:
    forms = {json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1]}
    # Escaped once more: a secret inside a JSON string that is itself serialised (a tool input).
    forms |= {json.dumps(f, ensure_ascii=False)[1:-1] for f in list(forms)}
    forms.discard(value)
    return forms


def secret_env_values(environment: Mapping[str, str]) -> list[str]:
    """The values of secret-named variables in a mapping (a mode's environment)."""
    return [v for k, v in environment.items() if SECRET_NAME.search(k)]
