"""Every limit, once: what one request may ask of the engine and of the app, and the bounds of
the numbers a user may type, each with the reason for it.

The code reads these names; the messages quote them; ``docs/security.md`` states them and
``tests/test_limits.py`` fails when the page and these numbers disagree (or when
``.streamlit/config.toml``'s upload cap is not the largest upload a page states).

    >>> LIMITS["n_policies"], APP_LIMITS["n_policies"]
    (12, 11)
    >>> NOISE_RANGE
    (1e-06, 1000000.0)
"""

from __future__ import annotations


class Limits(dict):
    """Bounds on what one request may ask, by name (a dict: ``LIMITS["horizon"]``).

    Checked by :func:`check_limits`, :meth:`Race.checked` and ``parse_scenario(limits=...)``.

    Parameters
    ----------
    where
        Ends the messages that quote them (``" in this app"``).
    hint
        What to do instead, said after a bound on the size of a run.
    **bounds
        ``horizon``, ``d``, ``n_arms``, ``n_states``, ``n_segments``, ``n_seeds``,
        ``batch_size``, ``n_policies``; ``budget`` (horizon x seeds x policies) if any."""

    def __init__(self, where: str = "", hint: str = "", **bounds: int):
        super().__init__(**bounds)
        self.where, self.hint = where, hint


# What one request may ask of the engine (the CLI, the API): bounds that keep one request
# from taking a machine down.
LIMITS = Limits(
    horizon=200_000,
    d=500,
    n_arms=100,
    n_states=50,
    n_segments=2_000,
    n_seeds=50,
    batch_size=10_000,
    n_policies=12,
)

# What one session of the app may ask: tighter than LIMITS (budget: horizon x seeds x
# policies).
APP_LIMITS = Limits(
    " in this app",
    "use the Python API for larger runs",
    horizon=50_000,
    n_seeds=10,
    n_policies=11,
    d=20,
    n_arms=50,
    n_states=12,
    n_segments=500,
    batch_size=1_000,
    budget=1_000_000,
)

# The largest text (a scenario or race file, an upload, a link) parse_scenario reads: 1 MB.
MAX_INPUT_BYTES = 1_000_000


# "Your deployed bandit" (allseason/logs/deployed.py): each uploaded file (decisions.csv,
# batches.jsonl, a state file) is at most the size of a Your data upload, so the server's
# upload cap (.streamlit/config.toml) stays the same; a folder the server is started with is
# the operator's own and is read whole, but only the last `rows` decisions are kept (a
# decision takes 56 bytes in memory: 56 MB) and each refresh reads at most `refresh_bytes`
# new bytes per file (the rest comes at the next refresh).
DEPLOYED_LIMITS = dict(
    upload_bytes=20_000_000, rows=1_000_000, refresh_bytes=256_000_000, refresh_seconds=5
)


def upload_cap_mb(n_bytes: int) -> int:
    """The ``max_upload_size`` (MB) of an uploader whose page reads at most ``n_bytes``: one
    MB more, so that a file just over the page's limit reaches the page's own check and
    message. (Streamlit's browser side counts a MB as 10**6 bytes and stops larger files
    with its own words; its server counts MiB and answers a larger request with HTTP 413,
    a bare red "!": ``server.maxUploadSize`` is the largest of these caps.)

    Parameters
    ----------
    n_bytes : int
        The largest file the page reads.
    """
    return n_bytes // 1_000_000 + 1


# --- the bounds of hyperparameters and of the scenario's noise ------------------------------
# A window (tau, max_idle) longer than the longest race sees the whole race; the kernels
# keep tau x d floats for it (200,000 x 20 x 8 B = 32 MB at the app's largest d), so 10**12
# asked for 36 TiB.
MAX_WINDOW = LIMITS["horizon"]
# All-Season keeps n_max + 2 posteriors (3 d x d matrices each) and a pairwise KL table of
# (n_max + 2)^2 x blocks; at n_max = 100 and the app's d = 20 that is 7 MB, at the engine's
# d = 500 under 650 MB. 30,000 added 1.1 GB to a 2,000-step race; 10**6 asked for 7.28 TiB.
# The paper's runs keep about 16.
MAX_BANDITS = 100
# sigma2 (noise variance) and lam (prior precision) divide and are square-rooted in every
# update: below about 1e-300 1 / x overflows and the kernels divided by zero (1e-320 gave a
# ZeroDivisionError). The range is the one tests/test_numerical_extremes.py checks to stay
# finite (the precision grows to horizon / sigma2 = 2e11 over lam, within float64's 1e16).
NOISE_RANGE = (1e-6, 1e6)
PRIOR_RANGE = (1e-6, 1e6)
# Bounds on norms and slacks (BoB's S and L, DenBand's Delta_L): L = 1e300 overflowed
# math.exp; 1e-6 .. 1e6 is far from both ends of float64 once squared and summed.
SCALE_RANGE = (1e-6, 1e6)
# One array of an agent's state file (allseason/agent/statefile.py) holds at most 2**26
# elements (512 MB of float64); the largest a legitimate agent writes is All-Season's
# MAX_BANDITS + 2 posteriors at the engine's d = 500, 102 x 500 x 500 = 25.5 million. A
# hostile manifest asking for 10**9 elements is refused before anything is allocated.
MAX_STATE_ELEMENTS = 2**26

__all__ = [
    "Limits",
    "LIMITS",
    "APP_LIMITS",
    "MAX_INPUT_BYTES",
    "upload_cap_mb",
    "DEPLOYED_LIMITS",
    "MAX_WINDOW",
    "MAX_BANDITS",
    "NOISE_RANGE",
    "PRIOR_RANGE",
    "SCALE_RANGE",
    "MAX_STATE_ELEMENTS",
]
