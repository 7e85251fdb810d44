"""The house figures of issue 43, measured on any git revision of this repository.

Run: ``python bench/bench_house.py [--rev REV] [--json]`` (default ``HEAD``).

The revision is exported with ``git archive`` into a temporary folder and
measured there, so the working tree is never touched and two revisions are
measured the same way. Printed, for the packages under ``src/``:

- **long lines**: lines over 100 characters in ``src/**/*.py``, count and share;
- **complexity**: radon's highest cyclomatic complexity and the number of
  functions and methods above 15 (of which methods; radon counts each ``and``/``or``,
  which ruff's McCabe rule does not) (``pip install radon``; without it these two are ``n/a``);
- **Any per 1,000 lines**: ``Any`` as a name token (comments and strings not
  counted), per 1,000 physical lines;
- **row schema**: modules that list the result row's fields themselves: at
  least ``SCHEMA_MIN`` of ``ProfileRow``'s field names (snake or camelCase)
  as string literals in one module;
- **agents**: modules naming at least two of the real agents (``opencode``,
  ``claude-code``, ``codex``) as string literals;
- **public names**: packages whose ``__init__`` resolves names lazily (a module
  ``__getattr__``), their public names, and how often each name is written in
  that ``__init__`` (string literals and imported names);
- **the house** (grimp, installed with import-linter): rooms (modules),
  floors (the layers of ``[tool.importlinter]``), arrows back up (imports from a
  lower floor to a higher one; those to the root package ``profiler_core``, which
  re-exports every floor, are counted apart), same-floor arrows
  (imports between two packages of one layer line, which docs/architecture.md
  says do not happen) and circles (cycles among the sibling modules of a
  package, its ``__init__`` counted as one of them, function-local imports counted,
  ``TYPE_CHECKING`` imports not; and among the scripts of ``bench/``).

Counts by pattern are best effort; each says above how it is counted.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LONG = 100
SCHEMA_MIN = 10
AGENTS = ("opencode", "claude-code", "codex")


def export(rev: str, into: Path) -> str:
    """Unpack ``rev`` into ``into`` with ``git archive``; the full commit hash."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    archive = subprocess.run(
        [
            "git",
            "-C",
            str(ROOT),
            "archive",
            "--format=tar",
            commit,
            "src",
            "bench",
            "pyproject.toml",
        ],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return commit


def sources(tree: Path) -> list[Path]:
    """The Python files of ``src/``, sorted."""
    return sorted((tree / "src").rglob("*.py"))


def long_lines(files: list[Path]) -> dict[str, float]:
    """Lines over ``LONG`` characters."""
    total = over = 0
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            total += 1
            over += len(line) > LONG
    return {
        "lines": total,
        "over_100": over,
        "over_100_pct": round(100 * over / total, 2),
    }


def any_per_kloc(files: list[Path], lines: int) -> float:
    """``Any`` name tokens per 1,000 lines."""
    count = 0
    for path in files:
        with path.open("rb") as f:
            count += sum(
                tok.type == tokenize.NAME and tok.string == "Any"
                for tok in tokenize.tokenize(f.readline)
            )
    return round(1000 * count / lines, 1)


def complexity(tree: Path) -> dict[str, object]:
    """radon's highest cyclomatic complexity and the functions above 15."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "radon", "cc", "-j", str(tree / "src")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except subprocess.CalledProcessError:
        return {"radon_max": "n/a (pip install radon)", "radon_over_15": "n/a"}
    scores: list[tuple[int, str]] = []
    methods = 0
    for path, blocks in json.loads(out).items():
        # functions and methods (each listed once, at the top level); a class's own score is
        # the sum of its methods' and is left out
        for block in blocks if isinstance(blocks, list) else ():
            if block.get("type") == "class":
                continue
            owner = f"{block['classname']}." if block.get("classname") else ""
            where = f"{Path(path).relative_to(tree / 'src')}:{owner}{block['name']}"
            scores.append((block["complexity"], where))
            methods += block.get("type") == "method" and block["complexity"] > 15
    worst = max(scores)
    return {
        "radon_max": worst[0],
        "radon_max_at": worst[1],
        "radon_over_15": sum(score > 15 for score, _ in scores),
        "radon_over_15_methods": methods,
    }


def _string_literals(path: Path) -> set[str]:
    try:
        module = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return set()
    return {
        node.value
        for node in ast.walk(module)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def row_fields(tree: Path) -> set[str]:
    """``ProfileRow``'s field names, snake and camelCase, read from ``model/row.py``."""
    module = ast.parse(
        (tree / "src/profiler_core/model/row.py").read_text(encoding="utf-8")
    )
    cls = next(
        n for n in module.body if isinstance(n, ast.ClassDef) and n.name == "ProfileRow"
    )
    names = {
        n.target.id
        for n in cls.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    camel = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), name) for name in names}
    return names | camel


def schema_places(tree: Path, files: list[Path]) -> list[str]:
    """Modules with at least ``SCHEMA_MIN`` row field names as string literals."""
    fields = row_fields(tree)
    places = []
    for path in files:
        found = {
            re.sub(r"_(\w)", lambda m: m.group(1).upper(), s)
            for s in _string_literals(path) & fields
        }
        if len(found) >= SCHEMA_MIN:
            places.append(str(path.relative_to(tree / "src")))
    return places


def agent_places(tree: Path, files: list[Path]) -> list[str]:
    """Modules naming at least two of ``AGENTS`` as string literals."""
    return [
        str(path.relative_to(tree / "src"))
        for path in files
        if len(_string_literals(path) & set(AGENTS)) >= 2
    ]


def public_names(files: list[Path]) -> dict[str, object]:
    """Lazy packages, their public names and how often an ``__init__`` writes each one."""
    packages = names = writes = 0
    for path in files:
        if path.name != "__init__.py":
            continue
        text = path.read_text(encoding="utf-8")
        if "__getattr__" not in text:
            continue
        module = ast.parse(text)
        public = _all(module)
        if not public:
            continue
        packages += 1
        names += len(public)
        for node in ast.walk(module):
            if (isinstance(node, ast.Constant) and node.value in public) or (
                isinstance(node, ast.alias) and (node.asname or node.name) in public
            ):
                writes += 1
    per_name = round(writes / names, 2) if names else 0
    return {
        "lazy_packages": packages,
        "public_names": names,
        "writes_per_name": per_name,
    }


def _all(module: ast.Module) -> set[str]:
    for node in module.body:
        if (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and "__all__" in ast.unparse(node).split("=")[0]
            and node.value is not None
        ):
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:
                return set()
    return set()


HOUSE = r"""
import json, sys, tomllib
import grimp

tree, pyproject = sys.argv[1], sys.argv[2]
config = tomllib.load(open(pyproject, "rb"))["tool"]["importlinter"]
layers = next(c for c in config["contracts"] if c.get("type") == "layers")
container = layers["containers"][0]
floor = {}
for level, line in enumerate(layers["layers"]):
    for name in line.replace("|", ":").split(":"):
        floor[f"{container}.{name.strip()}"] = level
graph = grimp.build_graph(*config["root_packages"], exclude_type_checking_imports=True)
origin = __import__(container).__file__
assert origin.startswith(tree), f"measured the wrong tree: {origin}"
imports = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}

def room(module):
    return ".".join(module.split(".")[:2])

up, root, same = set(), set(), set()
for importer in graph.modules:
    if not importer.startswith(container + "."):
        continue
    a = room(importer)
    for imported in imports[importer]:
        b = room(imported)
        if imported == container and a in floor:
            root.add(importer)
        elif a in floor and b in floor and a != b:
            if floor[b] < floor[a]:
                up.add(f"{importer} -> {imported}")
            elif floor[b] == floor[a]:
                same.add(" <-> ".join(sorted((a, b))))

# Per package: its children (the package's __init__ as one of them) and who imports whom.
siblings = {}
for package in sorted(m for m in graph.modules if graph.find_children(m)):
    children = sorted(graph.find_children(package))
    def owner(module):
        if module == package:
            return package + ".__init__"
        return next((c for c in children if module == c or module.startswith(c + ".")), None)
    edges = {c: set() for c in [*children, package + ".__init__"]}
    for source in [package, *children]:
        inside = [source] if source == package else [source, *graph.find_descendants(source)]
        for module in inside:
            for target in imports[module]:
                to = owner(target)
                if to and to != owner(source):
                    edges[owner(source)].add(to)
    siblings[package] = {c: sorted(t) for c, t in edges.items()}
print(json.dumps({
    "rooms": len(graph.modules),
    "floors": len(layers["layers"]),
    "up": sorted(up),
    "root": sorted(root),
    "same": sorted(same),
    "siblings": siblings,
}))
"""


def cycles(edges: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in edges.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def bench_edges(tree: Path) -> dict[str, list[str]]:
    """Which bench/ script imports which (they import each other by module name)."""
    names = {path.stem for path in (tree / "bench").glob("*.py")}
    edges: dict[str, list[str]] = {}
    for path in sorted((tree / "bench").glob("*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"))
        found = set()
        for node in ast.walk(module):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
        edges[path.stem] = sorted((found & names) - {path.stem})
    return edges


def house(tree: Path) -> dict[str, object]:
    """Rooms, floors, arrows back up, same-floor arrows and circles (grimp, in a child process)."""
    sys.setrecursionlimit(10_000)
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    out = subprocess.run(
        [sys.executable, "-c", HOUSE, str(tree), str(tree / "pyproject.toml")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    if out.returncode != 0:
        return {"house": f"n/a: {out.stderr.strip().splitlines()[-1:]}"}
    found = json.loads(out.stdout)
    circles = [
        " <-> ".join(group)
        for edges in found["siblings"].values()
        for group in cycles(edges)
    ]
    circles += [f"bench: {' <-> '.join(group)}" for group in cycles(bench_edges(tree))]
    return {
        "rooms": found["rooms"],
        "floors": found["floors"],
        "arrows_up": len(found["up"]),
        "arrows_up_list": found["up"][:10],
        "arrows_to_root": len(found["root"]),
        "arrows_to_root_from": found["root"][:10],
        "same_floor_pairs": len(found["same"]),
        "same_floor_list": found["same"],
        "circles": len(circles),
        "circles_list": circles[:10],
    }


def measure(rev: str) -> dict[str, object]:
    """Every figure of ``rev``."""
    with tempfile.TemporaryDirectory(prefix="bench-house-") as tmp:
        tree = Path(tmp).resolve()
        commit = export(rev, tree)
        files = sources(tree)
        figures: dict[str, object] = {
            "rev": rev,
            "commit": commit[:12],
            "files": len(files),
        }
        figures.update(long_lines(files))
        figures["any_per_1000_lines"] = any_per_kloc(files, int(figures["lines"]))
        figures.update(complexity(tree))
        schema = schema_places(tree, files)
        agents = agent_places(tree, files)
        figures.update(row_schema_places=len(schema), row_schema_at=schema)
        figures.update(agent_list_places=len(agents), agent_list_at=agents)
        figures.update(public_names(files))
        figures.update(house(tree))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="a git revision (default: HEAD)")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    figures = measure(args.rev)
    if args.json:
        print(json.dumps(figures))
        return 0
    for key, value in figures.items():
        if isinstance(value, list):
            print(f"{key:>22}:")
            for item in value:
                print(f"{'':>24}{item}")
        else:
            print(f"{key:>22}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
