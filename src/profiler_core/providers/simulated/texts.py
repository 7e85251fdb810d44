"""The text tables: error messages, edits and the agent's thoughts."""

from __future__ import annotations

# Realistic error texts by kind; {label}/{path} are filled in per call.
ERROR_TEXTS: dict[str, tuple[str, ...]] = {
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
ERROR_NAMES = {
    "not_found": "not found",
    "edit_mismatch": "edit mismatch",
    "cmd_not_found": "command not found",
    "timeout": "timeout",
    "unauthorized": "401 Unauthorized",
    "json_parse": "JSON parse error",
    "permission": "permission denied",
}

EDITS = {
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

GH_JSON_ERROR = {
    "json_parse": (
        "failed to parse JSON response: invalid character '<' looking for "
        "beginning of value"
    )
}

WRONG_TOP = {"src": "lib", "tests": "test", "test": "tests"}

EXPLORE_THOUGHTS: tuple[str, ...] = (
    "The user wants me to {summary}. Let me look at the code first.",
    "I should understand the layout of {project} before changing anything.",
    "First I need to find where this is implemented.",
)
INVESTIGATE_THOUGHTS: tuple[str, ...] = (
    "Let me run the tests to see what fails.",
    "The helper in {src} looks suspicious; I'll read it closely.",
    "I need to confirm the failure before editing.",
)
EDIT_THOUGHTS: tuple[str, ...] = (
    "The bug is in {src}: the wrong operator. I'll fix it.",
    "I'll make the minimal change in {src} and keep the API the same.",
)
VERIFY_THOUGHTS: tuple[str, ...] = (
    "Now run the test suite again to verify the fix.",
    "Let me verify the change with `{test}`.",
)
RECOVER_THOUGHTS = {
    "not_found": "That path does not exist; let me search for the right file.",
    "edit_mismatch": (
        "The edit did not apply; the file must differ from what I assumed. "
        "Re-reading it."
    ),
    "cmd_not_found": "rg is not installed here; I'll use the grep tool instead.",
    "timeout": "That timed out; I'll retry with a narrower scope.",
    "unauthorized": "Got 401 Unauthorized; let me check the GitHub auth status and retry.",
    "json_parse": "The output was not the JSON I expected; I'll run it without the JSON filter.",
    "permission": "Permission denied; let me check the directory permissions.",
}
PROGRESS = (
    "Looked at {src}; the problem seems to be in the arithmetic helper.",
    "Found the relevant code. Continuing.",
    "Tests reproduce the failure. Working on a fix.",
    "Applied a change to {src}; verifying next.",
)
