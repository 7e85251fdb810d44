"""Files in and out of a trial as tar streams: links stay links, and nothing is written
outside the target."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path
from typing import IO

__all__ = ["extract_tar", "tar_of"]


def tar_of(local: Path, name: str, *, scripts: bool = False) -> bytes:
    """A tar holding ``local`` (a file or a folder) under ``name``, owned by root, links
    kept as links; with ``scripts``, every ``*.sh`` file in it executable."""
    buffer = io.BytesIO()

    def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        # readable by every user of the trial (a verifier may run as another user);
        # execute bits kept
        info.mode |= 0o755 if info.isdir() else 0o444
        if scripts and info.isfile() and info.name.endswith(".sh"):
            info.mode |= 0o111  # Harbor starts a task's scripts by their shebang
        return info

    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(str(local), arcname=name, recursive=True, filter=as_root)
    return buffer.getvalue()


def extract_tar(archive: IO[bytes], target: Path) -> None:
    """Unpack a ``cp`` archive (one top entry) as ``target``: its top entry becomes
    ``target`` itself."""
    with tarfile.open(fileobj=archive) as tar:
        members = []
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if not parts:
                continue
            rest = parts[1:]
            if not rest:
                if member.isdir():
                    target.mkdir(
                        parents=True, exist_ok=True
                    )  # the top folder is ``target`` itself
                    continue
                member.name = target.name  # a single file: written as ``target``
                members.append(member)
                continue
            member.name = os.path.join(target.name, *rest)
            members.append(member)
        target.parent.mkdir(parents=True, exist_ok=True)
        if hasattr(tarfile, "data_filter"):
            # "tar": links may point anywhere (they are not followed here), but nothing
            # is written outside.
            tar.extractall(target.parent, members=members, filter="tar")
            return
        plain = [
            m
            for m in members
            if (m.isfile() or m.isdir())
            and ".." not in Path(m.name).parts
            and not m.name.startswith("/")
        ]
        tar.extractall(target.parent, members=plain)
