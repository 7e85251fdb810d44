"""The profile YAML's sections as attrs classes, validated by the one converter (``serde``).

Keys are the YAML's own snake_case names (``serde.register_plain_keys``);
unknown keys are refused (``forbid_extra_keys``) and ``config`` turns every
problem into ``<file>: <key path>: <what was expected>`` with a did-you-mean.
Field types carry their constraints (``Annotated[int, Expect(...)]``), so a
wrong value reads ``expected an integer >= 1, got 'many'``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

import attrs

from ..model.record import Record
from ..storage.serde import Expect, json_kind, register_plain_keys
from ..storage.tracestore import TRACE_FORMATS

DEFAULT_REPETITIONS = 5
DEFAULT_TIMEOUT_MS = 120_000
DEFAULT_MODEL = "sim-small"

LOG_LEVELS = ("debug", "info", "warn", "warning", "error")

Count = Annotated[int, Expect("an integer >= 0", lambda v: v >= 0)]
PositiveCount = Annotated[int, Expect("an integer >= 1", lambda v: v >= 1)]
Flag = Annotated[bool, Expect("true or false")]
Name = Annotated[str, Expect("a non-empty string", bool)]
_KIND = re.compile(r"[a-z][a-z0-9_-]{0,39}")
#: Free-form options: a mapping; null (``options:`` with nothing after it) means none.
Options = Annotated[dict[str, Any], Expect("a mapping", aliases={None: dict})]
LogLevel = Annotated[
    str, Expect(f"one of {', '.join(LOG_LEVELS)}", lambda v: v in LOG_LEVELS)
]
#: ``execution.concurrency``: a number, or ``auto`` (None)
Concurrency = Annotated[
    int | None,
    Expect(
        "an integer >= 1 or `auto`",
        lambda v: v is None or v >= 1,
        aliases={"auto": None},
    ),
]
#: values of ``execution.order``
ORDERS = ("blocked", "interleaved", "shuffled")
Order = Annotated[str, Expect(f"one of {', '.join(ORDERS)}", lambda v: v in ORDERS)]
PositiveNumber = Annotated[float, Expect("a number > 0", lambda v: v > 0)]
#: ``execution.analysis_workers``: 0 (analyzers inline), a number of processes, or
#: ``auto`` (None: the cores)
AnalysisWorkers = Annotated[
    int | None,
    Expect(
        "an integer >= 0 or `auto`",
        lambda v: v is None or v >= 0,
        aliases={"auto": None},
    ),
]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ComponentSpec(Record):
    """A component chosen by the profile: its id and options (``scorer: checks`` is
    short for ``{id: checks}``)."""

    id: Name
    options: Options = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModelSpec(Record):
    """One entry of ``models:``: the id the provider runs and the label reports show
    (``gpt-4.1`` is short for ``{id: gpt-4.1}``)."""

    id: Name
    label: Name | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ProviderSection(Record):
    """``provider:`` — the session provider, the model it runs and its port."""

    id: Name
    #: None: the simulator's own model for ``simulated``, else unknown ("")
    model: Name | None = None
    port: Count = 0
    options: Options = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, repr=False, eq=False)
class JudgeSection(Record):
    """``judge:`` — the LLM judge; ``model`` goes into its options."""

    id: Name
    model: Any = None
    options: Options = attrs.field(factory=dict)


#: values of ``execution.executor``
EXECUTORS = ("local", "ray")
Executor = Annotated[
    str, Expect(f"one of {', '.join(EXECUTORS)}", lambda v: v in EXECUTORS)
]
TraceFormat = Annotated[
    str, Expect(f"one of {', '.join(TRACE_FORMATS)}", lambda v: v in TRACE_FORMATS)
]
KEEP_WORKSPACES = ("failed", "all", "none")
KeepWorkspaces = Annotated[
    str, Expect(f"one of {', '.join(KEEP_WORKSPACES)}", lambda v: v in KEEP_WORKSPACES)
]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class RaySection(Record):
    """``execution.ray:`` — the Ray cluster of ``executor: ray`` and what one cell asks of it."""

    #: ``ray.init`` address: leave out to start a local cluster, ``auto`` to join a running one
    address: Name | None = None
    num_cpus_per_cell: PositiveNumber = 1.0
    resources: Annotated[
        dict[str, float],
        Expect("a mapping of resource names to amounts", aliases={None: dict}),
    ] = attrs.field(factory=dict)
    runtime_env: Options = attrs.field(factory=dict)


#: values of ``execution.sandbox`` and ``execution.network`` (docs/sandbox.md)
SANDBOXES = ("none", "bwrap", "docker", "podman")
NETWORKS = ("none", "model", "full")
#: an environment kind: a built-in, or a plugin's id (whether it is installed is checked
#: when the run starts)
Sandbox = Annotated[
    str,
    Expect(
        f"one of {', '.join(SANDBOXES)} or an environment plugin's id",
        lambda v: v in SANDBOXES or bool(_KIND.fullmatch(v)),
    ),
]
PULLS = ("never", "missing", "always")
Pull = Annotated[str, Expect(f"one of {', '.join(PULLS)}", lambda v: v in PULLS)]
Network = Annotated[
    str, Expect(f"one of {', '.join(NETWORKS)}", lambda v: v in NETWORKS)
]
#: ``execution.stop.metrics``: what a stop rule may decide on (docs/profiles.md,
#: "Stopping when decided")
STOP_METRICS = ("success", "cost", "wall_ms", "tokens", "tool_calls", "turns")
StopMetric = Annotated[
    str, Expect(f"one of {', '.join(STOP_METRICS)}", lambda v: v in STOP_METRICS)
]


def parse_margin(value: Any) -> tuple[float, str] | None:
    """``"5%"`` -> (0.05, "relative"), ``"5pp"`` -> (0.05, "points"), ``0.5`` -> (0.5,
    "absolute"); None if none of these."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return (
            (float(value), "absolute")
            if value >= 0 and value == value and value != float("inf")
            else None
        )
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    for suffix, kind in (("pp", "points"), ("%", "relative")):
        if text.endswith(suffix):
            try:
                number = float(text[: -len(suffix)])
            except ValueError:
                return None
            return (number / 100.0, kind) if 0 <= number < float("inf") else None
    return None


Margin = Annotated[
    Any,
    Expect(
        "a margin such as 5%, 5pp or a number >= 0",
        lambda v: parse_margin(v) is not None,
    ),
]
Confidence = Annotated[
    float, Expect("a number between 0 and 1, such as 0.95", lambda v: 0 < v < 1)
]
StopRuleName = Annotated[str, Expect("`decided`", lambda v: v == "decided")]
#: the margin of a metric that ``margins`` leaves out: 5 points for success, 5% of the
#: baseline's mean for the rest
DEFAULT_MARGINS: dict[str, Any] = {"success": "5pp", "cost": "5%"}
DEFAULT_MARGIN = "5%"


@attrs.frozen(kw_only=True, repr=False, eq=False)
class StopSettings(Record):
    """``execution.stop:`` — run in rounds and stop once every comparison is decided
    (``profiler_core.runner.stopping``)."""

    rule: StopRuleName = "decided"
    #: rounds run before the first decision (a round = one repetition of every cell)
    min_repetitions: PositiveCount = 3
    #: the run stops here whatever is decided
    max_repetitions: PositiveCount = 50
    metrics: Annotated[
        tuple[StopMetric, ...], Expect("a non-empty list of metrics", bool)
    ] = ("success", "cost", "wall_ms")
    #: metric -> equivalence margin; a metric left out gets ``DEFAULT_MARGINS`` or
    #: ``DEFAULT_MARGIN``
    margins: Annotated[
        dict[StopMetric, Margin],
        Expect("a mapping of metric -> margin", aliases={None: dict}),
    ] = attrs.field(factory=dict)
    confidence: Confidence = 0.95
    #: the mode every other mode is compared with (None: the first mode, as in the report)
    baseline: Name | None = None

    def margin(self, metric: str) -> tuple[float, str]:
        """``(value, kind)`` of a metric's margin; kind is "points", "relative" or "absolute"."""
        raw = self.margins.get(metric, DEFAULT_MARGINS.get(metric, DEFAULT_MARGIN))
        parsed = parse_margin(raw)
        assert parsed is not None  # checked when the profile was read
        return parsed


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ExecutionConfig(Record):
    """``execution:`` — how the matrix runs."""

    repetitions: PositiveCount = DEFAULT_REPETITIONS
    warmup: Flag = True
    timeout_default_ms: PositiveCount = DEFAULT_TIMEOUT_MS
    allowed_retries: Count = 0
    #: sessions at once; None means "auto" (adapts to rate limits, up to ``max_concurrency``)
    concurrency: Concurrency = 1
    max_concurrency: PositiveCount = 16
    #: the order cells start in: "blocked" (mode after mode), "interleaved" (modes
    #: alternate), "shuffled"
    order: Order = "blocked"
    #: seed of the "shuffled" order
    seed: Count = 42
    #: the run's budget: once spent, no new cell starts (None: no limit)
    max_cost_usd: PositiveNumber | None = None
    max_tokens: PositiveCount | None = None
    #: seconds this invocation may run; once past, no new cell starts
    max_duration_s: PositiveNumber | None = None
    #: where cells run: in this process, or as tasks on a Ray cluster (``ray``, see
    #: ``execution.ray``)
    executor: Executor = "local"
    ray: RaySection = attrs.field(factory=RaySection)
    #: processes that run the analyzers and serialise the traces (0: in the runner's
    #: loop; None: ``auto``)
    analysis_workers: AnalysisWorkers = 0
    #: stop the run when a mode's warm-up and first session (or its first 3 sessions)
    #: fail the same way
    fail_fast: Flag = True
    #: where agents and verifiers run: ``none`` (on the host), ``bwrap``, ``docker``,
    #: ``podman`` (docs/sandbox.md)
    sandbox: Sandbox = "none"
    #: what a sandboxed agent reaches: ``none``, ``model`` (its endpoints and
    #: ``allow_hosts``), ``full``; None: ``model`` in a sandbox
    network: Network | None = None
    #: docker / podman image (None: the host's own toolchain in an empty image made offline)
    sandbox_image: Name | None = None
    #: when a task's image is pulled: ``never`` (local images only), ``missing`` (the
    #: default), ``always``
    pull: Pull = "missing"
    #: the verifier's network, overriding the task environment's (None: the verifier
    #: inherits it, as in Harbor)
    verifier_network: Network | None = None
    #: the user a trial's agent runs as when the task names none, the profiler is root
    #: and the image's user is root
    #: (docs/sandbox.md); ``root``: the image's user, as Harbor does
    agent_user: Name = "65534"
    #: hosts reachable besides the model endpoints with ``network: model`` (``host``,
    #: ``host:port``, ``*.domain``)
    allow_hosts: Annotated[tuple[str, ...], Expect("a list of host names")] = ()
    #: more host paths hidden inside the sandbox (the user's home always is)
    hide_paths: Annotated[tuple[str, ...], Expect("a list of paths")] = ()
    #: host paths shown read-only inside although hidden (a toolchain under the home)
    expose_paths: Annotated[tuple[str, ...], Expect("a list of paths")] = ()
    #: sequential stopping (None: the fixed design of ``repetitions``); ``repetitions``
    #: is then ``max_repetitions``
    stop: StopSettings | None = None
    #: record every model call of an agent session through the wire recorder
    #: (docs/wire.md); ``off``: no recorder
    wire: Flag = True


@attrs.frozen(kw_only=True, repr=False, eq=False)
class OutputConfig(Record):
    """``output:`` — where results and reports go (``config`` makes the folders absolute)."""

    results_dir: Name = "results"
    reports_dir: Name = "reports"
    session_export: Flag = True
    #: ``jsonl``: one append-only trace store per run; ``files``: one JSON file per session
    trace_format: TraceFormat = "jsonl"
    #: session workspaces kept under ``reports/<runId>/workspaces/``: of failed
    #: sessions, all, or none
    keep_workspaces: KeepWorkspaces = "failed"
    log_level: LogLevel = "info"


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ScenariosSection(Record):
    """``scenarios:`` — the scenario folder and which of its scenarios run."""

    path: Name = "scenarios"
    set: Name | None = None
    ids: Annotated[tuple[str, ...], Expect("a list of scenario ids")] | None = None
    #: the files' layout: ``profiler`` (the core's) or a plugin's scenario format
    format: Name | None = None
    #: a Harbor dataset by name, ``NAME@VERSION``, instead of ``path`` (config/datasets.py)
    dataset: Name | None = None
    #: the registry file or URL ``dataset`` is looked up in (default: Harbor's)
    registry: Name | None = None


@attrs.frozen(kw_only=True, repr=False, eq=False)
class ModeSection(Record):
    """One entry of ``modes:`` written as a mapping (the ``config`` mode resolver's settings)."""

    environment: Annotated[
        dict[str, str | int | float | bool],
        Expect("a mapping of names to strings", aliases={None: dict}),
    ] = attrs.field(factory=dict)
    system_instructions: Annotated[str, Expect("a string")] | None = None
    provider_overrides: Options = attrs.field(factory=dict)


#: ``modes:`` as a list (a mode resolver knows what the names mean) ...
ModeNames = Annotated[
    tuple[str, ...],
    Expect("a list of mode names or a mapping", lambda v: bool(v) and all(v)),
]
#: ... or as a mapping of mode name -> settings (the ``config`` resolver).
ModeMapping = dict[str, ModeSection | None]

#: ``collectors:`` / ``analyzers:``: ``all`` (or nothing: every installed one) or a list
#: of ids / ``{id, options}``.
ComponentList = Annotated[
    tuple[ComponentSpec, ...],
    Expect(
        "`all` or a list of ids or {id, options}", aliases={"all": None, None: None}
    ),
]


@attrs.frozen(kw_only=True, repr=False, eq=False)
class Profile(Record):
    """A profile file's top level: each key and the type of its section (``config``
    checks them one by one)."""

    modes: ModeNames | ModeMapping
    scenarios: ScenariosSection
    models: (
        Annotated[
            tuple[ModelSpec, ...],
            Expect("a non-empty list of model names or {id, label}", bool),
        ]
        | None
    ) = None
    provider: ProviderSection = attrs.field(
        factory=lambda: ProviderSection(id="simulated")
    )
    mode_resolver: ComponentSpec | None = None
    scorer: ComponentSpec | None = None  # None: the `checks` scorer
    collectors: ComponentList | None = None
    analyzers: ComponentList | None = None
    judge: JudgeSection | None = None
    execution: ExecutionConfig = attrs.field(factory=ExecutionConfig)
    output: OutputConfig = attrs.field(factory=OutputConfig)
    extensions: Options = attrs.field(factory=dict)


#: What a missing required key must hold, said after "required".
REQUIRED_HINTS: dict[tuple[str | int, ...], str] = {
    ("modes",): "a list of mode names, or a mapping of mode name -> settings",
    ("scenarios",): "a mapping with `path` and optionally `set` or `ids`",
}


def _mapping_only(what: str) -> Callable[[Any, Callable[[dict], Any]], Any]:
    def structure(value: Any, structure_mapping: Callable[[dict], Any]) -> Any:
        if isinstance(value, dict):
            return structure_mapping(value)
        raise TypeError(f"expected {what}, got {json_kind(value)} {value!r}"[:200])

    return structure


def _id_or_mapping(cls: type, what: str) -> Callable[[Any, Callable[[dict], Any]], Any]:
    """``scorer: checks`` is short for ``scorer: {id: checks}``."""

    def structure(value: Any, structure_mapping: Callable[[dict], Any]) -> Any:
        if isinstance(value, str) and value:
            return cls(id=value)
        if isinstance(value, dict):
            return structure_mapping(value)
        raise TypeError(f"expected {what}, got {json_kind(value)} {value!r}"[:200])

    return structure


def _defaults_when_null(cls: type) -> Callable[[Any, Callable[[dict], Any]], Any]:
    """``execution:`` with nothing after it means the defaults, as ``execution: {}`` does."""
    mapping = _mapping_only("a mapping")

    def structure(value: Any, structure_mapping: Callable[[dict], Any]) -> Any:
        return cls() if value is None else mapping(value, structure_mapping)

    return structure


def _stop_shorthand(value: Any, structure_mapping: Callable[[dict], Any]) -> Any:
    """``stop: decided`` is short for ``stop: {rule: decided}`` (every other key at its default)."""
    if value == "decided":
        return StopSettings()
    if isinstance(value, dict):
        return structure_mapping(value)
    raise TypeError(
        f"expected `decided` or a mapping, got {json_kind(value)} {value!r}"[:200]
    )


register_plain_keys(
    ComponentSpec, _id_or_mapping(ComponentSpec, "an id or {id, options}")
)
register_plain_keys(
    ProviderSection,
    _id_or_mapping(
        ProviderSection,
        "a mapping with an `id` (or leave `provider` out for the simulator)",
    ),
)
register_plain_keys(
    JudgeSection, _id_or_mapping(JudgeSection, "a mapping with an `id`")
)
register_plain_keys(ModelSpec, _id_or_mapping(ModelSpec, "a model name or {id, label}"))
# Before ExecutionConfig: its structure function is generated now, with the hooks known now.
register_plain_keys(RaySection, _defaults_when_null(RaySection))
register_plain_keys(StopSettings, _stop_shorthand)
register_plain_keys(ExecutionConfig, _defaults_when_null(ExecutionConfig))
register_plain_keys(OutputConfig, _defaults_when_null(OutputConfig))
register_plain_keys(
    ScenariosSection,
    _mapping_only("a mapping with `path` and optionally `set` or `ids`"),
)
register_plain_keys(ModeSection, _mapping_only("a mapping"))
