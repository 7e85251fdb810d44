"""``profiler fake-model``: serve a scripted model to real agents on 127.0.0.1, no API
key needed."""

from __future__ import annotations

import time
from pathlib import Path

import click

#: The port ``profiler fake-model`` and the profiles ``profiler init --agent`` writes
#: use by default.
DEFAULT_PORT = 8765


@click.command("fake-model")
@click.argument(
    "script", required=False, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port on 127.0.0.1 (0: a free one).",
)
@click.option(
    "--model", help="Model name to report [default: the script's `model`, else fake]."
)
@click.option("--quiet", is_flag=True, help="Print no line per answered request.")
def fake_model_command(
    script: Path | None, port: int, model: str | None, quiet: bool
) -> None:
    """Serve a scripted model: OpenAI chat, Anthropic Messages and OpenAI Responses on 127.0.0.1.

    SCRIPT is a YAML file of replies (text, tool calls, usage; docs/fake-model.md);
    without one the model runs `echo hello` with the agent's shell tool, then
    answers "Done: the command printed hello.". Runs until Ctrl-C.

    \b
    Examples:
      profiler fake-model                          # http://127.0.0.1:8765
      profiler fake-model my-agent/fake-model.yaml --port 9000
      profiler init --agent codex my-agent && profiler fake-model my-agent/fake-model.yaml &
      profiler run my-agent/profile.yaml
    """
    from ..fakemodel import DEFAULT_SCRIPT, FakeModelServer, load_script, parse_script

    if script is None:
        import yaml

        replies, named = parse_script(
            yaml.safe_load(DEFAULT_SCRIPT), "the built-in script"
        )
    else:
        replies, named = load_script(script)

    def log(request) -> None:
        if request.method == "POST":
            click.echo(
                f"{request.path.split('?')[0]} -> {request.reply} "
                f"({request.duration_s * 1000:.0f} ms)",
                err=True,
            )

    server = FakeModelServer(
        replies,
        model=model or named or "fake",
        port=port,
        on_answer=None if quiet else log,
    )
    try:
        server.start()
    except OSError as exc:
        raise click.ClickException(
            f"127.0.0.1:{port}: cannot listen ({exc.strerror or exc}); try another --port"
        ) from None
    click.echo(f"Fake model {server.model!r} on {server.url} (Ctrl-C to stop)")
    click.echo(
        f"  OpenAI chat:        {server.base_url}/chat/completions   (OpenCode: "
        f"base URL {server.base_url})"
    )
    click.echo(
        f"  Anthropic Messages: {server.url}/v1/messages            (Claude "
        f"Code: ANTHROPIC_BASE_URL={server.url})"
    )
    click.echo(
        f"  OpenAI Responses:   {server.base_url}/responses          (Codex: "
        f"base_url {server.base_url})",
        nl=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        click.echo("Stopped.", err=True)
    finally:
        server.close()
