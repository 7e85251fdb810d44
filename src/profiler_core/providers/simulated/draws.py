"""Seeded randomness: stable seeds and the distributions sessions are drawn from."""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any


def stable_seed(*parts: Any) -> int:
    """A seed from a stable hash (never Python's ``hash()``, which changes per process)."""
    digest = hashlib.blake2b(
        "\x1f".join(map(repr, parts)).encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big")


def poisson(rng: random.Random, lam: float) -> int:
    """Poisson draw (Knuth for small means, a rounded normal for large ones)."""
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, round(rng.gauss(lam, math.sqrt(lam))))
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def lognormal(rng: random.Random, median: float, sigma: float) -> float:
    return median * math.exp(rng.gauss(0.0, sigma))
