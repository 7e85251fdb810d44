"""The documented layers are the enforced ones, and no import runs back up (docs/architecture.md).

``test_lint.py::test_import_layers_hold`` runs import-linter on the contract; these tests
check what that contract cannot say about itself: that it is the diagram of the docs, that
packages on one line are independent, that nothing imports the root package or its own
package's ``__init__`` in a circle, and that the scripts of ``bench/`` have no cycle.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"


def _contract_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == "layers"]
    return layers


def _doc_layers() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("`profiler_core` is a stack of layers.")
    opening = text.index("```\n", start) + 4
    block = text[opening : text.index("\n```", opening)]
    # One layer a line: its packages joined by " · ", then the description after a wide gap.
    lines = [re.split(r"\s{2,}", line)[0] for line in block.splitlines()]
    return [" | ".join(line.split(" · ")) for line in lines if line.strip()]


def test_every_layer_line_is_independent():
    """``:`` would let two packages on a line import each other, which the docs say they do not."""
    mixed = [line for line in _contract_layers() if ":" in line]
    assert mixed == [], f"pyproject.toml layers joined with ':' (use '|'): {mixed}"


def test_the_docs_draw_the_enforced_layers():
    assert _doc_layers() == _contract_layers(), (
        "docs/architecture.md's layer diagram and pyproject.toml's layers contract differ"
    )


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph(
        "profiler_core", exclude_type_checking_imports=False, cache_dir=None
    )


def test_nothing_inside_imports_the_root_package():
    """``profiler_core`` re-exports every layer: a module importing it imports upwards."""
    graph = _graph()
    importers = graph.find_modules_that_directly_import("profiler_core")
    found = sorted(importers)
    details = [
        f"{m}:{d['line_number']}: {d['line_contents']}"
        for m in found
        for d in graph.get_import_details(importer=m, imported="profiler_core")
    ]
    assert details == [], "imports of the root package from inside it:\n" + "\n".join(
        details
    )


def test_no_module_imports_its_package_in_a_circle():
    """A package's ``__init__`` that imports a module importing the package back is a cycle.

    import-linter's acyclic_siblings contract compares siblings only, so it does not see it.
    """
    graph = _graph()
    circles = []
    for module in sorted(graph.modules):
        parts = module.split(".")
        for depth in range(2, len(parts)):
            package = ".".join(parts[:depth])
            if graph.direct_import_exists(
                importer=module, imported=package
            ) and graph.chain_exists(importer=package, imported=module):
                chain = graph.find_shortest_chain(importer=package, imported=module)
                circles.append(" -> ".join([*(chain or ()), package]))
    assert circles == [], "import cycles through a package's __init__:\n" + "\n".join(
        circles
    )


def _bench_imports(path: Path, scripts: set[str]) -> set[str]:
    """The scripts of bench/ that ``path`` imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found & scripts


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (script -> scripts it imports), or [] when there is none."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished

    def visit(node: str, path: list[str]) -> list[str]:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return []


def test_bench_scripts_have_no_import_cycle():
    bench = ROOT / "bench"
    scripts = {p.stem for p in bench.glob("*.py")}
    graph = {p.stem: _bench_imports(p, scripts) for p in bench.glob("*.py")}
    assert graph["run_all"] and graph["bench_original"], (
        "the scan found no import between bench scripts"
    )
    cycle = _cycle(graph)
    assert cycle == [], "bench/ import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    """The check above can fail: a two-script loop is found, an acyclic chain is not."""
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
