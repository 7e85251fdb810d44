"""numpy, imported so that its BLAS threads do not spin idle.

Use ``from ..util.arrays import np`` rather than ``import numpy``.

numpy's wheels load OpenBLAS, which starts one thread per core at import;
each spins, looking for work, for about half a second before it sleeps. That
was ~70 ms of CPU in every process that imports numpy (a fifth of a one-cell
``profiler run``; bench/README.md), taken from the agents and the other
sessions on a busy machine. ``OPENBLAS_THREAD_TIMEOUT=4`` (2**4 cycles, the
least OpenBLAS takes) makes the idle threads sleep at once and keeps them all
for work that wants them. OpenBLAS reads the variable when it loads, so it
is set for numpy's import only, and taken away again so that no agent,
verifier or other child process inherits it. A value the user set is left
as it is, and so is numpy if something else imported it first.
"""

from __future__ import annotations

import os
import sys

_KEY = "OPENBLAS_THREAD_TIMEOUT"

if "numpy" in sys.modules or _KEY in os.environ:
    import numpy as np
else:
    os.environ[_KEY] = "4"
    try:
        import numpy as np
    finally:
        os.environ.pop(_KEY, None)

__all__ = ["np"]
