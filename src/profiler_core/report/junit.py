"""JUnit XML of a run (``profiler run --junit``) or of a comparison (``profiler compare --junit``).

One test case per (mode, scenario) — and model, when a run has several — in the
layout pytest writes (``<testsuites><testsuite><testcase>``), so CI systems that
show pytest's results show these. A case fails when an iteration failed its
checks (``<failure>``), errors when an iteration errored (``<error>``); its time
is the iterations' wall time.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import attrs

from ..model.record import Record
from ..util.arrays import np

#: Characters XML 1.0 cannot hold (an agent's output may contain any); they become U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: Characters of one message attribute (the element's text has the rest).
_MESSAGE = 300


def xml_text(text: str) -> str:
    """``text`` without the characters XML cannot carry."""
    return _NOT_XML.sub("\ufffd", text)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Case(Record):
    """One test case: a (mode, scenario) of a run and what went wrong in it."""

    suite: str
    name: str
    seconds: float
    #: "failure" or "error" (None: passed, unless ``skipped``)
    problem: str | None = None
    message: str = ""
    details: str = ""
    skipped: bool = False
    #: (model, mode, scenario) of a run's case; () for others
    key: tuple[str, ...] = ()


def run_cases(table, suite_prefix: str = "agent-profiler") -> list[Case]:
    """A case per (model, mode, scenario) of a run's rows (``report.load.RowTable``)."""
    cat = table.categorical
    models, modes, scenarios = cat["model"], cat["mode"], cat["scenario_id"]
    several_models = len(models.values) > 1
    iteration = table.numeric["iteration"]
    wall = table.numeric["latency_wall_ms"]
    groups: dict[tuple[int, int, int], list[int]] = {}
    for i, key in enumerate(
        zip(models.codes.tolist(), modes.codes.tolist(), scenarios.codes.tolist())
    ):
        groups.setdefault(key, []).append(i)
    cases = []
    for (model, mode, scenario), rows in groups.items():
        suite = f"{suite_prefix}.{modes.values[mode]}" + (
            f".{models.values[model]}" if several_models else ""
        )
        lines, failed, errored = [], 0, 0
        for i in sorted(rows, key=lambda r: iteration[r]):
            it = int(iteration[i])
            if i in table.errors:
                errored += 1
                message, code = table.errors[i]
                lines.append(
                    f"iteration {it}: error{f' ({code})' if code else ''}: {message}"
                )
            elif not table.success[i]:
                failed += 1
                lines.append(
                    f"iteration {it}: failed checks: {table.failed_checks.get(i) or '(none named)'}"
                )
        total = len(rows)
        problem = "error" if errored else "failure" if failed else None
        summary = f"{failed + errored} of {total} iterations " + (
            "errored or failed" if errored else "failed"
        )
        cases.append(Case(suite=suite, name=scenarios.values[scenario], seconds=float(np.nansum(wall[rows])) / 1000,
                          problem=problem, message=summary if problem else "", details="\n".join(lines),
                          key=(models.values[model], modes.values[mode], scenarios.values[scenario])))  # fmt: skip
    return cases


def write_junit(
    path: Path, cases: Sequence[Case], name: str = "agent-profiler"
) -> None:
    """Write ``cases`` as JUnit XML (suites in order of first appearance)."""
    from ..storage.paths import atomic_write_text

    root = ET.Element("testsuites", name=xml_text(name))
    suites: dict[str, list[Case]] = {}
    for case in cases:
        suites.setdefault(case.suite, []).append(case)
    for suite_name, members in suites.items():
        suite = ET.SubElement(
            root, "testsuite", name=xml_text(suite_name), tests=str(len(members)),
            failures=str(sum(c.problem == "failure" for c in members)), errors=str(sum(c.problem == "error" for c in members)),
            skipped=str(sum(c.skipped for c in members)), time=f"{sum(c.seconds for c in members):.3f}",
        )  # fmt: skip
        for case in members:
            element = ET.SubElement(
                suite,
                "testcase",
                classname=xml_text(suite_name),
                name=xml_text(case.name),
                time=f"{case.seconds:.3f}",
            )
            if case.problem or case.skipped:
                child = ET.SubElement(
                    element,
                    case.problem or "skipped",
                    message=xml_text(case.message[:_MESSAGE]),
                )
                child.text = xml_text(case.details) or None
    ET.indent(root)
    atomic_write_text(
        path,
        '<?xml version="1.0" encoding="utf-8"?>\n'
        + ET.tostring(root, encoding="unicode")
        + "\n",
    )


def write_run_junit(results: Path, out: Path) -> list[Case]:
    """``profiler run --junit FILE``: the JUnit XML of the run whose rows are in
    ``results``; its cases."""
    from .load import load_rows

    cases = run_cases(load_rows(Path(results), parallel=False))
    write_junit(out, cases)
    return cases


__all__ = ["Case", "run_cases", "write_junit", "write_run_junit", "xml_text"]
