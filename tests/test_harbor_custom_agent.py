"""A custom agent (``agent_import_path``, tests/scripted/harbor_agent.py) calling
``profiler fake-model`` through the ``harbor`` provider.

The agent runs in Harbor's own interpreter, asks the scripted model on 127.0.0.1, and
runs its shell call in
Harbor's podman environment; Harbor's verifier judges the task. Our rows must equal what
``profiler import harbor``
reads from the same job folders, and the model's tokens must come through. Needs Harbor
and podman (CI: fails when
missing; elsewhere skips).
"""

from __future__ import annotations

import json
import os
import resource
from pathlib import Path

import pytest
import yaml
from tests.sandbox_runtimes import require
from tests.scripted.agent_runs import profiler, rows
from tests.test_fakemodel import start_fake_model, stop
from tests.test_harbor_provider import base_image, harbor_program, write_task

# One worker runs the module: its Harbor job (about 35 s) is set up once, not once per worker.
pytestmark = pytest.mark.xdist_group("harbor_custom_agent")

SCRIPT = """model: scripted-harbor
replies:
  - shell: echo "Hello, world!" > /app/hello.txt
    usage: {input: 100, output: 12, cache_read: 30}
  - text: "Done: /app/hello.txt says hello."
    usage: {input: 60, output: 8, cache_read: 0}
"""


@pytest.fixture(scope="module")
def custom_run(tmp_path_factory):
    harbor = harbor_program()
    podman = require("podman")
    require("bwrap")
    root = tmp_path_factory.mktemp("harbor-custom")
    write_task(root / "tasks" / "hello-file", base_image(podman))
    nofile, nproc = (
        resource.getrlimit(resource.RLIMIT_NOFILE)[1],
        resource.getrlimit(resource.RLIMIT_NPROC)[1],
    )
    conf = root / "containers.conf"
    conf.write_text(
        f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", '
        f'"nproc={min(nproc, 4096)}:{min(nproc, 4096)}"]\n'
    )
    (root / "fake-model.yaml").write_text(SCRIPT)
    model, url = start_fake_model(str(root / "fake-model.yaml"), cwd=root)
    saved = {k: os.environ.get(k) for k in ("CONTAINERS_CONF", "PYTHONPATH")}
    # Harbor's interpreter imports the agent's module from this folder (harbor run
    # inherits the profiler's environment).
    os.environ.update(
        CONTAINERS_CONF=str(conf), PYTHONPATH=str(Path(__file__).parent / "scripted")
    )
    try:
        (root / "profile.yaml").write_text(
            yaml.safe_dump(
                {
                    "modes": {"custom": {}},
                    "scenarios": {"path": "tasks", "format": "harbor"},
                    "provider": {
                        "id": "harbor",
                        "model": "scripted-harbor",
                        "options": {
                            "agent_import_path": "harbor_agent:ScriptedAgent",
                            "agent_kwargs": {"model_url": url},
                            "environment": "podman",
                            "harbor": str(harbor),
                            "keep_jobs": "jobs",
                        },
                    },
                    "execution": {
                        # one Harbor trial (~10 s of CPU); test_harbor_provider runs two at once
                        "repetitions": 1,
                        "warmup": False,
                        "sandbox": "bwrap",
                        # Harbor's own podman-compose once failed to find the image it had just
                        # built for a trial, in a loaded suite run: that trial is Harbor's error,
                        # so the cell is tried again (the row says how many attempts it took).
                        "allowed_retries": 1,
                    },
                }
            )
        )
        done = profiler(
            root, "run", "profile.yaml", "--run-id", "c", "--no-report", timeout=900
        )
    finally:
        _, log = stop(model)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    assert done.returncode == 0, done.stdout + done.stderr
    return root, log


def test_the_custom_agent_solves_the_task_with_the_scripted_model(custom_run):
    root, log = custom_run
    got = rows(root, "c")
    assert [(r["success"], r.get("reward"), r.get("error")) for r in got] == [
        (True, 1.0, None),
    ]
    assert (
        log.count("/v1/chat/completions -> tool_call bash") == 1
        and log.count("/v1/chat/completions -> text") == 1
    ), log


def test_its_tokens_come_through(custom_run):
    root, _ = custom_run
    for row in rows(root, "c"):
        tokens = row["tokens"]
        # the script's two replies: 190 prompt tokens on the wire, 30 of them cached
        # (Harbor's n_input_tokens
        # includes them, our input does not), 20 completion tokens
        assert (tokens["input"], tokens["cacheRead"], tokens["output"]) == (
            160,
            30,
            20,
        ), tokens


def test_our_rows_equal_what_the_importer_reads_from_the_same_jobs(custom_run):
    root, _ = custom_run
    got = rows(root, "c")
    jobs = [root / "jobs" / r["sessionId"] for r in got]
    out = profiler(
        root,
        "import",
        "harbor",
        *map(str, jobs),
        "--as-mode",
        "custom",
        "--out",
        "imported/i.jsonl",
    )
    assert out.returncode == 0, out.stderr
    imported = [
        json.loads(line)
        for line in (root / "imported" / "i.jsonl").read_text().splitlines()
    ]
    same = (
        "mode",
        "scenarioId",
        "success",
        "reward",
        "tokens",
        "cost",
        "timing",
        "completionReason",
        "checkpointsPassed",
        "agentTurns",
    )
    key = lambda r: tuple(json.dumps(r.get(k), sort_keys=True) for k in same)  # noqa: E731
    assert len(imported) == 1 and sorted(map(key, got)) == sorted(map(key, imported))
