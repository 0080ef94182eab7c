"""A small tracked snapshot of one real-data race, so the app can show a ten-arm result on a
fresh clone without the data sets: MNIST digit recognition (ten arms, d = 440), the paper's
regular pattern, 30,000 steps, one seed, All-Season with carried weights beside All-Season with
the paper's printed rule and the baselines.

``python -m allseason.paper.mnist_snapshot`` recomputes it (about 15 s, needs ``make data``) and
writes
``mnist_snapshot.json`` next to this file; ``tests/sim/test_defaults.py`` recomputes it and
checks that it equals the tracked file, so it cannot drift from the code.

Hyperparameters: All-Season tau = 500, n_max = 5 (a point of the paper's grid); the baselines
the live-race defaults of :data:`allseason.paper.reproduce.LIVE_DEFAULTS`. They are not tuned on
this
data: the snapshot illustrates the weighting, it is not a row of the paper's tables.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PATH = Path(__file__).with_name("mnist_snapshot.json")
TABLE, PATTERN, N, SEED = "mnist-10arm", "regular", 30_000, 0
CURVE_EVERY = 500
CONTESTANTS: tuple[tuple[str, str, dict[str, object]], ...] = (  # (label, policy, params)
    ("allseason-sw", "allseason-sw", {"tau": 500, "n_max": 5}),
    ("allseason-sw-printed", "allseason-sw", {"tau": 500, "n_max": 5, "weighting": "batch"}),
    ("d-lints", "d-lints", {"gamma": 0.999}),
    ("sw-lints", "sw-lints", {"tau": 500}),
    ("lints", "lints", {}),
)
COMMAND = "python -m allseason.paper.mnist_snapshot"


def compute(n: int = N) -> dict:
    """Run the snapshot's race on the real data (raises the loader's error if missing)."""
    import numpy as np

    from . import reproduce

    policies: dict[str, dict] = {}
    out = {
        "table": TABLE,
        "pattern": PATTERN,
        "n": n,
        "seed": SEED,
        "command": COMMAND,
        "curve_every": CURVE_EVERY,
        "commit": _commit(),
        "change_points": reproduce.change_points(n)[PATTERN],
        "policies": policies,
    }
    for label, policy, params in CONTESTANTS:
        job = reproduce.Job(
            "snapshot", TABLE, PATTERN, policy, json.dumps(params, sort_keys=True), SEED, n
        )
        _, mean, _, cum = reproduce.run_job(job)
        steps = np.arange(1, len(cum) + 1) * reproduce.CURVE_EVERY
        keep = steps % CURVE_EVERY == 0
        policies[label] = {
            "policy": policy,
            "params": params,
            "mean_reward": round(float(mean), 6),
            "steps": steps[keep].tolist(),
            "mean_reward_so_far": [round(float(c / s), 6) for c, s in zip(cum[keep], steps[keep])],
        }
    return out


def load() -> dict:
    """The tracked snapshot (see the module docstring)."""
    return json.loads(PATH.read_text(encoding="utf-8"))


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=PATH.parent,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def main() -> int:
    """Recompute the tracked snapshot and write it; the exit code."""
    snap = compute()
    PATH.write_text(json.dumps(snap, indent=1) + "\n", encoding="utf-8")
    for label, p in snap["policies"].items():
        print(f"{label:<22} {p['mean_reward']:.4f}")
    print(f"written to {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
