"""Where things are for one confined job: writable folders, hidden paths, extra mounts,
the relay folder.

The same layout serves bwrap and the containers: the workspace, home and tmp
are writable at their host paths; the user's home and the paths the settings
and the job name are hidden; the relay folder holds the Unix sockets
(``out/``: read-only inside, the way to the model and the proxy; ``in/``:
written inside, published ports) and a copy of ``relay_main.py``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import sys
import tempfile
from pathlib import Path

import attrs

from ..model.record import Record
from ..util.leftovers import remove_folder, temporary_folder
from .job import Job, Mount
from .network import NetworkPlan
from .relays import relay_arguments
from .settings import SandboxSettings

__all__ = ["Layout", "make_layout", "relay_python", "remove_layout", "user_homes"]

#: longest folder for the relay sockets (a Unix socket path must stay under 108 bytes)
_MAX_RUNTIME_PATH = 70


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Layout(Record):
    """The paths of one confined job (all absolute, as on the host)."""

    root: Path
    workspace: Path
    home: Path
    tmp: Path
    mounts: tuple[Mount, ...]
    hidden: tuple[Path, ...]
    #: the relay folder, when the job's network needs relays
    runtime: Path | None = None

    @property
    def out_dir(self) -> Path:
        """Sockets leading out (model, proxy) and the relay program: read-only inside."""
        assert self.runtime is not None
        return self.runtime / "out"

    @property
    def in_dir(self) -> Path:
        """Sockets leading in (published ports) and the ready mark: written by the inside relay."""
        assert self.runtime is not None
        return self.runtime / "in"

    def relay_arguments(self, plan: NetworkPlan) -> list[str]:
        """The inside relay's options for ``plan`` (without the program and the command)."""
        return relay_arguments(plan, self.out_dir, self.in_dir)


def user_homes() -> list[Path]:
    """The home folders of the user running the profiler (``$HOME`` and the password database's)."""
    homes = {Path.home()}
    try:
        homes.add(Path(pwd.getpwuid(os.getuid()).pw_dir))
    except KeyError:
        pass
    return sorted(h for h in homes if h != Path("/"))


#: where the relays look for the system's Python first (visible in every sandbox, even
#: the host image)
_SYSTEM_BIN = "/usr/bin:/bin:/usr/local/bin"


def relay_python() -> Path:
    """The interpreter the relays run with inside: the system's ``python3``, else this
    one by its real path."""
    found = shutil.which("python3", path=_SYSTEM_BIN)
    return Path(os.path.realpath(found or sys.executable))


def _under(path: Path, folders: tuple[Path, ...] | list[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _runtime_parent() -> str:
    """Where the relay folder goes: the temporary folder, unless its path is too long
    for sockets."""
    parent = tempfile.gettempdir()
    return parent if len(parent) <= _MAX_RUNTIME_PATH else "/tmp"


def make_layout(settings: SandboxSettings, job: Job, plan: NetworkPlan) -> Layout:
    """Create the job's private folders (and relay folder, when needed);
    :func:`remove_layout` undoes it."""
    root = temporary_folder("profiler-sbx-", Path(_runtime_parent()))
    home = job.home or root / "home"
    tmp = job.tmp or root / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    hidden = [
        *user_homes(),
        *(Path(p).absolute() for p in settings.hide_paths),
        *job.hide,
    ]
    mounts = [
        *job.mounts,
        *(Mount(source=Path(p).expanduser()) for p in settings.expose_paths),
    ]
    if settings.workdir:
        # A task that names its working folder (``/app``) finds its workspace there too.
        mounts.append(
            Mount(source=job.workspace, target=settings.workdir, writable=True)
        )
    python = relay_python()
    runtime = None
    if plan.relayed:
        runtime = root
        (root / "out").mkdir()
        (root / "in").mkdir()
        shutil.copyfile(
            Path(__file__).with_name("relay_main.py"), root / "out" / "relay.py"
        )
        if _under(python, hidden):
            # The relays' Python lives under a hidden folder (pyenv in the home): show
            # its installation only.
            mounts.append(Mount(source=python.parent.parent))
    return Layout(
        root=root,
        workspace=job.workspace,
        home=home,
        tmp=tmp,
        mounts=tuple(mounts),
        hidden=tuple(dict.fromkeys(hidden)),
        runtime=runtime,
    )


def remove_layout(layout: Layout) -> None:
    """Delete the job's private folders (never the caller's own home, tmp or workspace)."""
    remove_folder(layout.root)
