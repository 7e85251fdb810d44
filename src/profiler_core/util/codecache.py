"""attrs' generated methods, compiled once per machine instead of once per process.

attrs writes each class's ``__init__`` as Python source and compiles it when the
class is defined: the parser and compiler were a fifth of a one-cell run's
instructions, for the same ~240 scripts every time (bench/README.md). Like
Python's own ``__pycache__``, the compiled code is kept in a file, here under
the user's cache folder, and read back on the next start:
``$XDG_CACHE_HOME/agent-profiler/generated-code/<python>/`` (``~/.cache/...``).

A file holds the script's file name, its compiler flags and its source beside
the code; it is used only when all three are the ones asked for, so a stale or
colliding file is compiled again (and replaced), never run in place of another
script. There is one file per generated file name (one per class and method
kind, ~300 small files for a run; the folder can be deleted at any time). The
code is what ``compile`` returns for that source (``marshal`` is the format of
``.pyc`` files). Nothing is written when ``sys.dont_write_bytecode`` is set
(``PYTHONDONTWRITEBYTECODE``) or the folder cannot be written; ``PROFILER_CODE_CACHE=0``
turns the cache off, and an absolute path there puts it in that folder instead (the test
suite's processes share one per worker). A version of attrs without the
one function this replaces (``attr._make._compile_and_eval``) is left as it is.
cattrs' generated (un)structure functions go through the same cache once the
converter's module asks for it (:func:`cover`).
"""

from __future__ import annotations
import __future__

import builtins
import contextlib
import marshal
import os
import sys
import zlib
from pathlib import Path
from types import CodeType
from typing import Any

#: ``PROFILER_CODE_CACHE=0``: attrs compiles as it always does; no file is read or written.
CACHE_ENV = "PROFILER_CODE_CACHE"
#: The parameters of attrs' ``_compile_and_eval`` this module stands in for.
_SIGNATURE = ("script", "globs", "locs", "filename")


def cache_folder() -> Path:
    """Where this Python's compiled scripts are kept (bytecode differs between versions):
    below ``$PROFILER_CODE_CACHE`` when it names a folder, else the user's cache folder."""
    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:08x}"
    named = os.environ.get(CACHE_ENV, "")
    if os.path.isabs(named):
        return Path(named) / tag
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agent-profiler" / "generated-code" / tag


class CodeCache:
    """Compiled scripts by file name, flags and source, in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        # str paths: a start reads ~300 of these files, and pathlib's objects cost a third
        # more than the reads themselves
        self._prefix = str(folder) + os.sep
        self._made_folder = False

    def _path(self, filename: str, script: str) -> str:
        # One file per generated file name (attrs and cattrs name each after its class), not
        # per script: a script that differs in every process (attrs' ``__hash__`` holds the
        # class name's string hash, which PYTHONHASHSEED varies) replaces its one file
        # instead of adding one per start. Unnamed scripts go by their text.
        digest = zlib.crc32((filename or script).encode())
        return f"{self._prefix}{digest:08x}.code"

    def code(self, script: str, filename: str, flags: int) -> CodeType:
        """The compiled ``script``: read from its file, or compiled and written there."""
        path = self._path(filename, script)
        try:
            with open(path, "rb") as file:
                kept = marshal.loads(file.read())
        except (OSError, ValueError, EOFError, TypeError):
            kept = None
        if (
            isinstance(kept, tuple)
            and len(kept) == 4
            and kept[:3] == (filename, flags, script)
            and isinstance(kept[3], CodeType)
        ):
            return kept[3]
        code = compile(script, filename, "exec", flags=flags, dont_inherit=True)
        if not sys.dont_write_bytecode:
            self._write(path, marshal.dumps((filename, flags, script, code)))
        return code

    def _write(self, path: str, data: bytes) -> None:
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            if not self._made_folder:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._made_folder = True
            with open(tmp, "wb") as file:
                file.write(data)
            os.replace(
                tmp, path
            )  # atomic: a concurrent start reads the old file or this one
        except OSError:  # a read-only home only loses the speed-up
            with contextlib.suppress(OSError):
                os.unlink(tmp)


#: The process's cache once :func:`install` has run (the command line's start).
_CACHE: list[CodeCache] = []


def _future_flags(code: CodeType) -> int:
    """The future flags a ``compile`` call made from ``code`` inherits (annotations only)."""
    flag = __future__.annotations.compiler_flag
    return flag if code.co_flags & flag else 0


def install() -> bool:
    """Route attrs' compilation of generated methods through the cache; whether it now is.

    Idempotent; returns False (attrs untouched) when ``PROFILER_CODE_CACHE=0`` or when
    the installed attrs compiles its scripts some other way.
    """
    if os.environ.get(CACHE_ENV, "1") == "0":
        return False
    from attr import _make

    original = getattr(_make, "_compile_and_eval", None)
    if getattr(original, "_profiler_code_cache", False):
        return True
    code = getattr(original, "__code__", None)
    if code is None or code.co_varnames[: len(_SIGNATURE)] != _SIGNATURE:
        return False
    # attrs' compile() inherits its module's future imports: the cached code must too
    flags = _future_flags(code)
    if not _CACHE:
        _CACHE.append(CodeCache(cache_folder()))
    cache = _CACHE[0]

    def _compile_and_eval(
        script: str,
        globs: dict[str, Any] | None,
        locs: Any = None,
        filename: str = "",
    ) -> None:
        eval(cache.code(script, filename, flags), globs, locs)

    _compile_and_eval._profiler_code_cache = True  # type: ignore[attr-defined]
    _make._compile_and_eval = _compile_and_eval
    return True


def cover(module: Any) -> None:
    """Let ``module``'s calls of ``compile(source, filename, "exec")`` read the cache.

    For a library that compiles generated source itself (cattrs' ``gen``): a
    module-level ``compile`` is found before the built-in. Does nothing before
    :func:`install` (a process that is not the command line) or when it is off.
    """
    if not _CACHE or getattr(module, "compile", None) is not None:
        return
    cache = _CACHE[0]
    # the flags its own compile() calls inherit: those of the module's code
    probe = next(
        (
            f.__code__
            for f in vars(module).values()
            if getattr(f, "__module__", None) == module.__name__
            and hasattr(f, "__code__")
        ),
        None,
    )
    if probe is None:
        return
    flags = _future_flags(probe)

    def compile_cached(
        source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any
    ) -> Any:
        if args or kwargs or mode != "exec" or not isinstance(source, str):
            return builtins.compile(source, filename, mode, *args, **kwargs)
        return cache.code(source, str(filename), flags)

    module.compile = compile_cached
