"""Intervals that hold on rare 0/1 rewards, and how many events would decide.

- :func:`wilson`: the Wilson score interval of a proportion (a mean of 0/1 rewards; for
  rewards in [0, 1] it is conservative, since their variance is at most p (1 - p)). Never
  of zero width, never outside [0, 1].
- :func:`block_bootstrap`: the percentile bootstrap over **blocks of consecutive events**
  (the policies adapt, so neighbouring events are not independent), of the mean over seeds
  of a ratio of block sums; every seed sees the same resampled blocks.
- :func:`events_needed`: the events a log needs to tell from the logger a policy that is
  ``lift`` better (two-sided test at level ``alpha`` with power ``power``).
"""

from __future__ import annotations

import math

import numpy as np

N_BLOCKS = 100  # blocks of consecutive events for the bootstrap (fewer if the log is shorter)
N_BOOT = 2000


def wilson(mean: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion.

    Parameters
    ----------
    mean : float
        The observed proportion (successes / n), in [0, 1].
    n : float
        The number of trials (may be an effective sample size, not an integer); > 0.
    level : float
        The confidence level.

    Returns
    -------
    (low, high), inside [0, 1], low < high.
    """
    if not n > 0:
        return 0.0, 1.0
    from scipy.special import ndtri  # the normal quantile (scipy.stats is slower to import)

    z = ndtri(0.5 + level / 2)
    p = min(max(float(mean), 0.0), 1.0)
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    return max(0.0, centre - half), min(1.0, centre + half)


def block_ids(n: int, n_blocks: int = N_BLOCKS) -> np.ndarray:
    """The block of each of n events: ``n_blocks`` runs of consecutive events, shape (n,)."""
    b = min(n_blocks, n)
    return np.arange(n) * b // n


def block_sums(values: np.ndarray, blocks: np.ndarray, n_blocks: int) -> np.ndarray:
    """Per-block sums of ``values`` (n,) or (m, n) along the last axis."""
    values = np.atleast_2d(values)
    out = np.zeros((values.shape[0], n_blocks))
    for i, v in enumerate(values):
        out[i] = np.bincount(blocks, weights=v, minlength=n_blocks)
    return out


def block_bootstrap(
    num: np.ndarray,
    den: np.ndarray,
    rng: np.random.Generator,
    n_boot: int = N_BOOT,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile interval of ``mean_s(sum_b num[s, b] / sum_b den[s, b])`` under resampling
    the blocks b with replacement (the same blocks for every seed s).

    Parameters
    ----------
    num, den : ndarray, shape (n_seeds, n_blocks)
        Block sums of the numerator and denominator of each seed's estimate.
    rng : numpy.random.Generator
        The resampling stream.
    n_boot : int
        Bootstrap replicates.
    level : float
        The confidence level.
    """
    num, den = np.atleast_2d(num), np.atleast_2d(den)
    B = num.shape[1]
    idx = rng.integers(0, B, size=(n_boot, B))
    # how often each replicate drew each block: whole numbers, exact in any order of
    # summation (np.bincount over (replicate, block) pairs; np.add.at was 8x slower)
    pairs = (idx + B * np.arange(n_boot)[:, None]).ravel()
    counts = np.bincount(pairs, minlength=n_boot * B).reshape(n_boot, B).astype(float)
    tops, bots = counts @ num.T, counts @ den.T  # (n_boot, n_seeds)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = np.where(bots > 0, tops / np.where(bots > 0, bots, 1), np.nan)
    stats = np.nanmean(np.where(np.isnan(stats), np.nan, stats), axis=1)
    stats = stats[np.isfinite(stats)]
    if not len(stats):
        return math.nan, math.nan
    a = (1 - level) / 2
    return float(np.quantile(stats, a)), float(np.quantile(stats, 1 - a))


def reported_interval(
    estimate: float, boot: tuple[float, float], ess: float
) -> tuple[float, float]:
    """The interval shown for a weighted estimator: the block bootstrap's percentile
    interval, widened where needed to the Wilson interval of ``ess`` events at the estimate
    (what a plain mean of that many 0/1 rewards would get: it keeps the interval from
    collapsing to zero width when the resampled blocks hold no reward), clipped to [0, 1]."""
    w_lo, w_hi = wilson(estimate, ess)
    lo, hi = boot
    lo = w_lo if not math.isfinite(lo) else min(lo, w_lo)
    hi = w_hi if not math.isfinite(hi) else max(hi, w_hi)
    return max(0.0, lo), min(1.0, hi)


def events_needed(
    p0: float, ess_share: float, lift: float = 0.2, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Events a log needs to tell a policy whose value is ``(1 + lift) p0`` from the logger's
    ``p0`` (docs/your-data.md): ``n = (z_{1-alpha/2} + z_power)^2 (p0 (1 - p0) +
    p1 (1 - p1) / f) / (p1 - p0)^2``, p1 = (1 + lift) p0, f = ESS / n the share of the log
    the estimator effectively uses (the logger's value uses every event).

    Parameters
    ----------
    p0 : float
        The logger's mean reward, in (0, 1).
    ess_share : float
        ESS / n of the policy's estimator, in (0, 1].
    lift, alpha, power : float
        The relative improvement to detect, the test's level and power.
    """
    p1 = min((1 + lift) * p0, 1.0)
    if not (0 < p0 < 1 and ess_share > 0 and p1 > p0):
        return math.inf
    from scipy.special import ndtri  # the normal quantile

    z = ndtri(1 - alpha / 2) + ndtri(power)
    return z * z * (p0 * (1 - p0) + p1 * (1 - p1) / ess_share) / (p1 - p0) ** 2


__all__ = [
    "wilson",
    "block_ids",
    "block_sums",
    "block_bootstrap",
    "reported_interval",
    "events_needed",
    "N_BLOCKS",
    "N_BOOT",
]
