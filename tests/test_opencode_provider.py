"""The `opencode` provider driven directly (under trio), against the real opencode and
the scripted model:
the server's isolated environment, abort on timeout, delete on destroy, and a clean shutdown."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from tests.binaries import agent_binary
from tests.opencode_helpers import START_TIMEOUT_S, model_config

from profiler_core import CreateSessionParams, PermissionConfig, ProviderConfig
from profiler_core.fakemodel import FakeModelServer, Hang, tool_then_text
from profiler_core.providers.opencode import OpenCodeProvider
from profiler_core.providers.opencode.server import process_alive

pytestmark = pytest.mark.slow


def params(iteration: int) -> CreateSessionParams:
    return CreateSessionParams(
        system_instructions="SYSTEM-UNDER-TEST",
        scenario_id="echo",
        iteration=iteration,
        mode="m",
        model="local/scripted",
    )


def test_timeout_aborts_destroy_deletes_and_shutdown_leaves_nothing(tmp_path):
    binary = agent_binary("opencode", "OPENCODE_BIN")
    seen: dict[str, object] = {}

    async def main(model: FakeModelServer) -> None:
        provider = OpenCodeProvider(binary=str(binary))
        await provider.init(
            ProviderConfig(
                model="local/scripted",
                mode="m",
                permissions=PermissionConfig(auto_approve=True),
                environment={"PROFILER_MODE_MARK": "mode-env-value"},
                workdir=str(tmp_path),
                options={
                    "binary": str(binary),
                    "start_timeout_s": START_TIMEOUT_S,
                    "config": model_config(model.base_url),
                },
            )
        )
        # started by init, not by the first session, whose time it would count in
        server = provider.server
        seen["pid"], seen["home"] = server.pid, server.home
        try:
            handle = await provider.create_session(params(0))
            environ = dict(
                item.split("=", 1)
                for item in Path(f"/proc/{server.pid}/environ").read_text().split("\0")
                if "=" in item
            )
            seen["environ"] = environ

            # A hung model: the provider's own timeout fires, and it aborts the session.
            with pytest.raises(trio.TooSlowError):
                await provider.prompt(handle, "Run echo hello.", timeout_ms=3000)
            session = provider.sessions[handle.session_id]
            statuses = await provider._request(
                "GET", "/session/status", session.directory
            )
            seen["status_after_abort"] = statuses.get(handle.session_id)
            await provider.destroy_session(handle)
            gone = await provider.client.get(
                f"/session/{handle.session_id}", params={"directory": session.directory}
            )
            seen["after_delete"] = gone.status_code

            # The next session on the same server works.
            model.set_script(tool_then_text())
            handle = await provider.create_session(params(1))
            result = await provider.prompt(handle, "Run echo hello.", timeout_ms=60_000)
            trace = await provider.export_session(handle)
            await provider.destroy_session(handle)
            seen["result"], seen["trace"] = result, trace

            # Another provider can use this running server (options.base_url); its
            # shutdown leaves the server alone.
            guest = OpenCodeProvider(base_url=server.url)
            await guest.init(
                ProviderConfig(
                    model="local/scripted",
                    mode="m",
                    workdir=str(tmp_path),
                    options={"base_url": server.url},
                )
            )
            handle = await guest.create_session(params(2))
            seen["guest"] = await guest.prompt(
                handle, "Run echo hello.", timeout_ms=60_000
            )
            await guest.destroy_session(handle)
            await guest.shutdown()
            seen["alive_after_guest"] = process_alive(server.pid)
            # Three sessions later OpenCode has not fetched its plugin SDK from npm into
            # the fresh home.
            sdk_folder = server.home / "config" / "opencode"
            seen["sdk_installed"] = sorted(
                p.name for p in (sdk_folder / "node_modules").iterdir()
            )
            seen["npm_cache"] = (server.home / ".npm").exists()
        finally:
            await provider.shutdown()

    with FakeModelServer(Hang()) as model:
        trio.run(main, model)
        system_prompts = [r["messages"][0]["content"] for r in model.chat_requests()]

    environ = seen["environ"]
    home = str(seen["home"])
    assert environ["PROFILER_MODE_MARK"] == "mode-env-value"
    assert (
        environ["HOME"] == home
        and environ["XDG_CONFIG_HOME"].startswith(home)
        and environ["XDG_DATA_HOME"].startswith(home)
    )
    assert '"model": "local/scripted"' in environ["OPENCODE_CONFIG_CONTENT"]
    assert environ["OPENCODE_DISABLE_AUTOUPDATE"] == "1"
    # Without the abort OpenCode would still be busy waiting on the hung model.
    assert seen["status_after_abort"] in (None, {"type": "idle"})
    assert seen["after_delete"] == 404
    result = seen["result"]
    assert (
        result.completion_reason == "stop"
        and result.text == "Done: the command printed hello."
    )
    assert (
        result.metrics.tokens.input == 160
        and result.metrics.tool_calls[0].duration_ms > 0
    )
    assert seen["trace"].summary.total_tool_calls == 1
    assert seen["guest"].metrics.tokens.input == 160 and seen["alive_after_guest"]
    assert seen["sdk_installed"] == [] and not seen["npm_cache"]
    assert all("SYSTEM-UNDER-TEST" in s for s in system_prompts)
    assert not process_alive(seen["pid"]) and not Path(home).exists()


def test_a_dropped_connection_waits_for_the_dying_servers_exit_to_name_it():
    """A killed server closes its sockets a moment before it can be reaped: the error
    still says it died."""
    import types

    import httpx

    from profiler_core.providers.opencode.config import OpenCodeError
    from profiler_core.providers.opencode.provider import OpenCodeProvider

    class Dying:
        """A process whose exit shows on the fourth look, as a SIGKILLed one's does a
        little after its sockets close."""

        returncode = None
        looks = 0

        def poll(self):
            self.looks += 1
            if self.looks >= 4:
                self.returncode = -9
            return self.returncode

    class Dropped:
        async def request(self, method, path, **kwargs):
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response."
            )

    provider = OpenCodeProvider(
        base_url="http://127.0.0.1:9"
    )  # a server it did not start: no binary needed
    provider.client = Dropped()
    provider.server = types.SimpleNamespace(pid=4321, process=Dying())

    async def main():
        with pytest.raises(
            OpenCodeError,
            match=r"RemoteProtocolError: .*\(the opencode server, pid 4321, exited "
            r"with status -9\)",
        ):
            await provider._request("GET", "/session/s/message", "/w")

    trio.run(main)
