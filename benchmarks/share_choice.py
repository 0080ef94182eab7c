"""Read the share sweep (examples/sweep_share.toml) and print the table behind All-Season's
default weighting, with the rule's choice.

    python -m allseason sweep examples/sweep_share.toml --out results/share
    python benchmarks/share_choice.py results/share

Rule: a default must first behave like the paper's figure on the validation runs of the
paper's synthetic experiment (batches of 1): with both shadows, every run creates at most
MAX_CREATED base bandits and the top weight exceeds 0.9 in at least MIN_TOP of the batches on
average. Among the settings of carried weights that do, take the newborn's weight and the share
with the highest mean reward over every run of the sweep (both shadows, 4 presets, batches of 1
and 10, 5 validation scenario seeds, 3 seeds each); a share within TIE of the best is a tie,
broken towards the larger share (which forgets a stale bandit faster).

History, told because it matters: the first rule had no such constraint. It tied shares from
1e-3 to 1e-5 and took 1e-3, which creates up to 133 base bandits per run with the discounted
shadow on the paper's experiment, where the paper's figure shows about 16. The constraint was
added after that result was seen; the constraint's numbers are the issue's targets for the
default race.
"""

from __future__ import annotations

import sys

import numpy as np

from allseason import sweeps

TIE = 0.001
MAX_CREATED, MIN_TOP = 40, 0.9
PAPER = "paper-synthetic B=1"


def table(folder):
    runs = sweeps.load_runs(folder)
    runs["variant"] = np.where(
        runs["label"].str.contains("printed"), "printed rule", runs["hp.spawn"].fillna("")
    )
    runs["share"] = runs["hp.share"]
    runs["pattern"] = (
        runs["scenario"].str.split(",").str[0] + " B=" + runs["scenario"].str.extract(r"B=(\d+)")[0]
    )
    rows = []
    for (variant, share), g in runs.groupby(["variant", "share"], dropna=False, sort=False):
        by = g.groupby("pattern")["mean_reward"].mean()
        paper = g[g["pattern"] == PAPER]
        top = paper.groupby("policy")["top_share"].mean()
        rows.append(
            dict(
                variant=variant,
                share=share,
                mean_reward=g["mean_reward"].mean(),
                **{p: by[p] for p in sorted(by.index)},
                created_mean=g["bandits_created"].mean(),
                created_max=int(g["bandits_created"].max()),
                top_share=g["top_share"].mean(),
                top_share_min=g["top_share"].min(),
                paper_ok=bool(len(paper))
                and paper["bandits_created"].max() <= MAX_CREATED
                and top.min() >= MIN_TOP,
                n_runs=len(g),
            )
        )
    import pandas as pd

    return pd.DataFrame(rows)


def choose(t):
    carried = t[(t["variant"] != "printed rule") & t["paper_ok"]]
    best = carried["mean_reward"].max()
    ties = carried[carried["mean_reward"] >= best - TIE]
    pick = ties.sort_values("share", ascending=False).iloc[0]
    return pick["variant"], float(pick["share"])


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    t = table(argv[0])
    t = t.sort_values(["variant", "share"], ascending=[True, False], na_position="last")
    pats = [c for c in t.columns if " B=" in c]
    head = [
        "weights",
        "share",
        "mean reward",
        *pats,
        "bandits created (mean / max)",
        "top weight > 0.9 (mean / min)",
        "paper-like",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for _, r in t.iterrows():
        name = (
            "the paper's printed rule"
            if r["variant"] == "printed rule"
            else f"fixed share, {r['variant']}"
        )
        share = "" if r["variant"] == "printed rule" else f"{r['share']:g}"
        print(
            f"| {name} | {share} | {r['mean_reward']:.4f} | "
            + " | ".join(f"{r[p]:.3f}" for p in pats)
            + f" | {r['created_mean']:.0f} / {r['created_max']} | "
            f"{r['top_share']:.1%} / {r['top_share_min']:.1%} | "
            f"{'yes' if r['paper_ok'] else 'no'} |"
        )
    variant, share = choose(t)
    print(f"\nchosen: spawn={variant!r}, share={share:g} ({int(t['n_runs'].iloc[0])} runs per row)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
