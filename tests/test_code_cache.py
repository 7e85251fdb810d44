"""The cache of attrs' and cattrs' compiled generated methods (util/codecache.py, issue 44).

Each case is a fresh interpreter with its own cache folder (``XDG_CACHE_HOME``), as
two starts of ``profiler`` on one machine: the first compiles and writes, the
second reads and compiles nothing, and the classes behave the same.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

_CHILD = r"""
import json, sys
from profiler_core.util import codecache

misses = []
real = compile
def counting(source, filename, mode, *args, **kwargs):
    misses.append(filename)
    return real(source, filename, mode, *args, **kwargs)
codecache.compile = counting  # CodeCache.code's compile: a miss

installed = codecache.install()
import attrs
from profiler_core.model.record import Record

@attrs.frozen(kw_only=True, repr=False, eq=False)
class Point(Record):
    x: int
    y: str = "b"
    z: tuple[int, ...] = attrs.field(factory=tuple)

from profiler_core.storage import converter
from profiler_core.model import TokenBreakdown
p = Point(x=1)
out = {
    "installed": installed,
    "misses": misses,
    "repr": repr(p),
    "eq": p == Point(x=1, y="b") and p != Point(x=2),
    "default": list(p.z),
    "json": converter.unstructure(TokenBreakdown(input=3, output=4)),
}
try:
    Point(x=1, w=2)
except TypeError as exc:
    out["error"] = str(exc)
print(json.dumps(out))
"""


def _start(cache: Path, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if k != "PROFILER_CODE_CACHE"}
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    environ.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=str(SRC), PYTHONHASHSEED="0")
    environ.update(env)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _files(cache: Path) -> list[Path]:
    return sorted(cache.glob("agent-profiler/generated-code/*/*.code"))


def test_a_second_start_compiles_nothing_and_behaves_the_same(tmp_path):
    first = _start(tmp_path)
    assert first["installed"] is True
    assert any("Point" in name for name in first["misses"])  # attrs' __init__ of Point
    assert any("TokenBreakdown" in name for name in first["misses"])  # cattrs' function
    assert len(_files(tmp_path)) == len(first["misses"])
    second = _start(tmp_path)
    assert second["misses"] == []
    assert {k: v for k, v in second.items() if k != "misses"} == {
        k: v for k, v in first.items() if k != "misses"
    }
    assert second["repr"] == "Point(x=1, y='b', z=())"
    assert second["json"]["input"] == 3
    assert "unexpected keyword argument 'w'" in second["error"]


def test_a_script_that_differs_per_process_replaces_its_file(tmp_path):
    # attrs' __hash__ holds the class name's string hash: another PYTHONHASHSEED, another script
    first = _start(tmp_path, PYTHONHASHSEED="1")
    count = len(_files(tmp_path))
    second = _start(tmp_path, PYTHONHASHSEED="2")
    assert second["misses"]  # the seeded scripts (cattrs' AttributeOverride's __hash__)
    assert len(second["misses"]) < len(first["misses"])
    assert len(_files(tmp_path)) == count  # replaced, not added


def test_a_file_for_another_script_is_compiled_again(tmp_path):
    _start(tmp_path)
    files = _files(tmp_path)
    for path in files:  # same names, other contents: a stale or colliding file
        filename, flags, script, code = marshal.loads(path.read_bytes())
        path.write_bytes(marshal.dumps((filename, flags, script + "\n", code)))
    files[0].write_bytes(b"not marshal data")
    again = _start(tmp_path)
    assert len(again["misses"]) == len(files)
    assert again["repr"] == "Point(x=1, y='b', z=())"


def test_off_or_without_bytecode_writes_nothing(tmp_path):
    off = _start(tmp_path / "off", PROFILER_CODE_CACHE="0")
    assert off["installed"] is False
    assert off["misses"] == []  # attrs compiled as it always does, past the cache
    assert not (tmp_path / "off").exists()
    quiet = _start(tmp_path / "quiet", PYTHONDONTWRITEBYTECODE="1")
    assert quiet["installed"] is True
    assert quiet["misses"]
    assert _files(tmp_path / "quiet") == []


def test_a_folder_named_by_the_variable_holds_the_cache_instead(tmp_path):
    named = tmp_path / "named"
    first = _start(tmp_path / "home", PROFILER_CODE_CACHE=str(named))
    assert first["installed"] is True and first["misses"]
    assert len(sorted(named.glob("*/*.code"))) == len(first["misses"])
    assert not (tmp_path / "home").exists()  # nothing in the user's cache folder
    assert _start(tmp_path / "home", PROFILER_CODE_CACHE=str(named))["misses"] == []


def test_an_unwritable_cache_folder_only_loses_the_speed_up(tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    out = _start(blocked)
    assert out["misses"]
    assert out["repr"] == "Point(x=1, y='b', z=())"


def test_profiler_run_writes_the_same_rows_with_the_cache_cold_warm_and_off(tmp_path):
    """The command line turns the cache on (cli.main): a 1-cell run's rows do not depend
    on where its generated code came from."""
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "one.json").write_text(
        '{"id": "one", "name": "One", "prompt": "fix the parser test"}'
    )
    (tmp_path / "p.yaml").write_text(
        "modes: {a: {}}\nscenarios: {path: s}\nprovider: {id: simulated, "
        "options: {seed: 7, time_scale: 0}}\nscorer: {id: checks}\n"
        "execution: {repetitions: 1, warmup: false}\n"
    )

    def run(**env: str) -> dict:
        environ = {k: v for k, v in os.environ.items() if k != "PROFILER_CODE_CACHE"}
        environ.pop("PYTHONDONTWRITEBYTECODE", None)
        environ.update(XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(SRC))
        environ.update(env)
        for old in (tmp_path / "results").glob("*"):
            old.unlink()
        proc = subprocess.run(
            [sys.executable, "-m", "profiler_core", "run", "p.yaml", "--no-report"],
            cwd=tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        (rows,) = [
            p
            for p in (tmp_path / "results").glob("*.jsonl")
            if not p.name.endswith(".analysis.jsonl")
        ]
        row = json.loads(rows.read_text().splitlines()[0])
        return {k: row[k] for k in ("tokens", "success", "checkpointsPassed", "cost")}

    cold = run()
    written = _files(tmp_path / "cache")
    assert len(written) > 100  # attrs' and cattrs' scripts of a run
    assert run() == cold
    assert _files(tmp_path / "cache") == written
    assert run(PROFILER_CODE_CACHE="0") == cold
