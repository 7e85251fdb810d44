"""Python's cyclic garbage collector paused while a command starts, then resumed for its work.

Starting ``profiler run`` creates some hundred thousand objects (modules,
classes, the profile, the components) that live until the process ends. The
collector would scan each of them at least once, about 20 ms of a 1-cell run's
0.35 s (bench/README.md). The command line pauses it on entry; when the work
starts it freezes what start-up made (``gc.freeze``: never scanned again) and
resumes. What start-up left as unreachable cycles (some 4,000 small objects
in a 1-cell run) is frozen with the rest and kept until the process ends: a
collection to find them would cost what the pause saves. A program that never
paused the collector is not affected by :func:`resume`.
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]

_paused = False


def pause() -> None:
    """Stop automatic collection until :func:`resume` (nothing happens if it is off already)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume(*, freeze: bool = True) -> None:
    """Collect automatically again if :func:`pause` stopped it; ``freeze``: never scan
    what exists now again."""
    global _paused
    if not _paused:
        return
    _paused = False
    if freeze:
        gc.freeze()
    gc.enable()
