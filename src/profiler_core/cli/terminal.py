"""What the CLI prints from data is text: never rich markup, never terminal control sequences.

A mode named ``[/x]`` must not crash a rich table, ``[bold red]`` must not
restyle it, and an agent's ANSI escape codes in an error message must not reach
the terminal raw. Cells become rich ``Text`` (no markup parsing) and every
control character is shown escaped (:func:`profiler_core.util.textcut.printable`).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Any

from ..util.redact import RedactingFilter
from ..util.textcut import printable
from ..util.textcut import (
    rich_text as cell,
)  # a rich table cell or line showing a value as it is

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console


def markup_safe(value: Any) -> str:
    """``value`` for a place that parses rich markup (a progress column): escaped, one line."""
    from rich.markup import escape

    return escape(printable(str(value), one_line=True))


def may_be_terminal() -> bool:
    """Whether rich would draw on stdout as on a terminal, by rich's own rules
    (``TTY_COMPATIBLE``, ``FORCE_COLOR``, a tty).

    Otherwise the CLI prints plain columns and never imports rich: start-up is
    felt in every scripted call and on every TAB (issue 30).
    """
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "1"
    force_color = os.environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color != ""
    try:
        return sys.stdout.isatty()
    except ValueError:  # a closed stream
        return False


def terminal_console(**options: Any) -> Console | None:
    """A rich ``Console`` (with ``options``) when rich would draw on stdout as on a
    terminal, else None.

    :func:`may_be_terminal` first, so piped output never imports rich; then rich's own
    check, which knows a few more non-terminals (Jupyter, IDLE).
    """
    if not may_be_terminal():
        return None
    from rich.console import Console

    console = Console(**options)
    return console if console.is_terminal else None


def plain_table(rows: list[tuple[str, ...]]) -> list[str]:
    """Rows as lines of columns two spaces apart; the last column is not padded."""
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[-1]]).rstrip()
        for row in rows
    ]


class PrintableFilter(logging.Filter):
    """A logging filter that shows control characters of a message escaped (data in a
    retry's error, a hook's failure)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Replace the record's message with its printable text."""
        message = record.getMessage()
        shown = printable(message)
        if shown != message:
            record.msg, record.args = shown, ()
        return True


def protect_log_handlers(logger: logging.Logger | None = None) -> None:
    """Give every handler of ``logger`` (default: the root) a redacting and a printable
    filter, once."""
    for handler in (logger or logging.getLogger()).handlers:
        for kind in (RedactingFilter, PrintableFilter):
            if not any(isinstance(f, kind) for f in handler.filters):
                handler.addFilter(kind())


__all__ = [
    "PrintableFilter",
    "cell",
    "markup_safe",
    "may_be_terminal",
    "plain_table",
    "protect_log_handlers",
    "terminal_console",
]
