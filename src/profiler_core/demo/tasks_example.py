"""The files ``profiler init --agent NAME --example tasks`` writes: a real agent on the
example Harbor tasks.

The three tasks of ``examples/tasks`` (kept in this package under ``tasks/``, their
Python files as ``*.py.txt`` so the project's own linters leave them alone) with a
profile of two modes and a fake-model script. Under the script the agent really
edits the task's files: it fixes ``fix-median`` in both modes, adds the flag of
``add-cli-flag`` only in the ``thorough`` mode, and never repairs
``repair-backup-script`` — so the verifiers pass some sessions and fail others,
verified success differs between the modes, and each mode has a failed transcript.
The mode reaches the script's shell command through the mode's ``environment``
(``EXAMPLE_EFFORT``), which the agent hands to the commands it runs.
"""

from __future__ import annotations

from ..errors import ConfigError
from .agent import _PROVIDERS, _REAL, _row, prices_block, sandbox_line

#: the providers whose agents the example's fake-model script was written and tested for
EXAMPLE_PROVIDERS = ("opencode", "claude-code", "codex")

#: The example's tasks: (the file written, relative to ``tasks/``) -> its name in this
#: package's ``tasks/`` folder.
TASK_FILES = {
    name: name + (".txt" if name.endswith(".py") else "")
    for name in (
        "add-cli-flag/environment/Dockerfile",
        "add-cli-flag/environment/greet.py",
        "add-cli-flag/instruction.md",
        "add-cli-flag/solution/solve.sh",
        "add-cli-flag/task.toml",
        "add-cli-flag/tests/test.sh",
        "fix-median/environment/Dockerfile",
        "fix-median/environment/stats.py",
        "fix-median/instruction.md",
        "fix-median/solution/solve.sh",
        "fix-median/task.toml",
        "fix-median/tests/test.sh",
        "fix-median/tests/test_stats.py",
        "repair-backup-script/environment/Dockerfile",
        "repair-backup-script/environment/backup.sh",
        "repair-backup-script/instruction.md",
        "repair-backup-script/solution/solve.sh",
        "repair-backup-script/task.toml",
        "repair-backup-script/tests/test.sh",
    )
}

#: What verified success the script gives each (mode, task): the example's promise,
#: checked by its tests.
EXPECTED = {
    ("quick", "fix-median"): True,
    ("quick", "add-cli-flag"): False,
    ("quick", "repair-backup-script"): False,
    ("thorough", "fix-median"): True,
    ("thorough", "add-cli-flag"): True,
    ("thorough", "repair-backup-script"): False,
}

_PROFILE = """\
# {agent} - the real program - on three Harbor tasks, against a fake model: no API key, nothing
# leaves this machine. The tasks' own tests (tests/test.sh) decide success, as in Harbor.
#
#   profiler fake-model fake-model.yaml --port {port}     # in another terminal (or with & at the end)
#   profiler run profile.yaml
#
# The fake model's script (fake-model.yaml) has the agent look at the files, then run one shell
# command that really edits them: it fixes fix-median in both modes, adds --shout in add-cli-flag
# only in `thorough` (EXAMPLE_EFFORT below reaches that command through the agent), and never
# repairs repair-backup-script. So success differs between the modes and each has failed sessions.

modes:
  quick:
    system_instructions: "You are a coding agent. Make the smallest change that could work."
    environment: {{EXAMPLE_EFFORT: quick}}
  thorough:
    system_instructions: "You are a coding agent. Make the change, then run the code to check it."
    environment: {{EXAMPLE_EFFORT: thorough}}

scenarios:
  path: tasks
  format: harbor                     # each folder with task.toml + instruction.md is a task

{provider}
scorer: {{id: verify}}                 # success = the task's tests/test.sh wrote reward 1

execution:
  repetitions: 3
  concurrency: 2
  warmup: false
{sandbox}

output:
  keep_workspaces: failed            # a failed session's workspace is kept, to look at
{prices}"""

#: The fake model's replies: look, change (what the mode allows), report. Plain shell,
#: so every agent runs it.
FAKE_MODEL = """\
# The fake model behind the example (docs/fake-model.md): reply n answers a session after n tool results.
model: fake
replies:
  - shell: pwd && ls
    thinking: Let me look at the task's files first.
  - shell: |
      cd /app 2>/dev/null || true
      if [ -f stats.py ]; then
        python3 -c "import pathlib; p = pathlib.Path('stats.py'); t = p.read_text(); p.write_text(t.replace('    return ordered[middle]\\\\n', '    if len(ordered) % 2:\\\\n        return ordered[middle]\\\\n    return (ordered[middle - 1] + ordered[middle]) / 2\\\\n'))"
        echo "median() fixed"
      elif [ "$EXAMPLE_EFFORT" != thorough ]; then
        echo "quick: read the code, changed nothing"; head -n 5 ./*.py ./*.sh 2>/dev/null
      elif [ -f greet.py ]; then
        printf '%s\\n' 'import argparse' '' '' 'def main(argv=None):' \\
          '    parser = argparse.ArgumentParser(description="Greet someone.")' '    parser.add_argument("name")' \\
          '    parser.add_argument("--shout", action="store_true")' '    args = parser.parse_args(argv)' \\
          '    greeting = f"Hello, {args.name}!"' '    print(greeting.upper() if args.shout else greeting)' \\
          '' '' 'if __name__ == "__main__":' '    main()' > greet.py
        echo "--shout added"
      else
        echo "backup.sh: quoted the variables"; sed -i 's/cp $file/cp "$file"/' backup.sh
      fi
    thinking: Now the change.
    usage: {input: 400, output: 120, cache_read: 1200}
  - text: "Done: I made the change."
"""

_README = """\
# {agent} on the example Harbor tasks, against a fake model

A first verified comparison in one command: the real `{agent}` agent on three
Harbor tasks (`tasks/`), answered by `profiler fake-model` on 127.0.0.1 — no API
key, no network. Two modes (`quick`, `thorough`) × three tasks × 3 repetitions;
each task's own tests (`tests/test.sh`) decide success.

```bash
profiler agents list                               # is the {program} program found? (else: profiler agents install)
profiler fake-model fake-model.yaml --port {port} &   # the model, until Ctrl-C (or kill %1)
profiler run profile.yaml
profiler view                                      # the report, each session's transcript, two side by side
```

What to expect: `fix-median` passes in both modes, `add-cli-flag` only in
`thorough`, `repair-backup-script` in neither (the script's quoting fix leaves
the count wrong). The report shows verified success per mode with its interval
and the verdict; the viewer shows the failed sessions' transcripts, the
verifier's output, and a failed session beside a passed one.

- `fake-model.yaml` — what the model answers (docs/fake-model.md). The shell
  command of its second reply is what edits the task's files.
- `profile.yaml` — the modes (their `environment` tells that command the mode),
  the tasks, the provider pointing at the fake model, `scorer: verify`.
- `tasks/` — the three tasks (docs/harbor.md). `profiler run profile.yaml
  --provider oracle --repetitions 1` runs their reference solutions: all pass.

## A real model

{real}
"""


def tasks_example_files(
    agent: str, port: int, *, sandbox: bool | None = None
) -> dict[str, str]:
    """The files (relative path -> text) of the example: profile, fake-model script,
    README and the tasks."""
    from importlib import resources

    row = _row(agent)
    if row.provider not in EXAMPLE_PROVIDERS:
        names = ", ".join(EXAMPLE_PROVIDERS)
        raise ConfigError(
            f"--example tasks: written for the agents {names}; {agent!r} is run "
            f"by the {row.provider} provider"
        )
    url = f"http://127.0.0.1:{port}"
    endpoint = url if row.api == "anthropic" else f"{url}/v1"
    provider = _PROVIDERS[row.provider].format(
        url=url,
        base_url=f"{url}/v1",
        model=row.model,
        agent=agent,
        endpoint=endpoint,
        acp=" ".join(row.acp),
    )
    profile = _PROFILE.format(
        agent=agent,
        port=port,
        provider=provider,
        sandbox=sandbox_line(sandbox),
        prices=prices_block(row.provider, row.model),
    )
    files = {
        "profile.yaml": profile,
        "fake-model.yaml": FAKE_MODEL,
        "README.md": _README.format(
            agent=agent, port=port, program=row.program, real=_REAL[row.provider]
        ),
    }
    root = resources.files("profiler_core.demo").joinpath("tasks")
    for name, stored in TASK_FILES.items():
        files[f"tasks/{name}"] = root.joinpath(stored).read_text(encoding="utf-8")
    return files


__all__ = ["EXPECTED", "FAKE_MODEL", "TASK_FILES", "tasks_example_files"]
