"""The ``verify`` scorer: a session succeeds when every verifier of its scenario passed
— nothing the agent says counts.

::

    scorer: {id: verify}                       # every verifier must exit 0
    scorer: {id: verify, options: {min_reward: 0.8}}   # and the reward they wrote must reach 0.8

Verifiers are commands a scenario declares under ``verify``; the runner runs
them in the session's workspace after the agent finished (docs/verification.md).
"""

from __future__ import annotations

from ..errors import ConfigError
from ..model import Scenario, ScorerCheckResult, ScorerContext, ScorerResult

__all__ = ["VerifyScorer"]


class VerifyScorer:
    """Scores a session by its scenario's verifiers alone."""

    id = "verify"

    def __init__(self, *, min_reward: float | None = None) -> None:
        """``min_reward``: a reward (0-1) the verifiers must also reach, when they write one."""
        if min_reward is not None and (
            isinstance(min_reward, bool)
            or not isinstance(min_reward, (int, float))
            or not 0 <= min_reward <= 1
        ):
            raise ConfigError(
                "scorer 'verify': option min_reward: expected a number from 0 "
                f"to 1, got {min_reward!r}"
            )
        self.min_reward = min_reward

    def check_scenario(self, scenario: Scenario) -> None:
        """A scenario without verifiers cannot be scored by them."""
        if not scenario.verify and not any(step.verify for step in scenario.steps):
            raise ConfigError(
                f"scenario {scenario.id!r} has no `verify` commands; the verify "
                "scorer scores by verifiers alone"
            )

    def evaluate(self, scenario: Scenario, context: ScorerContext) -> ScorerResult:
        """Success when every verifier passed (and the reward reached ``min_reward``)."""
        details = list(context.verifications)
        if not details:
            return ScorerResult(
                success=False,
                passed=0,
                total=0,
                error=f"scenario {scenario.id!r}: no verifier ran",
            )
        if self.min_reward is not None:
            reached = context.reward is not None and context.reward >= self.min_reward
            details.append(
                ScorerCheckResult(
                    id="verify:reward",
                    description=f"reward >= {self.min_reward:g}",
                    passed=reached,
                    actual=context.reward,
                    expected=self.min_reward,
                    error=None
                    if context.reward is not None
                    else "no verifier wrote a reward",
                )
            )
        passed = sum(d.passed for d in details)
        return ScorerResult(
            success=passed == len(details),
            passed=passed,
            total=len(details),
            details=tuple(details),
        )
