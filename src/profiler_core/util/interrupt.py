"""Ctrl-C on the command line: the first one asks for a clean stop, any later one exits 130 at once.

The run's own watcher handles both while the matrix runs; ``arm`` covers what
comes after it (cleanup, hooks, the summary) and a first Ctrl-C outside the
run (loading the profile, writing a report), where Python's default handler
would raise ``KeyboardInterrupt`` again in the middle of the cleanup.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

#: The exit status of an interrupted command (128 + SIGINT), as shells report it.
EXIT_STATUS = 130


def _exit_now(signum: int, frame: Any) -> None:
    os.write(2, b"\nInterrupted again: exiting now\n")
    os._exit(EXIT_STATUS)


def arm() -> None:
    """After a first Ctrl-C: make the next one end the process at once with status 130
    (main thread only)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _exit_now)


def armed() -> bool:
    """True when the next Ctrl-C exits at once."""
    return signal.getsignal(signal.SIGINT) is _exit_now


def leave(status: int = EXIT_STATUS) -> None:
    """End an interrupted command now: flush what was printed, then skip the interpreter's shutdown.

    During the shutdown Python puts the default SIGINT action back, so a second
    Ctrl-C there would kill the process (status -2) instead of exiting 130.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    logging = sys.modules.get("logging")
    if (
        logging is not None
    ):  # its handlers exist only if something logged (not imported at start-up)
        logging.shutdown()
    os._exit(status)
