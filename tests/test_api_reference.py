"""The API reference (docs/api/) is what docs/_tools/gen_api.py writes from today's docstrings."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from profiler_core.plugins import hookspecs
from profiler_core.plugins.contracts import CONTRACTS

ROOT = Path(__file__).resolve().parent.parent


def _gen():
    spec = importlib.util.spec_from_file_location(
        "gen_api", ROOT / "docs" / "_tools" / "gen_api.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_is_not_stale():
    gen = _gen()
    stale = gen.stale(gen.render())
    assert not stale, (
        f"docs/api/ is stale ({', '.join(stale)}): run python docs/_tools/gen_api.py and commit"
    )


def test_a_changed_docstring_makes_its_page_stale(tmp_path):
    gen = _gen()
    pages = gen.render()
    for name, text in pages.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert gen.stale(pages, tmp_path) == []
    edited = dict(
        pages, **{"scorers.md": pages["scorers.md"].replace("Register", "Enlist", 1)}
    )
    assert gen.stale(edited, tmp_path) == ["scorers.md"]
    (tmp_path / "gone.md").write_text("an old page\n", encoding="utf-8")
    assert gen.stale(pages, tmp_path) == ["gone.md"]


def test_every_hook_and_contract_has_its_page():
    pages = _gen().render()
    text = "\n".join(pages.values())
    for name in (n for n in dir(hookspecs) if n.startswith("profiler_")):
        assert f"### `{name}`" in text, f"{name} is on no page of docs/api/"
    for contract in CONTRACTS.values():
        page = pages[f"{contract.name.replace('_', '-')}.md"]
        assert f"### `{contract.protocol.__name__}`" in page
        assert f"### `{contract.check}`" in page
    index = pages["index.md"]
    assert all(f"]({name})" in index for name in pages if name != "index.md")


def test_the_readme_names_every_contract_and_check():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    words = {8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
    assert f"components of {words[len(CONTRACTS)]} contracts" in readme
    for contract in CONTRACTS.values():
        assert f"`{contract.check}`" in readme, (
            f"README.md does not name {contract.check}"
        )
    assert "`check_report_section`" in readme
