"""How fast "Your deployed bandit" reads and draws a long decision log (issue 32).

A synthetic deployment in the decision log's columns (allseason/logs/deployed.py): a seasonal
world where the top bandit follows the season, rewards 0/1, propensities from a softmax,
spawns and prunings at the season changes. It times, each ``--repeat`` times:

- ``read``: decisions.csv and batches.jsonl parsed from the start (the page's first open);
- ``tables``: the tables the page draws from (tops, recalls, windows, propensities, bandits);
- ``figures``: the four figures built and serialised to JSON (what goes to the browser);
- ``refresh``: 1,000 decisions appended, then read from the kept offsets (the page's
  refresh while the log grows).

    python benchmarks/deployed_page.py --decisions 1000000 --batch-size 1
    python benchmarks/deployed_page.py --decisions 1000000 --batch-size 10

Timings are wall-clock and CPU seconds on a shared machine: repeat, and read the minimum.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def write_fake_log(
    folder, n_decisions: int, batch_size: int = 1, n_arms: int = 5, seed: int = 0,
    season: int = 1000, binary: bool = True, start: int = 0,
):  # fmt: skip
    """A synthetic deployment in the decision log's columns, appended to ``folder``
    (``decisions.csv``, ``batches.jsonl``): 4 seasons that come back, a bandit per season
    (ids 1.. in order of first appearance), the shadow (0) on top after each change."""
    rng = np.random.default_rng(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    t = np.arange(start, start + n_decisions)
    state = (t // season) % 4
    logits = rng.standard_normal((n_decisions, n_arms)) + 2.0 * (
        np.arange(n_arms)[None, :] == (state % n_arms)[:, None]
    )
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    arm = (p.cumsum(1) > rng.random(n_decisions)[:, None]).argmax(1)
    prop = p[np.arange(n_decisions), arm]
    mean = np.where(arm == state % n_arms, 0.6, 0.2)
    reward = (rng.random(n_decisions) < mean).astype(float) if binary else mean + rng.normal(
        0, 0.3, n_decisions)  # fmt: skip
    version = t // batch_size
    into = t % season
    bandit = np.where(into < season // 10, 0, state + 1)
    new = not (folder / "decisions.csv").exists()
    df = pd.DataFrame(
        {
            "timestamp": 1.7e9 + t * 0.5,
            "event_id": np.char.add("e", t.astype(str)),
            "arm": np.char.add("arm", arm.astype(str)),
            "reward": reward,
            "propensity": prop.round(6),
            "model_version": version,
            "bandit": bandit,
        }
    )
    df.to_csv(folder / "decisions.csv", mode="a", header=new, index=False)
    lines = []
    ends = np.arange(start + batch_size - 1, start + n_decisions, batch_size)
    layouts: dict[tuple, str] = {}  # (ids, top) -> the ids and weights text
    for end in ends.tolist():
        s = (end // season) % 4
        into = end % season
        n_ids = 1 + min(4, end // season + 1)
        top = 0 if into < season // 10 else s + 1
        if (n_ids, top) not in layouts:
            ids = list(range(n_ids))
            w = np.full(n_ids, 0.02)
            if top < n_ids:
                w[top] = 1.0
            layouts[n_ids, top] = json.dumps(
                {"ids": ids, "weights": (w / w.sum()).round(6).tolist()}
            )[1:-1]
        events = "[]"
        if into == season // 10 and end >= season:
            b = 5 + end // season
            spawn = {"kind": "spawn", "bandit": b, "other": 0, "value": 0.0}
            prune = {"kind": "prune", "bandit": b, "other": s + 1, "value": 0.5}
            events = json.dumps([spawn, prune])
        lines.append(
            f'{{"version": {end // batch_size + 1}, "time": {1.7e9 + end * 0.5}, '
            f'"decisions": {end + 1}, "learned": {end + 1}, {layouts[n_ids, top]}, '
            f'"events": {events}}}'
        )
    with open(folder / "batches.jsonl", "a") as f:
        f.write("\n".join(lines) + ("\n" if lines else ""))
    return folder


def _clock():
    return time.perf_counter(), time.process_time()


def _since(t0) -> tuple[float, float]:
    return time.perf_counter() - t0[0], time.process_time() - t0[1]


def timed_draw(folder) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds of each stage of the page on the log in ``folder``."""
    import plotly.io as pio

    from allseason import api
    from allseason.viz import deployed as vdep

    out = {}
    t = _clock()
    dep = api.Deployment()
    dep.refresh(folder)
    out["read"] = _since(t)
    t = _clock()
    views = dep.views()
    bins = vdep.propensity_bins(dep.decisions.columns()["propensity"])
    out["tables"] = _since(t)
    t = _clock()
    figs = [
        vdep.deployment_figure(views["tops"], views["events"], views["recalls"]),
        vdep.reward_figure(views["windows"]),
        vdep.propensity_figure(bins, dep.arms, views["propensity"]["min"]),
    ]
    size = sum(len(pio.to_json(f, validate=False)) for f in figs)
    out["figures"] = _since(t)
    n0 = dep.decisions.n_rows
    write_fake_log(folder, 1000, start=n0, seed=1)
    t = _clock()
    dep.refresh(folder)
    dep.views()
    out["refresh"] = _since(t)
    print(f"  {dep.decisions.n_rows:,} decisions, {dep.batches.n_lines:,} batch lines; "
          f"figures' JSON {size / 1e3:.0f} kB")  # fmt: skip
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decisions", type=int, default=1_000_000)
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--folder", help="an existing log to read (a copy is timed; default: write one)"
    )
    args = ap.parse_args(argv)
    import shutil

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        if args.folder:
            for name in ("decisions.csv", "batches.jsonl"):
                shutil.copy(Path(args.folder) / name, Path(tmp) / name)
        else:
            write_fake_log(tmp, args.decisions, args.batch_size)
        sizes = {p.name: f"{p.stat().st_size / 1e6:.0f} MB" for p in Path(tmp).iterdir()}
        print(f"log ready in {time.perf_counter() - t0:.1f} s: {sizes}")
        for r in range(args.repeat):
            times = timed_draw(tmp)
            print(f"repeat {r}: " + ", ".join(f"{k} {w:.2f} s (CPU {c:.2f})"
                                               for k, (w, c) in times.items()))  # fmt: skip
            for name in ("decisions.csv", "batches.jsonl"):  # back to the log as it was
                if args.folder:
                    shutil.copy(Path(args.folder) / name, Path(tmp) / name)


if __name__ == "__main__":
    main()
