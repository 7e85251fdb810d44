"""Write the API reference (docs/api/*.md) from the docstrings: one page per extension point.

Run: ``python docs/_tools/gen_api.py`` (``--check`` exits 1 naming the stale pages).

Each component contract (``profiler_core.plugins.contracts.CONTRACTS``) gets a
page with its registration hook, its protocol, the optional members (the
``*Defaults`` class beside the protocol) and its contract-kit check. The other
hooks get a page per group (lifecycle, commands, report sections), and the
public names of ``profiler_core`` one page. Everything shown is read from the
code: signatures by ``inspect``, text from the docstrings. Edit the
docstrings, never the pages; ``tests/test_api_reference.py`` fails when a
committed page differs from what this script writes.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import re
import sys
import textwrap
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "api"

HEADER = "<!-- Written by docs/_tools/gen_api.py from the docstrings: edit those, not this. -->"

#: the hooks that are not a contract's registration hook, by page
HOOK_PAGES: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    # page: (title, summary, hooks, other public things "module:name")
    "lifecycle-hooks": (
        "Lifecycle hooks",
        "Called by the runner around a run, a mode and each iteration.",
        (
            "profiler_before_run",
            "profiler_before_mode",
            "profiler_before_scenario",
            "profiler_after_scenario",
            "profiler_after_mode",
            "profiler_after_run",
            "profiler_progress",
        ),
        (
            "profiler_core.model:RunContext",
            "profiler_core.model:BeforeScenarioContext",
            "profiler_core.model:AfterScenarioContext",
            "profiler_core.model:ProgressEvent",
            "profiler_core.model:ProfileSuiteResult",
        ),
    ),
    "commands": (
        "Commands",
        "Plugins add commands to the `profiler` command line.",
        ("profiler_register_commands",),
        ("profiler_core.cli:pass_manager", "profiler_core.cli:plugin_manager"),
    ),
    "report-sections": (
        "Report sections",
        "Plugins add titled sections to report.md and report.html.",
        ("profiler_report_sections",),
        (
            "profiler_core:ReportSection",
            "profiler_core.testing:check_report_section",
        ),
    ),
}


def _clean(text: str) -> str:
    """A signature or default without memory addresses (the pages must not change between runs)."""
    return re.sub(r" at 0x[0-9a-f]+", "", text)


def _signature(obj: Any, name: str) -> str:
    try:
        signature = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return name
    return _clean(f"{name}{signature}")


def _doc(obj: Any) -> str:
    """The docstring with reST's inline markup as Markdown (``x`` and :class:`x` become `x`)."""
    text = inspect.getdoc(obj) or "*(no docstring)*"
    text = re.sub(r":(?:class|func|mod|meth|attr|data|exc):`~?([^`]+)`", r"`\1`", text)
    return re.sub(r"``([^`]+?)``", r"`\1`", text)


def _summary(obj: Any) -> str:
    return _doc(obj).strip().splitlines()[0]


def _block(title: str, obj: Any, level: str = "###") -> list[str]:
    """A heading, the signature as code and the docstring."""
    return [
        f"{level} `{title}`",
        "",
        "```python",
        _signature(obj, title),
        "```",
        "",
        _doc(obj),
        "",
    ]


def _own_members(cls: type) -> Iterable[tuple[str, Any]]:
    """A class's public methods and properties in the order written (inherited ones left out)."""
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property):
            yield name, member.fget
        elif inspect.isfunction(member):
            yield name, member


def _class(cls: type, title: str | None = None) -> list[str]:
    """A class: its docstring, its fields (attrs) or annotated attributes, its own methods."""
    name = title or cls.__name__
    lines = [f"### `{name}`", "", _doc(cls), ""]
    fields = _fields(cls)
    if fields:
        notes = _field_notes(cls)
        lines += ["| field | type | default | what |", "| --- | --- | --- | --- |"]
        lines += [f"| `{f}` | `{t}` | {d} | {notes.get(f, '')} |" for f, t, d in fields]
        lines.append("")
    for member_name, member in _own_members(cls):
        lines += _block(f"{name}.{member_name}", member, "####")
    return lines


def _fields(cls: type) -> list[tuple[str, str, str]]:
    import attrs

    if attrs.has(cls):
        return [(f.name, _cell(f.type), _default(f.default)) for f in attrs.fields(cls)]
    annotations = vars(cls).get("__annotations__", {})
    return [
        (name, _cell(kind), _default(vars(cls).get(name, inspect.Parameter.empty)))
        for name, kind in annotations.items()
        if not name.startswith("_")
    ]


def _field_notes(cls: type) -> dict[str, str]:
    """The ``#:`` comments above a class's annotated attributes (Sphinx's convention), by name."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    lines = source.splitlines()
    notes = {}
    for node in ast.parse(source).body[0].body:  # type: ignore[attr-defined]
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above, number = [], node.lineno - 2
        while number >= 0 and lines[number].strip().startswith("#:"):
            above.insert(0, lines[number].strip()[2:].strip())
            number -= 1
        if above:
            text = re.sub(r"``([^`]+?)``", r"`\1`", " ".join(above))
            notes[node.target.id] = text.replace("|", "\\|")
    return notes


def _cell(kind: Any) -> str:
    text = kind if isinstance(kind, str) else getattr(kind, "__name__", repr(kind))
    return _clean(str(text)).replace("|", "\\|")


def _default(value: Any) -> str:
    import attrs

    if value is inspect.Parameter.empty or value is attrs.NOTHING:
        return "required"
    if isinstance(value, attrs.Factory):  # type: ignore[arg-type]
        return f"`{getattr(value.factory, '__name__', 'factory')}()`"
    return f"`{_clean(repr(value))}`".replace("|", "\\|")


def _resolve(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _hookspecs() -> Any:
    return importlib.import_module("profiler_core.plugins.hookspecs")


def contract_page(name: str) -> tuple[str, str]:
    """(file name, text) of one contract's page."""
    from profiler_core.plugins import contracts

    contract = contracts.CONTRACTS[name]
    testing = importlib.import_module("profiler_core.testing")
    protocol = contract.protocol
    lines = [
        HEADER,
        "",
        f"# {name.replace('_', ' ').capitalize()}",
        "",
        _summary(getattr(_hookspecs(), contract.hook)),
        "",
        f"A {contract.singular} has `{contract.id_attr}` and the methods of "
        f"`{protocol.__name__}`; the manager checks each against it when it is registered, "
        f"and `profiler_core.testing.{contract.check}` checks one in a real run.",
        "",
        "## Registration hook",
        "",
        *_block(contract.hook, getattr(_hookspecs(), contract.hook)),
        "## Protocol",
        "",
        *_class(protocol),
    ]
    defaults = getattr(contracts, f"{protocol.__name__}Defaults", None)
    if defaults is not None:
        lines += ["## Optional members", "", *_class(defaults)]
    lines += [
        "## Contract check",
        "",
        *_block(contract.check, getattr(testing, contract.check)),
    ]
    return f"{name.replace('_', '-')}.md", _join(lines)


def hook_page(page: str) -> tuple[str, str]:
    """(file name, text) of a page of hooks that are not a contract's."""
    title, summary, hooks, others = HOOK_PAGES[page]
    lines = [HEADER, "", f"# {title}", "", summary, "", "## Hooks", ""]
    for hook in hooks:
        lines += _block(hook, getattr(_hookspecs(), hook))
    if others:
        lines += ["## Related", ""]
        for path in others:
            obj = _resolve(path)
            shown = f"{path.partition(':')[0]}.{obj.__name__}"
            lines += _class(obj, shown) if inspect.isclass(obj) else _block(shown, obj)
    return f"{page}.md", _join(lines)


#: The packages plugins may import besides ``profiler_core`` itself (docs/architecture.md),
#: each listed by its ``__all__``.
PUBLIC_PACKAGES = (
    "profiler_core.config",
    "profiler_core.conditions",
    "profiler_core.cli",
    "profiler_core.testing",
    "profiler_core.sandbox",
    "profiler_core.fakemodel",
)


def _public_rows(package: Any) -> list[str]:
    rows = []
    for name in sorted(package.__all__):
        obj = getattr(package, name)
        kind = _kind(obj)
        where = f"`{obj.__module__}`" if kind in ("class", "function") else ""
        if where:
            summary = _summary(obj).replace("|", "\\|")
        elif name == "__version__":
            # not its value: a page outlives a release
            summary = "the installed distribution's version"
        elif kind == "type":
            summary = _cut(_clean(repr(obj)).replace("typing.", "")).replace("|", "\\|")
        else:
            summary = f"a `{type(obj).__name__}`"
        rows.append(f"| `{name}` | {kind} | {where} | {summary} |")
    return rows


def _cut(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def public_page() -> tuple[str, str]:
    """(file name, text) of the public names: ``profiler_core`` and the packages plugins use."""
    import profiler_core

    table = ["| name | kind | defined in | summary |", "| --- | --- | --- | --- |"]
    lines = [
        HEADER,
        "",
        "# Public API",
        "",
        "What `profiler_core` exports (`__all__`): plugins import these and nothing deeper "
        "(docs/architecture.md). Each name is loaded when first used.",
        "",
        *table,
        *_public_rows(profiler_core),
        "",
    ]
    for name in PUBLIC_PACKAGES:
        package = importlib.import_module(name)
        lines += [
            f"## `{name}`",
            "",
            _summary(package),
            "",
            *table,
            *_public_rows(package),
            "",
        ]
    return "public-api.md", _join(lines)


def _kind(obj: Any) -> str:
    if inspect.isclass(obj):
        return "class"
    if inspect.isroutine(obj):
        return "function"
    return "type" if typing.get_origin(obj) is not None else "value"


def index_page(pages: dict[str, str]) -> tuple[str, str]:
    """(file name, text) of the reference's index: one line per page."""
    lines = [
        HEADER,
        "",
        "# API reference",
        "",
        "One page per extension point, written from the docstrings by "
        "`python docs/_tools/gen_api.py`. docs/plugins.md explains how plugins are "
        "written and loaded; these pages list what each one must provide.",
        "",
    ]
    for file_name, text in sorted(pages.items()):
        title = text.split("\n# ", 1)[1].splitlines()[0]
        lines.append(f"- [{title}]({file_name})")
    return "index.md", _join([*lines, ""])


def _join(lines: list[str]) -> str:
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"


def render() -> dict[str, str]:
    """Every page of the reference: file name -> text."""
    from profiler_core.plugins.contracts import CONTRACTS

    builders: list[Callable[[], tuple[str, str]]] = [
        *(lambda name=name: contract_page(name) for name in CONTRACTS),
        *(lambda page=page: hook_page(page) for page in HOOK_PAGES),
        public_page,
    ]
    pages = dict(build() for build in builders)
    name, text = index_page(pages)
    pages[name] = text
    return pages


def stale(pages: dict[str, str], folder: Path = OUT) -> list[str]:
    """The pages whose committed text differs from ``pages``, and pages no longer written."""
    found = sorted(
        name
        for name, text in pages.items()
        if not (folder / name).is_file()
        or (folder / name).read_text(encoding="utf-8") != text
    )
    found += sorted(p.name for p in folder.glob("*.md") if p.name not in pages)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="only say which pages are stale"
    )
    args = parser.parse_args(argv)
    pages = render()
    if args.check:
        names = stale(pages)
        for name in names:
            print(
                f"docs/api/{name} is stale: run python docs/_tools/gen_api.py",
                file=sys.stderr,
            )
        return 1 if names else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.md"):
        if old.name not in pages:
            old.unlink()
    for name, text in pages.items():
        (OUT / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(pages)} pages to {OUT.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
