"""`profiler export` to DuckDB and Parquet, and `load_run`: the tables say what the
run's JSONL files say."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from profiler_core import load_run, to_json
from synthetic_runs import Cell, grid, row_of, write_run

PROFILER = Path(sys.executable).with_name("profiler")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _latest(
    records: list[dict],
    key=lambda r: (r["model"], r["mode"], r["scenarioId"], r["iteration"]),
) -> list[dict]:
    last: dict = {}
    for r in records:
        last[key(r)] = r
    return list(last.values())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs; the first has a cell written twice (the later row wins, with extensions)."""
    root = tmp_path_factory.mktemp("export")
    first = write_run(
        root,
        "run_one",
        grid(
            ["a", "b"],
            ["s1", "s2"],
            3,
            lambda m, s, i: {"outcome": "fail" if i == 2 else "pass"},
        ),
        report=False,
    )
    again = attrs.evolve(
        row_of(
            "run_one",
            Cell(mode="a", scenario="s1", iteration=0, cost=9.0, outcome="error"),
        ),
        extensions={"score": None, "tag": "x"},
    )
    with open(first, "a") as f:
        f.write(to_json(again) + "\n")
    second = write_run(root, "run_two", grid(["a"], ["s1"], 2), report=False)
    return root, first, second


def _expected(root: Path, results: Path) -> dict[str, int]:
    """Each table's row count, computed from the JSONL files directly."""
    from profiler_core import SessionTrace, from_json
    from profiler_core.viewer.timeline import turns_of

    rows = _latest(_jsonl(results))
    traces = _latest(
        _jsonl(root / "reports" / results.stem / "sessions" / "traces.jsonl")
    )
    bundles = _latest(_jsonl(results.with_name(results.stem + ".analysis.jsonl")))
    return {
        "rows": len(rows),
        "tool_calls": sum(len(r["toolCalls"]["records"]) for r in rows),
        "checkpoints": sum(len(r["checkpointDetails"]) for r in rows),
        "turns": sum(
            len(turns_of(from_json(json.dumps(t["trace"]), SessionTrace)))
            for t in traces
        ),
        "findings": sum(
            len(res["findings"]) for b in bundles for res in b["results"].values()
        ),
    }


def _export(*args, cwd):
    return subprocess.run(
        [str(PROFILER), "export", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_duckdb_holds_what_the_jsonl_says_and_runs_append(runs, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    root, first, second = runs
    db = tmp_path / "results.duckdb"
    for _ in range(2):  # exporting a run again replaces it
        out = _export("run_one", "--to", db, cwd=root)
        assert out.returncode == 0, out.stderr
    assert _export(second, "--to", db, cwd=root).returncode == 0
    con = duckdb.connect(str(db), read_only=True)
    for run, results in (("run_one", first), ("run_two", second)):
        expected = _expected(root, results)
        found = {
            t: con.execute(
                f"SELECT count(*) FROM {t} WHERE run_id = ?", [run]
            ).fetchone()[0]
            for t in expected
        }
        assert found == expected
    # The later row of the doubled cell won: it errored and cost 9.
    assert con.execute("SELECT error_code, cost_total_usd, extensions FROM rows WHERE "
        "run_id='run_one' AND mode='a' AND scenario_id='s1' AND iteration=0").fetchone() == \
        ("provider_error", 9.0, '{"score": null, "tag": "x"}')  # fmt: skip
    # A join of rows and tool calls gives each row its toolCalls.total and failed count.
    joined = con.execute(
        "SELECT r.mode, r.scenario_id, r.iteration, r.tool_calls_total, "
        "count(t.name), count(*) FILTER (WHERE NOT t.success), max(t.turn) "
        "FROM rows r JOIN tool_calls t USING (run_id, model, mode, "
        "scenario_id, iteration) WHERE r.run_id = 'run_one' "
        "GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    by_cell = {
        (r["mode"], r["scenarioId"], r["iteration"]): r for r in _latest(_jsonl(first))
    }
    assert len(joined) == len(by_cell)
    for mode, scenario, iteration, total, calls, failed, last_turn in joined:
        row = by_cell[(mode, scenario, iteration)]
        assert (
            total == calls == row["toolCalls"]["total"]
            and failed == row["toolCalls"]["failed"]
            and last_turn == 2
        )
    checks = con.execute(
        "SELECT count(*) FROM checkpoints WHERE run_id='run_one' AND NOT passed"
    ).fetchone()[0]
    assert checks == sum(
        1 for r in by_cell.values() for c in r["checkpointDetails"] if not c["passed"]
    )
    assert con.execute(
        "SELECT number FROM findings WHERE finding='total_turns' LIMIT 1"
    ).fetchone() == (2.0,)


def test_parquet_reads_back_with_pyarrow(runs, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    root, first, second = runs
    out_dir = tmp_path / "tables"
    for results in (first, second):
        out = _export(results, "--to", out_dir, "--format", "parquet", cwd=root)
        assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (out_dir / "rows").iterdir()) == [
        "run_one.parquet",
        "run_two.parquet",
    ]
    expected = _expected(root, first)
    for table, count in expected.items():
        read = pq.read_table(out_dir / table / "run_one.parquet")
        assert read.num_rows == count and "run_id" in read.column_names
    rows = pq.read_table(
        out_dir / "rows"
    ).to_pylist()  # the folder as one dataset: both runs
    assert {r["run_id"] for r in rows} == {"run_one", "run_two"}
    assert sum(
        r["cost_total_usd"] for r in rows if r["run_id"] == "run_one"
    ) == pytest.approx(sum(r["cost"]["totalUsd"] for r in _latest(_jsonl(first))))


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_load_run_gives_data_frames(runs, backend):
    pytest.importorskip(backend)
    root, first, _ = runs
    tables = load_run(first, backend=backend)
    expected = _expected(root, first)
    assert {name: len(tables[name]) for name in expected} == expected
    rows = tables.rows
    success = rows["success"].sum()
    assert int(success) == sum(1 for r in _latest(_jsonl(first)) if r["success"])
    assert type(rows).__module__.split(".")[0] == backend


def test_missing_extra_and_bad_run_are_one_line(runs, tmp_path):
    root, first, _ = runs
    code = "import sys; sys.modules['duckdb'] = None; from profiler_core.cli import main; main()"
    out = subprocess.run([sys.executable, "-c", code, "export", str(first), "--to", str(tmp_path / "x.duckdb")],
                         capture_output=True, text=True, timeout=60, cwd=root)  # fmt: skip
    assert out.returncode == 1
    assert (
        out.stderr.strip()
        == "Error: this export needs duckdb, which is not installed: pip install "
        "'agent-profiler[duckdb]'"
    )
    out = _export("nope", "--to", tmp_path / "x.duckdb", cwd=root)
    assert (
        out.returncode == 1
        and out.stderr.startswith("Error: nope:")
        and len(out.stderr.strip().splitlines()) == 1
    )


def test_import_profiler_core_stays_cheap():
    code = (
        "import sys, profiler_core; print(sorted(m for m in ('numpy', 'pandas', "
        "'polars', 'duckdb', 'pyarrow', 'starlette') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
