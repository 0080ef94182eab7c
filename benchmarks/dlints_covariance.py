"""D-LinTS's two covariances, each tuned by the default rule and raced on the default race's
scenarios: the numbers behind docs/d-lints-covariance.md.

For covariance in ("precision", "kim-tewari"): gamma is tuned by :func:`allseason.defaults.tune`
(the paper's grid gamma = 1 - 10^-k, k = 1, 3, 5, 10; mean reward on the validation scenario,
scenario seed 1000, 3 seeds), then D-LinTS with the tuned gamma plays the default race's
scenario (the paper's synthetic experiment) on scenario seeds 0-4, 5 seeds each. Printed:
mean reward per step with the 95% Student's t half-width over the 5 seeds, and the mean
cumulative regret; then the pooled 25 runs.

    python benchmarks/dlints_covariance.py [--seeds 0,1,2,3,4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from allseason import api, defaults
from allseason.stats import ci95_halfwidth

COVARIANCES = ("precision", "kim-tewari")


def measure(seeds=(0, 1, 2, 3, 4), n_seeds=defaults.DEFAULT_SEEDS) -> dict:
    """{covariance: {tuned, validation, per_seed: {seed: (mean, ci95, regret)}, pooled}}."""
    out = {}
    for cov in COVARIANCES:
        best, scores = defaults.tune("d-lints", fixed={"covariance": cov})
        per_seed, means, regrets = {}, [], []
        for s in seeds:
            # label "d-lints": the policy's seeds are those it has in the default race
            race = api.Race(api.Scenario(seed=s), (api.PolicySpec("d-lints", best),), n_seeds)
            result = api.run_race(race)
            summ = result.summary()["d-lints"]
            per_seed[s] = (summ["mean_reward"], summ["ci95"], summ["cum_regret"])
            means += [result.traces["d-lints", k].reward.mean() for k in range(n_seeds)]
            regrets += [result.traces["d-lints", k].regret.sum() for k in range(n_seeds)]
        m = np.array(means)
        out[cov] = dict(
            tuned=best,
            validation=[(p, sc) for p, sc in scores],
            per_seed=per_seed,
            pooled=(
                float(m.mean()),
                ci95_halfwidth(float(m.std(ddof=1)), len(m)),
                float(np.mean(regrets)),
            ),
        )
    return out


def table(res: dict) -> str:
    seeds = list(next(iter(res.values()))["per_seed"])
    head = (
        "| covariance | tuned γ | validation reward | "
        + " | ".join(f"seed {s}: reward ± t95, regret" for s in seeds)
        + " | all 25 runs: reward ± t95, regret |"
    )
    lines = [head, "|" + "---|" * (4 + len(seeds))]
    for cov, r in res.items():
        val = dict((json.dumps(p, sort_keys=True), sc) for p, sc in r["validation"])
        vbest = val[json.dumps(r["tuned"], sort_keys=True)]
        cells = [f"{m:.4f} ± {h:.4f}, {g:.0f}" for m, h, g in r["per_seed"].values()]
        m, h, g = r["pooled"]
        lines.append(
            f"| {cov} | {1 - r['tuned']['gamma']:.0e} off 1 ({r['tuned']['gamma']}) "
            f"| {vbest:.4f} | " + " | ".join(cells) + f" | {m:.4f} ± {h:.4f}, {g:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    res = measure(tuple(int(s) for s in args.seeds.split(",")))
    for cov, r in res.items():
        print(
            f"{cov}: validation (seed {defaults.VALIDATION_SEED}, "
            f"{defaults.VALIDATION_RUNS} seeds): "
            + ", ".join(f"γ={p['gamma']}: {sc:.4f}" for p, sc in r["validation"])
        )
    print(table(res))
    print(f"({time.perf_counter() - t0:.0f} s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    c: {**r, "per_seed": {str(k): v for k, v in r["per_seed"].items()}}
                    for c, r in res.items()
                },
                fh,
                indent=1,
            )


if __name__ == "__main__":
    main()
