"""A fingerprint of the default race: sha256 over every trace's columns, events and weight
history, and the summary table, for `python benchmarks/race_hash.py [--horizon N]`.

Used to show that a change of layout changes no decision: run it before and after, compare the
two lines (docs/where-to-change-what.md)."""

import argparse
import hashlib

import numpy as np

from allseason import api


def _feed(h, obj) -> None:
    """Hash an array by its bytes, a sequence item by item, anything else by its repr."""
    if isinstance(obj, np.ndarray):
        h.update(str(obj.dtype).encode() + np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, list | tuple):
        for item in obj:
            _feed(h, item)
    else:
        h.update(repr(obj).encode())


def fingerprint(result) -> str:
    """sha256 of every trace's columns, weights and events, and of the summary table without its
    timing column (``seconds`` is wall-clock time, the one thing that may differ)."""
    h = hashlib.sha256()
    for key in sorted(result.traces, key=str):
        tr = result.traces[key]
        _feed(h, key)
        for name in ("arm", "reward", "expected", "best", "state", "player", "batch_end"):
            _feed(h, getattr(tr, name))
        for name in ("weight_ids", "weights", "events"):
            _feed(h, list(getattr(tr, name) or ()))
    summary = result.summary_frame().drop(columns=["seconds"])
    h.update(summary.to_csv(index=False).encode())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=None, help="default: the scenario's own")
    args = ap.parse_args()
    race = api.default_race()
    if args.horizon:
        sc = api.Scenario.from_preset("paper-synthetic", horizon=args.horizon)
        race = api.default_race(sc)
    print(fingerprint(api.run_race(race)))


if __name__ == "__main__":
    main()
