"""The contract test kit (profiler_core.testing): every built-in component passes it,
broken ones are caught."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from profiler_builtin_analyzers import ANALYZERS
from profiler_core import (
    AnalysisResult,
    JudgeResponse,
    ModeConfig,
    Scenario,
    ScorerResult,
    TokenBreakdown,
)
from profiler_core.config.modes import ConfigModeResolver
from profiler_core.metrics.collectors import (
    CostCollector,
    LatencyCollector,
    TokenCollector,
    ToolCallCollector,
)
from profiler_core.model import CustomMetric
from profiler_core.plugins.manager import BUILTIN_PLUGINS
from profiler_core.providers.simulated import SimulatedProvider
from profiler_core.providers.transcripts import TranscriptsProvider
from profiler_core.scorers.checks import ChecksScorer
from profiler_core.scorers.composite import CompositeScorer
from profiler_core.scorers.llm_judge import LlmJudgeScorer
from profiler_core.testing import (
    ContractError,
    FakeProvider,
    check_plugin_import_cost,
    check_trace,
)

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"

CHECKED = Scenario(
    id="contract-check",
    name="checked",
    prompt="List the files and say done.",
    extensions={
        "checks": [
            {
                "id": "said-something",
                "target": "output",
                "condition": {"type": "matches", "pattern": "."},
            },
            {
                "id": "used-tools",
                "target": "trace",
                "condition": {
                    "type": "field_gte",
                    "path": "summary.totalToolCalls",
                    "value": 1,
                },
            },
        ],
        "rubric": {
            "criteria": [{"id": "correct", "description": "the answer is right"}]
        },
    },
)


class StaticJudge:
    """A judge answering every criterion as passed (the llm-judge scorer's judge provider)."""

    id = "static-judge"
    model = "judge-m"

    async def judge(self, request):
        verdicts = [
            {"id": "correct", "passed": True, "reasoning": "fine"}
        ]  # CHECKED's one criterion
        return JudgeResponse(
            text=json.dumps({"verdicts": verdicts}),
            usage=TokenBreakdown(input=10, output=5),
            model="judge-m",
        )


# -- every built-in component keeps its contract ---------------------------------------


def test_simulated_provider(check_provider):
    result = check_provider(
        SimulatedProvider, seed=5, models=["sim-small", "sim-large"]
    )
    assert len(result.rows) == 4


@pytest.mark.parametrize(
    ("format", "fixture"),
    [
        ("claude-code", "claude-code/fix-dst-test.jsonl"),
        ("opencode", "opencode/add-retry.json"),
        ("openai", "openai/overdue-invoice.json"),
        ("anthropic", "anthropic/lisbon-weather.json"),
        ("trace", "trace/pr-review.json"),
    ],
)
def test_transcripts_provider(check_provider, format, fixture):
    result = check_provider(
        TranscriptsProvider,
        format=format,
        files=[str(FIXTURES / fixture)],
        on_exhausted="cycle",
    )
    assert all(row.provider == "transcripts" for row in result.rows)


def test_checks_scorer(check_scorer):
    result = check_scorer(ChecksScorer, scenarios=[CHECKED])
    assert all(row.checkpoints_total == 2 for row in result.rows)


def test_composite_scorer(check_scorer, profiler_plugin_manager):
    registry = profiler_plugin_manager.registry
    result = check_scorer(
        CompositeScorer,
        scenarios=[CHECKED],
        scorers=[{"id": "checks"}],
        registry=registry,
    )
    assert all(
        d.id.startswith("checks:")
        for row in result.rows
        for d in row.checkpoint_details
    )


def test_llm_judge_scorer(check_scorer):
    result = check_scorer(LlmJudgeScorer, scenarios=[CHECKED], judge=StaticJudge())
    assert all(row.success and row.checkpoints_total == 1 for row in result.rows)


@pytest.mark.parametrize(
    "collector", [TokenCollector, LatencyCollector, CostCollector, ToolCallCollector]
)
def test_core_collectors(check_collector, collector):
    check_collector(collector)


@pytest.mark.parametrize("analyzer", ANALYZERS, ids=lambda a: a.name)
def test_builtin_analyzers(check_analyzer, analyzer):
    result = check_analyzer(analyzer)
    assert result.analysis_results


def test_config_mode_resolver(check_mode_resolver):
    modes = {
        "fast": {"system_instructions": "be quick"},
        "careful": {"environment": {"CAREFUL": "1"}},
    }
    result = check_mode_resolver(_resolver_with(modes), modes=["fast", "careful"])
    assert {row.mode for row in result.rows} == {"fast", "careful"}


def _resolver_with(modes):
    # check_mode_resolver's own `modes=` names the modes to resolve; the resolver's
    # options go through a factory.
    def build():
        return ConfigModeResolver(modes)

    return build


IMPORTER_SAMPLES = {
    "claude-code": ["claude-code/fix-dst-test.jsonl", "claude-code/api-error.jsonl"],
    "codex": ["codex/notes.jsonl"],
    "opencode": ["opencode/add-retry.json"],
    "openai": ["openai/overdue-invoice.json", "openai/refund-001.jsonl"],
    "anthropic": ["anthropic/lisbon-weather.json"],
    "trace": ["trace/pr-review.json"],
    "atif": [
        "../harbor_jobs/job-a/hello-world__Kq3vT9a/agent/trajectory.json",
        "../harbor_jobs/job-a/count-lines__Zr5nB1e/agent/trajectory.json",
    ],
}


@pytest.mark.parametrize("format", sorted(IMPORTER_SAMPLES))
def test_core_importers(check_importer, profiler_plugin_manager, format):
    factory = profiler_plugin_manager.registry.get("importers", format).factory
    sessions = check_importer(
        factory, samples=[FIXTURES / name for name in IMPORTER_SAMPLES[format]]
    )
    assert sessions and all(s.format == format for s in sessions)


GHX_SAMPLES = sorted(
    (Path(__file__).parent.parent / "examples" / "eval-ghx" / "scenarios").glob(
        "*-001.json"
    )
)


def test_ghx_scenario_format(check_scenario_format):
    from profiler_eval_ghx.scenario import GhxScenarioFormat

    samples = [json.loads(path.read_text()) for path in GHX_SAMPLES]
    scenarios = check_scenario_format(GhxScenarioFormat, samples=samples)
    assert [s.id for s in scenarios] == [d["id"] for d in samples] and len(
        scenarios
    ) >= 3


def test_openai_judge(check_judge_provider):
    from profiler_core.fakemodel import FakeModelServer, Text, Usage
    from profiler_core.judges.openai import OpenAIJudge

    with FakeModelServer(
        Text('{"verdicts": []}', usage=Usage(input=40, output=6)), model="judge-m"
    ) as model:
        answers = check_judge_provider(
            OpenAIJudge, model="judge-m", base_url=model.base_url, max_retries=0
        )
    assert answers[0].text == '{"verdicts": []}' and answers[0].usage.input == 40


def test_opencode_judge(check_judge_provider):
    from tests.binaries import agent_binary
    from tests.opencode_helpers import START_TIMEOUT_S, model_config

    from profiler_core.fakemodel import FakeModelServer, Text, Usage
    from profiler_core.judges.opencode import OpenCodeJudge

    binary = agent_binary("opencode", "OPENCODE_BIN")
    with FakeModelServer(
        Text('{"verdicts": []}', usage=Usage(input=40, output=6)), model="scripted"
    ) as model:
        answers = check_judge_provider(
            OpenCodeJudge,
            model="local/scripted",
            binary=str(binary),
            start_timeout_s=START_TIMEOUT_S,
            config=model_config(model.base_url),
        )
    assert answers[0].text == '{"verdicts": []}'


#: The kit's test of each component core and its entry-point plugins register (contract -> ids).
KIT_TESTED = {
    "providers": {"simulated", "transcripts"},
    "scorers": {"checks", "composite", "llm-judge"},
    "collectors": {"token", "latency", "cost", "tool_calls"},
    "analyzers": {a.name for a in ANALYZERS},
    "mode_resolvers": {"config"},
    "judge_providers": {"openai", "opencode"},
    "importers": set(IMPORTER_SAMPLES),
    "scenario_formats": {"ghx"},
}
#: Components checked elsewhere against a real program or a task folder, not by the kit:
#: the file that does.
TESTED_ELSEWHERE = {
    ("providers", "claude-code"): "test_claude_code_provider.py",
    ("providers", "codex"): "test_codex_provider.py",
    ("providers", "opencode"): "test_opencode_provider.py",
    ("providers", "oracle"): "test_harbor.py",
    (
        "providers",
        "harbor",
    ): "test_harbor_provider.py",  # real Harbor trials (PROFILER_HARBOR_PYTHON)
    ("providers", "acp"): "test_acp_provider.py",
    ("providers", "command"): "test_command_provider.py",
    ("collectors", "wire"): "test_wire.py",
    ("scorers", "verify"): "test_workspace.py",
    ("scorers", "checkpoint"): "test_eval_ghx_scorer.py",
    ("collectors", "ghx"): "test_eval_ghx_collector.py",
    ("mode_resolvers", "eval"): "test_eval_ghx_modes.py",
    ("environments", "none"): "test_environments.py",
    ("environments", "bwrap"): "test_environments.py",
    ("environments", "docker"): "test_environments.py",
    ("environments", "podman"): "test_environments.py",
}


def test_every_contract_has_a_check_in_the_kit():
    import profiler_core.testing as kit
    from profiler_core.plugins.contracts import CONTRACTS
    from profiler_core.testing import pytest_plugin

    for contract in CONTRACTS.values():
        assert callable(getattr(kit, contract.check, None)), (
            f"{contract.name}: no {contract.check} in profiler_core.testing"
        )
        assert contract.check in kit.__all__ and hasattr(
            pytest_plugin, contract.check
        ), contract.check


def test_every_registered_component_is_checked():
    from profiler_core.plugins.contracts import CONTRACTS
    from profiler_core.plugins.manager import get_plugin_manager

    registry = get_plugin_manager(entrypoints=True).registry
    tests = Path(__file__).parent
    for contract in CONTRACTS:
        for component_id in registry.ids(contract):
            elsewhere = TESTED_ELSEWHERE.get((contract, component_id))
            if elsewhere is not None:
                assert (tests / elsewhere).exists(), (
                    f"{contract} {component_id!r}: {elsewhere} is gone"
                )
                continue
            assert component_id in KIT_TESTED[contract], (
                f"{contract} {component_id!r} has no contract-kit test here"
            )


# -- broken components are caught, with the component and the rule named ----------------


class TextOnly(FakeProvider):
    """Answers a bare string instead of a PromptResult."""

    id = "text-only"

    async def prompt(self, handle, text, timeout_ms=None):
        return "done"


class WrongTypes(FakeProvider):
    id = "wrong-types"

    def create_session(self, params):
        return super().create_session(params)

    def export_session(self, handle):
        return {"sessionId": handle.session_id}


class BadTrace(FakeProvider):
    id = "bad-trace"

    def export_session(self, handle):
        import attrs

        trace = super().export_session(handle)
        return attrs.evolve(
            trace, summary=attrs.evolve(trace.summary, total_tool_calls=7)
        )


class RaisingDestroy(FakeProvider):
    id = "raising-destroy"

    def destroy_session(self, handle):
        super().destroy_session(handle)
        raise RuntimeError("already gone")


class NoShutdown(FakeProvider):
    id = "incomplete"
    shutdown = None


def test_kit_catches_a_provider_answering_the_wrong_type(check_provider):
    with pytest.raises(
        ContractError,
        match="provider 'text-only': prompt returned str, expected PromptResult",
    ):
        check_provider(TextOnly)


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        (WrongTypes, "export_session returned dict, expected SessionTrace"),
        (BadTrace, "summary.total_tool_calls is 7 but there are 1 tool_call events"),
        (RaisingDestroy, "destroy_session raised RuntimeError: already gone"),
        (NoShutdown, "missing shutdown"),
    ],
)
def test_kit_catches_provider_contract_breaks(check_provider, provider, message):
    with pytest.raises(ContractError, match=message):
        check_provider(provider)


class Boolish:
    id = "boolish"

    def evaluate(self, scenario, context):
        return ScorerResult(success=1, passed=3, total=2)


class RaisesOnEmpty:
    id = "raises-on-empty"

    def evaluate(self, scenario, context):
        if not context.agent_output:
            raise IndexError("no output")
        return ScorerResult(success=True, passed=1, total=1)


def test_kit_catches_bad_scorers(check_scorer):
    with pytest.raises(
        ContractError,
        match=r"scorer 'boolish'.*success is int.*passed \(3\) > total \(2\)",
    ):
        check_scorer(Boolish)
    with pytest.raises(
        ContractError,
        match="scorer 'raises-on-empty': evaluate raised IndexError: no output",
    ):
        check_scorer(RaisesOnEmpty)


class NeedsTrace:
    id = "needs-trace"

    def collect(self, result, scenario, mode, trace):
        return [CustomMetric(name="turns", value=len(trace.turns), unit="turns")]


class NotANumber:
    id = "nan"

    def collect(self, result, scenario, mode, trace):
        return [CustomMetric(name="ratio", value=float("nan"), unit="ratio")]


def test_kit_catches_bad_collectors(check_collector):
    with pytest.raises(
        ContractError,
        match="collector 'needs-trace': collect raised AttributeError with no trace",
    ):
        check_collector(NeedsTrace)
    with pytest.raises(
        ContractError,
        match="metric 'ratio' has value nan, expected a finite number or a string",
    ):
        check_collector(NotANumber)


class Misnamed:
    name = "misnamed"

    def analyze(self, trace, scenario, mode):
        return AnalysisResult(analyzer="something-else", findings={}, summary="")


class FirstEvent:
    name = "first-event"

    def analyze(self, trace, scenario, mode):
        return AnalysisResult(
            analyzer=self.name, findings={}, summary=type(trace.events[0]).__name__
        )


def test_kit_catches_bad_analyzers(check_analyzer):
    with pytest.raises(
        ContractError,
        match="AnalysisResult.analyzer is 'something-else', expected its name 'misnamed'",
    ):
        check_analyzer(Misnamed)
    with pytest.raises(
        ContractError, match="analyze raised IndexError on a trace of 0 events"
    ):
        check_analyzer(FirstEvent)


class KeyErrorResolver:
    id = "key-error"

    def resolve(self, mode):
        return {"fast": ModeConfig()}[mode]


def test_kit_catches_a_resolver_raising_the_wrong_error(check_mode_resolver):
    with pytest.raises(
        ContractError,
        match="mode resolver 'key-error': resolve of an unknown mode raised "
        "KeyError, expected UnknownModeError",
    ):
        check_mode_resolver(KeyErrorResolver, modes=["fast"])


class Forgiving:
    """An importer that answers a foreign file with no sessions instead of an error."""

    id = "forgiving"

    def load(self, path):
        import attrs

        from profiler_core.importers import load_sessions

        try:
            return [
                attrs.evolve(s, format=self.id) for s in load_sessions("trace", path)
            ]
        except Exception:
            return []


class Crashing(Forgiving):
    """An importer that lets a stdlib error escape on a foreign file."""

    id = "crashing"

    def load(self, path):
        data = json.loads(Path(path).read_text())
        if "sessionId" not in data:
            raise KeyError("sessionId")
        return super().load(path)


def test_kit_catches_bad_importers(check_importer):
    samples = [FIXTURES / "trace" / "pr-review.json"]
    with pytest.raises(
        ContractError,
        match=r"importer 'forgiving': a foreign file was loaded \(0 sessions\)",
    ):
        check_importer(Forgiving, samples=samples)
    with pytest.raises(
        ContractError, match=r"importer 'crashing': a foreign file raised KeyError"
    ):
        check_importer(Crashing, samples=samples)
    with pytest.raises(ContractError, match="suffix 'json' is not a file name ending"):
        check_importer(
            type("NoDot", (Forgiving,), {"id": "no-dot", "suffixes": ("json",)}),
            samples=samples,
        )


class LooseFormat:
    id = "loose"

    def parse(self, data, source):
        return Scenario(
            id=str(data.get("id", "anything")),
            name="x",
            prompt=str(data.get("prompt", "")),
        )


class AttributeErrorFormat:
    id = "attribute-error"

    def parse(self, data, source):
        from profiler_core import ConfigError

        if not isinstance(data.get("prompt"), str):
            raise ConfigError(f"{source}: prompt: expected a string")
        return Scenario(id=data["id"].lower(), name=data["id"], prompt=data["prompt"])


def test_kit_catches_bad_scenario_formats(check_scenario_format):
    with pytest.raises(
        ContractError, match="scenario format 'loose': an empty mapping was parsed"
    ):
        check_scenario_format(LooseFormat, samples=[{"id": "a", "prompt": "p"}])
    with pytest.raises(
        ContractError,
        match=r"scenario format 'attribute-error': sample-0.json \(id broken\) raised "
        r"AttributeError",
    ):
        check_scenario_format(
            AttributeErrorFormat, samples=[{"id": "a", "prompt": "p"}]
        )


class ZeroJudge:
    id = "zero"

    def __init__(self):
        self.shut = 0

    def judge(self, request):
        return JudgeResponse(text="ok", token_count=-1)

    def shutdown(self):
        self.shut += 1


def test_kit_catches_bad_judges(check_judge_provider):
    judge = ZeroJudge()
    with pytest.raises(
        ContractError, match=r"judge provider 'zero': the response's token_count is -1"
    ):
        check_judge_provider(lambda: judge)
    assert judge.shut == 1  # shut down even though the answer broke the contract
    with pytest.raises(
        ContractError, match="judge returned str, expected JudgeResponse"
    ):
        check_judge_provider(
            type("Plain", (), {"id": "plain", "judge": lambda self, r: "PASS"})
        )


def test_check_trace_rejects_bad_turn_numbers():
    import attrs

    trace = FakeProvider().export_session(FakeProvider().create_session(_params()))
    check_trace(trace)
    turn = attrs.evolve(trace.turns[0], number=0)
    with pytest.raises(ContractError, match="turn numbers must count up from 1"):
        check_trace(attrs.evolve(trace, turns=(turn,)))


def _params():
    from profiler_core.model import CreateSessionParams

    return CreateSessionParams(
        system_instructions="", scenario_id="s", iteration=0, mode="m", model="x"
    )


# -- plugin modules stay cheap to import (issue 30) ---------------------------------------

ENTRY_POINT_MODULES = ("profiler_builtin_analyzers.plugin", "profiler_eval_ghx.plugin")


@pytest.mark.parametrize("module", [*BUILTIN_PLUGINS, *ENTRY_POINT_MODULES])
def test_each_built_in_plugin_module_imports_in_under_50_ms(module):
    assert check_plugin_import_cost(module) < 50


def test_a_plugin_module_with_a_heavy_import_is_named(tmp_path, monkeypatch):
    (tmp_path / "slow_plugin.py").write_text("import slow_dependency\n")
    # A heavy client library's import: 80 ms of CPU.
    (tmp_path / "slow_dependency.py").write_text(
        "import time\nstart = time.process_time()\nwhile time.process_time() - "
        "start < 0.08:\n    pass\n"
    )
    monkeypatch.setenv(
        "PYTHONPATH",
        os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
    )
    with pytest.raises(
        ContractError,
        match=r"'slow_plugin': importing it costs \d+ ms \(budget 50 ms\); costliest "
        r"imports: slow_dependency",
    ):
        check_plugin_import_cost("slow_plugin", tries=1)
