"""``compare --markdown`` writes a PR comment: names from the runs are text there, never
links, mentions, code or HTML;
and ``compare``'s and ``export``'s output files are never written through a link."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from synthetic_runs import grid, write_run

PROFILER = Path(sys.executable).with_name("profiler")
HOSTILE = (
    "[click](https://evil.example) @octocat `x` <b>*bold*</b>\x1b[31m|www.evil.example"
)


def test_hostile_mode_and_scenario_names_are_plain_text_in_the_comment(tmp_path):
    cells = lambda: grid(  # noqa: E731
        ["base", HOSTILE],
        [HOSTILE, "s2"],
        4,
        lambda m, s, i: {"cost": 0.01 * (1 + i % 2)},
    )
    base, new = (
        write_run(tmp_path, "a", cells(), report=False),
        write_run(tmp_path, "b", cells(), report=False),
    )
    md = tmp_path / "comment.md"
    done = subprocess.run([str(PROFILER), "compare", str(base), str(new), "--fail-on", "cost:+10%", "--markdown", str(md)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    text = md.read_text(encoding="utf-8")
    assert "evil" in text  # the names are there...
    assert "](" not in text.replace("\\](", "")  # ...but no link,
    assert not re.search(r"(?<!\\)\[click", text)
    assert (
        "@octocat" not in text and "https://" not in text and "www.evil" not in text
    )  # no mention, no autolink,
    assert "<b>" not in text and "\x1b" not in text  # no HTML, no control character,
    for line in (
        text.splitlines()
    ):  # no unescaped pipe breaks a table row, no stray backtick opens code
        if line.startswith("|") and HOSTILE[:6] in line.replace("\\", ""):
            assert line.count("|") - line.count("\\|") in (6, 7, 8), (
                line
            )  # the tables' columns: 5, 6 (gates) or 7
            assert "`x`" not in line.replace("\\`", "")


def _two_runs(root: Path) -> tuple[Path, Path]:
    cells = lambda: grid(["m"], ["s"], 3, lambda m, s, i: {"cost": 0.01})  # noqa: E731
    return write_run(root, "a", cells(), report=False), write_run(
        root, "b", cells(), report=False
    )


def test_compare_refuses_to_write_through_a_link_at_its_output_files(tmp_path):
    base, new = _two_runs(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    for option in ("--markdown", "--junit"):
        link = tmp_path / f"out{option}"
        link.symlink_to(victim)
        done = subprocess.run(
            [str(PROFILER), "compare", str(base), str(new), option, str(link)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert (
            f"{link}: is a symbolic link; refusing to write through it" in done.stderr
        )
        assert victim.read_text() == "keep me\n" and link.is_symlink()


def _export(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROFILER), "export", *args], capture_output=True, text=True, timeout=120
    )


def test_export_refuses_links_and_says_what_is_wrong_in_one_line(tmp_path):
    pytest.importorskip("duckdb")
    pytest.importorskip("pyarrow")
    base, _ = _two_runs(tmp_path)
    victim = tmp_path / "victim.duckdb"
    link = tmp_path / "link.duckdb"
    link.symlink_to(victim)
    done = _export(str(base), "--to", str(link))
    assert (
        done.returncode == 1
        and f"{link}: is a symbolic link" in done.stderr
        and not victim.exists()
    ), done.stderr
    # A table folder planted as a link to elsewhere.
    (tmp_path / "tables").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "tables" / "rows").symlink_to(tmp_path / "elsewhere")
    done = _export(str(base), "--to", str(tmp_path / "tables"), "--format", "parquet")
    assert (
        done.returncode == 1
        and "is a symbolic link" in done.stderr
        and not list((tmp_path / "elsewhere").iterdir())
    ), done.stderr
    # Not a DuckDB file; a folder that cannot be made: one line each, no traceback.
    (tmp_path / "notes.duckdb").write_text("not a database\n")
    done = _export(str(base), "--to", str(tmp_path / "notes.duckdb"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(
            f"Error: {tmp_path / 'notes.duckdb'}: cannot open it as a DuckDB database"
        )
    )
    (tmp_path / "afile").write_text("x")
    done = _export(
        str(base), "--to", str(tmp_path / "afile" / "sub"), "--format", "parquet"
    )
    assert (
        done.returncode == 1
        and "Traceback" not in done.stderr
        and "cannot export there" in done.stderr
    ), done.stderr
