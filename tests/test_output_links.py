"""Symbolic links planted in the output folders never redirect a write (issue 31.3)."""

from __future__ import annotations

import os

import pytest
import trio
import trio.testing
from click.testing import CliRunner

from profiler_core import ModeConfig, ProfilerError, Scenario
from profiler_core.cli import cli
from profiler_core.cli.group import leaves
from profiler_core.runner import RunOptions, run_profile_suite
from profiler_core.storage.paths import open_output
from profiler_core.storage.tracestore import TRACES_FILE
from profiler_core.testing import FakeProvider, FixedScorer

VICTIM_TEXT = "precious data\n"


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "elsewhere" / "victim.txt"
    path.parent.mkdir()
    path.write_text(VICTIM_TEXT)
    return path


def _options(tmp_path, manager, run_id="r1", **kw):
    options = RunOptions(
        provider=FakeProvider(),
        scorer=FixedScorer(),
        scenarios=[Scenario(id="s1", name="S1", prompt="do")],
        modes={"a": ModeConfig()},
        repetitions=2,
        warmup=False,
        run_id=run_id,
        results_dir=str(tmp_path / "results"),
        reports_dir=str(tmp_path / "reports"),
        **kw,
    )
    options.plugin_manager = manager
    return options


def _run(options):
    return trio.run(
        run_profile_suite, options, clock=trio.testing.MockClock(autojump_threshold=0)
    )


def _plant(link, target):
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)


@pytest.mark.parametrize(
    "name", ["r1.lock", "r1.jsonl", "r1.analysis.jsonl", "r1.manifest.json"]
)
def test_a_link_at_a_run_file_is_refused_and_its_target_untouched(
    tmp_path, victim, profiler_plugin_manager, name
):
    _plant(tmp_path / "results" / name, victim)
    # A link at the rows or the manifest makes the run look like one that exists
    # (refused as such); any
    # other is refused as a link. Either way nothing is written through it.
    with pytest.raises(
        ProfilerError,
        match=rf"{name}: is a symbolic link; refusing to write through it|run 'r1' already exists",
    ):
        _run(_options(tmp_path, profiler_plugin_manager))
    assert victim.read_text() == VICTIM_TEXT


@pytest.mark.parametrize("name", ["r1.jsonl", "r1.analysis.jsonl"])
def test_a_dangling_link_is_not_written_through(
    tmp_path, profiler_plugin_manager, name
):
    target = tmp_path / "elsewhere" / "created-by-the-run.jsonl"
    _plant(tmp_path / "results" / name, target)
    with pytest.raises(ProfilerError, match="is a symbolic link"):
        _run(_options(tmp_path, profiler_plugin_manager))
    assert not target.exists()


def test_a_dangling_link_at_the_trace_store_is_not_written_through(
    tmp_path, profiler_plugin_manager
):
    target = tmp_path / "elsewhere" / "traces.jsonl"
    _plant(tmp_path / "reports" / "r1" / "sessions" / TRACES_FILE, target)
    with pytest.raises(ProfilerError, match="is a symbolic link"):
        _run(_options(tmp_path, profiler_plugin_manager))
    assert not target.exists()


def test_a_report_folder_leading_elsewhere_is_refused(
    tmp_path, victim, profiler_plugin_manager
):
    _plant(tmp_path / "reports" / "r1", victim.parent)
    with pytest.raises(ProfilerError, match="refusing to write outside"):
        _run(_options(tmp_path, profiler_plugin_manager))
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.txt"]


def test_a_scenario_folder_leading_elsewhere_is_refused_in_the_files_layout(
    tmp_path, victim, profiler_plugin_manager
):
    _plant(tmp_path / "reports" / "r1" / "sessions" / "s1", victim.parent)
    with pytest.raises(
        BaseException
    ) as info:  # raised inside the cell's task (alone, or in a group)
        _run(_options(tmp_path, profiler_plugin_manager, trace_format="files"))
    errors = (
        leaves(info.value)
        if isinstance(info.value, BaseExceptionGroup)
        else [info.value]
    )
    assert errors and all(
        isinstance(e, ProfilerError) and "refusing to write outside" in str(e)
        for e in errors
    )
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.txt"]


def test_the_manifest_is_replaced_not_followed(
    tmp_path, victim, profiler_plugin_manager
):
    """atomic_write_text renames a new file over the name: a link planted there is
    replaced, its target untouched."""
    from profiler_core.storage.store import atomic_write_text

    link = tmp_path / "results" / "m.json"
    _plant(link, victim)
    atomic_write_text(link, "{}\n")
    assert (
        victim.read_text() == VICTIM_TEXT
        and not link.is_symlink()
        and link.read_text() == "{}\n"
    )


def test_report_outputs_and_trace_export_refuse_links(
    tmp_path, victim, profiler_plugin_manager
):
    result = _run(_options(tmp_path, profiler_plugin_manager))
    out = tmp_path / "rep"
    _plant(out / "report.md", victim)
    refused = CliRunner().invoke(
        cli,
        ["report", result.output_jsonl_path, "--out", str(out)],
        obj=profiler_plugin_manager,
    )
    assert refused.exit_code == 1 and "report.md: is a symbolic link" in refused.output
    exported = tmp_path / "exported"
    _plant(exported / "s1", victim.parent)
    refused = CliRunner().invoke(
        cli,
        ["traces", "export", str(tmp_path / "reports" / "r1"), "--out", str(exported)],
        obj=profiler_plugin_manager,
    )
    assert refused.exit_code == 1 and "refusing to write outside" in refused.output
    assert victim.read_text() == VICTIM_TEXT and sorted(
        p.name for p in victim.parent.iterdir()
    ) == ["victim.txt"]


def test_open_output_refuses_fifos_and_hard_links_before_writing(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ProfilerError, match="not a regular file"):
        open_output(fifo, "a")  # refused at once, not blocked waiting for a reader
    original = tmp_path / "original"
    original.write_text(VICTIM_TEXT)
    os.link(original, tmp_path / "second-name")
    with pytest.raises(ProfilerError, match="other hard link"):
        open_output(tmp_path / "second-name", "w")
    assert original.read_text() == VICTIM_TEXT
