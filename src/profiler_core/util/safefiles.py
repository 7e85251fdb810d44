"""Reading, copying into and keeping folders an agent or a verifier could write: no link
followed, nothing unbounded.

An agent owns its workspace and home, a verifier its logs folder: any name in
them may be a symbolic link to a host file, a FIFO that blocks a reader, a
sparse file of gigabytes or ``/proc/self/mem``. The host (the profiler's
user) reads such files only through :func:`read_limited` / :func:`read_beneath`
(a regular file, no link at any component below the trusted root, at most
``limit`` bytes), writes into such folders only through :func:`copy_beneath`
(every component a real folder, what was at the destination replaced, never
written through), and keeps one only after :func:`make_safe_to_keep`.

Every refusal is an :class:`UnsafeFileError`, an ``OSError`` whose
``strerror`` says what was refused, so code that already turns ``OSError``
into one line keeps doing so.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "UnsafeFileError",
    "copy_beneath",
    "make_safe_to_keep",
    "open_folder_beneath",
    "read_beneath",
    "read_limited",
    "read_tail",
    "scrub_secrets",
]

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC
_CHUNK = 1 << 20
#: files larger than this are emptied rather than rewritten when they hold a secret
_REWRITE_LIMIT = 64 << 20


class UnsafeFileError(OSError):
    """A file the host refuses to read or write through: a link, not a regular file, too large."""

    def __init__(self, path: str | Path, why: str) -> None:
        super().__init__(errno.EPERM, why, str(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def read_limited(path: str | Path, limit: int) -> bytes:
    """The bytes of ``path``: a regular file (a link at its last component refused) of
    at most ``limit`` bytes."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise _refusal(path, exc) from None
    try:
        return _read_fd(fd, path, limit)
    finally:
        os.close(fd)


def read_beneath(root: str | Path, relative: str | Path, limit: int) -> bytes:
    """``root/relative`` read as :func:`read_limited`, refusing a link or non-folder at
    every component below ``root``."""
    parts = _parts(relative)
    folder = open_folder_beneath(root, parts[:-1])
    try:
        try:
            fd = os.open(parts[-1], _READ_FLAGS, dir_fd=folder)
        except OSError as exc:
            raise _refusal(Path(root, relative), exc) from None
    finally:
        os.close(folder)
    try:
        return _read_fd(fd, Path(root, relative), limit)
    finally:
        os.close(fd)


def read_tail(path: str | Path, limit: int) -> bytes:
    """The last ``limit`` bytes (at most) of the regular file ``path``; a link, FIFO or
    device gives b""."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b""
        return os.pread(fd, limit, max(0, info.st_size - limit))
    except OSError:
        return b""
    finally:
        os.close(fd)


def open_folder_beneath(
    root: str | Path, parts: tuple[str, ...] | list[str], *, create: bool = False
) -> int:
    """A descriptor of ``root/parts...``, each component a real folder (made when
    ``create``), never a link."""
    fd = os.open(root, _DIR_FLAGS)
    here = Path(root)
    try:
        for part in parts:
            here = here / part
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _refusal(here, exc, folder=True) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def copy_beneath(source: str | Path, root: str | Path, relative: str | Path) -> None:
    """Copy the host file or folder ``source`` to ``root/relative``, replacing whatever
    is there (a link is removed,
    never followed); every folder on the way must be a real folder (made when missing)."""
    parts = _parts(relative)
    parent = open_folder_beneath(root, parts[:-1], create=True)
    try:
        _remove_at(parent, parts[-1])
        _copy_at(Path(source), parent, parts[-1])
    finally:
        os.close(parent)


def make_safe_to_keep(
    folder: Path, scrub: Callable[[Path], object] | None = None
) -> list[str]:
    """Make ``folder`` fit to keep: folders 0700, files without setuid/setgid and
    unreadable by others, FIFOs,
    sockets and devices removed, each regular file passed to ``scrub``; the relative
    paths removed."""
    removed: list[str] = []
    os.chmod(folder, 0o700, follow_symlinks=False)
    for top, dirs, files in os.walk(folder):  # never follows links
        for name in [*dirs, *files]:
            path = Path(top, name)
            try:
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode):
                    continue
                if stat.S_ISDIR(info.st_mode):
                    _chmod_nofollow(path, 0o700, stat.S_ISDIR)
                elif stat.S_ISREG(info.st_mode):
                    if info.st_nlink > 1:
                        _own_copy(
                            path
                            # a hard link to a file elsewhere: changing its mode or text
                            # would change that file
                        )
                    # the owner's bits only, and at least read and write: the scrub
                    # below must open it
                    _chmod_nofollow(
                        path, stat.S_IMODE(info.st_mode) & 0o700 | 0o600, stat.S_ISREG
                    )
                    if scrub is not None:
                        scrub(path)
                # FIFO, socket, device: nothing to inspect, and a FIFO blocks the copy
                # to another file system
                else:
                    os.unlink(path)
                    removed.append(path.relative_to(folder).as_posix())
            except OSError:
                _remove_any(path)
                removed.append(path.relative_to(folder).as_posix())
    return removed


def scrub_secrets(path: Path, redact: Callable[[str], str]) -> bool:
    """Mask in the regular file ``path`` (a link is not followed) what ``redact`` masks;
    whether it masked anything.
    A file too large to rewrite in memory is emptied instead, with a line saying why."""
    fd = os.open(path, (_READ_FLAGS & ~os.O_RDONLY) | os.O_RDWR)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return False
        if info.st_size > _REWRITE_LIMIT:
            if not _chunk_holds_secret(fd, redact):
                return False
            os.ftruncate(fd, 0)
            os.pwrite(fd, b"[removed by agent-profiler: this file held a secret]\n", 0)
            return True
        text = os.pread(fd, info.st_size, 0).decode("utf-8", "surrogateescape")
        masked = redact(text)
        if masked == text:
            return False
        os.ftruncate(fd, 0)
        os.pwrite(fd, masked.encode("utf-8", "surrogateescape"), 0)
        return True
    finally:
        os.close(fd)


# -- helpers --------------------------------------------------------------------------------------


def _chunk_holds_secret(fd: int, redact: Callable[[str], str]) -> bool:
    offset, tail = 0, ""
    while True:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            return False
        window = tail + chunk.decode("utf-8", "surrogateescape")
        if redact(window) != window:
            return True
        tail = window[
            -4096:
        ]  # a secret cut by the chunk's edge is whole in the next window
        offset += len(chunk)


def _read_fd(fd: int, path: str | Path, limit: int) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFileError(path, "not a regular file")
    if info.st_size > limit:
        raise UnsafeFileError(path, f"larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise UnsafeFileError(path, f"larger than {limit} bytes")
    return b"".join(chunks)


def _refusal(path: str | Path, exc: OSError, *, folder: bool = False) -> OSError:
    if exc.errno == errno.ELOOP:
        return UnsafeFileError(path, "a symbolic link (not followed)")
    if folder and exc.errno == errno.ENOTDIR:
        return UnsafeFileError(
            path, "not a folder (a file or a link where a folder should be)"
        )
    return exc


def _parts(relative: str | Path) -> tuple[str, ...]:
    parts = tuple(p for p in Path(relative).parts if p not in ("", "."))
    if not parts or any(p == ".." for p in parts) or Path(relative).is_absolute():
        raise UnsafeFileError(relative, "not a relative path below its folder")
    return parts


def _remove_at(parent: int, name: str) -> None:
    """Remove ``name`` in the folder ``parent``, whatever it is; a link is removed, not
    what it points at."""
    try:
        info = os.lstat(name, dir_fd=parent)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(
            name, dir_fd=parent
        )  # the fd-based walk: safe against links swapped in meanwhile
    else:
        os.unlink(name, dir_fd=parent)


def _copy_at(source: Path, parent: int, name: str) -> None:
    info = os.lstat(source)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(
            os.readlink(source), name, dir_fd=parent
        )  # re-made as a link, as copytree(symlinks=True)
    elif stat.S_ISDIR(info.st_mode):
        os.mkdir(name, 0o755, dir_fd=parent)
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        try:
            for entry in sorted(os.listdir(source)):
                _copy_at(source / entry, fd, entry)
        finally:
            os.close(fd)
    elif stat.S_ISREG(info.st_mode):
        mode = stat.S_IMODE(info.st_mode) & 0o777  # never setuid/setgid
        out = os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=parent,
        )
        try:
            with open(source, "rb") as src:
                for chunk in iter(lambda: src.read(_CHUNK), b""):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(out, view) :]
            os.fchmod(out, mode)
        finally:
            os.close(out)
    else:
        raise UnsafeFileError(source, "not a regular file or folder")


def _chmod_nofollow(path: Path, mode: int, kind: Callable[[int], bool]) -> None:
    """``chmod`` that never follows a link (one swapped in since ``lstat`` is refused)."""
    try:
        os.chmod(
            path, mode, follow_symlinks=False
        )  # fchmodat(AT_SYMLINK_NOFOLLOW): refused for a link
        return
    except NotImplementedError:
        if os.path.islink(path):
            raise UnsafeFileError(
                path, "changed into a link while it was made safe to keep"
            ) from None
    # An older C library: through a descriptor opened without following a link.
    fd = os.open(path, _READ_FLAGS | (os.O_DIRECTORY if kind is stat.S_ISDIR else 0))
    try:
        if not kind(os.fstat(fd).st_mode):
            raise UnsafeFileError(path, "changed while it was made safe to keep")
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _own_copy(path: Path) -> None:
    """Replace ``path`` (one name of a file with several) by a copy of its own."""
    fresh = path.with_name(f".{path.name}.profiler-copy")
    shutil.copyfile(path, fresh, follow_symlinks=False)
    os.replace(fresh, path)


def _remove_any(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass
