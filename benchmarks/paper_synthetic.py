"""Reproduce the paper's synthetic experiment (section 5) and print what All-Season did.

For the paper's weighting ("batch") and fixed share, at batch sizes 1 and 10: the mean reward
over seeds beside the baselines, and per change point which bandit should take over, after
how many steps it held the top weight, and how many base bandits were spawned.

    python benchmarks/paper_synthetic.py [--seeds 5]
"""

from __future__ import annotations

import argparse

import pandas as pd

from allseason import api

BASELINES = [
    api.PolicySpec("lints", {}, "LinTS"),
    api.PolicySpec("sw-lints", {"tau": 10}, "SW-LinTS(tau=10)"),
    api.PolicySpec("sw-lints", {"tau": 100}, "SW-LinTS(tau=100)"),
    api.PolicySpec("d-lints", {"gamma": 0.9}, "D-LinTS(gamma=0.9)"),
    api.PolicySpec("d-lints", {"gamma": 0.99}, "D-LinTS(gamma=0.99)"),
    api.PolicySpec("d-lints", {"gamma": 0.999}, "D-LinTS(gamma=0.999)"),
    api.PolicySpec("random", {}, "Random"),
]


def contestants():
    out = []
    for weighting in ("batch", "fixed-share"):
        out.append(
            api.PolicySpec(
                "allseason-sw",
                {"tau": 10, "n_max": 5, "weighting": weighting},
                f"All-Season(SW, {weighting})",
            )
        )
        out.append(
            api.PolicySpec(
                "allseason-disc",
                {"gamma": 0.9, "n_max": 5, "weighting": weighting},
                f"All-Season(Disc, {weighting})",
            )
        )
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    pd.set_option("display.width", 160)
    for batch in (1, 10):
        scenario = api.Scenario.from_preset("paper-synthetic", batch_size=batch)
        race = api.Race(scenario, tuple(contestants() + BASELINES), args.seeds)
        result = api.run_race(race)
        table = pd.DataFrame.from_dict(result.summary(), orient="index")
        print(f"\n=== paper-synthetic, batch size {batch}, {args.seeds} seeds ===")
        print(
            table[["mean_reward", "std_reward", "cum_regret", "seconds"]]
            .sort_values("mean_reward", ascending=False)
            .round(4)
            .to_string()
        )
        for spec in contestants():
            if not spec.name.endswith("-sw"):
                continue
            rec = api.recall_table(result.traces[spec.label, 0], scenario.pattern)
            print(f"\n{spec.label}, seed 0, per change point:")
            print(rec.to_string(index=False))


if __name__ == "__main__":
    main()
