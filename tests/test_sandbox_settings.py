"""Sandbox settings, network plans and command lines (pure), the profile keys, and
``profiler validate``'s preflight."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from tests.sandbox_runtimes import require

from profiler_core.cli import cli
from profiler_core.config.loader import ProfileErrors, load_profile
from profiler_core.errors import SandboxError
from profiler_core.providers._agent_process import program_folders
from profiler_core.sandbox import Job, Mount, SandboxSettings, check, confine
from profiler_core.sandbox import bwrap as bwrap_module
from profiler_core.sandbox.bwrap import bwrap_command
from profiler_core.sandbox.containers import container_command
from profiler_core.sandbox.hosts import parse_endpoint, parse_host_rule
from profiler_core.sandbox.layout import make_layout, remove_layout
from profiler_core.sandbox.network import plan_network

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-ant-secret-value-1234"


# -- settings -----------------------------------------------------------------


def test_the_network_defaults_to_model_inside_a_sandbox_and_verifiers_get_none():
    assert SandboxSettings().network_mode == "full"
    bwrap = SandboxSettings(sandbox="bwrap")
    assert bwrap.network_mode == "model"
    assert bwrap.for_verifier().network_mode == "none"
    assert bwrap.for_verifier("model").network_mode == "model"
    assert (
        SandboxSettings().for_verifier().network_mode == "full"
    )  # no sandbox: nothing to cut


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        # the kinds are open (a plugin registers more): the name's shape here, an
        # unknown one when the run starts
        (
            {"sandbox": "LXC box"},
            "execution.sandbox: expected one of none, bwrap, docker, podman or "
            "a plugin's environment id, got 'LXC box'",
        ),
        (
            {"sandbox": "bwrap", "network": "some"},
            "execution.network: expected one of none, model, full, got 'some'",
        ),
        (
            {"network": "none"},
            "execution.network: 'none' needs a sandbox (set execution.sandbox "
            "to bwrap, docker or podman)",
        ),
        (
            {"sandbox": "bwrap", "allow_hosts": ["https://x.com/"]},
            "execution.allow_hosts: 'https://x.com/': expected a host name",
        ),
        (
            {"sandbox": "bwrap", "allow_hosts": ["api.x.com:99999"]},
            "expected a port between 1 and 65535, got '99999'",
        ),
    ],
)
def test_bad_settings_are_one_line(fields, message):
    with pytest.raises(SandboxError) as caught:
        SandboxSettings(**fields)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_allow_list_entries():
    rule = parse_host_rule("API.OpenAI.com")
    assert rule.admits("api.openai.com", 443) and not rule.admits("api.openai.com", 80)
    assert not rule.admits("evil-api.openai.com", 443)
    wildcard = parse_host_rule("*.example.com:8443")
    assert wildcard.admits("a.b.example.com", 8443) and not wildcard.admits(
        "example.com", 8443
    )
    assert not wildcard.admits("notexample.com", 8443)


# -- network plans --------------------------------------------------------------


def job(**fields) -> Job:
    return Job(**{"argv": ("agent",), "env": {}, "workspace": "/tmp/ws", **fields})


def test_loopback_endpoints_are_relayed_on_their_own_port_and_remote_ones_go_through_the_proxy():
    settings = SandboxSettings(sandbox="bwrap", allow_hosts=("pypi.org",))
    plan = plan_network(
        settings,
        job(
            endpoints=(
                "http://127.0.0.1:4000/v1",
                "http://localhost:4000",
                "https://api.anthropic.com",
            )
        ),
    )
    assert [(f.port, f.host) for f in plan.forwards] == [(4000, "127.0.0.1")]
    assert {(r.host, r.port) for r in plan.rules} == {
        ("pypi.org", None),
        ("api.anthropic.com", 443),
    }
    assert plan.proxy_port == 3128
    assert plan.environment()["HTTPS_PROXY"] == "http://127.0.0.1:3128"


def test_the_proxy_port_moves_out_of_the_way_and_a_port_cannot_be_both_ways():
    settings = SandboxSettings(sandbox="bwrap", allow_hosts=("pypi.org",))
    assert (
        plan_network(
            settings, job(endpoints=("http://127.0.0.1:3128",), publish=(3129,))
        ).proxy_port
        == 3130
    )
    with pytest.raises(
        SandboxError, match="port 4000 is both a model endpoint's and a published port"
    ):
        plan_network(
            settings, job(endpoints=("http://127.0.0.1:4000",), publish=(4000,))
        )


def test_plain_http_to_a_remote_host_is_refused_in_one_line():
    with pytest.raises(
        SandboxError,
        match=r"'http://gateway.lan:8080/v1': with execution.network: model a remote "
        r"endpoint must be https://",
    ):
        plan_network(
            SandboxSettings(sandbox="bwrap"),
            job(endpoints=("http://gateway.lan:8080/v1",)),
        )
    with pytest.raises(SandboxError, match="expected an http:// or https:// URL"):
        parse_endpoint("ftp://x")


def test_no_network_and_full_network_relay_nothing_out():
    endpoints = ("http://127.0.0.1:4000",)
    assert not plan_network(
        SandboxSettings(sandbox="bwrap", network="none"), job(endpoints=endpoints)
    ).forwards
    full = plan_network(
        SandboxSettings(sandbox="bwrap", network="full"),
        job(endpoints=endpoints, publish=(80,)),
    )
    assert not full.relayed  # the host's network: nothing to relay either way


# -- command lines ----------------------------------------------------------------


def position(command: list[str], *words: str) -> int:
    """Where ``words`` occur together in ``command`` (fails when they do not)."""
    for index in range(len(command)):
        if tuple(command[index : index + len(words)]) == words:
            return index
    raise AssertionError(f"{' '.join(words)} not in the command")


@pytest.fixture
def layout_of(tmp_path):
    made = []

    def make(settings, the_job):
        plan = plan_network(settings, the_job)
        made.append(make_layout(settings, the_job, plan))
        return made[-1], plan

    yield make
    for layout in made:
        remove_layout(layout)


def test_bwrap_command_drops_capabilities_hides_the_home_and_never_carries_the_environment(
    tmp_path, layout_of
):
    settings = SandboxSettings(sandbox="bwrap")
    the_job = job(
        env={"ANTHROPIC_API_KEY": SECRET}, workspace=tmp_path, endpoints=("http://127.0.0.1:4000",),
        mounts=(Mount(source=tmp_path, target=Path.home() / "agent"),),
    )  # fmt: skip
    layout, plan = layout_of(settings, the_job)
    command = bwrap_command(
        "bwrap", layout, plan, "model", the_job.argv, "profiler-token"
    )
    text = " ".join(command)
    assert SECRET not in text and "--setenv" not in text
    for flag in (
        "--unshare-all",
        "--cap-drop ALL",
        "--die-with-parent",
        "--remount-ro /",
        f"--chdir {tmp_path}",
        "--hostname profiler-token",
    ):
        assert flag in text
    assert "--share-net" not in command
    # bwrap's parent is the launcher, which outlives trio's worker threads (see launcher_main)
    assert (
        command[1:4]
        == ["-I", "-S", str(Path(bwrap_module.__file__).with_name("launcher_main.py"))]
        and command[5] == "bwrap"
    )
    home, agent = str(Path.home()), str(Path.home() / "agent")
    # The home is hidden after it is bound, and the mount under it comes after the
    # tmpfs, or the tmpfs would cover it.
    assert (
        position(command, "--ro-bind", home, home)
        < position(command, "--tmpfs", home)
        < position(command, "--ro-bind", str(tmp_path), agent)
    )
    assert command[-4:] == [
        "--forward",
        f"4000={layout.out_dir / 'm4000.sock'}",
        "--",
        "agent",
    ]
    assert "--share-net" in bwrap_command(
        "bwrap", layout, plan, "full", the_job.argv, "profiler-token"
    )


@pytest.mark.parametrize("kind", ["docker", "podman"])
def test_container_command_is_read_only_without_network_and_names_variables_only(
    tmp_path, layout_of, kind
):
    settings = SandboxSettings(sandbox=kind, network="none")
    the_job = job(
        env={"ANTHROPIC_API_KEY": SECRET, "PATH": "/usr/bin"}, workspace=tmp_path
    )
    layout, _ = layout_of(settings, the_job)
    command = container_command(
        kind, kind, "profiler-x", layout, "none", None, the_job.env, the_job.argv
    )
    text = " ".join(command)
    assert SECRET not in text
    for flag in (
        "--rm",
        "--read-only",
        "--cap-drop ALL",
        "--network none",
        "--pull never",
        "--env ANTHROPIC_API_KEY --env PATH",
    ):
        assert flag in text
    assert (
        f"type=bind,source={tmp_path},target={tmp_path}" in text
        and f"--workdir {tmp_path}" in text
    )
    assert ("--ulimit nofile=20000:20000" in text) == (kind == "podman")
    assert command[-2:] == ["localhost/agent-profiler-host:1", "agent"]


def test_without_a_sandbox_the_command_is_unchanged_and_the_environment_is_only_the_given_one(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("PROFILER_SANDBOX_SECRET", SECRET)
    with confine(
        SandboxSettings(), job(env={"A": "1"}, workspace=tmp_path, publish=(8080,))
    ) as box:
        assert box.argv == ["agent"] and box.published == {8080: 8080}
        assert set(box.env) == {"A", "HOME", "TMPDIR"}
        private = Path(box.env["HOME"])
        assert private.is_dir()
    assert not private.exists()


# -- the profile and the preflight -----------------------------------------------------


def profile(folder: Path, **execution) -> Path:
    scenarios = folder / "scenarios"
    scenarios.mkdir(exist_ok=True)
    (scenarios / "hello.json").write_text(
        '{"id": "hello", "name": "Hello", "prompt": "Say hello."}', encoding="utf-8"
    )
    data = {
        "modes": {"plain": {}},
        "scenarios": {"path": "scenarios"},
        "execution": {"repetitions": 1, **execution},
    }
    path = folder / "profile.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_the_profile_keys_are_checked_with_the_others(tmp_path):
    path = profile(
        tmp_path,
        sandbox="bwrap",
        network="model",
        allow_hosts=["pypi.org"],
        sandbox_image="img",
        hide_paths=["/srv"],
    )
    execution = load_profile(path).execution
    assert SandboxSettings.from_execution(execution) == SandboxSettings(
        sandbox="bwrap",
        network="model",
        image="img",
        allow_hosts=("pypi.org",),
        hide_paths=("/srv",),
    )
    with pytest.raises(ProfileErrors) as caught:
        load_profile(profile(tmp_path, sandbox="Chroot!", network="some"))
    assert caught.value.problems == [
        f"{path}: execution.sandbox: expected one of none, bwrap, docker, "
        "podman or an environment plugin's id, got 'Chroot!'",
        f"{path}: execution.network: expected one of none, model, full, got 'some'",
    ]


def test_sandbox_keys_change_the_profile_hash_only_once_set(tmp_path):
    plain = load_profile(profile(tmp_path)).profile_hash()
    defaults = load_profile(
        profile(tmp_path, sandbox="none", network=None, allow_hosts=[], hide_paths=[])
    ).profile_hash()
    assert defaults == plain  # runs made before the keys existed can still be resumed
    assert load_profile(profile(tmp_path, sandbox="bwrap")).profile_hash() != plain


def validate(path: Path, env: dict[str, str]):
    """``profiler validate PATH`` in this process, with ``env`` as the environment's changes."""
    return CliRunner().invoke(cli, ["validate", str(path)], env=env)


def test_validate_says_in_one_line_that_docker_cannot_start(tmp_path):
    require("docker")
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"}
    done = validate(profile(tmp_path, sandbox="docker"), env)
    assert done.exit_code == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert (
        len(errors) == 1 and "execution.sandbox: docker is not usable" in errors[0]
    ), done.stderr
    assert (
        errors[0].endswith("(start the Docker daemon: `dockerd`)")
        and "Traceback" not in done.output
    )


def test_validate_says_in_one_line_that_bwrap_is_missing_or_a_setting_is_wrong(
    tmp_path,
):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()  # a PATH without bwrap
    done = validate(profile(tmp_path, sandbox="bwrap"), {"PATH": str(bin_dir)})
    assert done.exit_code == 1, done.output
    assert (
        "Error: " in done.stderr
        and "execution.sandbox: bwrap: `bwrap` not found on PATH (install the `bubblewrap` package)"
        in done.stderr
    )
    done = validate(profile(tmp_path, network="none"), {})
    assert (
        done.exit_code == 1
        and "execution.network: 'none' needs a sandbox" in done.stderr
    )


def test_validate_passes_with_a_working_bwrap(tmp_path):
    require("bwrap")
    done = validate(profile(tmp_path, sandbox="bwrap"), {})
    assert done.exit_code == 0, done.output


def test_check_is_silent_when_the_sandbox_starts():
    if shutil.which("bwrap"):
        check(SandboxSettings(sandbox="bwrap"))
    check(SandboxSettings())


def _run_refused(folder: Path, path: Path, env: dict[str, str]) -> str:
    """``profiler run PATH`` in ``folder``: refused with exit 1 and one ``Error:`` line,
    nothing written; that line."""
    done = CliRunner().invoke(
        cli, ["run", str(path), "--run-id", "r", "--progress", "none"], env=env
    )
    assert done.exit_code == 1, done.output
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in done.output, done.output
    for written in ("results", "reports"):
        assert not (folder / written).exists(), written
    return errors[0]


def test_run_refuses_a_sandbox_that_cannot_start_before_anything_is_written(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()  # a PATH without bwrap
    error = _run_refused(
        tmp_path, profile(tmp_path, sandbox="bwrap"), {"PATH": str(bin_dir)}
    )
    assert (
        error == "Error: execution.sandbox: bwrap: `bwrap` not found on PATH (install "
        "the `bubblewrap` package)"
    )
    require("docker")
    error = _run_refused(
        tmp_path,
        profile(tmp_path, sandbox="docker"),
        {"DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"},
    )
    assert "execution.sandbox: docker is not usable" in error and error.endswith(
        "(start the Docker daemon: `dockerd`)"
    )


def test_an_agent_program_under_a_hidden_path_is_still_shown():
    import tempfile

    with tempfile.TemporaryDirectory(
        dir="/var/tmp"
    ) as outside_tmp:  # bwrap shows /var/tmp as it is
        elsewhere = Path(outside_tmp) / "node_modules" / ".bin" / "agent"
        elsewhere.parent.mkdir(parents=True)
        assert program_folders(str(elsewhere)) == []  # visible anyway
        # The runner hides e.g. the results folder: an agent installed below it must still start.
        hidden = (str(Path(outside_tmp)),)
        assert program_folders(str(elsewhere), hidden=hidden) == [
            Mount(source=Path(outside_tmp).resolve() / "node_modules")
        ]
    # A checkout in /tmp: bwrap's fresh /tmp would not show its .agents folder.
    with tempfile.TemporaryDirectory(dir="/tmp") as in_tmp:
        program = Path(in_tmp) / "node_modules" / ".bin" / "agent"
        program.parent.mkdir(parents=True)
        assert program_folders(str(program)) == [
            Mount(source=program.parents[1].resolve())
        ]
        assert program_folders(str(program), container=True) == [
            Mount(source=program.parents[1].resolve())
        ]
