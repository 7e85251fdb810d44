"""Shared fixtures: plugin-author fixtures from profiler_core.testing, the parity data
of the TypeScript original."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ["profiler_core.testing.pytest_plugin"]

# Bytecode caches on, for this process, its xdist workers and every `profiler` a test starts:
# some shells and CI images set PYTHONDONTWRITEBYTECODE, and then each of the suite's hundreds
# of `profiler` processes compiles the package again (0.85 s instead of 0.62 s for a 1-cell run).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
# Entry points as importlib.metadata gives them (tests replace it), no cache file in ~/.cache;
# tests/test_plugin_discovery.py turns the cache on for itself.
os.environ["PROFILER_ENTRY_POINT_CACHE"] = "0"
# The `profiler` processes a worker's tests start share one code cache (util/codecache.py)
# in a temporary folder, not ~/.cache; tests/test_code_cache.py sets its own. Hundreds of
# processes start in a run, each compiling the same ~300 generated scripts otherwise.
_CODE_CACHE = tempfile.mkdtemp(prefix="profiler-test-code-cache-")
atexit.register(shutil.rmtree, _CODE_CACHE, ignore_errors=True)
os.environ["PROFILER_CODE_CACHE"] = _CODE_CACHE
# Output as the tests read it: plain, whatever the shell forces (the tests that want
# rich set these themselves).
for _name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
    os.environ.pop(_name, None)

ROOT = Path(__file__).resolve().parent.parent
#: The original's parity data, in the repository (tests/fixtures/anchor-parity/README.md).
PARITY = ROOT / "tests" / "fixtures" / "anchor-parity"


EXAMPLES = ROOT / "examples"


def _listing(folder: Path) -> set[str]:
    # os.walk, not Path.rglob: this runs twice around every test, and is 4x cheaper this way.
    out = set()
    for parent, dirs, files in os.walk(folder):
        rel = os.path.relpath(parent, folder)
        out.update(name if rel == "." else f"{rel}/{name}" for name in (*dirs, *files))
    return out


@pytest.fixture(autouse=True)
def _examples_stay_untouched():
    """No test writes into examples/ (a test running the demo runs a copy, issue 31.20) or
    leaves the working folder changed."""
    before, cwd = _listing(EXAMPLES), os.getcwd()
    yield
    added = sorted(_listing(EXAMPLES) - before)
    assert not added, f"the test wrote into examples/: {added[:5]}"
    # A test that leaves the worker in another folder (or a deleted one) breaks the next
    # test on that worker, whatever it is: name the culprit instead.
    try:
        left = os.getcwd()
    except FileNotFoundError:
        left = "(a deleted folder)"
    if left != cwd:
        os.chdir(cwd)
        pytest.fail(f"the test left the working folder at {left}, not {cwd}")


@pytest.hookimpl(
    tryfirst=True, optionalhook=True
)  # optional: the hook exists only with pytest-xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker per core, plus two.

    Many tests spend their time waiting on real agents, servers, containers and
    timeouts, not on a core: the extra workers fill that time. On the 2-core CI
    machine (7 Dec 2026) the cores were busy 89% of a 3-worker run (8:56) and 97%
    of a 4-worker one (8:10). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still wins.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own implementation reads it
    return _cores() + 2


def _cores() -> int:
    """The cores this process may use."""
    affinity = getattr(
        os, "sched_getaffinity", None
    )  # Linux; elsewhere the machine's count
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


#: why a test cannot run: its xdist_group was lost on the way to the scheduler (set on
#: xdist workers)
LOST_GROUP = pytest.StashKey[str]()


#: the group of the container tests that run under Podman (their name says so): they
#: share Podman's storage, not Docker's daemon, so they run beside the Docker ones on a
#: worker of their own (each test counts only its own runtime's leftover containers)
PODMAN_GROUP = "podman"


# pytest reads only attributes named pytest_*; specname says which hook this is
@pytest.hookimpl(specname="pytest_collection_modifyitems", tryfirst=True)
def pytest_collection_modifyitems_podman(items: list[pytest.Item]) -> None:
    """The ``containers`` group's Podman tests get a group of their own
    (``containers_podman``: pytest-xdist joins a test's group names)."""
    for item in items:
        groups = {m.args[0] for m in item.iter_markers("xdist_group") if m.args}
        if groups == {"containers"} and "podman" in item.name:
            item.add_marker(pytest.mark.xdist_group(PODMAN_GROUP))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Slow tests first; under ``--dist loadgroup``, a test whose xdist_group would be
    ignored fails instead of running beside its group.

    pytest-xdist tells the scheduler a test's group by an ``@group`` suffix on its node
    id, added on the worker
    just before this hook; pytest 9.2 drops that suffix (so the test extra keeps pytest below 9.2).
    """
    # pytest-xdist hands tests out in collection order: the long ones (marked slow: real
    # agents, Ray,
    # sandboxes, pyright) go first, so that no worker is left running one alone at the end.
    if hasattr(
        config, "workerinput"
    ):  # an xdist worker; a serial run keeps the files' order
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if not getattr(
        config.option, "loadgroup", False
    ):  # set on the workers of a --dist loadgroup run only
        return
    for item in items:
        if (
            item.get_closest_marker("xdist_group")
            and "@" not in item.nodeid.rsplit("]", 1)[-1]
        ):
            item.stash[LOST_GROUP] = (
                "--dist loadgroup ignores this test's xdist_group with pytest "
                f"{pytest.__version__}: "
                "install the test extra (pip install -e '.[test]') or run the "
                "tests serially (-p no:xdist)"
            )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if LOST_GROUP in item.stash:
        pytest.fail(item.stash[LOST_GROUP], pytrace=False)


@pytest.fixture
def parity_dir() -> Path:
    """The TypeScript original's parity data (tests/fixtures/anchor-parity)."""
    return PARITY
