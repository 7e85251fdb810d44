"""The redactor's first look (needles and key anchors) never changes what it masks (issue 30).

Most text a run writes holds no secret, so ``Redactor`` first looks for one
substring per secret and for the key shapes' anchors, and runs the masking
patterns only when that look finds something. These tests hold the look to
be exact: on any text the redactor gives what applying every pattern does.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from profiler_core.util.redact import (
    KEY_ANCHORS,
    KEY_SHAPES,
    REDACTED,
    Redactor,
    _mask,
    base64_spellings,
    spellings,
    unmaskable,
)

#: What precedes a key's body: every shape's prefix, and near misses of them.
PREFIXES = [
    "sk-",
    "sk-ant-",
    "sk-proj-",
    "sk",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "ghx_",
    "gh_",
    "github_pat_",
    "github_",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
    "xoxc-",
    "xox-",
    "AKIA",
    "AIza",
    "AIz",
    "hf_",
    "hf",
    "Bearer ",
    "bearer ",
]
#: Other pieces: separators, quotes, escapes, words that hold a prefix's letters.
PIECES = st.sampled_from(
    [
        *PREFIXES,
        "-",
        "_",
        " ",
        '"',
        "\\",
        ".",
        "ü",
        "\n",
        "task-list",
        "snake_case",
        "A",
        "B",
    ]
)
#: bodies: runs of key characters, as long as a key's body, or one short of it, or one more
LENGTHS = st.sampled_from([9, 10, 11, 15, 16, 17, 19, 20, 21, 29, 30, 31, 34, 35, 36])
BODIES = st.one_of(
    st.tuples(st.sampled_from("aZ09_-."), LENGTHS).map(lambda pair: pair[0] * pair[1]),
    st.text(alphabet=st.sampled_from("aZ09"), min_size=8, max_size=40),
)
TOKENS = st.one_of(
    st.tuples(st.sampled_from(PREFIXES), BODIES).map("".join), PIECES, BODIES
)
TEXTS = st.lists(TOKENS, max_size=8).map("".join)
#: secrets: words of the characters every spelling keeps, and some that JSON or URLs escape
SECRETS = st.text(
    alphabet=st.sampled_from('abcXYZ019-_.~"\\/ +é€%&'), min_size=4, max_size=24
)


def masked_by_every_pattern(redactor: Redactor, text: str) -> str:
    """What the redactor gives when its first look is skipped: every masking pattern,
    then the key shapes."""
    for pattern in redactor._patterns:
        text = pattern.sub(REDACTED, text)
    return KEY_SHAPES.sub(_mask, text)


@settings(max_examples=1500, deadline=None)
@given(TEXTS)
def test_the_key_anchors_find_a_key_shape_exactly_when_the_shapes_do(text):
    assert any(anchor.search(text) for anchor in KEY_ANCHORS) == (
        KEY_SHAPES.search(text) is not None
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    secrets=st.lists(SECRETS, min_size=1, max_size=3),
    pieces=st.lists(st.one_of(PIECES, st.integers(0, 8)), max_size=20),
)
def test_the_first_look_never_changes_the_result(secrets, pieces):
    redactor = Redactor(environ={}, extra_values=secrets)
    # The text carries the secrets in their spellings (raw, JSON-escaped, URL-encoded)
    # among the pieces.
    forms = [sorted(spellings(s)) for s in secrets]
    parts = [
        p
        if isinstance(p, str)
        else forms[p % len(forms)][p % len(forms[p % len(forms)])]
        for p in pieces
    ]
    for text in (
        "".join(parts),
        json.dumps({"v": "".join(parts)}),
        json.dumps({"v": "".join(parts)}, ensure_ascii=False),
    ):
        assert redactor(text) == masked_by_every_pattern(redactor, text)


@settings(max_examples=300, deadline=None)
@given(SECRETS)
def test_each_needle_of_a_secret_is_in_every_spelling_of_it(secret):
    assume(unmaskable(secret) is None)  # never masked: it has no spellings to look for
    redactor = Redactor(environ={}, extra_values=[secret])
    for form in spellings(secret):
        assert any(needle in form for needle in redactor._needles)


def test_a_secret_found_by_its_needle_is_masked_in_every_spelling():
    secret = 'pa"ss/word-0123456789'
    redactor = Redactor(environ={"SERVICE_TOKEN": secret})
    # one look for all its plain spellings, and one per spelling inside base64 (which
    # keeps no run of it)
    assert set(redactor._needles) == {"word-0123456789", *base64_spellings(secret)}
    for form in spellings(secret):
        assert redactor(f"x {form} y") == f"x {REDACTED} y"


def test_text_without_secrets_or_key_shapes_comes_back_unchanged():
    redactor = Redactor(environ={"SERVICE_TOKEN": "tok-0123456789abcdef"})
    text = json.dumps(
        {
            "path": "src/task-list/snake_case.py",
            "note": "Bearer of news",
            "id": "AKIA-short",
        }
    )
    assert redactor(text) is text
