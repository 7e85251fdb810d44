"""``profiler import`` and ``profiler run`` with the ``transcripts`` provider make the same rows.

For every recording under tests/fixtures/transcripts, the same file goes
through both commands and the rows must agree field by field. Only these
fields legitimately differ:

- ``runId``: each command names its own run;
- ``startedAt`` / ``completedAt``: import keeps when the session was recorded,
  a run records when it replayed it.

Traces and analysis bundles must be identical too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from profiler_core import SessionAnalysisBundle, SessionTrace, from_json
from profiler_core.cli import cli
from profiler_core.importers import load_sessions
from profiler_core.storage.serde import unstructure
from profiler_core.storage.store import read_jsonl, read_manifest

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
RECORDINGS = sorted(p for p in FIXTURES.rglob("*") if p.is_file())
#: Row fields that differ between the two commands on purpose (see the module docstring).
DIFFERENT_BY_DESIGN = {"runId", "startedAt", "completedAt"}


@pytest.fixture
def manager(profiler_plugin_manager):
    """Built-ins plus the installed analyzers, shared by both commands."""
    from profiler_builtin_analyzers import plugin as analyzers_plugin

    if not profiler_plugin_manager.registry.ids("analyzers"):
        profiler_plugin_manager.register(analyzers_plugin, "builtin_analyzers")
    return profiler_plugin_manager


def invoke(manager, *args):
    result = CliRunner().invoke(
        cli, [str(a) for a in args], obj=manager, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return result


def run_profile(tmp_path: Path, manager, recording: Path) -> Path:
    """Replay ``recording`` with ``profiler run``: a scenario file per recorded
    scenario, the recorded model, no warmup."""
    sessions = load_sessions(recording.parent.name, recording)
    (model,) = {
        s.model or "unknown" for s in sessions
    }  # each fixture file records one model
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir(parents=True)
    for scenario_id in dict.fromkeys(s.scenario_hint or s.stem for s in sessions):
        (scenarios / f"{scenario_id}.json").write_text(
            json.dumps({"id": scenario_id, "name": scenario_id, "prompt": "(replayed)"})
        )
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        json.dumps(
            {
                "modes": {"imported": {"system_instructions": ""}},
                "models": [model],
                "scenarios": {"path": "scenarios"},
                "provider": {
                    "id": "transcripts",
                    "options": {
                        "format": recording.parent.name,
                        "files": [str(recording)],
                    },
                },
                "scorer": {"id": "checks"},
                "execution": {"repetitions": len(sessions), "warmup": False},
                "output": {
                    "results_dir": str(tmp_path / "results"),
                    "reports_dir": str(tmp_path / "reports"),
                    # as import writes them, so the traces compare file by file
                    "trace_format": "files",
                },
            }
        )
    )
    invoke(
        manager, "run", profile, "--run-id", "replayed", "--no-report", "--allow-errors"
    )
    return tmp_path / "results" / "replayed.jsonl"


def trace_files(folder: Path) -> dict[str, SessionTrace]:
    """Traces by <scenario>/<file name>, wherever under ``folder`` the command put them."""
    return {
        f"{p.parent.name}/{p.name}": from_json(p.read_text(), SessionTrace)
        for p in folder.rglob("*-iter-*.json")
    }


@pytest.mark.parametrize(
    "recording", RECORDINGS, ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_import_and_run_agree_field_by_field(tmp_path, manager, recording):
    out = tmp_path / "imported" / "rows.jsonl"
    invoke(manager, "import", recording.parent.name, recording, "--out", out)
    imported = read_jsonl(out).rows
    assert imported, "the fixture holds no session"
    replayed_path = run_profile(tmp_path / "run", manager, recording)
    replayed = read_jsonl(replayed_path).rows

    assert [r.cell for r in imported] == [r.cell for r in replayed]
    for mine, theirs in zip(imported, replayed, strict=True):
        a, b = unstructure(mine), unstructure(theirs)
        assert set(a) == set(b), recording
        for field in sorted(set(a) - DIFFERENT_BY_DESIGN):
            assert a[field] == b[field], (
                f"{recording.name} {mine.cell}: {field} differs"
            )
        # A recorded error is an error row both ways (it was success=True with error=None in a run).
        assert (
            (mine.completion_reason == "stop") == (mine.error is None) == mine.success
        )

    assert trace_files(tmp_path / "imported" / "sessions") == trace_files(
        tmp_path / "run" / "reports"
    )
    bundles = read_jsonl(
        out.with_name("rows.analysis.jsonl"), SessionAnalysisBundle
    ).rows
    replayed_bundles = read_jsonl(
        replayed_path.with_name("replayed.analysis.jsonl"), SessionAnalysisBundle
    ).rows
    assert bundles and bundles == replayed_bundles

    a = read_manifest(out.with_name("rows.manifest.json"))
    b = read_manifest(replayed_path.with_name("replayed.manifest.json"))
    for field in (
        "counts",
        "metric_units",
        "provider",
        "models",
        "modes",
        "scenarios",
        "repetitions",
        "plugins",
    ):
        assert getattr(a, field) == getattr(b, field), field


def test_every_fixture_format_and_a_recorded_error_are_covered():
    """The parity test above must see each format, and at least one session that ended
    in an error."""
    assert {p.parent.name for p in RECORDINGS} == {
        "anthropic",
        "claude-code",
        "codex",
        "openai",
        "opencode",
        "trace",
    }
    assert any("API Error" in p.read_text() for p in RECORDINGS)
