"""The garbage collector is paused while ``profiler`` starts and runs again, start-up
frozen, for the work."""

from __future__ import annotations

import gc

import pytest

from profiler_core.cli import main
from profiler_core.util import collector


@pytest.fixture
def collector_state():
    """Leave the test process's collector as it was found (enabled, nothing frozen)."""
    assert gc.isenabled()
    yield
    collector.resume(freeze=False)
    gc.unfreeze()
    gc.enable()


def test_resume_undoes_only_a_pause(collector_state):
    collector.resume()
    assert (
        gc.isenabled() and gc.get_freeze_count() == 0
    )  # never paused: nothing frozen, nothing changed
    collector.pause()
    assert not gc.isenabled()
    collector.resume()
    assert gc.isenabled() and gc.get_freeze_count() > 0
    collector.resume()  # a second resume does nothing


def test_a_collector_the_caller_disabled_stays_disabled(collector_state):
    gc.disable()
    collector.pause()
    collector.resume()
    assert not gc.isenabled() and gc.get_freeze_count() == 0


def _profile(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "one.json").write_text(
        '{"id": "one", "name": "One", "prompt": "p"}'
    )
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "modes: {a: {}}\nscenarios: {path: s}\nprovider: {id: simulated, "
        "options: {time_scale: 0}}\n"
        f"execution: {{repetitions: 1, warmup: false}}\noutput: {{results_dir: "
        f"{tmp_path}/r, reports_dir: {tmp_path}/rep}}\n"
    )
    return profile


def _spy(monkeypatch, owner, name, seen: list, label: str):
    original = getattr(owner, name)

    def spy(*args, **kwargs):
        seen.append((label, gc.isenabled(), gc.get_freeze_count() > 0))
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)


def test_run_starts_paused_and_runs_its_matrix_with_the_collector_on(
    tmp_path, monkeypatch, collector_state
):
    from profiler_core.runner import launch
    from profiler_core.runner.run import Run

    seen: list = []
    _spy(monkeypatch, launch, "profile_from_data", seen, "load")
    _spy(monkeypatch, Run, "execute_all", seen, "execute")
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(_profile(tmp_path)), "--no-report", "--progress", "none"])
    assert exit_.value.code == 0
    assert seen == [("load", False, False), ("execute", True, True)]
    assert gc.isenabled()


def test_other_commands_run_with_the_collector_on(
    tmp_path, monkeypatch, collector_state
):
    from profiler_core.config import loader

    seen: list = []
    _spy(monkeypatch, loader, "load_profile", seen, "load")
    with pytest.raises(SystemExit) as exit_:
        main(["validate", str(_profile(tmp_path))])
    assert exit_.value.code == 0
    assert seen and all(enabled for _, enabled, _ in seen)
    assert gc.isenabled()


def test_a_dry_run_plans_with_the_collector_on(tmp_path, monkeypatch, collector_state):
    from profiler_core.config import loader

    seen: list = []
    _spy(monkeypatch, loader, "load_profile", seen, "load")
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(_profile(tmp_path)), "--dry-run"])
    assert exit_.value.code == 0
    assert seen and all(enabled for _, enabled, _ in seen)


def test_main_gives_the_collector_back_when_a_command_fails(tmp_path, collector_state):
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(tmp_path / "missing.yaml"), "--no-report"])
    assert exit_.value.code != 0
    assert gc.isenabled()
