"""The oracles in the default race: mean reward ± 95% Student's t interval of every
contestant and oracle, and the share of the gap closed, per scenario seed and overall
(docs/oracles.md; issue 20).

    python benchmarks/oracle_gap.py [--seeds 0,1,2,3,4] [--runs 5]

Each scenario seed s is the default race on ``Scenario(seed=s)`` (the paper's synthetic
experiment: other true parameters and arms per s), ``--runs`` seeds each (the default race's
5). Per scenario seed: the mean over its runs ± the 95% t interval (t.ppf(0.975, n − 1) ·
std / √n, n runs). Overall: the n = seeds × runs runs pooled (they are independent), mean ±
t interval over them. Share of the gap closed: (m − b) / (o − b) with m the contestant's mean
reward, b the best baseline's (neither All-Season nor an oracle), o oracle-state's, all means
over the same runs (``RaceResult.summary()["gap_closed"]``; overall: from the pooled means).
Last, paired differences (every contestant of a run sees the same arms and noise) of
All-Season against the oracles and SW-LinTS, mean ± t interval over the pooled runs.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from allseason import api
from allseason.sim.trace import gap_closed
from allseason.stats import ci95_halfwidth
from allseason.viz.style import policy_name


def per_run(result) -> dict[str, np.ndarray]:
    """Mean reward per step of every run, per label."""
    return {
        lab: np.array([result.traces[lab, k].reward.mean() for k in range(result.race.n_seeds)])
        for lab in result.labels
    }


def fmt(x: np.ndarray) -> str:
    n = len(x)
    half = ci95_halfwidth(float(x.std(ddof=1)), n) if n > 1 else 0.0
    return f"{x.mean():.4f} ± {half:.4f}"


def share(v: float) -> str:
    return "—" if math.isnan(v) else f"{v:.1%}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2,3,4", help="scenario seeds")
    ap.add_argument("--runs", type=int, default=api.DEFAULT_SEEDS, help="seeds per race")
    args = ap.parse_args()
    api.warm_up()
    scenario_seeds = [int(s) for s in args.seeds.split(",")]
    pooled: dict[str, list] = {}
    per_seed = []
    t0 = time.perf_counter()
    for s in scenario_seeds:
        result = api.run_race(api.default_race(api.Scenario(seed=s), args.runs))
        runs = per_run(result)
        for lab, x in runs.items():
            pooled.setdefault(lab, []).append(x)
        per_seed.append((s, runs, result.summary(), result))
    seconds = time.perf_counter() - t0
    labels = list(pooled)
    refs = set(per_seed[0][3].references())
    baselines = per_seed[0][3].baselines()
    order = [lab for lab in labels if lab not in refs] + [lab for lab in labels if lab in refs]

    print(
        f"Default race with the oracles, scenario seeds {args.seeds}, {args.runs} runs each "
        f"({seconds:.1f} s)\n"
    )
    head = (
        "| policy | "
        + " | ".join(f"seed {s}" for s, *_ in per_seed)
        + f" | all {len(per_seed) * args.runs} runs |"
    )
    print("Mean reward per step ± 95% Student's t interval over the runs\n")
    print(head)
    print("|---" * (len(per_seed) + 2) + "|")
    for lab in order:
        cells = [fmt(runs[lab]) for _, runs, _, _ in per_seed]
        name = policy_name(lab) + (" (oracle)" if lab in refs else "")
        print(f"| {name} | " + " | ".join(cells) + f" | {fmt(np.concatenate(pooled[lab]))} |")
    overall = gap_closed(
        {lab: float(np.concatenate(x).mean()) for lab, x in pooled.items()},
        baselines,
        "oracle-state",
        refs,
    )
    print("\nShare of the gap closed: (m − best baseline) / (oracle-state − best baseline)\n")
    print("| | " + " | ".join(f"seed {s}" for s, *_ in per_seed) + " | all runs |")
    print("|---" * (len(per_seed) + 2) + "|")
    for lab in [lab for lab in order if lab not in refs]:
        cells = [share(summ[lab]["gap_closed"]) for _, _, summ, _ in per_seed]
        print(f"| {policy_name(lab)} | " + " | ".join(cells) + f" | {share(overall[lab])} |")
    for lab in [lab for lab in order if lab in refs and lab != "oracle-state"]:
        # a reference has no share in the summary (NaN); the same formula, for comparison
        cells = []
        for _, _, summ, _ in per_seed:
            b = max(summ[x]["mean_reward"] for x in baselines)
            cells.append(
                share((summ[lab]["mean_reward"] - b) / (summ["oracle-state"]["mean_reward"] - b))
            )
        pm = {x: float(np.concatenate(v).mean()) for x, v in pooled.items()}
        b = max(pm[x] for x in baselines)
        print(
            f"| *{policy_name(lab)} (oracle, for comparison)* | "
            + " | ".join(cells)
            + f" | {share((pm[lab] - b) / (pm['oracle-state'] - b))} |"
        )
    best = []
    for _, _, summ, _ in per_seed:
        b = max(baselines, key=lambda lab: summ[lab]["mean_reward"])
        best.append(policy_name(b))
    print(
        "| *best baseline* | "
        + " | ".join(best)
        + " | "
        + policy_name(max(baselines, key=lambda lab: np.concatenate(pooled[lab]).mean()))
        + " |"
    )

    print(
        "\nPaired differences of mean reward per step (same arms and noise in every run), "
        f"mean ± 95% t over all {len(per_seed) * args.runs} runs\n"
    )
    others = [lab for lab in ("oracle-state", "oracle-restart", "sw-lints") if lab in pooled]
    print("| | " + " | ".join(f"− {policy_name(o)}" for o in others) + " |")
    print("|---" * (len(others) + 1) + "|")
    for lab in ("allseason-sw", "allseason-disc"):
        if lab in pooled:
            diffs = [np.concatenate(pooled[lab]) - np.concatenate(pooled[o]) for o in others]
            print(f"| {policy_name(lab)} | " + " | ".join(fmt(x) for x in diffs) + " |")


if __name__ == "__main__":
    main()
