"""Golden figures: a handful of figures, built from small hand-made tables, pinned by the
SHA-256 of their JSON, so a change to a figure (a trace, a colour, a hover text, a range)
fails here even when every property test still passes.

The tables are made here (fixed arrays and a seeded generator), not by the engine, and the
policy labels are unregistered ("A", "B": colours by a hash of the label), so only a change
in ``allseason.viz`` moves a hash. The hashes hold for the pinned Plotly (its JSON writer);
under another version the test is skipped.

Changed a figure on purpose? Look at it, then print the new hashes with
``python tests/viz/test_golden.py`` and paste them below.
"""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("plotly")

import plotly

from allseason import viz
from allseason.envs import Pattern
from allseason.viz import live, sweep

PLOTLY = "7.1.0"  # the version the hashes were computed with (requirements.txt)
GOLDEN = {
    "cumulative_regret_ci95": "689e2d5e47c86c44a7c8dc6b7066332d8669f1c36f0fa917ab877947e2517f8c",
    "cumulative_no_legend": "10f90785e4d0022f0b5ef554037aa839eaea584496dd84599e1036b5381bc9a0",
    "leaderboard": "ad38ec30ac9daaa220b74bc49ef24512fafd9db5843457371d2a963828a90875",
    "final_regret": "4f6f475c9bcdcd90ed9fb93e4feec5b59f11839104af5991a5b129f507520ed0",
    "reward_by_state": "85be9cf13f53d1c340737dba7fbca1dedc4c7ea05a734f49f13626f37bc77024",
    "weights_animation": "e898779749c890da7fe3fcb85e72bd8acc6454ff3cd7601d629fdbe021e73870",
    "top_weight": "21db0b53620ef2bd8e8707c84a671adba5986d668a3554778bb3a3a0c6784448",
    "weights_area": "59d14fea377e17e264b2f4454089d4868eee1d3caa95bfba80194df953e35fc8",
    "lifelines": "d35bbf5b0214db02d125278c540af39a5d0e98b4807eb6a6e225175a52673825",
    "recall": "28195ae14a926726e2f016a51b1c9c8129413a3ff01897d2912d1bc742f13487",
    "state_heatmap": "d92ed45150c1165e54f1de31e03c4a5d81f38a7b3187bca16b1152748c667c74",
    "posterior_animation": "363b74842b56160590dba76f8c65e5a3655cc4b9eff1dbda94deffe907e03af9",
    "pattern_timeline": "123b0dc20aa56b7affb397638d792f4bb306e2a595c5630f85d29df88c3168bb",
    "ribbon": "1b353e5805c4318f8739eee0e2dbff22c2de6e3fd61a647e9c9c5577cda4883a",
    "rate": "701abef74e7ae383581df0ae4f970602632b8fe989299173e00532a5face9155",
    "sweep": "de47db094eb14066e1d44e331935f7d613ff8c7630861c7ac9d395ca49a4df0b",
}


def _tables() -> dict:
    """Small tables shaped like the engine's (``to_frames()``, ``analysis``, a live frame)."""
    pattern = Pattern(((0, 300), (1, 200), (0, 250), (2, 250)))
    states = pattern.states()
    horizon = pattern.horizon
    rng = np.random.default_rng(2026)
    steps = []
    for label, skill in (("A", 0.6), ("B", 0.4)):
        for seed in (0, 1):
            best = 1.0 + 0.1 * states
            reward = best * skill + rng.normal(0, 0.3, horizon)
            steps.append(
                pd.DataFrame(
                    dict(
                        policy=label,
                        seed=seed,
                        step=np.arange(horizon),
                        state=states,
                        reward=reward,
                        best=best,
                        regret=best * (1 - skill) + rng.uniform(0, 0.01, horizon),
                    )
                )
            )
    steps = pd.concat(steps, ignore_index=True)
    summary = pd.DataFrame(
        dict(
            policy=["A", "B"],
            mean_reward=[0.71, 0.48],
            std_reward=[0.01, 0.03],
            ci95=[0.09, 0.27],
            mean_expected_reward=[0.70, 0.47],
            cum_regret=[310.0, 620.0],
            seconds=[0.5, 0.2],
        )
    )
    seeds = pd.DataFrame(
        dict(policy=["A", "A", "B", "B"], seed=[0, 1, 0, 1], cum_regret=[300.0, 320, 600, 640])
    )
    # an ensemble's weights after each batch of 10 steps: the shadow, bandit 1 all along,
    # bandit 2 from step 300 (the new state 1), bandit 3 from 750 (state 2) to its pruning
    rows = []
    for batch in range(horizon // 10):
        step = 10 * batch + 9
        alive = [0, 1] + ([2] if step >= 300 else []) + ([3] if 750 <= step < 900 else [])
        w = rng.dirichlet(np.ones(len(alive)))
        rows += [dict(batch=batch, step=step, bandit=b, weight=v) for b, v in zip(alive, w)]
    weights = pd.DataFrame(rows)
    events = pd.DataFrame(
        dict(
            step=[300, 750, 900],
            kind=["spawn", "spawn", "prune"],
            bandit=[2, 3, 3],
            other=[np.nan, np.nan, 1],
            value=[np.nan, np.nan, 0.42],
        )
    )
    recall = pd.DataFrame(
        dict(
            change_point=[1, 2, 3],
            step=[300, 500, 750],
            state=[1, 0, 2],
            kind=["new", "returning", "new"],
            right_bandit=[0, 1, 0],
            most_often_top=[2, 1, 3],
            share_top_right=[0.1, 0.8, 0.05],
            spawns=[1, 0, 1],
            steps_to_top=[12.0, 40.0, np.nan],
        )
    )
    heat = pd.DataFrame(
        [[0.1, 0.05, 0.2], [0.9, 0.15, 0.1], [0.0, 0.8, 0.0], [0.0, 0.0, 0.7]],
        index=[0, 1, 2, 3],
        columns=[0, 1, 2],
    )
    hist = []
    for k, step in enumerate((0, 250, 500, 999)):
        for b in (0, 1, 2):
            hist.append(
                dict(
                    step=step,
                    bandit=b,
                    state=int(states[step]),
                    mean_0=0.1 * b + 0.05 * k,
                    mean_1=-0.2 * b + 0.03 * k,
                    cov_00=1.0 / (k + 1),
                    cov_01=0.1 / (k + 1),
                    cov_11=0.5 / (k + 1),
                )
            )
    n = 600  # a live window
    frame = SimpleNamespace(
        labels=("A", "B"),
        steps=np.arange(n),
        state=states[:n],
        rate=np.vstack([np.linspace(0.2, 0.8, n), np.linspace(0.1, 0.5, n)]),
        t=n,
        featured="A",
        top_step=np.arange(9, n, 10),
        top_bandit=np.where(
            np.arange(9, n, 10) < 320, 1, np.where(np.arange(9, n, 10) < 330, 0, 2)
        ),
    )
    settings = pd.DataFrame(
        dict(
            scenario=["s, T=1000"] * 4,
            label=["A", "A", "A", "B"],
            setting=["tau=10", "tau=100", "tau=1000", "default"],
            n_seeds=[3, 3, 3, 3],
            mean_reward=[0.5, 0.6, 0.55, 0.4],
            mean_reward_std=[0.02, 0.03, 0.01, 0.05],
            **{"hp.tau": [10, 100, 1000, np.nan]},
        )
    )
    return dict(
        pattern=pattern,
        steps=steps,
        summary=summary,
        seeds=seeds,
        weights=weights,
        events=events,
        recall=recall,
        heat=heat,
        hist=pd.DataFrame(hist),
        thetas=np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -0.5]]),
        frame=frame,
        settings=settings,
    )


def figures() -> dict:
    """{name: figure} of the golden figures."""
    t = _tables()
    p = t["pattern"]
    return {
        "cumulative_regret_ci95": viz.cumulative_figure(t["steps"], p, "regret", 200, "ci95"),
        "cumulative_no_legend": viz.cumulative_figure(t["steps"], p, "reward", 100, legend=False),
        "leaderboard": viz.leaderboard_figure(t["summary"]),
        "final_regret": viz.final_regret_figure(t["seeds"]),
        "reward_by_state": viz.reward_by_state_figure(t["steps"]),
        "weights_animation": viz.weights_animation(t["weights"], p, 12, max_bandits=2),
        "top_weight": viz.top_weight_figure(t["weights"], p, max_points=60),
        "weights_area": viz.weights_area_figure(t["weights"], p, 50, max_bandits=2),
        "lifelines": viz.lifelines_figure(t["events"], t["weights"], p),
        "recall": viz.recall_figure(t["recall"]),
        "state_heatmap": viz.state_heatmap(t["heat"], max_rows=3),
        "posterior_animation": viz.posterior_animation(t["hist"], t["thetas"], 3, 12),
        "pattern_timeline": viz.pattern_timeline(p),
        "ribbon": live.ribbon_figure(t["frame"], window=500),
        "rate": live.rate_figure(t["frame"], window=500, rate_window=50, max_points=40),
        "sweep": sweep.sweep_figure(t["settings"]),
    }


def digests() -> dict[str, str]:
    return {k: hashlib.sha256(f.to_json().encode()).hexdigest() for k, f in figures().items()}


@pytest.mark.skipif(plotly.__version__ != PLOTLY, reason=f"hashes computed with plotly {PLOTLY}")
def test_the_golden_figures_are_unchanged_byte_for_byte():
    got = digests()
    changed = sorted(k for k in GOLDEN if got[k] != GOLDEN[k])
    assert not changed, (
        f"figures changed: {changed}; if on purpose, print the new hashes with "
        "`python tests/viz/test_golden.py`"
    )


if __name__ == "__main__":
    for name, digest in digests().items():
        print(f'    "{name}": "{digest}",')
