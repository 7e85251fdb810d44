"""Judge providers: the LLMs behind the ``llm-judge`` scorer (built-in: ``openai``).

Importing this package is cheap; ``httpx`` is imported by
:mod:`profiler_core.judges.openai` only when that module is loaded.
"""

from __future__ import annotations

from ..errors import JudgeError

__all__ = ["JudgeError"]
