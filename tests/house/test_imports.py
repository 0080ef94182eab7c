"""What a fresh process pays to import: the engine's intervals never import ``scipy.stats``.

Importing ``scipy.stats`` costs a Python process about 1 CPU-second (it parses the docstrings
of every distribution). The engine needs two of its functions, the t and normal quantiles and
the normal CDF, which are ``scipy.special``'s ``stdtrit``, ``ndtri`` and ``ndtr``: the same
numbers, bit for bit (checked here). Every CLI run, pool worker and app server once paid that
second for a t quantile; a fresh Python here computes each interval the engine draws and
must not have imported it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    from allseason import stats
    from allseason.logs.deployed_tables import reward_windows
    from allseason.worldmap.screen import welch

    stats.t_quantile(np.array([2, 5, 30]))
    reward_windows(np.linspace(0.1, 0.9, 200), n_windows=10)
    welch([0.1, 0.4, 0.3], [0.2, 0.1, 0.0, 0.5])
    print("scipy.stats" in sys.modules)
    """
)


def test_the_intervals_do_not_import_scipy_stats():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_the_special_functions_are_scipy_stats_own_numbers():
    from scipy.special import ndtr, stdtrit
    from scipy.stats import norm, t

    from allseason import stats

    n = np.arange(2, 2001)
    assert np.array_equal(stats.t_quantile(n), t.ppf(0.975, n - 1))
    df = np.random.default_rng(0).uniform(1.0, 400.0, 5000)  # Welch's degrees of freedom
    assert np.array_equal(stdtrit(df, 0.975), t.ppf(0.975, df))
    x = np.linspace(-8.0, 8.0, 4001)
    assert np.array_equal(ndtr(x), norm.cdf(x))
