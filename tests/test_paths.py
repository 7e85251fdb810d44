"""Data never chooses where files go: run ids are checked, other ids become safe
distinct names (issue 15.1, 15.8)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from profiler_core import ModeConfig, Scenario
from profiler_core.errors import ConfigError
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.storage.paths import check_run_id, inside, safe_name
from profiler_core.testing import FakeProvider, FixedScorer

PROFILER = Path(sys.executable).with_name("profiler")


@pytest.mark.parametrize(
    "good", ["run_20261122T051500Z_3f9a", "a", "A.b-c_1", "x" * 128]
)
def test_good_run_ids(good):
    assert check_run_id(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "../../x",
        "/etc/passwd",
        "a/b",
        "a\\b",
        ".",
        "..",
        ".hidden",
        "",
        "x" * 129,
        "a b",
        "é",
        "a\x00b",
    ],
)
def test_bad_run_ids_name_the_rule(bad):
    with pytest.raises(ConfigError, match="letters, digits"):
        check_run_id(bad)


@given(st.text(max_size=400))
def test_safe_name_is_one_plain_segment_of_bounded_length(text):
    name = safe_name(text)
    assert name not in ("", ".", "..") and not name.startswith(".")
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert len(name.encode("utf-8")) <= 80


@given(st.text(max_size=120), st.text(max_size=120))
def test_safe_name_is_injective(a, b):
    if a != b:
        assert safe_name(a) != safe_name(b)


def test_inside_refuses_an_escape(tmp_path):
    assert inside(tmp_path, tmp_path / "a" / "b") == tmp_path / "a" / "b"
    with pytest.raises(ConfigError, match="outside"):
        inside(tmp_path / "reports", tmp_path / "reports" / ".." / "x")


def test_hostile_scenario_ids_get_distinct_files_inside_the_sessions_folder(
    tmp_path, profiler_plugin_manager
):
    ids = ["a/b", "a\\b", "..", ".", "x" * 300, "a_b"]
    options = RunOptions(
        provider=FakeProvider(),
        scorer=FixedScorer(),
        scenarios=[Scenario(id=sid, name="n", prompt="do") for sid in ids],
        modes={"../m": ModeConfig()},
        repetitions=1,
        trace_format="files",  # one file per trace: the names built from ids are what is tested
        warmup=False,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
    )
    options.plugin_manager = profiler_plugin_manager
    result = trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )
    sessions = tmp_path / "reports" / result.run_id / "sessions"
    files = sorted(sessions.rglob("*.json"))
    assert len(files) == len(ids)  # none collided, none failed
    assert all(sessions.resolve() in f.resolve().parents for f in files)
    assert not (tmp_path / "reports" / "m-iter-0.json").exists()
    assert not list((tmp_path).glob("*.json"))


def test_cli_rejects_a_run_id_that_leaves_results(tmp_path):
    out = subprocess.run(
        [
            str(PROFILER),
            "run",
            str(Path(__file__).parent.parent / "examples" / "demo" / "profile.yaml"),
            "--run-id",
            "../../escaped",
            "--repetitions",
            "1",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    assert (
        out.stderr.startswith("Error: invalid run id '../../escaped'")
        and len(out.stderr.splitlines()) == 1
    )
    assert not (tmp_path.parent / "escaped.jsonl").exists() and not list(
        tmp_path.rglob("escaped*")
    )


def test_report_of_a_crafted_results_file_stays_inside_reports(tmp_path):
    original = Path(__file__).parent.parent / "examples" / "original" / "rows.jsonl.gz"
    import gzip

    rows = [json.loads(line) for line in gzip.open(original, "rt")][:40]
    for row in rows:
        row["runId"] = "../../../outside"
    crafted = tmp_path / "crafted.jsonl"
    crafted.write_text("".join(json.dumps(r) + "\n" for r in rows))
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run(
        [str(PROFILER), "report", str(crafted)],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    written = [p for p in tmp_path.rglob("report.md")]
    assert (
        len(written) == 1
        and (work / "reports").resolve() in written[0].resolve().parents
    )
