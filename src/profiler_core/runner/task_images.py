"""A task's own environment: its container image, built once per run from its Dockerfile, offline.

Under ``execution.sandbox: docker`` or ``podman``, a scenario with an
``environment`` (a Harbor task's ``environment/Dockerfile``) runs its agent,
set-up commands and verifiers in an image built from that Dockerfile — once
per run and task, tagged ``localhost/agent-profiler-task-<id>:<content hash>``
(an image of that tag is reused, so an unchanged task is not built again).
A task's ``docker_image`` is pulled as ``execution.pull`` says (``never``,
``missing`` — the default — or ``always``). No registry is contacted for a build: the
Dockerfile's base image must be local
(podman builds with ``--pull=never``; docker's ``--pull`` is only yes or no
and its builder pulls a missing base image, so the base images are checked
to be local before docker builds). A
Dockerfile ``FROM localhost/agent-profiler-host:1`` (the sandbox's image of
the host's toolchain) gets the host's toolchain bound in, as that image does.

The image's working folder (``WORKDIR``, e.g. ``/app``) is copied out once
and becomes each session's workspace, mounted back at that folder (and at its
host path): the agent finds the files where the task says they are.

Under bwrap nothing is built: the environment folder's files are the
workspace, mounted at the Dockerfile's ``WORKDIR`` as well, and a warning
(once per task) says the Dockerfile was not applied.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import attrs
import trio

from ..errors import SandboxError
from ..model import Scenario, TaskEnvironment
from ..model.record import Record
from ..sandbox import SandboxSettings
from ..sandbox.commands import run_command
from ..sandbox.containers import (
    HOST_IMAGE,
    client_environment,
    ensure_host_image,
    last_line,
    new_name,
    runtime_binary,
)
from ..sandbox.podman import runtime_options
from ..storage.paths import safe_name

log = logging.getLogger("agent_profiler")

#: seconds the runtime's quick commands (inspect, create, cp, rm) may take
_QUICK_S = 300.0


class TaskImageError(Exception):
    """A task's image could not be built or read: the cell's set-up error."""


@attrs.frozen(kw_only=True, repr=False, eq=False)
class TaskSandbox(Record):
    """Where one task's sessions and commands run."""

    #: the run's sandbox with the task's image and working folder (None: on the host)
    settings: SandboxSettings | None


class TaskEnvironments:
    """The tasks' sandboxes of one run: images built once per task; a failed build fails
    every cell of its task."""

    def __init__(
        self,
        sandbox: SandboxSettings | None,
        root: Path,
        warnings: list[str] | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.root = root
        self.warnings = warnings if warnings is not None else []
        #: the runtime that builds task images for a plugin's environment kind that runs
        #: images (None: the kind's own)
        self.builder: str | None = None
        self._done: dict[str, TaskSandbox | TaskImageError] = {}
        #: per task, how to copy its image's working folder out, then the copy
        #: (``source_for``): made on first use, as a trial never needs it
        self._sources: dict[
            str, tuple[str, str, str, Path] | Path | TaskImageError
        ] = {}
        self._locks: dict[str, trio.Lock] = {}

    async def sandbox_for(self, scenario: Scenario) -> TaskSandbox:
        """The sandbox of ``scenario``'s sessions (its image built on first use);
        ``TaskImageError`` when it cannot be."""
        settings, env = self.sandbox, scenario.environment
        if env is None or settings is None or not settings.confined:
            return TaskSandbox(settings=settings)
        lock = self._locks.setdefault(scenario.id, trio.Lock())
        async with lock:
            if scenario.id not in self._done:
                try:
                    self._done[scenario.id] = await self._prepare(
                        scenario, env, settings
                    )
                except TaskImageError as exc:
                    self._done[scenario.id] = exc
        found = self._done[scenario.id]
        if isinstance(found, TaskImageError):
            raise TaskImageError(str(found))
        return found

    async def _prepare(
        self, scenario: Scenario, env: TaskEnvironment, settings: SandboxSettings
    ) -> TaskSandbox:
        if self.builder is not None and not settings.container:
            # A plugin's kind that runs images: built (or pulled) here, by the local
            # runtime, as for docker.
            built = await self._prepare(
                scenario, env, attrs.evolve(settings, sandbox=self.builder)
            )
            assert (
                built.settings is not None
            )  # a container's preparation always has settings
            return attrs.evolve(
                built, settings=attrs.evolve(built.settings, sandbox=settings.sandbox)
            )
        if not settings.container:
            if env.dockerfile or env.image:
                what = "Dockerfile" if env.dockerfile else f"image {env.image!r}"
                self._warn(
                    f"scenario {scenario.id!r}: its {what} is not applied under "
                    f"execution.sandbox: {settings.sandbox} "
                    "(the environment folder's files are the workspace; docker "
                    "or podman run the task's image)"
                )
            return TaskSandbox(settings=attrs.evolve(settings, workdir=env.workdir))
        if not env.dockerfile and not env.image:
            return TaskSandbox(settings=attrs.evolve(settings, workdir=env.workdir))
        try:
            binary = runtime_binary(settings.sandbox)
        except SandboxError as exc:
            raise TaskImageError(str(exc)) from None
        if env.image:
            image, toolchain = env.image, False
            await self._pull(image, settings, binary)
        else:
            assert env.dockerfile is not None
            image, toolchain = await self._build(
                scenario, Path(env.dockerfile), env, settings.sandbox, binary
            )
        workdir = (
            await trio.to_thread.run_sync(_working_dir, binary, image) or env.workdir
        )
        if workdir:
            digest = hashlib.sha256(image.encode()).hexdigest()[:8]
            target = self.root / ".images" / f"{safe_name(scenario.id)}-{digest}"
            self._sources[scenario.id] = (binary, image, workdir, target)
        return TaskSandbox(
            settings=attrs.evolve(
                settings, image=image, host_toolchain=toolchain, workdir=workdir
            )
        )

    async def source_for(self, scenario: Scenario) -> Path | None:
        """The folder copied as each workspace of ``scenario`` instead of its own (its
        image's working folder, copied out on first use); ``TaskImageError``."""
        await self.sandbox_for(scenario)
        found = self._sources.get(scenario.id)
        if isinstance(found, tuple):
            async with self._locks[scenario.id]:  # made by sandbox_for
                found = self._sources[scenario.id]  # another attempt may have copied it
                if isinstance(found, tuple):
                    binary, image, workdir, target = found
                    try:
                        await trio.to_thread.run_sync(
                            _copy_out, binary, image, workdir, target
                        )
                        found = target
                    except TaskImageError as exc:
                        found = exc
                    self._sources[scenario.id] = found
        if isinstance(found, TaskImageError):
            raise TaskImageError(str(found))
        return found

    async def _build(
        self,
        scenario: Scenario,
        dockerfile: Path,
        env: TaskEnvironment,
        kind: str,
        binary: str,
    ) -> tuple[str, bool]:
        """Build the task's image unless an image of its content is there; ``(tag, FROM
        the host image)``."""
        toolchain = builds_on_host_image(dockerfile)
        if toolchain:
            try:
                await trio.to_thread.run_sync(ensure_host_image, binary)
            except SandboxError as exc:
                raise TaskImageError(str(exc)) from None
        tag = image_tag(scenario.id, dockerfile)
        if await trio.to_thread.run_sync(_has_image, binary, tag):
            return tag, toolchain
        if kind == "docker":
            # docker's builder pulls a missing base image whatever ``--pull`` says:
            # refuse it here instead.
            for base in base_images(dockerfile):
                if not await trio.to_thread.run_sync(_has_image, binary, base):
                    raise TaskImageError(
                        f"{dockerfile}: the base image {base!r} is not in "
                        "docker's local images (no registry is used)"
                    )
        command = build_command(binary, kind, tag, dockerfile)
        home = Path(tempfile.mkdtemp(prefix="build-", dir=self.root))
        try:
            built = await run_command(
                command,
                cwd=dockerfile.parent,
                env=client_environment({"HOME": str(home)}),
                timeout_s=env.build_timeout_ms / 1000,
            )
        finally:
            shutil.rmtree(home, ignore_errors=True)
        if built.timed_out:
            raise TaskImageError(
                f"building {dockerfile} timed out after {env.build_timeout_ms / 1000:g} s"
            )
        if not built.ok:
            why = built.error or last_line(built.output.encode())
            raise TaskImageError(f"cannot build {dockerfile} with {kind}: {why}")
        return tag, toolchain

    async def _pull(self, image: str, settings: SandboxSettings, binary: str) -> None:
        """Make ``image`` local as ``execution.pull`` says: ``never`` (refuse a missing
        one), ``missing``, ``always``."""
        local = await trio.to_thread.run_sync(_has_image, binary, image)
        if local and settings.pull != "always":
            return
        if settings.pull == "never":
            raise TaskImageError(
                f"the task's image {image!r} is not in {settings.sandbox}'s "
                "local images (execution.pull: never)"
            )
        pulled = await run_command(
            [binary, "pull", image],
            cwd=self.root,
            env=client_environment({}),
            timeout_s=_QUICK_S * 4,
        )
        if not pulled.ok:
            why = pulled.error or (
                "timed out" if pulled.timed_out else last_line(pulled.output.encode())
            )
            raise TaskImageError(
                f"cannot pull the task's image {image!r} (execution.pull: {settings.pull}): {why}"
            )

    def _warn(self, message: str) -> None:
        log.warning("%s", message)
        self.warnings.append(message)


def image_tag(scenario_id: str, dockerfile: Path) -> str:
    """``localhost/agent-profiler-task-<id>:<hash of the build context>`` (a changed
    task gets a new tag)."""
    slug = (
        re.sub(r"[^a-z0-9]+", "-", scenario_id.lower()).strip("-")[:60].strip("-")
        or "task"
    )
    digest = hashlib.sha256(str(dockerfile.name).encode())
    context = dockerfile.parent
    for path in sorted(
        p for p in context.rglob("*") if p.is_file() and not p.is_symlink()
    ):
        digest.update(path.relative_to(context).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"localhost/agent-profiler-task-{slug}:{digest.hexdigest()[:16]}"


def build_command(binary: str, kind: str, tag: str, dockerfile: Path) -> list[str]:
    """``docker|podman build`` of a task's image that never pulls: podman's
    ``--pull=never``; docker's ``--pull``
    is only yes/no (``never`` is refused), so ``--pull=false`` there, and the caller
    checks the base images are local."""
    pull = "--pull=never" if kind == "podman" else "--pull=false"
    # a Dockerfile's RUN steps start containers: the runtime `podman run` uses on this
    # host (crun or runc)
    return [
        binary,
        *runtime_options(binary, kind),
        "build",
        pull,
        "-t",
        tag,
        "-f",
        str(dockerfile),
        str(dockerfile.parent),
    ]


def base_images(dockerfile: Path) -> list[str]:
    """The images the Dockerfile starts ``FROM`` or copies from (``COPY
    --from=<image>``): not ``scratch``,
    an earlier stage (by name or number), or an ``ARG``'s value."""
    images: list[str] = []
    stages: set[str] = set()
    for line in dockerfile.read_text(encoding="utf-8", errors="replace").splitlines():
        words = line.split()
        if not words:
            continue
        instruction, flags = (
            words[0].upper(),
            [w for w in words[1:] if w.startswith("--")],
        )
        plain = [w for w in words if not w.startswith("--")]
        if instruction == "FROM" and len(plain) >= 2:
            image = plain[1]
        elif instruction == "COPY" and _copied_from(flags):
            image = _copied_from(flags)
        else:
            continue
        if (
            image.lower() != "scratch"
            and image.lower() not in stages
            and "$" not in image
            and not image.isdigit()
        ):
            images.append(image)
        if instruction == "FROM" and len(plain) >= 4 and plain[2].upper() == "AS":
            stages.add(plain[3].lower())
    return list(dict.fromkeys(images))


def _copied_from(flags: list[str]) -> str:
    """The ``--from=`` of a ``COPY`` (a stage or an image), else ``""``."""
    for flag in flags:
        if flag.lower().startswith("--from="):
            return flag.split("=", 1)[1]
    return ""


def builds_on_host_image(dockerfile: Path) -> bool:
    """Whether the Dockerfile's first ``FROM`` is the host-toolchain image (its
    toolchain is then bound in)."""
    for line in dockerfile.read_text(encoding="utf-8", errors="replace").splitlines():
        words = [w for w in line.split() if not w.startswith("--")]
        if words and words[0].upper() == "FROM" and len(words) > 1:
            return words[1] in (HOST_IMAGE, HOST_IMAGE.removeprefix("localhost/"))
    return False


def _quick(command: list[str], **kwargs) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            command,
            capture_output="stdout" not in kwargs,
            timeout=_QUICK_S,
            check=False,
            **kwargs,
        )
    except subprocess.TimeoutExpired:
        raise TaskImageError(
            f"{Path(command[0]).name} {command[1]}: no answer within {_QUICK_S:.0f} s"
        ) from None


def _has_image(binary: str, image: str) -> bool:
    return _quick([binary, "image", "inspect", image]).returncode == 0


def _working_dir(binary: str, image: str) -> str | None:
    """The image's ``WORKDIR`` (None when it has none, or it is ``/``)."""
    done = _quick(
        [binary, "image", "inspect", "--format", "{{.Config.WorkingDir}}", image]
    )
    folder = (
        done.stdout.decode("utf-8", "replace").strip().rstrip("/")
        if done.returncode == 0
        else ""
    )
    return folder or None


def _copy_out(binary: str, image: str, workdir: str, target: Path) -> None:
    """Copy the image's ``workdir`` into ``target`` (through a container that is
    created, never started)."""
    name = new_name("export")
    created = _quick([binary, "create", "--name", name, image, "true"])
    if created.returncode != 0:
        raise TaskImageError(
            f"cannot read {workdir} of the image {image!r}: {last_line(created.stderr)}"
        )
    try:
        with tempfile.TemporaryFile() as archive:
            copied = _quick(
                [binary, "cp", f"{name}:{workdir}", "-"],
                stdout=archive,
                stderr=subprocess.PIPE,
            )
            if copied.returncode != 0:
                if (
                    b"could not be found" in copied.stderr
                    or b"No such" in copied.stderr
                    or b"no such file" in copied.stderr
                ):
                    # buildah records a WORKDIR nothing was written to without making
                    # it: an empty working folder
                    target.mkdir(parents=True, exist_ok=True)
                    return
                raise TaskImageError(
                    f"cannot copy {workdir} out of the image {image!r}: {last_line(copied.stderr)}"
                )
            archive.seek(0)
            target.mkdir(parents=True, exist_ok=True)
            _extract(archive, target)
    finally:
        _quick([binary, "rm", "--force", name])


def _extract(archive, target: Path) -> None:
    """Unpack the ``cp`` archive (the working folder at its top) into ``target``;
    nothing may land outside it."""
    import tarfile  # only a task image's folder is unpacked: a run without one does not load it

    with tarfile.open(fileobj=archive) as tar:
        members = []
        for member in tar.getmembers():
            parts = Path(member.name).parts[
                1:
            ]  # the top folder is the working folder itself
            if not parts:
                continue
            member.name = os.path.join(*parts)
            members.append(member)
        if hasattr(tarfile, "tar_filter"):
            # "tar": links may point anywhere (a venv's absolute interpreter link), but
            # nothing is written outside.
            tar.extractall(target, members=members, filter="tar")
            return
        # Python < 3.11.4 has no extraction filters: plain files and folders with plain names only.
        plain = [
            m
            for m in members
            if (m.isfile() or m.isdir())
            and ".." not in Path(m.name).parts
            and not m.name.startswith("/")
        ]
        tar.extractall(target, members=plain)


__all__ = [
    "TaskEnvironments",
    "TaskImageError",
    "TaskSandbox",
    "base_images",
    "build_command",
    "builds_on_host_image",
    "image_tag",
]
