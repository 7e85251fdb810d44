"""How much importing a plugin module costs: a plugin's heavy imports belong where its
components are used.

Every ``profiler`` command, ``--help`` included, imports each installed plugin's
entry-point module. :func:`check_plugin_import_cost` times ``import MODULE`` in
fresh interpreters that have already imported what all plugins share (the plugin
manager, the data model and its converter), so what it measures is what the
module adds: a module importing an HTTP client, numpy or trio at its top fails.

    from profiler_core.testing import check_plugin_import_cost
    check_plugin_import_cost("my_package.plugin")          # under 50 ms, or ContractError
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

from .contract import ContractError

#: What every plugin shares, imported before the module is timed.
SHARED = ("profiler_core.plugins", "profiler_core.model", "profiler_core.storage.serde")

#: The budget of one plugin module, in ms (issue 30).
BUDGET_MS = 50.0


def import_cost_ms(
    module: str, *, shared: Sequence[str] = SHARED
) -> tuple[float, list[tuple[str, float]]]:
    """One fresh interpreter's CPU time for ``import module`` in ms, and its costliest
    imports (name, ms).

    CPU time, not wall time, so that other processes on a busy machine do not
    count against the module; the costliest imports come from ``python -X
    importtime``. The bytecode caches are written (a first call warms them).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = "".join(f"import {name}\n" for name in shared) + (
        "import time\nstart = time.process_time()\nimport "
        f"{module}\nprint((time.process_time() - start) * 1000)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise ContractError(f"plugin module {module!r} cannot be imported: {tail[0]}")
    own = float(proc.stdout.strip().splitlines()[-1])
    # The modules imported with it: the -X importtime lines after the last shared module's.
    parts: list[tuple[str, float]] = []
    for line in proc.stderr.splitlines():
        fields = line.split("|")
        if (
            not line.startswith("import time:")
            or len(fields) != 3
            or not fields[1].strip().isdigit()
        ):
            continue
        name = fields[2].strip()
        if name in shared or name == "time":
            parts = []
        elif name != module:
            parts.append((name, int(fields[1]) / 1000))
    return own, sorted(parts, key=lambda p: -p[1])[:5]


def check_plugin_import_cost(
    module: str, *, budget_ms: float = BUDGET_MS, tries: int = 3
) -> float:
    """Raise ContractError when importing ``module`` costs more than ``budget_ms``;
    return the best time in ms.

    The best of ``tries`` fresh interpreters (the first one also writes the
    bytecode caches, so it is rarely the best).
    """
    best, offenders = min(
        (import_cost_ms(module) for _ in range(max(1, tries))), key=lambda r: r[0]
    )
    if best > budget_ms:
        heavy = (
            ", ".join(f"{name} {ms:.0f} ms" for name, ms in offenders) or "its own code"
        )
        raise ContractError(
            f"plugin module {module!r}: importing it costs {best:.0f} ms "
            f"(budget {budget_ms:.0f} ms); "
            f"costliest imports: {heavy}. Import what its components need where they are used."
        )
    return best


__all__ = ["BUDGET_MS", "SHARED", "check_plugin_import_cost", "import_cost_ms"]
