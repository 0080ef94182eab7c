"""Example files for "Your data", made from a seed (never stored in the repository).

- :func:`obd_log`: a logged-bandit CSV in the shape of the Open Bandit Dataset (Saito et al.
  2021; its format only: no data of it is used or shipped): ``timestamp`` (date-time with
  microseconds), ``item_id``, ``position`` (1-3), ``click``, ``propensity_score`` and a hashed
  ``user_feature_0``. The logging is **uniform** (each of the 10 items with probability 1/10,
  so replay is valid) and clicks are **sparse** as in the OBD: item click rates between 0.2%
  and 0.7% (about 0.4% on average), so the sparsity warning fires.
- :func:`seasonal_table`: a per-arm reward table, one row per (week, product), four years of
  weeks from 2021-01-04, four products whose weekly sale rates follow the seasons of the
  year (:data:`SEASON_RATES`): the coat is best in winter, the umbrella in spring, the
  sunglasses in summer, coffee in autumn; the best product changes abruptly when the season
  does, and the same seasons come back every year.

``python scripts/make_examples.py`` writes both to a folder.

    >>> obd_log(n_rows=3).decode().splitlines()[0]
    'timestamp,item_id,position,click,propensity_score,user_feature_0'
    >>> seasonal_table().decode().splitlines()[1]
    '2021-01-04,coat,0.60'
"""

from __future__ import annotations

import numpy as np

N_ITEMS = 10
OBD_ROWS = 20_000
PRODUCTS = ("coat", "umbrella", "sunglasses", "coffee")
WEEKS = 208
START = np.datetime64("2021-01-04")  # a Monday


def obd_log(n_rows: int = OBD_ROWS, seed: int = 0, n_items: int = N_ITEMS) -> bytes:
    """The OBD-shaped log (module docstring) as CSV bytes, deterministic from ``seed``."""
    rng = np.random.default_rng(seed)
    ctr = np.linspace(0.002, 0.007, n_items)[rng.permutation(n_items)]
    item = rng.integers(0, n_items, n_rows)
    click = (rng.random(n_rows) < ctr[item]).astype(int)
    position = rng.integers(1, 4, n_rows)
    gaps = rng.exponential(2.0, n_rows) + 1e-3  # seconds between events, all distinct
    t0 = np.datetime64("2019-11-24T00:00:00.000000")
    ts = t0 + np.round(np.cumsum(gaps) * 1e6).astype("timedelta64[us]")
    users = rng.integers(0, 2**32, 64)
    feature = [f"{u:08x}" for u in users[rng.integers(0, 64, n_rows)]]
    p = f"{1 / n_items:.6g}"
    lines = ["timestamp,item_id,position,click,propensity_score,user_feature_0"]
    lines += [
        f"{str(t).replace('T', ' ')},{i},{pos},{c},{p},{f}"
        for t, i, pos, c, f in zip(ts, item, position, click, feature)
    ]
    return ("\n".join(lines) + "\n").encode()


#: weekly sale rate of each product (columns: PRODUCTS) in each season of the year (rows:
#: winter Dec-Feb, spring Mar-May, summer Jun-Aug, autumn Sep-Nov): the best product changes
#: abruptly when the season does, and the same seasons come back every year
SEASON_RATES = np.array(
    [
        [0.60, 0.20, 0.05, 0.30],  # winter: coat
        [0.15, 0.55, 0.20, 0.30],  # spring: umbrella
        [0.05, 0.10, 0.65, 0.30],  # summer: sunglasses
        [0.25, 0.30, 0.10, 0.50],  # autumn: coffee
    ]
)
SEASONS = ("winter", "spring", "summer", "autumn")


def seasonal_rates(weeks: int = WEEKS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(dates (weeks,), rates (weeks, 4)): the weekly sale rate of each product of
    :data:`PRODUCTS`: its rate in the week's season (:data:`SEASON_RATES`) plus a little
    noise (standard deviation 0.03), rounded to 2 decimals."""
    rng = np.random.default_rng(seed)
    dates = START + 7 * np.arange(weeks)
    month = dates.astype("datetime64[M]").astype(int) % 12  # 0 = January
    season = ((month + 1) % 12) // 3  # Dec-Feb 0, Mar-May 1, Jun-Aug 2, Sep-Nov 3
    rates = np.clip(SEASON_RATES[season] + rng.normal(0, 0.03, (weeks, 4)), 0, 1)
    return dates, np.round(rates, 2)


def seasonal_table(weeks: int = WEEKS, seed: int = 0) -> bytes:
    """The seasonal reward table (module docstring) as CSV bytes: time, arm, reward."""
    dates, rates = seasonal_rates(weeks, seed)
    lines = ["time,arm,reward"]
    for d, row in zip(dates, rates):
        lines += [f"{d},{name},{r:.2f}" for name, r in zip(PRODUCTS, row)]
    return ("\n".join(lines) + "\n").encode()


EXAMPLES = {
    "log": ("obd-shaped-log.csv", obd_log),
    "table": ("seasonal-reward-table.csv", seasonal_table),
}

__all__ = ["obd_log", "seasonal_table", "seasonal_rates", "EXAMPLES", "PRODUCTS", "N_ITEMS"]
