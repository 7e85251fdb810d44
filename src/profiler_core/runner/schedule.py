"""The order cells start in: mode after mode, modes alternating, or shuffled
(``execution.order``)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..config.schema import ORDERS

#: (model, mode, scenario, iteration)
Cell = tuple[str, str, Any, int]


def order_cells(
    cells: Sequence[Cell], modes: Sequence[str], order: str = "blocked", seed: int = 42
) -> list[Cell]:
    """``cells`` (given in matrix order: model, mode, scenario, iteration) in the order
    they should start.

    ``interleaved`` alternates the modes cell by cell within each model, so a drift
    of a remote API's speed over the run touches every mode alike; ``shuffled`` is a
    seeded random permutation within each model (models still run one after another,
    so a model's provider instances are not all alive at once).
    """
    if order not in ORDERS:
        raise ValueError(
            f"execution.order: expected one of {', '.join(ORDERS)}, got {order!r}"
        )
    if order == "blocked":
        return list(cells)
    out: list[Cell] = []
    for model in dict.fromkeys(c[0] for c in cells):
        of_model = [c for c in cells if c[0] == model]
        if order == "shuffled":
            # A string seed: random.Random hashes it deterministically (unlike hash() of a str).
            random.Random(f"{seed}:{model}").shuffle(of_model)
            out += of_model
            continue
        queues = [[c for c in of_model if c[1] == mode] for mode in modes]
        for step in range(max((len(q) for q in queues), default=0)):
            out += [q[step] for q in queues if step < len(q)]
    return out
