"""The pluggy markers (kept apart so importing them is cheap)."""

import pluggy

PROJECT_NAME = "agent_profiler"

#: Decorate a plugin's hook implementations: ``@hookimpl def profiler_register_scorers(): ...``
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
