"""Progress of ``profiler run`` on stderr: a rich bar on a terminal, plain lines in CI, or nothing.

Both count cells, errored cells (an error after the retries), unsuccessful
cells (ran, but the scorer said no), and running tokens and cost, from the
``profiler_progress`` hook's events.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

import attrs
import click

from ..plugins.markers import hookimpl
from .terminal import markup_safe

if TYPE_CHECKING:  # pragma: no cover
    from ..model import ProfileRow

#: values of ``--progress``
PROGRESS_STYLES = ("auto", "rich", "plain", "none")


@attrs.define
class Tally:
    """Running counts of a run's cells."""

    total: int = 0
    completed: int = 0
    errored: int = 0
    unsuccessful: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    #: rows whose cost is known (an unpriced model's is not: it is never counted as $0)
    priced: int = 0
    #: sessions allowed at once (shown when it changes, i.e. with concurrency: auto)
    concurrency: int | None = None
    started: float = attrs.Factory(time.monotonic)

    def add(self, row: ProfileRow | None) -> None:
        """Count one finished cell."""
        self.completed += 1
        if row is None:
            return
        if row.error:
            self.errored += 1
        elif not row.success:
            self.unsuccessful += 1
        self.tokens += row.tokens.total
        if (getattr(row, "extensions", None) or {}).get("cost_source") != "unknown":
            self.cost_usd += row.cost.total_usd or 0.0
            self.priced += 1

    def cost(self) -> str:
        """``$0.1234``, or ``cost unknown`` when no finished row had a price."""
        return (
            "cost unknown"
            if self.completed and not self.priced
            else f"${self.cost_usd:.4f}"
        )

    def line(self) -> str:
        """One plain progress line."""
        pct = f" ({100 * self.completed // self.total}%)" if self.total else ""
        elapsed = int(time.monotonic() - self.started)
        return (
            f"progress: {self.completed}/{self.total} cells{pct} · {self.errored} errored · "
            f"{self.unsuccessful} unsuccessful · {_tokens(self.tokens)} tokens · {self.cost()} · "
            f"{elapsed // 60:02d}:{elapsed % 60:02d} elapsed"
            + (f" · {self.concurrency} at once" if self.concurrency is not None else "")
        )


def _tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}k"
    return str(n)


class PlainProgress:
    """A line on stderr every ``every_s`` seconds or every 10% of the cells, whichever
    comes first."""

    def __init__(self, stream: TextIO | None = None, every_s: float = 30.0) -> None:
        self.stream = stream or sys.stderr
        self.every_s = every_s
        self.tally = Tally()
        self._last_time = time.monotonic()
        self._last_decile = 0

    @hookimpl
    def profiler_progress(self, event: Any) -> None:
        """Count and, now and then, print."""
        if event.kind == "run_started":
            self.tally = Tally(total=event.total)
            self._print()
        elif event.kind == "iteration_completed":
            self.tally.add(event.row)
            self.tally.concurrency = event.concurrency
            decile = 10 * self.tally.completed // max(self.tally.total, 1)
            if (
                decile > self._last_decile
                or time.monotonic() - self._last_time >= self.every_s
            ):
                self._last_decile = decile
                self._print()

    def _print(self) -> None:
        self._last_time = time.monotonic()
        print(self.tally.line(), file=self.stream, flush=True)

    def stop(self) -> None:
        """Nothing to tear down."""


class RichProgress:
    """A rich progress bar on stderr with errored / unsuccessful counts, tokens and cost."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(
                "{task.fields[errored]} errored · {task.fields[unsuccessful]} unsuccessful"
            ),
            TextColumn(
                "{task.fields[tokens]} tok · {task.fields[cost]} · {task.fields[at_once]} at once"
            ),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.task: Any = None
        self.tally = Tally()

    @hookimpl
    def profiler_progress(self, event: Any) -> None:
        """Advance the bar."""
        if event.kind == "run_started":
            self.tally = Tally(total=event.total)
            self.progress.start()
            self.task = self.progress.add_task(
                "profiling", total=event.total, **self._fields()
            )
        elif event.kind == "warmup_started" and self.task is not None:
            self.progress.update(
                self.task, description=f"warmup {markup_safe(event.mode)}"
            )
        elif event.kind == "iteration_completed" and self.task is not None:
            self.tally.add(event.row)
            self.tally.concurrency = event.concurrency
            self.progress.update(
                self.task,
                completed=self.tally.completed,
                description=markup_safe(event.mode),
                **self._fields(),
            )
        elif event.kind == "run_completed":
            self.stop()

    def _fields(self) -> dict[str, Any]:
        t = self.tally
        return {
            "errored": t.errored,
            "unsuccessful": t.unsuccessful,
            "tokens": _tokens(t.tokens),
            "cost": t.cost(),
            "at_once": t.concurrency if t.concurrency is not None else "–",
        }

    def stop(self) -> None:
        """Stop rendering (idempotent)."""
        if self.task is not None:
            self.progress.stop()
            self.task = None


def make_progress(style: str) -> RichProgress | PlainProgress | None:
    """The progress display for ``--progress``: ``auto`` is rich on a terminal, plain
    lines otherwise."""
    if style == "auto":
        style = "rich" if sys.stderr.isatty() else "plain"
    if style == "rich":
        return RichProgress()
    if style == "plain":
        return PlainProgress()
    return None


progress_option = click.option(
    "--progress",
    type=click.Choice(PROGRESS_STYLES),
    default="auto",
    show_default=True,
    help="Progress on stderr: a bar on a terminal (rich), a line every 30 s or 10% "
    "(plain), or none.",
)
