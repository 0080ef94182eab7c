"""The default race (``python -m allseason run`` with no flags) on scenario seeds 0-4: the
numbers behind the docs' "Section 5: the default race" table (docs/reproduction-synthetic.md) and
the checks of tests/sim/test_defaults.py.

    python benchmarks/default_race.py [--seeds 0,1,2,3,4]
"""

from __future__ import annotations

import argparse

from allseason import api


def rows(scenario_seed: int):
    race = api.default_race(api.Scenario(seed=scenario_seed))
    result = api.run_race(race)
    summary = result.summary()
    out = {}
    for label, s in summary.items():
        traces = [result.traces[label, k] for k in range(race.n_seeds)]
        ens = (
            [api.ensemble_summary(t, race.scenario.pattern) for t in traces]
            if traces[0].batch_weights() is not None
            else None
        )
        out[label] = dict(
            mean_reward=s["mean_reward"],
            regret=s["cum_regret"],
            created_max=max(e["bandits_created"] for e in ens) if ens else None,
            top_share_min=min(e["top_share"] for e in ens) if ens else None,
            top_share=sum(e["top_share"] for e in ens) / len(ens) if ens else None,
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2,3,4")
    args = ap.parse_args()
    print(
        "| scenario seed | first | its reward | its regret | best baseline (regret) | "
        "ratio | bandits created (max per run) | top weight > 0.9 (all runs; worst run) | "
        "printed rule: reward, bandits, top > 0.9 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for seed in (int(s) for s in args.seeds.split(",")):
        r = rows(seed)
        refs = set(api.REFERENCES)  # the oracles: references, ranked apart (docs/oracles.md)
        first = max((k for k in r if k not in refs), key=lambda k: r[k]["mean_reward"])
        base = {k: v for k, v in r.items() if api.role(k).family != "allseason" and k not in refs}
        best = min(base, key=lambda k: base[k]["regret"])
        f, p = r[first], r["allseason-sw-printed"]
        print(
            f"| {seed} | {first} | {f['mean_reward']:.4f} | {f['regret']:.0f} | {best} "
            f"({base[best]['regret']:.0f}) | {f['regret'] / base[best]['regret']:.2f} | "
            f"{f['created_max']} | {f['top_share']:.1%}; {f['top_share_min']:.1%} | "
            f"{p['mean_reward']:.3f}, {p['created_max']}, {p['top_share']:.1%} |"
        )


if __name__ == "__main__":
    main()
