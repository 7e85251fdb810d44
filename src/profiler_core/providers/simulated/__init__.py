"""The ``simulated`` provider: a seeded model of a tool-using coding agent.

It is a simulator for demos, tests and load tests - no model is called and
nothing is executed. Each session is drawn from a random generator seeded by
``(seed, model, mode, scenario id, iteration, attempt)``, so the same inputs
always give the same session, and it looks like the work of a real agent:
several turns of reasoning, tool calls (``bash`` with real-looking commands,
``read_file``, ``edit``, ``grep``, ``glob``, ``write_file``), failures with
realistic errors followed by retries or alternatives, token usage whose cache
reads grow with the context, wall time from a latency model, cost from the
price table, and a final answer that says what was done and whether the task
was finished ("Done: ..." / "Could not finish: ...").

Options (profile ``provider.options``, changed per mode by
``provider_overrides``; see docs/simulated-provider.md): ``seed``,
``mean_turns``, ``max_turns``, ``tools_per_turn``, ``tool_error_rate``,
``success_rate``, ``verbosity``, ``time_scale``, ``output_format``,
``tool_categories``, ``tokens_per_second``, ``start_time``, ``prices``,
``cost_factor``, ``time_factor``.

The package, by concern: ``options`` (the options and their checks), ``prompt``
(reading the prompt), ``ops`` (the tool calls of each phase and the recoveries),
``texts`` (the text tables), ``draws`` (seeded randomness), ``costs`` (a model's
speed and a session's price), ``session`` (the simulation), ``trace`` (assembling
the result and the trace) and ``provider`` (the plugin).
"""

from __future__ import annotations

from .options import DEFAULT_TOOL_CATEGORIES, SimulatedOptions
from .provider import SimulatedProvider

__all__ = ["DEFAULT_TOOL_CATEGORIES", "SimulatedOptions", "SimulatedProvider"]
