"""bench/bench_house.py measures a git revision in a temporary export: counters, figures."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "bench_house.py"


def _house():
    spec = importlib.util.spec_from_file_location("bench_house", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cycles_finds_each_circle_once_and_ignores_a_chain():
    house = _house()
    edges = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["e"], "e": ["d"], "f": ["a"]}
    assert house.cycles(edges) == [["a", "b", "c"], ["d", "e"]]
    assert house.cycles({"a": ["b"], "b": ["c"], "c": []}) == []


def test_counters_on_a_small_tree(tmp_path):
    house = _house()
    module = tmp_path / "src" / "pkg" / "m.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "from typing import Any\n"
        f"x: Any = 'Any in a string is not counted'  # nor Any here{'.' * 60}\n"
        "y = ('opencode', 'codex')\n"
    )
    files = house.sources(tmp_path)
    assert house.long_lines(files) == {"lines": 3, "over_100": 1, "over_100_pct": 33.33}
    assert house.any_per_kloc(files, 3) == round(
        2000 / 3, 1
    )  # the import and the annotation
    assert house.agent_places(tmp_path, files) == ["pkg/m.py"]


def test_head_prints_every_figure_as_json():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--rev", "HEAD", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    for key in (
        "over_100",
        "any_per_1000_lines",
        "row_schema_places",
        "agent_list_places",
        "public_names",
        "rooms",
        "floors",
        "arrows_up",
        "same_floor_pairs",
        "circles",
    ):
        assert isinstance(figures[key], int | float), key
    assert figures["floors"] >= 10 and figures["rooms"] > 200
    assert len(figures["commit"]) == 12
