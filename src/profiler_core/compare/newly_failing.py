"""``--fail-on newly-failing``: a gate on scenarios whose verified success dropped,
judged per scenario.

Two forms:

- ``newly-failing``: a (model, mode, scenario) that passed every iteration in
  BASE and failed at least one in NEW fails the gate;
- ``newly-failing:Npp``: one whose success rate fell by N percentage points or
  more (``newly-failing:0pp`` is any drop; ``newly-failing:-Npp`` reads the same).

Only scenarios that ran in both runs are judged (a scenario new in NEW has no
BASE to fall from). Unlike the metric gates (compare/gates.py) there is no
interval: the gate states a fact of the two runs, not a claim about the agent,
so it is never inconclusive — a scenario of one iteration that failed once is a
drop of 100 points. Each judged scenario is a JUnit case and a Markdown row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..errors import ConfigError
from ..model.record import Record
from ..report.junit import Case
from .render import (
    _code,
    _md,
)  # names as plain text in a PR comment, as compare's own tables show them
from .runs import EXIT_REGRESSION, _cell_statuses, _Run

if TYPE_CHECKING:
    from .runs import Comparison

#: The gate's name on the command line.
NAME = "newly-failing"

_FORM = re.compile(rf"{NAME}(?:\s*:\s*-?\s*(?P<points>\d+(?:\.\d+)?)\s*pp)?")

#: JUnit suite of the gate's cases.
SUITE = "agent-profiler.newly-failing"


def is_newly_failing(text: str) -> bool:
    """Whether a ``--fail-on`` value is this gate (else it is a metric gate)."""
    return text.strip().split(":", 1)[0].strip() == NAME


@attrs.frozen(kw_only=True, repr=False, eq=False)
class NewlyFailingGate(Record):
    """The gate: all-pass to any-fail (``points`` None), or a drop of at least
    ``points`` percentage points."""

    text: str
    points: float | None = None

    @classmethod
    def parse(cls, text: str) -> NewlyFailingGate:
        """The gate from ``newly-failing`` or ``newly-failing:Npp``; a ConfigError says
        what was expected."""
        match = _FORM.fullmatch(text.strip())
        if not match:
            raise ConfigError(
                f"--fail-on {text!r}: expected {NAME} (all-pass in BASE, a "
                f"failure in NEW) or {NAME}:Npp (a drop of N points)"
            )
        points = match["points"]
        return cls(text=text.strip(), points=None if points is None else float(points))

    def fails(
        self, base_passed: int, base_total: int, new_passed: int, new_total: int
    ) -> bool:
        """Whether one scenario's change fails the gate."""
        if self.points is None:
            return base_passed == base_total and new_passed < new_total
        drop = 100 * (base_passed / base_total - new_passed / new_total)
        return drop > 0 and drop >= self.points


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ScenarioCheck(Record):
    """One (model, mode, scenario) judged by the gate."""

    #: the model, when the runs have several ("" otherwise)
    model: str
    mode: str
    scenario: str
    base_passed: int
    base_total: int
    new_passed: int
    new_total: int
    failed: bool

    @property
    def change_pp(self) -> float:
        """NEW's success rate minus BASE's, in percentage points."""
        return 100 * (
            self.new_passed / self.new_total - self.base_passed / self.base_total
        )

    @property
    def name(self) -> str:
        """``mode / scenario`` (and ``[model]`` when the runs have several)."""
        return f"{self.mode} / {self.scenario}" + (
            f" [{self.model}]" if self.model else ""
        )


@attrs.frozen(kw_only=True, repr=False, eq=False)
class NewlyFailingResult(Record):
    """The gate over every scenario both runs have."""

    gate: NewlyFailingGate
    checks: tuple[ScenarioCheck, ...]

    @property
    def failed(self) -> tuple[ScenarioCheck, ...]:
        """The scenarios that fail the gate."""
        return tuple(c for c in self.checks if c.failed)


def judge(gate: NewlyFailingGate, base: Path, new: Path) -> NewlyFailingResult:
    """Apply the gate to the (model, mode, scenario) cells of two results files (errored
    rows count as not passed)."""
    checks = []
    statuses = _cell_statuses(_Run(base), _Run(new))
    several_models = len({s.model for s in statuses}) > 1
    for s in statuses:
        if not s.base_total or not s.new_total:
            continue  # in one run only: nothing to fall from
        failed = gate.fails(s.base_passed, s.base_total, s.new_passed, s.new_total)
        checks.append(ScenarioCheck(model=s.model if several_models else "", mode=s.mode, scenario=s.scenario, base_passed=s.base_passed, base_total=s.base_total,
                                    new_passed=s.new_passed, new_total=s.new_total, failed=failed))  # fmt: skip
    checks.sort(key=lambda c: (not c.failed, c.mode, c.scenario, c.model))
    return NewlyFailingResult(gate=gate, checks=tuple(checks))


def _rate(passed: int, total: int) -> str:
    return f"{passed}/{total}"


def _why(check: ScenarioCheck, gate: NewlyFailingGate) -> str:
    moved = (
        f"passed {_rate(check.base_passed, check.base_total)} in BASE, "
        f"{_rate(check.new_passed, check.new_total)} in NEW ({check.change_pp:+.0f} "
        "pp)"
    )
    if not check.failed:
        return moved
    if gate.points is None:
        return f"newly failing: {moved}"
    return f"dropped {-check.change_pp:.0f} pp (limit {gate.points:g} pp): {moved}"


def cases(results: Sequence[NewlyFailingResult]) -> list[Case]:
    """One JUnit case per judged scenario and gate: a failure when it fails the gate."""
    out = []
    for result in results:
        for check in result.checks:
            why = _why(check, result.gate).replace("−", "-")
            name = f"{result.gate.text}: {check.name}"
            if check.failed:
                out.append(
                    Case(
                        suite=SUITE,
                        name=name,
                        seconds=0.0,
                        problem="failure",
                        message=why,
                        details=why,
                    )
                )
            else:
                out.append(Case(suite=SUITE, name=name, seconds=0.0, message=why))
    return out


def markdown(results: Sequence[NewlyFailingResult]) -> str:
    """A section per gate for the pull-request comment: every judged scenario, the
    failing ones first."""
    out: list[str] = []
    for result in results:
        failed = len(result.failed)
        verdict = (
            f"**{failed} scenario{' fails' if failed == 1 else 's fail'} it**"
            if failed
            else "no scenario fails it"
        )
        out += [f"### {_code(result.gate.text)}: {verdict}", ""]
        if not result.checks:
            out += ["No scenario ran in both runs.", ""]
            continue
        out += [
            "| mode | scenario | BASE passed | NEW passed | change | outcome |",
            "|---|---|---:|---:|---:|---|",
        ]
        for c in result.checks:
            outcome = "**newly failing**" if c.failed else "ok"
            scenario = c.scenario + (f" [{c.model}]" if c.model else "")
            out.append(f"| {_md(c.mode)} | {_md(scenario)} | "
                f"{_rate(c.base_passed, c.base_total)} | "
                f"{_rate(c.new_passed, c.new_total)} "
                       f"| {c.change_pp:+.0f} pp | {outcome} |")  # fmt: skip
        out.append("")
    return "\n".join(out)


def with_scenario_gates(
    comparison: Comparison, results: Sequence[NewlyFailingResult]
) -> Comparison:
    """The comparison with the gates' JUnit cases added (its metric gates' outcome untouched)."""
    if not results:
        return comparison
    return attrs.evolve(comparison, cases=(*comparison.cases, *cases(results)))


def exit_code(metric_exit: int, results: Sequence[NewlyFailingResult]) -> int:
    """1 when a scenario fails one of these gates, else the metric gates' exit status."""
    return EXIT_REGRESSION if any(r.failed for r in results) else metric_exit


def as_json(results: Sequence[NewlyFailingResult]) -> list[dict[str, Any]]:
    """The gates for ``compare --json``: each judged scenario with both runs' counts."""
    return [
        {"gate": r.gate.text, "points": r.gate.points, "failed": len(r.failed),
         "scenarios": [{"model": c.model or None, "mode": c.mode, "scenario": c.scenario, "basePassed": c.base_passed,
                        "baseTotal": c.base_total, "newPassed": c.new_passed, "newTotal": c.new_total, "failed": c.failed}
                       for c in r.checks]}
        for r in results
    ]  # fmt: skip


def lines(results: Sequence[NewlyFailingResult]) -> list[str]:
    """The terminal's lines: each gate's outcome and the scenarios that fail it."""
    out = []
    for result in results:
        out.append(
            f"{result.gate.text}: {len(result.failed)} of {len(result.checks)} scenarios fail it"
        )
        out += [f"  {c.name}: {_why(c, result.gate)}" for c in result.failed]
    return out


__all__ = [
    "NAME",
    "SUITE",
    "NewlyFailingGate",
    "NewlyFailingResult",
    "ScenarioCheck",
    "as_json",
    "cases",
    "exit_code",
    "is_newly_failing",
    "judge",
    "lines",
    "markdown",
    "with_scenario_gates",
]
