"""``profiler compare BASE NEW``: is the new run worse than the baseline, and can a CI
job fail on it?

``runs`` compares two runs mode by mode with the report's statistics, ``gates``
turns ``--fail-on`` thresholds into pass / regression / inconclusive, and
``render`` writes the terminal table, a Markdown summary for a pull request and
JSON; JUnit XML comes from :mod:`profiler_core.report.junit`. See docs/ci.md.
"""

from __future__ import annotations

from .gates import Gate
from .runs import (
    EXIT_INCONCLUSIVE,
    EXIT_PASS,
    EXIT_REGRESSION,
    Comparison,
    compare_runs,
)

__all__ = [
    "EXIT_INCONCLUSIVE",
    "EXIT_PASS",
    "EXIT_REGRESSION",
    "Comparison",
    "Gate",
    "compare_runs",
]
