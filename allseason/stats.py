"""Intervals over seeds: the one place where a "95% interval" is computed.

A race or a sweep repeats each policy over ``n`` independent seeds and reports the mean of a
per-seed metric (e.g. the mean reward per step) with a 95% confidence interval for it. With
few seeds the normal quantile 1.96 is too small: at n = 3 the interval ``1.96 · s / √n``
covers the true mean only about 81% of the time. The honest half-width is Student's t::

    half-width = t.ppf(0.975, n − 1) · s / √n        (s: sample std, ddof = 1)

(t.ppf(0.975, 2) = 4.303 at 3 seeds, 2.776 at 5, 2.262 at 10; 1.96 only as n → ∞).

One seed: the interval is undefined (no spread to estimate). :func:`ci95_halfwidth` then
returns **0**, everywhere (JSON, tables, figures), and the figures say "one seed: no
interval" instead of drawing one; :func:`t_quantile` returns NaN for n < 2.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

LEVEL = 0.95
#: how the interval is named in captions, legends and docs
CI_LABEL = "95% interval (Student's t)"
CI_FORMULA = "t₀.₉₇₅(n−1) · std / √n"


@lru_cache(maxsize=256)
def _t(n: int) -> float:
    # what scipy.stats' t.ppf(q, df) computes (its _ppf), bit for bit: scipy.special's
    # stdtrit; importing scipy.stats costs 1.5-2 CPU-s in every process (a CLI command's)
    from scipy.special import stdtrit

    return float(stdtrit(n - 1, 0.5 + LEVEL / 2))


def t_quantile(n):
    """Student's t quantile t.ppf(0.975, n − 1) for ``n`` seeds (an int or an array of
    ints); NaN where n < 2 (no interval with one seed)."""
    arr = np.asarray(n)
    if arr.ndim == 0:
        k = int(arr)
        return _t(k) if k >= 2 else float("nan")
    flat = [(_t(int(k)) if k >= 2 else np.nan) for k in arr.ravel()]
    return np.array(flat, dtype=float).reshape(arr.shape)


def ci95_halfwidth(std, n):
    """Half-width of the 95% Student's t interval of a mean over ``n`` seeds with sample
    standard deviation ``std`` (ddof = 1): ``t.ppf(0.975, n − 1) · std / √n``.

    Scalars give a float, arrays (or pandas Series) an array. Where n < 2 the interval is
    undefined and the half-width is reported as 0 (a NaN ``std`` there is fine)."""
    std_a, n_a = np.asarray(std, dtype=float), np.asarray(n)
    n_f = n_a.astype(float)
    ok = n_f >= 2
    q = t_quantile(np.where(ok, n_a, 2).astype(np.int64))
    with np.errstate(invalid="ignore", divide="ignore"):
        half = np.where(ok, q * std_a / np.sqrt(np.where(ok, n_f, 1.0)), 0.0)
    return float(half) if np.ndim(half) == 0 else half


__all__ = ["ci95_halfwidth", "t_quantile", "LEVEL", "CI_LABEL", "CI_FORMULA"]
