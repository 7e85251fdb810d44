"""The contract test kit (profiler_core.testing): every built-in component passes it, broken ones are caught."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from profiler_builtin_analyzers import ANALYZERS
from profiler_core import AnalysisResult, JudgeResponse, ModeConfig, Scenario, ScorerResult, TokenBreakdown
from profiler_core.config.modes import ConfigModeResolver
from profiler_core.metrics.collectors import CostCollector, LatencyCollector, TokenCollector, ToolCallCollector
from profiler_core.model import CustomMetric
from profiler_core.plugins.manager import BUILTIN_PLUGINS
from profiler_core.providers.simulated import SimulatedProvider
from profiler_core.providers.transcripts import TranscriptsProvider
from profiler_core.scorers.checks import ChecksScorer
from profiler_core.scorers.composite import CompositeScorer
from profiler_core.scorers.llm_judge import LlmJudgeScorer
from profiler_core.testing import ContractError, FakeProvider, check_plugin_import_cost, check_trace

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"

CHECKED = Scenario(
    id="contract-check",
    name="checked",
    prompt="List the files and say done.",
    extensions={
        "checks": [
            {"id": "said-something", "target": "output", "condition": {"type": "matches", "pattern": "."}},
            {"id": "used-tools", "target": "trace", "condition": {"type": "field_gte", "path": "summary.totalToolCalls", "value": 1}},
        ],
        "rubric": {"criteria": [{"id": "correct", "description": "the answer is right"}]},
    },
)


class StaticJudge:
    """A judge answering every criterion as passed (the llm-judge scorer's judge provider)."""

    id = "static-judge"
    model = "judge-m"

    async def judge(self, request):
        verdicts = [{"id": "correct", "passed": True, "reasoning": "fine"}]  # CHECKED's one criterion
        return JudgeResponse(text=json.dumps({"verdicts": verdicts}), usage=TokenBreakdown(input=10, output=5), model="judge-m")


# -- every built-in component keeps its contract ---------------------------------------


def test_simulated_provider(check_provider):
    result = check_provider(SimulatedProvider, seed=5, models=["sim-small", "sim-large"])
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
    result = check_provider(TranscriptsProvider, format=format, files=[str(FIXTURES / fixture)], on_exhausted="cycle")
    assert all(row.provider == "transcripts" for row in result.rows)


def test_checks_scorer(check_scorer):
    result = check_scorer(ChecksScorer, scenarios=[CHECKED])
    assert all(row.checkpoints_total == 2 for row in result.rows)


def test_composite_scorer(check_scorer, profiler_plugin_manager):
    registry = profiler_plugin_manager.registry
    result = check_scorer(CompositeScorer, scenarios=[CHECKED], scorers=[{"id": "checks"}], registry=registry)
    assert all(d.id.startswith("checks:") for row in result.rows for d in row.checkpoint_details)


def test_llm_judge_scorer(check_scorer):
    result = check_scorer(LlmJudgeScorer, scenarios=[CHECKED], judge=StaticJudge())
    assert all(row.success and row.checkpoints_total == 1 for row in result.rows)


@pytest.mark.parametrize("collector", [TokenCollector, LatencyCollector, CostCollector, ToolCallCollector])
def test_core_collectors(check_collector, collector):
    check_collector(collector)


@pytest.mark.parametrize("analyzer", ANALYZERS, ids=lambda a: a.name)
def test_builtin_analyzers(check_analyzer, analyzer):
    result = check_analyzer(analyzer)
    assert result.analysis_results


def test_config_mode_resolver(check_mode_resolver):
    modes = {"fast": {"system_instructions": "be quick"}, "careful": {"environment": {"CAREFUL": "1"}}}
    result = check_mode_resolver(_resolver_with(modes), modes=["fast", "careful"])
    assert {row.mode for row in result.rows} == {"fast", "careful"}


def _resolver_with(modes):
    # check_mode_resolver's own `modes=` names the modes to resolve; the resolver's options go through a factory.
    def build():
        return ConfigModeResolver(modes)

    return build


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
        return attrs.evolve(trace, summary=attrs.evolve(trace.summary, total_tool_calls=7))


class RaisingDestroy(FakeProvider):
    id = "raising-destroy"

    def destroy_session(self, handle):
        super().destroy_session(handle)
        raise RuntimeError("already gone")


class NoShutdown(FakeProvider):
    id = "incomplete"
    shutdown = None


def test_kit_catches_a_provider_answering_the_wrong_type(check_provider):
    with pytest.raises(ContractError, match="provider 'text-only': prompt returned str, expected PromptResult"):
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
    with pytest.raises(ContractError, match=r"scorer 'boolish'.*success is int.*passed \(3\) > total \(2\)"):
        check_scorer(Boolish)
    with pytest.raises(ContractError, match="scorer 'raises-on-empty': evaluate raised IndexError: no output"):
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
    with pytest.raises(ContractError, match="collector 'needs-trace': collect raised AttributeError with no trace"):
        check_collector(NeedsTrace)
    with pytest.raises(ContractError, match="metric 'ratio' has value nan, expected a finite number or a string"):
        check_collector(NotANumber)


class Misnamed:
    name = "misnamed"

    def analyze(self, trace, scenario, mode):
        return AnalysisResult(analyzer="something-else", findings={}, summary="")


class FirstEvent:
    name = "first-event"

    def analyze(self, trace, scenario, mode):
        return AnalysisResult(analyzer=self.name, findings={}, summary=type(trace.events[0]).__name__)


def test_kit_catches_bad_analyzers(check_analyzer):
    with pytest.raises(ContractError, match="AnalysisResult.analyzer is 'something-else', expected its name 'misnamed'"):
        check_analyzer(Misnamed)
    with pytest.raises(ContractError, match="analyze raised IndexError on a trace of 0 events"):
        check_analyzer(FirstEvent)


class KeyErrorResolver:
    id = "key-error"

    def resolve(self, mode):
        return {"fast": ModeConfig()}[mode]


def test_kit_catches_a_resolver_raising_the_wrong_error(check_mode_resolver):
    with pytest.raises(ContractError, match="mode resolver 'key-error': resolve of an unknown mode raised KeyError, expected UnknownModeError"):
        check_mode_resolver(KeyErrorResolver, modes=["fast"])


def test_check_trace_rejects_bad_turn_numbers():
    import attrs

    trace = FakeProvider().export_session(FakeProvider().create_session(_params()))
    check_trace(trace)
    turn = attrs.evolve(trace.turns[0], number=0)
    with pytest.raises(ContractError, match="turn numbers must count up from 1"):
        check_trace(attrs.evolve(trace, turns=(turn,)))


def _params():
    from profiler_core.model import CreateSessionParams

    return CreateSessionParams(system_instructions="", scenario_id="s", iteration=0, mode="m", model="x")


# -- plugin modules stay cheap to import (issue 30) ---------------------------------------

ENTRY_POINT_MODULES = ("profiler_builtin_analyzers.plugin", "profiler_eval_ghx.plugin")


@pytest.mark.parametrize("module", [*BUILTIN_PLUGINS, *ENTRY_POINT_MODULES])
def test_each_built_in_plugin_module_imports_in_under_50_ms(module):
    assert check_plugin_import_cost(module) < 50


def test_a_plugin_module_with_a_heavy_import_is_named(tmp_path, monkeypatch):
    (tmp_path / "slow_plugin.py").write_text("import slow_dependency\n")
    # A heavy client library's import: 80 ms of CPU.
    (tmp_path / "slow_dependency.py").write_text(
        "import time\nstart = time.process_time()\nwhile time.process_time() - start < 0.08:\n    pass\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    with pytest.raises(ContractError, match=r"'slow_plugin': importing it costs \d+ ms \(budget 50 ms\); costliest imports: slow_dependency"):
        check_plugin_import_cost("slow_plugin", tries=1)
