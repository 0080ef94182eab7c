"""The Seattle weather shop: a seasonal world built from real days (preset ``seattle-weather``).

Data: ``seattle-weather.csv`` of PyPI ``vega-datasets==0.9.0`` (MIT; NOAA public-domain
observations): 1,461 days, 2012-01-01 .. 2015-12-31, with precipitation (mm), temp_max and
temp_min (deg C) and wind. The file is read from the installed package (never the network) and
its sha256 is checked first. Its ``weather`` label column is **not** used: its meaning drifts
over the years (191 "rain" days in 2012, 3 in 2014).

The hidden state is the day's weather **regime**, a rule on the day's own values (no made-up
change points), checked in this order:

- ``cold`` (state 3): temp_max < 10 deg C, whatever the rain;
- ``wet`` (state 2): precipitation >= 1 mm;
- ``warm & dry`` (state 1): temp_max >= 20 deg C;
- ``mild & dry`` (state 0): every other day (dry, 10 <= temp_max < 20).

Each day is a batch of B = 10 customers; a step is one customer, who is shown one of K = 5
products (the arms) and buys it (reward 1) or not (0). The sale probability of product k on a
day in regime s is ``P[s, k]`` (:data:`SALE_P`), i.e. the rules

- coffee: 0.4 every day;
- sunglasses: 0.1 + 0.6 [warm & dry];
- ice cream: 0.05 + 0.1 [mild & dry] + 0.45 [warm & dry];
- umbrella: 0.1 + 0.5 [wet] + 0.2 [cold];
- coat: 0.1 + 0.5 [cold].

So the best product is coffee (0.4) on mild dry days, sunglasses (0.7) on warm dry days,
umbrella (0.6) on wet days and coat (0.6) on cold days. The arms are one-hot products,
x_k = e_k in R^5 (d = K = 5), so the linear model is exact: E[reward | s, k] = <theta_s, e_k>
with theta_s = P[s]. The sale is drawn as ``u < P[s, k]`` with one uniform u per (step, arm)
from the world's stream (common random numbers: every contestant meets the same customers).
The policies assume reward noise variance sigma2 = 0.25, the largest a 0/1 sale can have.
Regret uses the probabilities (``Round.expected``), the policies are paid the sales
(``Round.outcome``). Horizon: 1,461 x 10 = 14,610 steps; about 500 regime runs (segments).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import io
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import SpecError
from .round import Round

PRESET = "seattle-weather"
PACKAGE = "vega_datasets"
INSTALL = "pip install vega-datasets==0.9.0"
CSV_NAME = "seattle-weather.csv"
CSV_SHA256 = "62f0609f787158128aa2bd102967173a4953122dd4f872bf1d502cae1037df0b"
N_DAYS = 1461
COLUMNS = ("date", "precipitation", "temp_max", "temp_min", "wind")

BATCH = 10  # customers per day (B)
WET_MM, COLD_C, WARM_C = 1.0, 10.0, 20.0
REGIMES = ("mild & dry", "warm & dry", "wet", "cold")
PRODUCTS = ("coffee", "sunglasses", "ice cream", "umbrella", "coat")
SALE_P = np.array(
    [  # P[s, k]: rows REGIMES, columns PRODUCTS (the rules of the docstring)
        [0.40, 0.10, 0.15, 0.10, 0.10],  # mild & dry
        [0.40, 0.70, 0.50, 0.10, 0.10],  # warm & dry
        [0.40, 0.10, 0.05, 0.60, 0.10],  # wet
        [0.40, 0.10, 0.05, 0.30, 0.60],  # cold
    ]
)
K = D = len(PRODUCTS)
SIGMA2 = 0.25
# what the preset fixes in a Scenario (field -> value)
FIXED = {"d": D, "n_arms": K, "sigma2": SIGMA2, "batch_size": BATCH}

__all__ = [
    "PRESET",
    "REGIMES",
    "PRODUCTS",
    "SALE_P",
    "BATCH",
    "FIXED",
    "load_weather",
    "regimes",
    "sale_probability",
    "segments",
    "step_dates",
    "WeatherEnv",
    "world",
    "csv_path",
    "check_scenario",
    "year_days",
]


def year_days(first: int, last: int | None = None) -> slice:
    """The days of the years ``first`` .. ``last`` (inclusive; default: ``first`` alone)."""
    dates = load_weather()["date"]
    years = dates.astype("datetime64[Y]").astype(int) + 1970
    last = first if last is None else last
    idx = np.flatnonzero((years >= first) & (years <= last))
    if not len(idx):
        raise SpecError("days", f"no days in {first}..{last}; the data cover 2012-2015")
    return slice(int(idx[0]), int(idx[-1]) + 1)


def csv_path() -> Path:
    """Where the installed vega-datasets keeps seattle-weather.csv (the package is located
    with ``importlib.util.find_spec``, not imported). Raises SpecError("preset") with the
    install command when it is missing."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SpecError(
            "preset", f"{PRESET} needs the vega-datasets package; install it with: {INSTALL}"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "_data" / CSV_NAME
    if not path.is_file():
        raise SpecError(
            "preset",
            f"{PRESET}: {CSV_NAME} is not in the installed vega-datasets "
            f"({path.parent}); install it with: {INSTALL}",
        )
    return path


@lru_cache(maxsize=1)
def load_weather() -> dict[str, np.ndarray]:
    """The 1,461 days as numpy columns: ``date`` (datetime64[D]), ``precipitation``,
    ``temp_max``, ``temp_min``, ``wind`` (float). The file's sha256 is checked before it is
    parsed (stdlib csv, no pandas); a different file is refused."""
    path = csv_path()
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != CSV_SHA256:
        raise SpecError(
            "preset",
            f"{PRESET}: {path} has sha256 {digest[:12]}..., expected "
            f"{CSV_SHA256[:12]}... (vega-datasets 0.9.0); reinstall it "
            f"with: {INSTALL}",
        )
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"))))
    header, body = rows[0], rows[1:]
    idx = {c: header.index(c) for c in COLUMNS}
    out = {
        "date": np.array([r[idx["date"]].replace("/", "-") for r in body], dtype="datetime64[D]")
    }
    for c in COLUMNS[1:]:
        out[c] = np.array([float(r[idx[c]]) for r in body])
    for v in out.values():
        v.setflags(write=False)
    return out


def regimes(precipitation, temp_max) -> np.ndarray:
    """The regime (state) of each day by the module's rule: 3 cold (temp_max < 10), else 2
    wet (precipitation >= 1 mm), else 1 warm & dry (temp_max >= 20), else 0 mild & dry."""
    p, t = np.asarray(precipitation, float), np.asarray(temp_max, float)
    return np.where(t < COLD_C, 3, np.where(p >= WET_MM, 2, np.where(t >= WARM_C, 1, 0)))


def sale_probability(precipitation, temp_max) -> np.ndarray:
    """Sale probability of every product on each day, shape (n_days, K), written as the
    docstring's rules on the day's indicators (``SALE_P[regimes(...)]`` is the same table)."""
    s = regimes(precipitation, temp_max)
    mild, warm, wet, cold = (s == 0), (s == 1), (s == 2), (s == 3)
    return np.stack(
        [
            0.4 + 0 * s,
            0.1 + 0.6 * warm,
            0.05 + 0.1 * mild + 0.45 * warm,
            0.1 + 0.5 * wet + 0.2 * cold,
            0.1 + 0.5 * cold,
        ],
        axis=1,
    ).astype(float)


@lru_cache(maxsize=1)
def day_states() -> np.ndarray:
    """The regime of each of the 1,461 days."""
    w = load_weather()
    return regimes(w["precipitation"], w["temp_max"])


def segments(batch: int = BATCH, days: slice = slice(None)) -> tuple[tuple[int, int], ...]:
    """The regime runs in steps: ((state, days x batch), ...), in date order; ``days`` picks
    a part of the 1,461 days (e.g. one year, as a validation split)."""
    s = day_states()[days]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    lengths = np.diff(np.r_[starts, len(s)])
    return tuple((int(s[a]), int(n) * int(batch)) for a, n in zip(starts, lengths))


def step_dates(horizon: int, batch: int = BATCH, days: slice = slice(None)) -> np.ndarray:
    """The date of each step (customer): step t is on day t // batch; shape (horizon,)."""
    dates = load_weather()["date"][days]
    return dates[np.minimum(np.arange(int(horizon)) // int(batch), len(dates) - 1)]


def check_scenario(sc) -> None:
    """Raise SpecError naming the field when a scenario on this preset is not the shop's:
    d, n_arms, sigma2 and batch_size are fixed (:data:`FIXED`), the segments are the data's."""
    for field, value in FIXED.items():
        got = getattr(sc, field)
        if got != value:
            raise SpecError(
                field,
                f"the {PRESET} preset fixes {field} = {value} "
                f"(one-hot products, 0/1 sales, {BATCH} customers a day); "
                f"got {got!r}; leave it out",
                got=got,
            )
    if tuple(sc.segments) != segments():
        raise SpecError(
            "segments",
            f"the {PRESET} preset's segments are the regimes of the "
            f"real days ({len(segments())} runs); they cannot be "
            f"edited (use a custom pattern instead)",
        )


class WeatherEnv:
    """The shop's world: ``next_round(n)`` returns one-hot arms (n, K, K), the sale
    probabilities ``expected`` (n, K) of the day's regime, zero ``noise``, the ``state`` and
    the 0/1 sales ``outcome`` (n, K), drawn as ``u < expected`` with u ~ U(0, 1) from ``rng``
    (one per step and arm, in order: the result does not depend on the chunk size).
    ``days``: a part of the 1,461 days (default all; see :func:`segments`)."""

    def __init__(self, batch: int = BATCH, rng=None, days: slice = slice(None)):
        self.batch = int(batch)
        self._rng = np.random.default_rng(rng)
        self._states = np.repeat(day_states()[days], self.batch)
        self.thetas = SALE_P.copy()  # theta_s = P[s]: the linear model is exact
        self.d, self.n_arms = D, K
        self.t = 0

    @property
    def horizon(self) -> int:
        """The number of steps (days)."""
        return len(self._states)

    def next_round(self, n: int) -> Round:
        """The next ``n`` steps (fewer at the end of the run)."""
        n = min(int(n), self.horizon - self.t)
        state = self._states[self.t : self.t + n]
        arms = np.broadcast_to(np.eye(K), (n, K, D)).copy()
        expected = SALE_P[state]
        outcome = (self._rng.random((n, K)) < expected).astype(float)
        self.t += n
        return Round(arms, expected, np.zeros(n), state, outcome)


def world(scenario, seed_index: int, rng) -> WeatherEnv:
    """The factory registered in ``runner.WORLDS[PRESET]``."""
    check_scenario(scenario)
    return WeatherEnv(BATCH, rng)
