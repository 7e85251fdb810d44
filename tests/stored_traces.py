"""Read a run's session traces from its trace store, for tests that look at one session's trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def stored_trace(
    reports: Path,
    scenario_id: str,
    mode: str,
    iteration: int = 0,
    model: str | None = None,
) -> dict[str, Any]:
    """The last stored trace (plain JSON) of one cell, from the only run's store under
    ``reports``."""
    stores = sorted(reports.glob("*/sessions/traces.jsonl"))
    assert len(stores) == 1, f"expected one trace store under {reports}, found {stores}"
    found = None
    for line in stores[0].read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if (record["scenarioId"], record["mode"], record["iteration"]) == (
            scenario_id,
            mode,
            iteration,
        ) and (model is None or record["model"] == model):
            found = record["trace"]
    assert found is not None, (
        f"no trace of {scenario_id}/{mode}#{iteration} in {stores[0]}"
    )
    return found
