"""Section 6's LinTS convergence figure, reproduced: the reward per batch of LinTS on
stationary MNIST, and the number of observations it needs to learn.

The paper (section 6, Datasets): "the convergence time of the linTS on the MNIST digit
recognition task is of about 2000 observations (see Figure fig:lints_LT)", whose caption
reads "LinTS average reward per batch in the MNIST digit recognition task. Each batch
contains 10 observations." The figure itself is missing from the source we have.

Setting (the paper's, through :func:`allseason.envs.classification.paper_setup`): the
ten-arm digit task (arms e_k (x) c_t, d = 10 x 44), the first :data:`N` = 30,000 MNIST
training images in order, unit-norm PCA contexts, batches of 10, lam = 1 and sigma2 = 0.25
(:data:`allseason.paper.reproduce.LAM`, :data:`~allseason.paper.reproduce.SIGMA2`). Stationary: one
state only, the identity task (arm k is right for digit k) for the whole run. The seeds
drive LinTS's own sampling (the data order is fixed, as in the paper).

"Learnt", our definition (the paper gives none): the plateau of a run is its mean reward
over the last third (steps 20,001-30,000); the run has learnt at the first step t where the
mean reward over the trailing window of :data:`WINDOW` = 500 observations (50 batches),
ending at t, reaches :data:`LEVEL` = 95% of the plateau. Reported per seed, with the median.

``python -m allseason.paper.convergence`` recomputes the tracked snapshot ``convergence.json``
(about a minute, needs ``make data``); ``tests/paper/test_convergence.py`` recomputes a seed and
checks it equals the tracked numbers, so they cannot drift.
"""

from __future__ import annotations

import json
import sys
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..envs.classification import paper_setup
from ..envs.patterns import Pattern
from ..policies import make_policy
from ..sim.runner import play

PATH = Path(__file__).with_name("convergence.json")
COMMAND = "python -m allseason.paper.convergence"
N = 30_000
SEEDS = 5
WINDOW = 500  # observations in the trailing mean that decides "learnt"
LEVEL = 0.95  # of the plateau
PLATEAU_FROM = 20_000  # the plateau: mean reward over steps PLATEAU_FROM+1 .. N
CURVE_EVERY = 10  # batches between stored points of the mean curve
PAPER_CLAIM = 2_000
PAPER_QUOTE = (
    "Each stationary period lasts at least for 600 observations and the "
    "convergence time of the linTS on the MNIST digit recognition task is of "
    "about 2000 observations (see Figure [LinTS average reward per batch in the "
    "MNIST digit recognition task. Each batch contains 10 observations.])"
)
ROOT_SEED = 20_201_102


def stationary_setup(n: int = N, dataset: str = "mnist"):
    """The paper's ten-arm setup on the first n images with one state (the identity task)."""
    setup = paper_setup(dataset, "10arm", "regular", n)
    return replace(setup, pattern=Pattern(((0, n),)), pattern_name="stationary")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(
        np.random.SeedSequence(ROOT_SEED, spawn_key=(int(seed), zlib.crc32(b"convergence")))
    )


def batch_rewards(seed: int, n: int = N, setup=None) -> np.ndarray:
    """LinTS's mean reward in each batch of 10 (shape (n // 10,)) on stationary MNIST."""
    from .reproduce import LAM, SIGMA2

    setup = setup or stationary_setup(n)
    policy = make_policy("lints", setup.d, rng=_rng(seed), lam=LAM, sigma2=SIGMA2)
    trace = play(setup.env(), policy, setup.batch_ends(), label="lints", seed_index=seed)
    b = setup.batch_size
    return trace.reward[: len(trace.reward) // b * b].reshape(-1, b).mean(axis=1)


def trailing_mean(per_batch: np.ndarray, window_batches: int) -> np.ndarray:
    """Mean over the trailing window (fewer batches at the start); same shape."""
    c = np.concatenate([[0.0], np.cumsum(per_batch)])
    i = np.arange(1, len(per_batch) + 1)
    lo = np.maximum(i - window_batches, 0)
    return (c[i] - c[lo]) / (i - lo)


def learnt_at(
    per_batch: np.ndarray,
    batch_size: int = 10,
    window: int = WINDOW,
    level: float = LEVEL,
    plateau_from: int = PLATEAU_FROM,
) -> tuple[int, float]:
    """(observations to learn, plateau): the first step t (a batch end) whose trailing mean
    over ``window`` observations (full windows only) reaches ``level`` x the plateau, the
    mean reward after step ``plateau_from``. -1 if never."""
    wb = window // batch_size
    plateau = float(per_batch[plateau_from // batch_size :].mean())
    roll = trailing_mean(per_batch, wb)
    ok = np.flatnonzero((roll >= level * plateau) & (np.arange(len(roll)) >= wb - 1))
    return (int(ok[0] + 1) * batch_size if len(ok) else -1), plateau


def compute(n: int = N, seeds: int = SEEDS) -> dict:
    """Run the seeds and summarise them (raises DataUnavailable if MNIST is missing)."""
    setup = stationary_setup(n)
    runs = np.array([batch_rewards(s, n, setup) for s in range(seeds)])
    learnt = [learnt_at(r, setup.batch_size) for r in runs]
    mean = runs.mean(axis=0)
    k = CURVE_EVERY
    return {
        "command": COMMAND,
        "dataset": "mnist",
        "task": "ten-arm digits, one state",
        "n": n,
        "seeds": seeds,
        "batch_size": setup.batch_size,
        "d": setup.d,
        "window": WINDOW,
        "level": LEVEL,
        "plateau_from": PLATEAU_FROM,
        "paper_claim": PAPER_CLAIM,
        "learnt_at": [a for a, _ in learnt],
        "plateau": [round(p, 6) for _, p in learnt],
        "median_learnt_at": float(np.median([a for a, _ in learnt])),
        "learnt_at_90": [learnt_at(r, setup.batch_size, level=0.90)[0] for r in runs],
        "curve_every_batches": k,
        # the mean over seeds of the reward per batch, averaged over k batches
        "curve_steps": (np.arange(1, len(mean) // k + 1) * k * setup.batch_size).tolist(),
        "curve": [
            round(float(v), 4) for v in mean[: len(mean) // k * k].reshape(-1, k).mean(axis=1)
        ],
        "first_batches": [round(float(v), 4) for v in mean[:50]],
    }


def load() -> dict:
    """The tracked snapshot."""
    return json.loads(PATH.read_text(encoding="utf-8"))


def main() -> int:
    """Recompute the tracked snapshot and write it; the exit code."""
    snap = compute()
    PATH.write_text(json.dumps(snap, separators=(",", ":")) + "\n", encoding="utf-8")
    print(
        f"learnt at {snap['learnt_at']} (median {snap['median_learnt_at']:.0f}); plateau "
        f"{snap['plateau']}; written to {PATH}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
