"""``profiler view``: a local web viewer of runs, their rows and each session's transcript.

``index`` reads a run lazily (a columnar index of its rows built in one pass,
then one seek per session into the rows, the trace store and the analysis file),
``pages`` renders escaped HTML, ``app`` is the Starlette application and
``server`` serves it with Hypercorn on trio. Starlette and Hypercorn are the
``[view]`` extra; nothing here is imported by ``import profiler_core``. See
docs/viewer.md.
"""

from __future__ import annotations

#: What to install when Starlette or Hypercorn is missing.
INSTALL_HINT = "pip install 'agent-profiler[view]'"


def missing_dependency() -> str | None:
    """The one line to print when the viewer's extra is not installed, or None when it is."""
    import importlib

    for module in ("starlette", "hypercorn"):
        try:
            importlib.import_module(module)
        except ImportError:
            return (
                f"profiler view needs {module}, which is not installed: {INSTALL_HINT}"
            )
    return None


__all__ = ["INSTALL_HINT", "missing_dependency"]
