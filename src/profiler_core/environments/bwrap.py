"""The ``bwrap`` environment: one sandbox for the whole trial, as a container is (Harbor's model).

One bubblewrap sandbox (its own user, mount, PID, network, IPC and UTS
namespaces) is started with the trial and holds it: it runs ``sleep
infinity``, and each command of the trial enters its namespaces with
``nsenter``, every capability dropped by ``setpriv`` before the command
starts (as bwrap's ``--cap-drop ALL`` does). So a server one command starts in
the background is still running, at the same address, when the next command
(the verifier) runs, and a file written outside the working folder is still
there; ``stop`` kills the sandbox, and with its PID 1 every process in it.

The sandbox's root is bwrap's own memory file system, left writable (the
host's folders stay bound read-only on it), so ``put`` can create ``/tests``:
files go in through a staging folder bound read-only inside, copied to their
place by a command in the sandbox, and out as a ``tar`` stream into a folder
of the host's own (links stay links): the host never writes to, or walks, a
folder the trial can change. The network: the
sandbox has its own, loopback only (``none``); ``full`` attaches
``slirp4netns`` to it (a user-mode network with a way out, no route to the
host's loopback) and ``none`` ends it again, so servers on loopback survive
the switch. A ``model`` phase starts a relay inside the sandbox that reaches
only the model and the allowed hosts (bwrap_relay.py), so its commands run in
the same sandbox too. An agent's program runs in it like any command, its
output streamed (:meth:`PersistentTrial.command_line`, providers/in_trial.py).
A command's timeout kills every process that carries its marker.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from ..errors import SandboxError
from ..model.environment import (
    EnvironmentCapabilities,
    ExecResult,
    SandboxSettings,
    TrialSpec,
)
from ..util.leftovers import remove_folder, temporary_folder
from .bwrap_relay import SandboxRelay
from .local import FolderTrial

if TYPE_CHECKING:
    from ..sandbox.confinement import Confinement

__all__ = ["BwrapEnvironment", "PersistentTrial", "persistent_tools"]

log = logging.getLogger("agent_profiler")

#: the programs a persistent bwrap trial needs beside bwrap (util-linux, slirp4netns)
TOOLS = ("nsenter", "setpriv", "setsid", "slirp4netns")
#: bytes of a command's output kept for its result
OUTPUT_TAIL = 64_000
#: seconds the output is still read after the command exited (a background process holds the pipe)
DRAIN_S = 1.0
#: seconds the sandbox (and slirp4netns) may take to come up
READY_S = 10.0
#: seconds the trial's own short commands (copies in and out) may take
QUICK_S = 120.0
_DROP = [
    "--no-new-privs",
    "--inh-caps=-all",
    "--ambient-caps=-all",
    "--bounding-set=-all",
]
_NAMESPACES = ["--user", "--mount", "--pid", "--ipc", "--uts", "--net", "--cgroup"]


def persistent_tools() -> dict[str, str] | None:
    """The paths of :data:`TOOLS`, None when one is missing (each command a sandbox of its own)."""
    found = {name: shutil.which(name) for name in TOOLS}
    if any(path is None for path in found.values()):
        return None
    return cast("dict[str, str]", found)


def _net_folder() -> Path:
    """A fresh folder with a path short enough for Unix sockets (the temporary folder,
    else /tmp)."""
    parent = tempfile.gettempdir()
    return temporary_folder(
        "profiler-net-", Path(parent if len(parent) <= 60 else "/tmp")
    )


def _parents() -> dict[int, list[int]]:
    """Every process's children, read from ``/proc/*/stat``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def _nspid_depth(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return len(line.split()) - 1
    except OSError:
        pass
    return 0


def _inner_pid(leader: int, depth: int) -> int | None:
    """The sandbox's ``sleep infinity`` below ``leader`` (in a PID namespace deeper than
    ``depth``), once it runs: only then are the sandbox's mounts complete."""
    children = _parents()
    queue = list(children.get(leader, []))
    while queue:
        pid = queue.pop(0)
        if _nspid_depth(pid) > depth and _cmdline(pid) == b"sleep\0infinity\0":
            return pid
        queue += children.get(pid, [])
    return None


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _kill_marked(marker: str) -> None:
    """SIGKILL every process whose environment carries ``marker`` (a command, what it started)."""
    needle = f"PROFILER_EXEC={marker}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if needle not in handle.read().split(b"\0"):
                    continue
            os.kill(int(entry), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


class BwrapEnvironment:
    """Trials in bubblewrap: a private writable folder, each command in a new sandbox."""

    id = "bwrap"

    def check(self) -> str | None:
        """One line when ``bwrap`` is missing."""
        return (
            None
            if shutil.which("bwrap")
            else "execution.sandbox: bwrap: `bwrap` not found on PATH (install the "
            "`bubblewrap` package)"
        )

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        """Every network; processes outlive their command when nsenter, setpriv and
        slirp4netns are here."""
        return EnvironmentCapabilities(
            networks=("none", "model", "full"),
            network_switch=True,
            persistent_processes=persistent_tools() is not None,
        )

    def start(self, spec: TrialSpec) -> FolderTrial:
        """A fresh folder holding a copy of ``spec.root``; one bwrap sandbox for the whole trial
        (:class:`PersistentTrial`), else, without its tools, each command in a sandbox
        of its own."""
        settings = SandboxSettings(
            sandbox="bwrap",
            network=spec.network,
            workdir=spec.workdir,
            allow_hosts=spec.allow_hosts,
        )
        tools = persistent_tools()
        return (
            FolderTrial(spec, settings)
            if tools is None
            else PersistentTrial(spec, settings, tools)
        )


class PersistentTrial(FolderTrial):
    """One bwrap sandbox for the whole trial: commands enter it, so their processes outlive them."""

    def __init__(
        self, spec: TrialSpec, settings: SandboxSettings, tools: dict[str, str]
    ) -> None:
        super().__init__(spec, settings)
        self.tools = tools
        self.stage = self.folder / "stage"
        self.stage.mkdir()
        #: the ``model`` relay's sockets: a short path (a socket's must stay under 108 bytes)
        self.net = _net_folder()
        self._holder: subprocess.Popen[bytes] | None = None
        self._box: Confinement | None = None
        self._slirp: subprocess.Popen[bytes] | None = None
        self._exit_fd = -1
        self._lock = threading.Lock()
        #: the ``model`` network's relay, while a phase has it
        self._relay: SandboxRelay | None = None
        self._relay_network = ""
        self.pid = 0
        try:
            self._start_holder()
            folders = [f for f in spec.folders if not self._in_work(f)]
            if folders:
                self._quick(
                    [
                        "sh",
                        "-c",
                        'mkdir -p -- "$@" && chmod 777 -- "$@"',
                        "sh",
                        *folders,
                    ]
                )
            if spec.network == "full":
                self._connect()
            elif spec.network == "model":
                self._relay_for("model")
        except BaseException:
            self.stop()
            raise

    def _start_holder(self) -> None:
        """Start the sandbox (``sleep infinity``) and find its PID 1 on the host."""
        from ..sandbox import Mount
        from ..sandbox.commands import base_environment
        from ..sandbox.confinement import confine
        from ..sandbox.job import Job
        from ..sandbox.layout import relay_python, user_homes

        assert self.settings is not None
        # the spec's mounts: an agent's program folder, read-only at its host path
        shown = [
            Mount(
                source=Path(m.source), target=Path(m.target), writable=not m.read_only
            )
            for m in self.spec.mounts
        ]
        python = relay_python()
        if any(home in python.parents for home in user_homes()):
            # the model relay's Python lives under a hidden home (pyenv): show its installation
            shown.append(Mount(source=python.parent.parent))
        job = Job(
            argv=("sleep", "infinity"),
            env=base_environment(self.home, {}),
            workspace=self.work,
            home=self.home,
            mounts=(
                # read-only inside: what ``put`` stages there cannot be changed by the trial
                Mount(source=self.stage),
                Mount(source=self.net, writable=True),
                *shown,
            ),
            name="trial",
        )
        # its own network, loopback only: ``full`` is slirp4netns attached to it (set_network)
        holder = SandboxSettings(
            sandbox="bwrap",
            network="none",
            workdir=self.spec.workdir,
            # the tasks' tests and solutions, the run's records: the agent runs in here
            hide_paths=self.spec.hide,
        )
        box = self._box = confine(holder, job).open()
        argv = list(box.argv)
        # the sandbox's own root stays writable (for /tests, /logs); host folders stay read-only
        for index in range(len(argv) - 1):
            if argv[index : index + 2] == ["--remount-ro", "/"]:
                del argv[index : index + 2]
                break
        self._holder = subprocess.Popen(
            argv,
            env=box.env,
            cwd=box.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = time.monotonic() + READY_S
        depth = _nspid_depth(os.getpid())
        while time.monotonic() < deadline:
            if self._holder.poll() is not None:
                why = (
                    self._holder.stderr.read() if self._holder.stderr else b""
                ).decode(errors="replace")
                raise SandboxError(
                    f"bwrap: the trial's sandbox did not start: {why.strip()[-300:]}"
                )
            pid = _inner_pid(self._holder.pid, depth)
            if pid is not None:
                self.pid = pid
                return
            time.sleep(0.02)
        raise SandboxError(
            f"bwrap: the trial's sandbox did not start within {READY_S:g} s"
        )

    def _in_work(self, remote: str) -> bool:
        return any(
            remote == base or remote.startswith(base.rstrip("/") + "/")
            for base in (self.workdir, str(self.work))
        )

    def _enter(self, argv: list[str], cwd: str) -> list[str]:
        """``argv`` run inside the trial's sandbox, in ``cwd``, without any capability."""
        return [
            self.tools["nsenter"],
            "--target",
            str(self.pid),
            *_NAMESPACES,
            "--root",
            "--",
            self.tools["setpriv"],
            *_DROP,
            "--",
            "env",
            "-C",
            cwd,
            *argv,
        ]

    # -- the network ---------------------------------------------------------------------------

    def set_network(self, network: str) -> None:
        """``full``: slirp4netns gives the sandbox a way out; ``model``: a relay inside
        reaches the model only; ``none``: neither (loopback stays)."""
        assert self.settings is not None
        super().set_network(network)
        if network == "full":
            self._close_model()
            self._connect()
        else:
            self._disconnect()
            self._relay_for(network)

    def open_relay(self, network: str) -> None:
        """The agent's phase (runner/trial.py): with ``full`` too, its loopback model
        endpoints (the wire recorder) are relayed, as slirp4netns has no way to the
        host's loopback; with ``model`` the phase's relay is already there."""
        self._relay_for(network)

    def close_relay(self) -> None:
        """End the agent's relay (the next phase's network brings its own)."""
        self._close_model()

    def _relay_for(self, network: str) -> None:
        """The model relay ``network`` asks for: ``model`` its endpoints and allowed
        hosts, ``full`` its loopback endpoints, ``none`` nothing."""
        if self._relay is not None and self._relay_network == network:
            return
        self._close_model()
        if network not in ("model", "full"):
            return
        from ..sandbox.hosts import parse_endpoint

        endpoints, hosts = self.spec.endpoints, self.spec.allow_hosts
        if network == "full":
            endpoints = tuple(e for e in endpoints if parse_endpoint(e).loopback)
            hosts = ()
        relay = SandboxRelay(self.net)
        try:
            relay.start(endpoints, hosts, self._enter)
        except BaseException:
            relay.stop(_kill_marked)
            raise
        self._relay, self._relay_network = relay, network

    def _close_model(self) -> None:
        relay, self._relay = self._relay, None
        if relay is not None:
            relay.stop(_kill_marked)

    @property
    def relay_environment(self) -> dict[str, str]:
        """Variables a command needs to reach remote hosts through the ``model`` relay's
        CONNECT proxy, else none."""
        return self._relay.environment() if self._relay is not None else {}

    def _connect(self) -> None:
        if self._slirp is not None:
            return
        read, write = os.pipe()
        # slirp4netns ends when this pipe closes: with the trial, or with the profiler
        # (even a SIGKILL)
        exit_read, self._exit_fd = os.pipe()
        try:
            self._slirp = subprocess.Popen(
                [
                    self.tools["slirp4netns"],
                    "--configure",
                    "--mtu=65520",
                    "--disable-host-loopback",
                    f"--ready-fd={write}",
                    f"--exit-fd={exit_read}",
                    str(self.pid),
                    "tap0",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(write, exit_read),
                start_new_session=True,
            )
            os.close(write)
            write = -1
            with os.fdopen(read, "rb") as ready:
                read = -1
                ok = ready.read(1) == b"1"
        finally:
            os.close(exit_read)
            for fd in (read, write):
                if fd >= 0:
                    os.close(fd)
        if not ok:
            self._disconnect()
            raise SandboxError(
                "bwrap: slirp4netns could not give the trial's sandbox a network"
            )

    def _disconnect(self) -> None:
        exit_fd, self._exit_fd = self._exit_fd, -1
        if exit_fd >= 0:
            os.close(exit_fd)
        slirp, self._slirp = self._slirp, None
        if slirp is not None:
            slirp.terminate()
            try:
                slirp.wait(timeout=5)
            except subprocess.TimeoutExpired:
                slirp.kill()
                slirp.wait()

    # -- commands and files --------------------------------------------------------------------

    async def exec(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        user: str | None = None,
        timeout_s: float | None = None,
        on_output: Callable[[bytes], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> ExecResult:
        """Run ``argv`` in the trial's sandbox; what it leaves running stays until ``stop``
        (``cancel``, once set, ends it and what it started, as its timeout does)."""
        import trio

        return await trio.to_thread.run_sync(
            lambda: self._exec(
                argv, env, cwd or self.workdir, timeout_s, on_output, cancel
            )
        )

    def _exec(
        self,
        argv: list[str],
        env: Mapping[str, str] | None,
        cwd: str,
        timeout_s: float | None,
        on_output: Callable[[bytes], None] | None,
        cancel: threading.Event | None = None,
    ) -> ExecResult:
        marker = uuid.uuid4().hex
        full = self._environment(env or {}, marker)
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                self._enter(argv, cwd),
                env=full,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            return ExecResult(
                exit_code=None, error=f"cannot start nsenter: {exc.strerror or exc}"
            )
        tail = bytearray()
        done = threading.Event()
        reader = threading.Thread(
            target=_read_tail,
            args=(cast("IO[bytes]", process.stdout), tail, on_output, done),
            daemon=True,
        )
        reader.start()
        code = _wait(process, timeout_s, cancel)
        if code is None:
            _kill_marked(marker)
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        # what it left running in the background may hold the pipe: read what is there, then stop
        # taking more (the reader ends with the pipe, at the latest when the trial stops)
        reader.join(DRAIN_S)
        done.set()
        text = bytes(tail).decode("utf-8", errors="replace")
        wall = round((time.monotonic() - started) * 1000, 3)
        if code is None and cancel is not None and cancel.is_set():
            return ExecResult(
                exit_code=None, output=text, error="cancelled", wall_ms=wall
            )
        if code is None:
            return ExecResult(exit_code=None, output=text, timed_out=True, wall_ms=wall)
        return ExecResult.finished(argv[0], code, text, wall)

    def _environment(self, env: Mapping[str, str], marker: str) -> dict[str, str]:
        """A command's whole environment: the trial's, the relay's proxy, ``env``, its marker."""
        from ..sandbox.commands import base_environment

        extra = {**self.spec.env, **self.relay_environment, **env}
        return {**base_environment(self.home, extra), "PROFILER_EXEC": marker}

    def command_line(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        user: str | None,
        stdin: bool = False,
    ) -> tuple[list[str], dict[str, str], str]:
        """A host command running ``argv`` in the sandbox, its output streamed (an agent's
        program), its environment and the mark :meth:`end` kills it by.

        ``argv`` starts in a session of its own inside (``setsid``), so ending the host
        command's process group does not reach what it left running (a server for the
        verifier); ``user`` is the sandbox's one user, ``stdin`` passes through."""
        del user, stdin  # one user in the sandbox; nsenter passes its input on
        marker = uuid.uuid4().hex
        command = self._enter([self.tools["setsid"], *argv], cwd or self.workdir)
        return command, self._environment(env, marker), marker

    def end(self, marker: str) -> None:
        """Kill, inside, every process carrying ``marker`` (a program run by
        :meth:`command_line` and what it started)."""
        _kill_marked(marker)

    def _quick(self, argv: list[str]) -> None:
        """One short command of the trial's own (a copy in or out); ``SandboxError`` if it fails."""
        try:
            done = subprocess.run(
                self._enter(argv, "/"),
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                capture_output=True,
                timeout=QUICK_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise SandboxError(
                f"bwrap: {argv[0]} in the trial: no answer within {QUICK_S:g} s"
            ) from None
        if done.returncode != 0:
            why = (
                (done.stderr or done.stdout)
                .decode(errors="replace")
                .strip()
                .splitlines()[-1:]
            )
            raise SandboxError(
                f"bwrap: {' '.join(why) or f'{argv[0]} exited {done.returncode}'}"
            )

    def put(self, local: Path, remote: str) -> None:
        """Copy ``local`` to ``remote``, replacing what is there: staged in a folder the
        sandbox sees read-only, copied by a command inside (the host writes nowhere the
        trial can write)."""
        with self._lock:
            staged = self.stage / uuid.uuid4().hex
            staged.mkdir()
            try:
                item = staged / "item"
                if local.is_dir():
                    shutil.copytree(local, item, symlinks=True)
                else:
                    shutil.copy2(local, item, follow_symlinks=False)
                script = 'rm -rf -- "$2" && mkdir -p -- "$(dirname -- "$2")" && cp -a -- "$1" "$2"'
                self._quick(["sh", "-c", script, "sh", str(item), remote])
            finally:
                shutil.rmtree(staged, ignore_errors=True)
        return None

    def get(self, remote: str, local: Path) -> None:
        """Copy ``remote`` out to ``local``, links as links: ``tar`` inside streams it to
        a folder of the host's own, so nothing the trial changes meanwhile is followed."""
        path = remote.rstrip("/") or "/"
        scratch = Path(tempfile.mkdtemp(prefix="get-", dir=self.folder))
        try:
            self._tar_out(path, scratch)
            item = scratch / os.path.basename(path) if path != "/" else scratch
            if item.is_dir() and not item.is_symlink():
                shutil.copytree(item, local, symlinks=True, dirs_exist_ok=True)
            else:
                local.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(item, local, follow_symlinks=False)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return None

    def _tar_out(self, path: str, scratch: Path) -> None:
        """Extract ``path`` of the sandbox into ``scratch`` (``tar`` inside, a stream out;
        members that would land outside ``scratch`` are refused)."""
        import tarfile

        parent, name = os.path.dirname(path) or "/", os.path.basename(path) or "."
        argv = ["tar", "-C", parent, "-cf", "-", "--", name]
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(
                self._enter(argv, "/"),
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,
                start_new_session=True,
            )
            timer = threading.Timer(QUICK_S, process.kill)
            timer.start()
            try:
                assert process.stdout is not None
                with tarfile.open(fileobj=process.stdout, mode="r|") as tar:
                    tar.extractall(scratch, filter="tar")
            except (tarfile.TarError, OSError) as exc:
                process.kill()
                problem: str | None = str(exc)
            else:
                problem = None
            finally:
                timer.cancel()
                code = process.wait()
            # 1: a file changed while it was read (a server the agent left writing its log)
            if code not in (0, 1) or problem:
                errors.seek(0)
                said = errors.read().decode(errors="replace").strip().splitlines()[-1:]
                raise SandboxError(
                    f"bwrap: cannot copy {path} out of the trial: "
                    f"{' '.join(said) or problem or f'tar exited {code}'}"
                )

    def stop(self) -> None:
        """End the network, kill the sandbox (its PID 1 takes every process along), remove files."""
        self._close_model()
        self._disconnect()
        holder, self._holder = self._holder, None
        if holder is not None:
            with contextlib.suppress(OSError):
                os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()
        box, self._box = self._box, None
        if box is not None:
            box.close()
        remove_folder(self.net)
        super().stop()


def _wait(
    process: subprocess.Popen[bytes],
    timeout_s: float | None,
    cancel: threading.Event | None,
) -> int | None:
    """The command's exit status; None once ``timeout_s`` passed or ``cancel`` is set."""
    if cancel is None:
        try:
            return process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while not cancel.is_set():
        try:
            return process.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            if deadline is not None and time.monotonic() >= deadline:
                return None
    return None


def _read_tail(
    stream: IO[bytes],
    tail: bytearray,
    on_output: Callable[[bytes], None] | None,
    done: threading.Event,
) -> None:
    """Keep the output's end in ``tail`` until the pipe closes; nothing more once ``done``."""
    with contextlib.suppress(OSError, ValueError), stream:
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            if done.is_set():
                continue
            if on_output is not None:
                on_output(chunk)
            tail += chunk
            if len(tail) > OUTPUT_TAIL:
                del tail[: len(tail) - OUTPUT_TAIL]
