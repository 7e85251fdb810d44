"""Anytime-valid confidence sequences for a mean, vectorised over many experiments.

A confidence *sequence* is a sequence of intervals that hold the true mean at
every look at once, with probability at least ``confidence``: a run may look
after every round and stop when it likes without inflating its error rate,
which ordinary (fixed-sample) intervals looked at repeatedly do.

- :func:`betting_cs` for bounded observations (a success difference lies in
  [-1, 1]): the hedged betting capital process of Waudby-Smith & Ramdas,
  "Estimating means of bounded random variables by betting" (JRSS-B 2023),
  with their aGRAPA or predictable plug-in bets, or a mixture of the paper's
  aGRAPA and a bolder gambler (the stop rule's); exact at every sample size.
- :func:`asymptotic_cs` for unbounded observations (cost, time, tokens): the
  asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy &
  Ramdas, "Time-uniform central limit theory and asymptotic confidence
  sequences" (2021/2024), i.e. Robbins' normal mixture with the sample variance.
- :func:`fixed_sample_interval`: the ordinary normal interval, for comparison
  (it is *not* valid when looked at repeatedly; the tests show it).

Observations arrive in *blocks* (a run's rounds): bets and estimates change only
between blocks and the bounds are reported after each block, so observations
within a block may have different means (one per scenario) and the sequence
covers their average. Inputs are ``(experiments, observations)`` arrays (a 1-D
array is one experiment); ``nan`` marks a missing observation (an errored pair),
which changes nothing. See docs/statistics.md, "Sequential stopping".
"""

from __future__ import annotations

import math
from statistics import NormalDist

import attrs

from ..util.arrays import np
from ._common import check_confidence, check_count
from .types import StatsInputError

#: Bets never stake more than this share of what a wrong mean would allow (the paper's c).
TRUNCATION = 0.5
#: Observations before an asymptotic sequence says anything: with fewer, its variance estimate is
#: too rough (simulated A/A error from 5 log-normal observations: 7%; from 10: at most 4%).
MIN_COUNT = 10
#: Grid points over the range of a bounded mean (the interval's resolution is range / (grid - 1)).
DEFAULT_GRID = 1001
#: Working set of one chunk of experiments in ``betting_cs`` (bytes): cache-sized,
#: measured 2x faster than 8 MB.
_CHUNK_BYTES = 2**19


@attrs.frozen(kw_only=True, eq=False)
class SequenceBounds:
    """A confidence sequence after each look: arrays of shape ``(experiments, looks)``
    (or ``(looks,)``)."""

    lower: np.ndarray
    upper: np.ndarray
    #: the running mean of the observations (nan before the first)
    estimate: np.ndarray
    #: observations used up to each look
    count: np.ndarray
    confidence: float
    #: ``"betting"``, ``"asymptotic"`` or ``"fixed-sample"``
    method: str


def _as_matrix(values: np.ndarray | list, block: int) -> tuple[np.ndarray, bool]:
    """``values`` as a 2-D float array (experiments x observations) and whether it was 1-D."""
    arr = np.asarray(values, dtype=np.float64)
    one = arr.ndim == 1
    if one:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise StatsInputError(f"values: expected 1 or 2 dimensions, got {arr.ndim}")
    if np.isinf(arr).any():
        raise StatsInputError(
            "values: infinite values (nan marks a missing observation)"
        )
    block = check_count(block, "block", 1)
    if arr.shape[1] % block:
        raise StatsInputError(
            f"values: {arr.shape[1]} observations is not a whole number of blocks of {block}"
        )
    return arr, one


def _shape(bounds: SequenceBounds, one: bool) -> SequenceBounds:
    if not one:
        return bounds
    return attrs.evolve(
        bounds,
        lower=bounds.lower[0],
        upper=bounds.upper[0],
        estimate=bounds.estimate[0],
        count=bounds.count[0],
    )


def _looks(arr: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count, sum and sum of squared deviations (Welford-free: two cumulative sums)
    after each block."""
    seen = ~np.isnan(arr)
    x = np.where(seen, arr, 0.0)
    ends = np.arange(block - 1, arr.shape[1], block)
    n = np.cumsum(seen, axis=1)[:, ends].astype(np.float64)
    s = np.cumsum(x, axis=1)[:, ends]
    # Centre on each experiment's first observation so the sum of squares does not
    # cancel catastrophically.
    first = np.argmax(seen, axis=1)
    shift = np.where(seen.any(axis=1), x[np.arange(arr.shape[0]), first], 0.0)[:, None]
    xc = np.where(seen, arr - shift, 0.0)
    sc = np.cumsum(xc, axis=1)[:, ends]
    sq = np.cumsum(xc * xc, axis=1)[:, ends]
    with np.errstate(invalid="ignore", divide="ignore"):
        ss = sq - sc * sc / n
    return n, s, np.maximum(np.where(n > 0, ss, 0.0), 0.0)


def _running_intersection(
    lower: np.ndarray, upper: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Intersect each interval with the earlier ones (still a confidence sequence); an
    empty one keeps its own."""
    lo = np.maximum.accumulate(np.where(np.isnan(lower), -np.inf, lower), axis=-1)
    hi = np.minimum.accumulate(np.where(np.isnan(upper), np.inf, upper), axis=-1)
    # Crossing bounds mean the data moved (no constant mean fits); keep the look's own
    # interval there.
    empty = lo > hi
    return np.where(empty, lower, lo), np.where(empty, upper, hi)


def normal_mixture_rho(alpha: float, optimise_for: float) -> float:
    """The mixture width that makes the normal-mixture boundary tightest near
    ``optimise_for`` observations.

    Waudby-Smith et al. (2021), eq. for rho: ``(-2 log a + log(-2 log a + 1)) / t*``, square-rooted.
    """
    two_log = -2.0 * math.log(alpha)
    return math.sqrt((two_log + math.log(two_log + 1.0)) / optimise_for)


def asymptotic_cs(
    values: np.ndarray | list,
    *,
    confidence: float = 0.95,
    block: int = 1,
    optimise_for: float | None = None,
    min_count: int = MIN_COUNT,
    running_intersection: bool = True,
) -> SequenceBounds:
    """Asymptotic confidence sequence for the mean (two-sided), after each block of observations.

    ``mean ± sd * sqrt(2 (t r² + 1) / (t² r²) * log(sqrt(t r² + 1) / alpha))`` with the sample
    standard deviation ``sd`` of the ``t`` observations so far and ``r`` from
    :func:`normal_mixture_rho` (tightest near ``optimise_for`` observations, default 10 blocks).
    Before ``min_count`` observations (at least 2) the interval is ``(-inf, inf)``.
    """
    arr, one = _as_matrix(values, block)
    alpha = 1.0 - check_confidence(confidence)
    rho = normal_mixture_rho(alpha, float(optimise_for or 10 * block))
    n, s, ss = _looks(arr, block)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / n
        sd = np.sqrt(ss / (n - 1.0))
        t_rho = n * rho * rho
        half = sd * np.sqrt(
            2.0
            * (t_rho + 1.0)
            / (n * n * rho * rho)
            * np.log(np.sqrt(t_rho + 1.0) / alpha)
        )
    few = n < max(2, check_count(min_count, "min_count", 0))
    lower = np.where(few, -np.inf, mean - half)
    upper = np.where(few, np.inf, mean + half)
    if running_intersection:
        lower, upper = _running_intersection(lower, upper)
    bounds = SequenceBounds(
        lower=lower, upper=upper, estimate=np.where(n > 0, mean, math.nan), count=n.astype(np.int64),
        confidence=1.0 - alpha, method="asymptotic",
    )  # fmt: skip
    return _shape(bounds, one)


def fixed_sample_interval(
    values: np.ndarray | list, *, confidence: float = 0.95, block: int = 1
) -> SequenceBounds:
    """The ordinary normal interval ``mean ± z sd / sqrt(t)`` after each block: valid at
    one fixed ``t`` only."""
    arr, one = _as_matrix(values, block)
    confidence = check_confidence(confidence)
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    n, s, ss = _looks(arr, block)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s / n
        half = z * np.sqrt(ss / (n - 1.0) / n)
    few = n < 2
    bounds = SequenceBounds(
        lower=np.where(few, -np.inf, mean - half), upper=np.where(few, np.inf, mean + half),
        estimate=np.where(n > 0, mean, math.nan), count=n.astype(np.int64), confidence=confidence, method="fixed-sample",
    )  # fmt: skip
    return _shape(bounds, one)


#: how a betting sequence stakes: ``"agrapa"`` (one signed bet per mean, sized like Kelly's: the
#: stronger test), ``"plug-in"`` (the hedged predictable plug-in bets: the paper's
#: narrowest intervals)
#: or ``"mixture"`` (half the capital with aGRAPA as the paper, half with a bold aGRAPA gambler:
#: decides a large effect in fewer blocks; the stop rule's)
BETS = ("agrapa", "plug-in", "mixture")
#: The bold gambler of ``"mixture"``: it may stake 90% of what would ruin it (the
#: paper's 50% holds a
#: large effect's bet at about half of Kelly's), and it bets on the first block too.
BOLD_TRUNCATION = 0.9
#: The share of the capital the bold gambler of ``"mixture"`` starts with.
BOLD_SHARE = 0.5


@attrs.frozen(kw_only=True, eq=False)
class _Estimates:
    """What each block's bets are made from: the blocks before it (shape (experiments, blocks))."""

    mean: np.ndarray
    var: np.ndarray
    #: observations before the block
    before: np.ndarray
    #: observations up to the block's end
    count: np.ndarray


def _estimates(y: np.ndarray, block: int) -> _Estimates:
    """The regularised running mean ``(1/2 + sum y) / (t + 1)`` and variance ``(1/4 +
    sum (y_i - mean_i)^2) / (t + 1)``.

    Waudby-Smith & Ramdas (2023), section 4 (prior mean 1/2, prior variance 1/4, one
    prior observation),
    taken at the end of each block for the block after it.
    """
    seen = ~np.isnan(y)
    y0 = np.where(seen, y, 0.0)
    count = np.cumsum(seen, axis=1)
    mean_i = (0.5 + np.cumsum(y0, axis=1)) / (count + 1.0)
    sq = np.where(seen, (y0 - mean_i) ** 2, 0.0)
    var_i = (0.25 + np.cumsum(sq, axis=1)) / (count + 1.0)
    ends = np.arange(
        block - 1, y.shape[1] - block, block
    )  # the end of every block but the last
    first = np.zeros((y.shape[0], 1))
    return _Estimates(
        mean=np.concatenate([first + 0.5, mean_i[:, ends]], axis=1),
        var=np.concatenate([first + 0.25, var_i[:, ends]], axis=1),
        before=np.concatenate([first, count[:, ends]], axis=1),
        count=count[:, block - 1 :: block],
    )


def _plug_in(est: _Estimates, block: int, alpha: float) -> np.ndarray:
    """The predictable plug-in bet ``sqrt(2 log(2/alpha) / (var * t * log(1 + t)))``,
    ``t`` the middle of the block."""
    t = est.before + (block + 1) / 2.0
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (est.var * t * np.log1p(t)))


@attrs.frozen(kw_only=True)
class _Gambler:
    """One aGRAPA gambler: the share of ruin a bet may stake, and whether it bets on the
    first block."""

    truncation: float
    opening: bool


PAPER = _Gambler(truncation=TRUNCATION, opening=False)
BOLD = _Gambler(truncation=BOLD_TRUNCATION, opening=True)


def _log_capital(bet: np.ndarray, diff: np.ndarray) -> np.ndarray:
    """``sum log(1 + bet * diff)`` over a block's observations (axis 1): one log per 16 factors.

    Each factor lies in ``[1 - c, 1 + c / min(m, 1 - m)]``, so a product of 16 neither overflows
    nor underflows, and a log of a product is ten times cheaper than a sum of logs.
    """
    factors = 1.0 + bet * diff
    if factors.shape[1] <= 16:
        return np.log(factors.prod(axis=1))
    return sum(
        (
            np.log(factors[:, i : i + 16].prod(axis=1))
            for i in range(0, factors.shape[1], 16)
        ),
        np.zeros(()),
    )


def _caps(grid: np.ndarray, truncation: float) -> tuple[np.ndarray, np.ndarray]:
    """The largest bets up and down at each grid mean that lose at most ``truncation``
    of the capital."""
    with np.errstate(divide="ignore"):
        return truncation / grid, truncation / (1.0 - grid)


def _agrapa(
    diff: np.ndarray,
    est: _Estimates,
    r: int,
    grid: np.ndarray,
    gambler: _Gambler,
    caps: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """One block's log capital factor at each grid mean: ``sum log(1 + l(m) (y - m))``,
    shape (e, g).

    ``l(m) = (mean - m) / (var + (mean - m)^2)`` from the blocks before, within the caps. An opening
    gambler's first block (no estimate yet: aGRAPA would bet nothing at the prior mean) is hedged
    instead (its first block with an observation): half the capital on the full cap up, half on the
    full cap down. Each half is a product of constant bets within the block, so its
    expectation under
    ``m`` is at most 1, and so is their average. Where a cap is infinite (the grid's end, where one
    direction cannot lose) it bets nothing. ``caps``: ``_caps(grid, gambler.truncation)``.
    """
    cap_plus, cap_minus = caps
    gap = est.mean[:, r, None] - grid
    bet = np.minimum(
        np.maximum(gap / (est.var[:, r, None] + gap * gap), -cap_minus), cap_plus
    )[:, None, :]
    factor = _log_capital(bet, diff)
    # The first block with observations (an experiment whose earlier blocks were all
    # missing included).
    first = est.before[:, r] == 0
    if gambler.opening and first.any():
        plus = _log_capital(np.where(np.isfinite(cap_plus), cap_plus, 0.0), diff[first])
        minus = _log_capital(
            -np.where(np.isfinite(cap_minus), cap_minus, 0.0), diff[first]
        )
        factor[first] = np.logaddexp(plus, minus) - math.log(2.0)
    return factor


def _bounds_by_look(
    y: np.ndarray,
    est: _Estimates,
    grid: np.ndarray,
    block: int,
    alpha: float,
    bets: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper grid bounds after each block, from the capital of every grid mean ``m``.

    ``agrapa``: ``K(m) = prod(1 + l(m) (y - m))`` (see ``_agrapa``); a mean is out once
    ``K(m) >= 1 / alpha``. ``mixture``: ``K(m)`` is the average of the paper's and the
    bold gambler's
    capital (each a nonnegative martingale under ``m``, so their average is one). ``plug-in``: the
    hedged ``max(K+, K-) / 2`` with ``K+ = prod(1 + l+ (y - m))``, ``K- = prod(1 - l- (y - m))``,
    ``l+ = min(lambda, c / m)``, ``l- = min(lambda, c / (1 - m))``. Every bet lies in
    ``[-c / (1 - m), c / m]``, so no factor reaches zero. Once out, a mean stays out (running
    intersection; Ville's inequality).
    """
    e, t = y.shape
    looks = t // block
    hedged = bets == "plug-in"
    threshold = math.log((2.0 if hedged else 1.0) / alpha)
    cap_plus, cap_minus = _caps(grid, TRUNCATION)
    gamblers = (PAPER, BOLD) if bets == "mixture" else (PAPER,)
    caps = [_caps(grid, gambler.truncation) for gambler in gamblers]
    paper_share, bold_share = math.log1p(-BOLD_SHARE), math.log(BOLD_SHARE)
    lam = _plug_in(est, block, alpha) if hedged else None
    seen = ~np.isnan(y)
    # A missing observation bets nothing (a factor of 1): its observation is moved onto
    # m (y - m = 0).
    gaps = np.asarray(~seen.reshape(e, looks, block).all(axis=(0, 2)))
    diff_y = np.where(seen, y, 0.0).reshape(e, looks, block, 1)
    stake = seen.reshape(e, looks, block, 1).astype(np.float64)
    up = np.zeros((len(gamblers), e, grid.size))
    down = np.zeros((e, grid.size))
    worst = np.full((e, grid.size), -np.inf)
    lower = np.empty((e, looks))
    upper = np.empty((e, looks))
    # One look at a time: accumulating along the look axis of an (e, looks, grid) array
    # was 5x slower.
    for r in range(looks):
        diff = diff_y[:, r] - grid  # (e, block, g)
        if gaps[r]:
            diff = diff * stake[:, r]
        if lam is None:
            for i, gambler in enumerate(gamblers):
                up[i] += _agrapa(diff, est, r, grid, gambler, caps[i])
            capital = (
                up[0]
                if len(gamblers) == 1
                else np.logaddexp(up[0] + paper_share, up[1] + bold_share)
            )
            np.maximum(worst, capital, out=worst)
        else:
            lam_plus = np.minimum(lam[:, r, None], cap_plus)[:, None, :]
            lam_minus = np.minimum(lam[:, r, None], cap_minus)[:, None, :]
            up[0] += _log_capital(lam_plus, diff)
            down += _log_capital(-lam_minus, diff)
            np.maximum(worst, np.maximum(up[0], down), out=worst)
        lower[:, r], upper[:, r] = _hull(worst < threshold, worst, grid)
    return lower, upper


def betting_cs(
    values: np.ndarray | list,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    confidence: float = 0.95,
    block: int = 1,
    grid: int = DEFAULT_GRID,
    include: tuple[float, ...] = (0.0,),
    bets: str = "agrapa",
) -> SequenceBounds:
    """Betting confidence sequence for the mean of observations within ``bounds``, after each block.

    The interval holds every grid mean whose capital has never reached ``1 / alpha`` (a running
    intersection, valid by Ville's inequality), widened outward by one grid step. ``bets``: see
    ``BETS``. ``include`` are values put on the grid exactly (0: a paired difference's
    "no difference").
    """
    low, high = (float(b) for b in bounds)
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise StatsInputError(
            f"bounds: expected two finite numbers low < high, got {bounds!r}"
        )
    if bets not in BETS:
        raise StatsInputError(f"bets: expected one of {', '.join(BETS)}, got {bets!r}")
    arr, one = _as_matrix(values, block)
    alpha = 1.0 - check_confidence(confidence)
    span = high - low
    tolerance = 1e-9 * span
    if np.any((arr < low - tolerance) | (arr > high + tolerance)):
        raise StatsInputError(
            f"values: observations outside the bounds [{low:g}, {high:g}]"
        )
    y = np.clip((arr - low) / span, 0.0, 1.0)
    extra = [(v - low) / span for v in include if low <= v <= high]
    points = np.unique(
        np.concatenate([np.linspace(0.0, 1.0, check_count(grid, "grid", 3)), extra])
    )
    est = _estimates(y, block)
    e, t = y.shape
    lower = np.empty((e, t // block))
    upper = np.empty((e, t // block))
    chunk = max(1, _CHUNK_BYTES // max(1, block * points.size * 8))
    for start in range(0, e, chunk):
        part = slice(start, start + chunk)
        sub = _Estimates(
            mean=est.mean[part],
            var=est.var[part],
            before=est.before[part],
            count=est.count[part],
        )
        lower[part], upper[part] = _bounds_by_look(
            y[part], sub, points, block, alpha, bets
        )
    seen = ~np.isnan(y)
    sums = np.cumsum(np.where(seen, arr, 0.0), axis=1)[:, block - 1 :: block]
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(est.count > 0, sums / est.count, math.nan)
    result = SequenceBounds(
        lower=low + span * lower, upper=low + span * upper, estimate=estimate, count=est.count.astype(np.int64),
        confidence=1.0 - alpha, method=f"betting ({bets})",
    )  # fmt: skip
    return _shape(result, one)


def _hull(
    accepted: np.ndarray, worst: np.ndarray, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The smallest interval of grid steps holding every accepted mean (each bound one
    step outward)."""
    g = points.size
    anything = accepted.any(axis=-1)
    first = np.argmax(accepted, axis=-1)
    last = g - 1 - np.argmax(accepted[..., ::-1], axis=-1)
    # Nothing accepted (the data left no constant mean standing): the least rejected
    # mean, one step each way.
    best = np.argmin(worst, axis=-1)
    first = np.where(anything, first, best)
    last = np.where(anything, last, best)
    return points[np.maximum(first - 1, 0)], points[np.minimum(last + 1, g - 1)]


def fixed_sample_size(
    sd: float, effect: float, *, confidence: float = 0.95, power: float = 0.8
) -> float:
    """Observations a two-sided normal test needs to detect ``effect`` with ``power``:
    ``((z_a + z_b) sd / effect)^2``."""
    confidence = check_confidence(confidence)
    check_confidence(power)
    if not (effect > 0 and sd >= 0 and math.isfinite(sd)):
        raise StatsInputError(
            f"effect: expected a number > 0 and sd >= 0, got effect={effect!r}, sd={sd!r}"
        )
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0) + NormalDist().inv_cdf(power)
    return (z * sd / effect) ** 2
