"""The Seattle weather shop (preset ``seattle-weather``, allseason/envs/weather.py): every
default contestant, plus ``oracle-state`` and ``oracle-restart`` when they are registered,
over N seeds: mean reward (sales per customer), its 95% Student t interval over seeds, the
mean sale probability of the products shown (expected reward), and the share of the gap
closed = (contestant - best non-oracle baseline) / (oracle-state - best non-oracle baseline).
Then what the ensembles did (bandits created, top weight), the reward per regime, and, with
``--tune``, a tuning of the tau / gamma of All-Season and of the windowed baselines on 2012
alone (validation), reported on 2013-2015 against the default race's values.

    PYTHONPATH=$PWD python benchmarks/seattle_weather.py [--seeds 5] [--tune]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from allseason import api
from allseason.envs import weather
from allseason.stats import ci95_halfwidth

ORACLES = ("oracle-state", "oracle-restart")
BASELINES = ("lints", "sw-lints", "d-lints", "random", "bob", "denband")


def contestants(specs=None):
    """The default race's specs, plus the oracles that are registered."""
    specs = list(specs or api.default_specs())
    names = api.policy_names()
    have = {s.name for s in specs}  # the default race may carry them already
    specs += [
        api.PolicySpec(o, api.default_params(o)) for o in ORACLES if o in names and o not in have
    ]
    return tuple(specs)


def table(result, scenario) -> dict[str, dict]:
    """Per label: per-seed mean reward and expected reward, t interval, ensemble numbers."""
    out = {}
    n = result.race.n_seeds
    for spec in result.race.policies:
        traces = [result.traces[spec.label, k] for k in range(n)]
        r = np.array([t.reward[: t.n_done].mean() for t in traces])
        e = np.array([t.expected[: t.n_done].mean() for t in traces])
        row = dict(
            name=spec.name,
            reward=r.mean(),
            ci=float(ci95_halfwidth(r.std(ddof=1), n)) if n > 1 else float("nan"),
            expected=e.mean(),
            best=np.mean([t.best[: t.n_done].mean() for t in traces]),
        )
        if traces[0].batch_weights() is not None:
            ens = [api.ensemble_summary(t, scenario.pattern) for t in traces]
            row["created"] = np.mean([x["bandits_created"] for x in ens])
            row["top"] = np.mean([x["top_share"] for x in ens])
        states = np.concatenate([t.state[: t.n_done] for t in traces])
        exp = np.concatenate([t.expected[: t.n_done] for t in traces])
        row["per_regime"] = [exp[states == s].mean() for s in range(len(weather.REGIMES))]
        arms = np.concatenate([t.arm[: t.n_done] for t in traces])
        row["arm_share"] = np.bincount(arms, minlength=weather.K) / len(arms)
        if "created" in row:  # how well one bandit stands for one regime: the share of each
            # bandit's steps in its own most frequent regime, averaged over steps (purity)
            pur = []
            for t in traces:
                tab = api.state_table(t)  # rows bandit, columns state: shares of the state
                n_s = np.bincount(t.state[: t.n_done])[tab.columns.to_numpy()]
                counts = tab.to_numpy() * n_s[None, :]
                pur.append(counts.max(axis=1).sum() / counts.sum())
            row["purity"] = float(np.mean(pur))
        out[spec.label] = row
    base = [lab for lab, v in out.items() if v["name"] in BASELINES]
    best = max(base, key=lambda lab: out[lab]["reward"])
    oracle = next((lab for lab, v in out.items() if api.role(v["name"]).ceiling), None)
    for v in out.values():
        v["share"] = (
            float("nan")
            if oracle is None
            else (v["reward"] - out[best]["reward"]) / (out[oracle]["reward"] - out[best]["reward"])
        )
    return out, best


def print_table(rows, best, title):
    print(f"\n### {title}\n")
    print(
        "| contestant | mean reward (sales per customer) | 95% t interval | expected reward "
        "| share of the gap closed | bandits created | top weight > 0.9 |"
    )
    print("|---|---|---|---|---|---|---|")
    for lab, v in sorted(rows.items(), key=lambda kv: -kv[1]["reward"]):
        share = "n/a (no oracle-state)" if np.isnan(v["share"]) else f"{v['share']:+.2f}"
        ens = f"{v['created']:.1f} | {v['top']:.0%}" if "created" in v else "— | —"
        tag = " (best non-oracle baseline)" if lab == best else ""
        print(
            f"| {lab}{tag} | {v['reward']:.4f} | ±{v['ci']:.4f} | {v['expected']:.4f} | "
            f"{share} | {ens} |"
        )
    any_row = next(iter(rows.values()))
    print(
        f"\nbest product every step (knowing the day's regime): expected reward "
        f"{any_row['best']:.4f}"
    )
    print(
        "\nexpected reward per regime ("
        + ", ".join(weather.REGIMES)
        + "); best product: "
        + ", ".join(f"{weather.SALE_P[s].max():.2f}" for s in range(len(weather.REGIMES)))
    )
    for lab, v in sorted(rows.items(), key=lambda kv: -kv[1]["reward"]):
        print(f"  {lab:<36} " + "  ".join(f"{x:.3f}" for x in v["per_regime"]))
    print(
        "\nshare of customers shown each product (" + ", ".join(weather.PRODUCTS) + ")"
        "; ensembles: purity = share of a base bandit's steps in its own main regime"
    )
    for lab, v in sorted(rows.items(), key=lambda kv: -kv[1]["reward"]):
        pur = f"  purity {v['purity']:.2f}" if "purity" in v else ""
        print(f"  {lab:<36} " + "  ".join(f"{x:.2f}" for x in v["arm_share"]) + pur)


def split(first, last, batch=weather.BATCH):
    """A custom scenario and world on the days of the years first..last."""
    days = weather.year_days(first, last)
    sc = api.Scenario(
        segments=weather.segments(batch, days),
        preset="custom",
        **{k: v for k, v in weather.FIXED.items()},
    )

    def world(scenario, seed_index, rng):
        return weather.WeatherEnv(batch, rng, days)

    return sc, world


GRID = {
    "allseason-sw": [{"tau": t} for t in (5, 10, 20, 50, 100)],
    "allseason-disc": [{"gamma": g} for g in (0.8, 0.9, 0.95, 0.98, 0.99)],
    "sw-lints": [{"tau": t} for t in (10, 20, 50, 100, 200, 500, 1000, 2000)],
    "d-lints": [{"gamma": g} for g in (0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998)],
}


def tune(n_seeds):
    """Best grid point by mean reward on 2012 alone; then default vs tuned on 2013-2015."""
    sc, world = split(2012, 2012)
    chosen = {}
    print("\n### Tuning on 2012 alone (validation): mean reward per grid point\n")
    for name, grid in GRID.items():
        specs = tuple(
            api.PolicySpec(name, {**api.default_params(name), **g}, label=f"{name} {g}")
            for g in grid
        )
        res = api.run_race(api.Race(sc, specs, n_seeds), world=world).summary()
        scores = [res[s.label]["mean_reward"] for s in specs]
        i = int(np.argmax(scores))
        chosen[name] = grid[i]
        print(
            f"- {name}: "
            + ", ".join(f"{list(g.values())[0]}: {x:.4f}" for g, x in zip(grid, scores))
            + f" -> {grid[i]}"
        )
    test, tworld = split(2013, 2015)
    specs = []
    for spec in contestants():
        specs.append(spec)
        if spec.name in chosen:
            specs.append(
                api.PolicySpec(
                    spec.name,
                    {**dict(spec.params), **chosen[spec.name]},
                    label=f"{spec.name} tuned {chosen[spec.name]}",
                )
            )
    result = api.run_race(api.Race(test, tuple(specs), n_seeds), world=tworld)
    rows, best = table(result, test)
    print_table(
        rows,
        best,
        f"2013-2015 (test), {n_seeds} seeds: default race values and the values tuned on 2012",
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tune", action="store_true")
    args = ap.parse_args()
    sc = api.Scenario.from_preset(weather.PRESET)
    states = np.array([s for s, _ in sc.segments])
    print(
        f"seattle-weather: {sc.horizon:,} steps ({sc.horizon // weather.BATCH} days x "
        f"{weather.BATCH}), {len(sc.segments)} regime runs (mean "
        f"{sc.horizon / len(sc.segments) / weather.BATCH:.1f} days), days per regime "
        + ", ".join(
            f"{r} {int(sum(n for s, n in sc.segments if s == i)) // weather.BATCH}"
            for i, r in enumerate(weather.REGIMES)
        )
        + f"; regime changes {len(states) - 1}"
    )
    t0 = time.perf_counter()
    race = api.Race(sc, contestants(), args.seeds)
    result = api.run_race(race)
    rows, best = table(result, sc)
    print_table(
        rows,
        best,
        f"2012-2015, scenario seed {sc.seed}, {args.seeds} seeds (default race hyperparameters)",
    )
    print(f"\n({time.perf_counter() - t0:.1f} s)")
    if args.tune:
        tune(args.seeds)


if __name__ == "__main__":
    main()
