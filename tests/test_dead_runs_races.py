"""Runs starting and ending at once in several processes: cleaning up after a dead run
never fails because another run got there first (CI once failed an import this way)."""

from __future__ import annotations

import os
import subprocess
import sys

from profiler_core.runner import deadruns
from profiler_core.util import leftovers


def test_reap_goes_on_when_the_last_live_run_removes_the_folder_meanwhile(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(deadruns, "runs_folder", lambda: tmp_path / "runs")
    (tmp_path / "runs").mkdir()
    real = deadruns._own_folder

    def then_removed(folder):
        made = real(folder)
        folder.rmdir()  # another run's `_remove_if_empty`, between the two steps
        return made

    monkeypatch.setattr(deadruns, "_own_folder", then_removed)
    assert deadruns.reap() == []


def _dead_spool(tmp_path):
    """A dead run's records: a finished process group, a folder, a runtime."""
    spool = tmp_path / "spool"
    spool.mkdir()
    child = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    started = leftovers.start_time(child.pid)
    child.wait()
    (spool / f"group-{child.pid}").write_text(started or "1")
    folder = tmp_path / "profiler-left"
    folder.mkdir()
    (spool / leftovers._folder_record(folder)).write_text(str(folder))
    (spool / "runtime-abc").write_text("/usr/bin/docker")
    return spool, folder


def test_clean_up_skips_the_records_another_run_removed_first(tmp_path, monkeypatch):
    spool, folder = _dead_spool(tmp_path)
    real = leftovers._start_time

    def while_another_cleans(pid):
        for record in spool.iterdir():  # the other reaper, between glob and read
            record.unlink()
        return real(os.getpid())  # alive: the record's text is what decides

    monkeypatch.setattr(leftovers, "_start_time", while_another_cleans)
    assert leftovers.clean_up(spool) == (0, 0)
    assert folder.is_dir()  # nothing is removed on the word of a record that is gone


def test_a_runtime_record_removed_meanwhile_is_left_out(tmp_path, monkeypatch):
    spool, _ = _dead_spool(tmp_path)
    real_read = leftovers._read

    def gone(record):
        record.unlink()
        return real_read(record)

    monkeypatch.setattr(leftovers, "_read", gone)
    assert leftovers.runtimes(spool) == []


def test_a_dead_runs_records_are_still_cleaned_up(tmp_path):
    spool, folder = _dead_spool(tmp_path)
    assert leftovers.clean_up(spool) == (0, 1) and not folder.exists()
    assert leftovers.runtimes(spool) == ["/usr/bin/docker"]
