"""``profiler run --reuse RUN``: copy the rows of unchanged cells from an earlier run
instead of running them.

Every run records in its manifest a fingerprint per (model, mode, scenario): a
hash of what decides that cell's rows — the profile's provider and its options
(the agent's configuration), model, scorer, collectors, analyzers, judge,
execution settings and extensions; the mode's own definition; the scenario's
record and the contents of the files it names (a Harbor task's tests,
environment and solution folders). ``--reuse RUN`` compares the new profile's
fingerprints with RUN's: a cell whose fingerprint is unchanged takes RUN's row
(the same iteration, errored rows excepted: those run again), its session trace
and its analysis; every other cell runs. So a changed mode re-runs only its own
cells. The rows keep every measured value; only their run id becomes the new
run's. The manifest's ``reused`` names RUN and the cells it filled.

A run made before fingerprints were recorded cannot be reused (one line says so).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from ..config.loader import ProfilerConfig
from ..errors import ConfigError
from ..model import ProfileRow
from ..model.record import Record
from ..model.run import ReusedCell, ReuseRecord
from ..storage.converter import unstructure
from ..storage.tracestore import TRACES_FILE

#: ``execution`` keys that change how cells are scheduled, not what a cell is (as
#: ``profile_hash`` leaves out), and
#: the repetitions: a run of 3 repetitions can fill the first 3 of 5.
_SCHEDULING = frozenset({
    "concurrency", "max_concurrency", "order", "seed", "max_cost_usd", "max_tokens", "max_duration_s", "executor", "ray",
    "analysis_workers", "fail_fast", "repetitions", "stop",
})  # fmt: skip

#: Bytes of scenario files hashed per run at most (beyond it a file counts by its size
#: and modification time).
MAX_HASHED_BYTES = 256 * 2**20


def cell_key(model: str, mode: str, scenario_id: str) -> str:
    """The manifest key of a (model, mode, scenario)."""
    return json.dumps([model, mode, scenario_id], ensure_ascii=False)


def cell_fingerprints(config: ProfilerConfig) -> dict[str, str]:
    """Per (model, mode, scenario) of the profile, the hash of what decides its rows."""
    shared = _digest({
        "provider": attrs.asdict(config.provider), "providerModel": config.provider_model,
        "modeResolver": _resolver(config), "scorer": attrs.asdict(config.scorer),
        "collectors": None if config.collectors is None else [attrs.asdict(c) for c in config.collectors],
        "analyzers": None if config.analyzers is None else [attrs.asdict(a) for a in config.analyzers],
        "judge": None if config.judge is None else attrs.asdict(config.judge),
        "execution": {k: v for k, v in attrs.asdict(config.execution).items() if k not in _SCHEDULING},
        "extensions": config.extensions,
    })  # fmt: skip
    hasher = _FileHasher(_roots(config))
    scenarios = {
        s.id: _digest(
            {"scenario": (doc := unstructure(s)), "files": hasher.digest(doc)}
        )
        for s in config.scenarios
    }
    specs = config.mode_specs or {}
    modes = {m: _digest({"mode": m, "spec": specs.get(m)}) for m in config.modes}
    return {
        cell_key(model, mode, sid): _digest([shared, model, modes[mode], scen])
        for model in config.models
        for mode in config.modes
        for sid, scen in scenarios.items()
    }


def _resolver(config: ProfilerConfig) -> dict[str, Any]:
    """The mode resolver's settings without the ``modes:`` mapping it carries (each
    mode's own part is its cells')."""
    spec = attrs.asdict(config.mode_resolver)
    options = dict(spec.get("options") or {})
    if config.mode_specs is not None and options.get("modes") == config.mode_specs:
        options.pop("modes")
    return {**spec, "options": options}


def _digest(data: Any) -> str:
    canonical = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _roots(config: ProfilerConfig) -> tuple[Path, ...]:
    """The folders whose files a scenario may name and have hashed: the scenarios folder
    and the profile's."""
    roots = [
        Path(p).resolve()
        for p in (
            config.scenarios_path,
            Path(config.path).parent if config.path else None,
        )
        if p
    ]
    return tuple(r for r in roots if r.is_dir() and r != Path("/"))


class _FileHasher:
    """Hashes the files a scenario names, each file or folder once per run, within a
    byte budget for the whole run.

    Only paths inside ``roots`` count (a scenario naming ``/`` or ``/tmp`` must not make
    every run read the disk);
    past the budget a file counts by its size and modification time instead of its bytes.
    """

    def __init__(self, roots: tuple[Path, ...]) -> None:
        self.roots = roots
        self.budget = MAX_HASHED_BYTES
        self.done: dict[Path, str] = {}

    def digest(self, record: Any) -> str:
        """One hash of every file or folder the record names (sorted, so the order of
        its fields does not count)."""
        return _digest(sorted(self._one(path) for path in set(self._paths_in(record))))

    def _paths_in(self, value: Any) -> Iterator[Path]:
        if isinstance(value, str):
            if value.startswith("/") and len(value) < 4096:
                path = Path(value)
                if (
                    any(path.is_relative_to(root) for root in self.roots)
                    and path.exists()
                ):
                    yield path
        elif isinstance(value, dict):
            for v in value.values():
                yield from self._paths_in(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                yield from self._paths_in(v)

    def _one(self, root: Path) -> str:
        if root in self.done:
            return self.done[root]
        h = hashlib.sha256(str(root).encode())
        files = (
            [root]
            if root.is_file()
            else sorted(
                p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
            )
        )
        for path in files:
            try:
                st = path.stat()
                h.update(
                    f"\n{path.relative_to(root) if path != root else ''}:{st.st_size}\n".encode()
                )
                if st.st_size <= self.budget:
                    h.update(path.read_bytes())
                    self.budget -= st.st_size
                else:
                    h.update(str(st.st_mtime_ns).encode())
            except OSError:
                h.update(b"unreadable")
        self.done[root] = h.hexdigest()
        return self.done[root]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Reuse(Record):
    """What ``--reuse`` takes from the earlier run: rows (under the new run id), their
    traces and analysis lines."""

    from_run: str
    rows: tuple[ProfileRow, ...]
    #: the earlier run's trace store and analysis lines of those cells, as written there
    trace_lines: tuple[bytes, ...] = ()
    analysis_lines: tuple[bytes, ...] = ()

    @property
    def record(self) -> ReuseRecord:
        """The manifest's ``reused``."""
        cells = tuple(
            ReusedCell(
                model=r.model,
                mode=r.mode,
                scenario_id=r.scenario_id,
                iteration=r.iteration,
            )
            for r in self.rows
        )
        return ReuseRecord(from_run=self.from_run, cells=cells)


def plan_reuse(
    source: str,
    results_dir: Path,
    config: ProfilerConfig,
    fingerprints: dict[str, str],
    new_run_id: str,
) -> Reuse:
    """The rows of ``source`` (a run id or results file) whose cells are unchanged in
    ``config``, under ``new_run_id``."""
    from ..storage.runfiles import locate_results, run_files

    try:
        results, report_dir = locate_results(source, results_dir)
    except Exception as exc:  # noqa: BLE001 - any way of not finding it is one line
        raise ConfigError(f"--reuse {source}: {exc}") from None
    files = run_files(results, report_dir.parent if report_dir is not None else None)
    old = files.manifest.cell_fingerprints if files.manifest is not None else None
    if not old:
        raise ConfigError(
            f"--reuse {source}: run {files.run_id} recorded no cell "
            "fingerprints (it predates --reuse); run it again once"
        )
    if files.run_id == new_run_id:
        raise ConfigError(
            f"--reuse {source}: that is the run being made; to continue a run use --resume"
        )
    rows = tuple(
        _reusable_rows(
            results, old, fingerprints, config.execution.repetitions, new_run_id
        )
    )
    cells = {(r.model, r.mode, r.scenario_id, r.iteration) for r in rows}
    return Reuse(
        from_run=files.run_id,
        rows=rows,
        trace_lines=tuple(_lines_of(files.traces, cells))
        if files.traces is not None and files.traces.is_file()
        else (),
        analysis_lines=tuple(_lines_of(files.analysis, cells))
        if files.analysis is not None
        else (),
    )


def _reusable_rows(
    results: Path,
    old: dict[str, str],
    new: dict[str, str],
    repetitions: int,
    run_id: str,
) -> Iterator[ProfileRow]:
    """The last row of each cell whose fingerprint is unchanged, without an error,
    within the repetitions."""
    from ..storage.store import read_jsonl

    latest: dict[tuple[str, str, str, int], ProfileRow] = {}
    for row in read_jsonl(results).rows:
        latest[row.cell] = row
    for (model, mode, scenario, iteration), row in latest.items():
        key = cell_key(model, mode, scenario)
        if (
            row.error is None
            and 0 <= iteration < repetitions
            and key in new
            and old.get(key) == new[key]
        ):
            yield attrs.evolve(row, run_id=run_id)


def _lines_of(path: Path, cells: set[tuple[str, str, str, int]]) -> Iterator[bytes]:
    """The lines of a JSONL file keyed by cell (trace store, analysis) that belong to
    ``cells``; the last one per cell."""
    from ..storage.lines import scan_lines

    last: dict[tuple[str, str, str, int], bytes] = {}
    for _offset, line in scan_lines(path):
        try:
            doc = json.loads(line)
            cell = (
                doc.get("model", ""),
                doc["mode"],
                doc["scenarioId"],
                int(doc["iteration"]),
            )
        except (ValueError, KeyError, TypeError):
            continue
        if cell in cells:
            last[cell] = line.rstrip(b"\n")
    yield from last.values()


def prepare_reuse(
    source: str | None, config: ProfilerConfig, run_id: str, *, resume: bool
) -> dict[str, Any]:
    """The ``RunOptions`` fields of a run's fingerprints and, with ``--reuse``, its
    reused rows (their files written)."""
    from ..storage.store import RunPaths

    fingerprints = cell_fingerprints(config)
    if source is None:
        return {"cell_fingerprints": fingerprints}
    if resume:
        raise ConfigError(
            "--reuse starts a new run from an earlier one's rows; it does not go with --resume"
        )
    results_dir = Path(config.output.results_dir)
    reuse = plan_reuse(source, results_dir, config, fingerprints, run_id)
    paths = RunPaths(results_dir, run_id)
    export = config.output.session_export and config.output.trace_format == "jsonl"
    store = (
        Path(config.output.reports_dir) / run_id / "sessions" / TRACES_FILE
        if export
        else None
    )
    write_reused(reuse, paths.jsonl, paths.analysis, store)
    return {
        "cell_fingerprints": fingerprints,
        "previous_rows": reuse.rows,
        "reused": reuse.record,
    }


def write_reused(
    reuse: Reuse, results: Path, analysis: Path, trace_store: Path | None
) -> None:
    """Write the reused rows, traces and analysis into the new run's files (before its
    first cell; they are new files)."""
    from ..storage.converter import to_json

    for path in (
        results,
        analysis,
        *((trace_store,) if trace_store is not None else ()),
    ):
        if path.exists():
            raise ConfigError(
                f"--reuse: {path} exists already; --reuse starts a new run (a new --run-id)"
            )
    results.parent.mkdir(parents=True, exist_ok=True)
    with open(results, "w", encoding="utf-8") as f:
        for row in reuse.rows:
            f.write(to_json(row) + "\n")
    for path, lines in (
        (analysis, reuse.analysis_lines),
        (trace_store, reuse.trace_lines),
    ):
        if path is not None and lines:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"".join(line + b"\n" for line in lines))


__all__ = [
    "Reuse",
    "cell_fingerprints",
    "cell_key",
    "plan_reuse",
    "prepare_reuse",
    "write_reused",
]
