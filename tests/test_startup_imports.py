"""What start-up imports (issue 30): no plotting, numpy, HTTP or GitHub client, Ray or report code
for ``import profiler_core``, ``profiler --help``, shell completion and ``profiler list-plugins``.

A structural check on the set of modules a fresh interpreter holds afterwards,
not a timing: the timings are in bench/bench_startup.py. Each case is a real
subprocess with the installed entry points, so the plugins' own modules count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Never imported at start-up (top-level names; a submodule counts as its package).
HEAVY = ("matplotlib", "numpy", "httpx", "githubkit", "ray", "profiler_core.report")

_CHILD = r"""
import contextlib, json, sys
out = sys.argv[1]
args = sys.argv[2:]
if args == ["import"]:
    import profiler_core
elif args == ["version"]:
    import profiler_core
    print(profiler_core.__version__)
else:
    from profiler_core.cli import main
    with contextlib.suppress(SystemExit):
        main(args)
with open(out, "w") as f:
    json.dump(sorted(sys.modules), f)
"""


def _modules(
    tmp_path: Path, args: list[str], extra_env: dict[str, str] | None = None
) -> set[str]:
    out = tmp_path / "modules.json"
    env = {**os.environ, **(extra_env or {})}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SRC), env.get("PYTHONPATH")) if p
    )
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(out), *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(out.read_text()))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(
        m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)
    )


def _records(modules: set[str]) -> list[str]:
    """The data model's modules of records loaded.

    ``model.record`` (their shared base) and ``model.live`` (the contracts' protocols, typing only)
    are cheap.
    """
    cheap = {"profiler_core.model.record", "profiler_core.model.live"}
    return sorted(
        m for m in modules if m.startswith("profiler_core.model.") and m not in cheap
    )


def test_import_profiler_core_loads_no_model_and_nothing_heavy(tmp_path):
    modules = _modules(tmp_path, ["import"])
    assert _heavy(modules) == []
    # The public names come on first use: not even the data model or pluggy yet.
    assert not {"profiler_core.model", "cattrs", "pluggy", "trio"} & modules


@pytest.mark.parametrize(
    ("label", "args", "env"),
    [
        ("--help", ["--help"], {}),
        (
            "completion",
            [],
            {
                "_PROFILER_COMPLETE": "bash_complete",
                "COMP_WORDS": "profiler ",
                "COMP_CWORD": "1",
            },
        ),
        ("list-plugins", ["list-plugins"], {}),
    ],
)
def test_start_up_commands_import_nothing_heavy(tmp_path, label, args, env):
    modules = _modules(tmp_path, args, env)
    assert _heavy(modules) == [], label
    assert (
        "profiler_eval_ghx.plugin" in modules
    )  # the entry points were read: `profiler eval` is listed


def test_help_lists_plugin_commands_without_importing_built_in_components(tmp_path):
    modules = _modules(tmp_path, ["--help"])
    # Core's built-in plugins are registered when first needed; --help never needs them.
    assert (
        not {
            "profiler_core.providers.simulated",
            "profiler_core.metrics.collectors",
            "trio",
        }
        & modules
    )
    assert _records(modules) == []


def test_the_version_is_read_without_importlib_metadata(tmp_path):
    """``__version__`` comes from the ``agent_profiler-<version>.dist-info`` folder's
    name (issue 44)."""
    modules = _modules(tmp_path, ["version"])
    assert "profiler_core" in modules
    assert not {"importlib.metadata", "email", "zipfile"} & modules


def test_a_run_without_a_stop_rule_imports_no_numpy(tmp_path):
    """The stop rule's statistics (numpy) load only for a profile with
    ``execution.stop``; a small run needs none."""
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "one.json").write_text(
        '{"id": "one", "name": "One", "prompt": "p"}'
    )
    (tmp_path / "p.yaml").write_text(
        "modes: {a: {}}\nscenarios: {path: s}\nprovider: {id: simulated, "
        "options: {time_scale: 0}}\n"
        "execution: {repetitions: 1, warmup: false}\n"
    )
    modules = _modules(tmp_path, ["run", "p.yaml", "--no-report", "--progress", "none"])
    assert "profiler_core.runner.run" in modules  # it did run
    assert not {"numpy", "profiler_core.runner.stopping", "matplotlib"} & modules


def test_list_plugins_and_validate_import_no_trio_and_no_rich_when_piped(tmp_path):
    # list-plugins names the built-ins from a table (plugins/builtins.py); validate resolves the
    # profile's modes without an event loop; piped output is plain columns, not a rich table.
    demo = Path(__file__).resolve().parents[1] / "examples" / "demo" / "profile.yaml"
    listing = _modules(tmp_path, ["list-plugins"])
    assert not {"trio", "rich", "profiler_core.providers.simulated"} & listing
    assert _records(listing) == []
    validate = _modules(tmp_path, ["validate", str(demo)])
    assert "profiler_core.config.loader" in validate  # it did load the profile
    assert not {"trio", "rich", "profiler_core.runner.suite"} & validate


def test_a_one_cell_run_with_its_report_imports_no_numpy_ma(tmp_path):
    """The report's percentiles are taken from sorted values (stats/quantiles.py):
    ``np.percentile`` imported ``numpy.ma`` through ``np.unique`` (issue 44)."""
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "one.json").write_text(
        '{"id": "one", "name": "One", "prompt": "p"}'
    )
    (tmp_path / "p.yaml").write_text(
        "modes: {a: {}}\nscenarios: {path: s}\nprovider: {id: simulated, "
        "options: {time_scale: 0}}\n"
        "execution: {repetitions: 1, warmup: false}\n"
    )
    modules = _modules(tmp_path, ["run", "p.yaml", "--progress", "none"])
    assert "profiler_core.stats.grouped" in modules  # the report's statistics ran
    assert not {"numpy.ma", "matplotlib"} & modules
