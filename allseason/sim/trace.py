"""What a simulation records, as preallocated numpy columns; pandas tables only at the edge.

A :class:`Trace` is one policy on one seed: per step (arm, reward, expected reward of the arm
played, best expected reward, true state, which internal bandit played), per batch (the ids
and weights of the live bandits, for ensembles), and events (spawn, prune, ...).
A :class:`RaceResult` holds the traces of every (policy, seed) of a race.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..policies import role
from ..policies.base import ChunkOutcome, Event
from ..stats import ci95_halfwidth

if TYPE_CHECKING:
    import pandas as pd

    from ..specs import Race


@dataclass
class Trace:
    """One policy's run on one seed; columns are filled chunk by chunk up to ``n_done``."""

    label: str
    seed_index: int
    horizon: int
    # the step columns, each of length ``horizon``, made by __post_init__
    arm: np.ndarray = field(init=False)
    reward: np.ndarray = field(init=False)
    expected: np.ndarray = field(init=False)
    best: np.ndarray = field(init=False)
    state: np.ndarray = field(init=False)
    player: np.ndarray = field(init=False)
    batch_end: list = field(default_factory=list)
    weight_ids: list = field(default_factory=list)
    weights: list = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    n_done: int = 0
    seconds: float = 0.0

    def __post_init__(self):
        T = self.horizon
        self.arm = np.zeros(T, dtype=np.int64)
        self.player = np.full(T, -1, dtype=np.int64)
        self.state = np.zeros(T, dtype=np.int64)
        self.reward, self.expected, self.best = np.zeros(T), np.zeros(T), np.zeros(T)

    def record(
        self,
        start: int,
        out: ChunkOutcome,
        expected: np.ndarray,
        state: np.ndarray,
        seconds: float,
        best: np.ndarray | None = None,
    ) -> None:
        """Append a chunk that started at step ``start`` (``best``: ``expected.max(axis=1)``,
        if the caller has it)."""
        n = len(out.arm)
        sl = slice(start, start + n)
        self.arm[sl], self.reward[sl], self.player[sl] = out.arm, out.reward, out.player
        self.expected[sl] = expected[np.arange(n), out.arm]
        self.best[sl] = expected.max(axis=1) if best is None else best
        self.state[sl] = state
        self.batch_end.append(out.batch_end + start)
        if out.weights is not None:
            self.weight_ids.append(out.weight_ids)
            self.weights.append(out.weights)
        self.events.extend(out.events)
        self.n_done = start + n
        self.seconds += seconds

    @property
    def regret(self) -> np.ndarray:
        """Per-step pseudo-regret: best expected reward minus that of the arm played."""
        return (self.best - self.expected)[: self.n_done]

    def batch_weights(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(batch end step (n_b,), ids (n_b, S), weights (n_b, S)) or None."""
        if not self.weights:
            return None
        width = max(w.shape[1] for w in self.weights)
        pad = lambda a, v: np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=v)  # noqa
        ids = np.concatenate([pad(a, -1) for a in self.weight_ids])
        w = np.concatenate([pad(a, 0.0) for a in self.weights])
        return np.concatenate(self.batch_end), ids, w


@dataclass
class RaceResult:
    """Traces of a race, keyed by (label, seed index); ``scenario`` and ``race`` for context."""

    race: Race | None  # None: a result of traces alone (no labels, summary or file)
    traces: dict[tuple[str, int], Trace]

    def _race(self) -> Race:
        """The race, for what reads its policies or seeds."""
        if self.race is None:
            raise ValueError("a result of traces alone: it has no race to read")
        return self.race

    @property
    def labels(self) -> list[str]:
        """The policies' labels, in the race's order."""
        return [p.label for p in self._race().policies]

    @property
    def n_done(self) -> int:
        """The steps every trace has recorded."""
        return min(t.n_done for t in self.traces.values())

    def labels_of(self, family: str) -> list[str]:
        """Labels of the race's policies of a declared family (:func:`allseason.policies.role`),
        e.g. ``"allseason"``: the ones with bandit weights to look into."""
        return [p.label for p in self._race().policies if role(p.name).family == family]

    def references(self) -> list[str]:
        """Labels of the references of the race (the oracles: a policy class with
        ``reference = True``), which views draw and rank apart from the contestants."""
        return [p.label for p in self._race().policies if role(p.name).reference]

    def baselines(self) -> list[str]:
        """Labels of the baselines: contestants that are neither All-Season (family
        "allseason") nor references."""
        return [
            p.label
            for p in self._race().policies
            if role(p.name).family != "allseason" and not role(p.name).reference
        ]

    def summary(self) -> dict[str, dict[str, float]]:
        """Per policy: mean reward per step (mean and std over seeds, and ``ci95``: the
        half-width of the 95% Student's t interval, t.ppf(0.975, n − 1) · std / √n over n
        seeds; 0 with one seed, where no interval exists), cumulative regret (mean over
        seeds), seconds (sum over seeds) and ``gap_closed`` (:func:`gap_closed`)."""
        out = {}
        n_seeds = self._race().n_seeds
        for label in self.labels:
            traces = [self.traces[label, k] for k in range(n_seeds)]
            means = np.array([t.reward[: t.n_done].mean() for t in traces])
            regrets = np.array([t.regret.sum() for t in traces])
            std = float(means.std(ddof=1)) if n_seeds > 1 else 0.0
            out[label] = dict(
                mean_reward=float(means.mean()),
                std_reward=std,
                ci95=ci95_halfwidth(std, n_seeds),
                mean_expected_reward=float(
                    np.mean([t.expected[: t.n_done].mean() for t in traces])
                ),
                cum_regret=float(regrets.mean()),
                seconds=float(sum(t.seconds for t in traces)),
            )
        oracle = next((p.label for p in self._race().policies if role(p.name).ceiling), None)
        shares = gap_closed(
            {k: v["mean_reward"] for k, v in out.items()},
            self.baselines(),
            oracle,
            self.references(),
        )
        for label in out:
            out[label]["gap_closed"] = shares[label]
        return out

    COLUMNS = ("arm", "reward", "expected", "best", "state", "player")

    def save(self, path) -> None:
        """Write the race and every trace to one compressed .npz file (no pickle)."""
        arrays = {"race": np.array(self._race().to_json())}
        for i, ((label, k), t) in enumerate(self.traces.items()):
            p = f"t{i}_"
            arrays[p + "key"] = np.array([label, str(k), str(t.n_done), repr(t.seconds)])
            for col in self.COLUMNS:
                arrays[p + col] = getattr(t, col)
            arrays[p + "batch_end"] = (
                np.concatenate(t.batch_end) if t.batch_end else np.zeros(0, dtype=np.int64)
            )
            bw = t.batch_weights()
            if bw is not None:
                arrays[p + "weight_ids"], arrays[p + "weights"] = bw[1], bw[2]
            ev = t.events
            arrays[p + "ev_kind"] = np.array([e.kind for e in ev], dtype=str)
            arrays[p + "ev_int"] = np.array(
                [(e.step, e.bandit, e.other) for e in ev], dtype=np.int64
            ).reshape(-1, 3)
            arrays[p + "ev_value"] = np.array([e.value for e in ev], dtype=float)
        np.savez_compressed(path, allow_pickle=False, **arrays)

    @classmethod
    def load(cls, path) -> RaceResult:
        """Read a file written by :meth:`save`; the result equals the saved one bit for bit."""
        import json

        from ..specs import Race

        with np.load(path, allow_pickle=False) as f:
            race = Race.from_dict(json.loads(str(f["race"])))
            traces = {}
            i = 0
            while f"t{i}_key" in f:
                p = f"t{i}_"
                label, k, n_done, seconds = f[p + "key"].tolist()
                t = Trace(label, int(k), race.scenario.horizon)
                for col in cls.COLUMNS:
                    setattr(t, col, f[p + col])
                t.n_done, t.seconds = int(n_done), float(seconds)
                t.batch_end = [f[p + "batch_end"]]
                if p + "weights" in f:
                    t.weight_ids, t.weights = [f[p + "weight_ids"]], [f[p + "weights"]]
                t.events = [
                    Event(int(a), str(kind), int(b), int(c), float(v))
                    for kind, (a, b, c), v in zip(
                        f[p + "ev_kind"], f[p + "ev_int"], f[p + "ev_value"]
                    )
                ]
                traces[label, int(k)] = t
                i += 1
        return cls(race, traces)

    def to_frames(self) -> dict[str, pd.DataFrame]:
        """Tidy pandas tables: ``steps`` (one row per policy, seed, step), ``weights`` (policy,
        seed, batch, step, bandit, weight; ensembles only), ``events`` and ``summary``."""
        return {
            "steps": self.steps_frame(),
            "weights": self.weights_frame(),
            "events": self.events_frame(),
            "summary": self.summary_frame(),
        }

    def _selected(self, only):
        keys = self.traces if only is None else [tuple(key) for key in only]
        return [(key, self.traces[key]) for key in keys]

    def steps_frame(self, only=None):
        """One row per policy, seed and step: state, arm, reward, expected, best, regret,
        player. ``only``: the (policy, seed) keys to include (default: every trace)."""
        import pandas as pd

        parts = []
        for (label, k), t in self._selected(only):
            n = t.n_done
            parts.append(
                pd.DataFrame(
                    {
                        "policy": label,
                        "seed": k,
                        "step": np.arange(n),
                        "state": t.state[:n],
                        "arm": t.arm[:n],
                        "reward": t.reward[:n],
                        "expected": t.expected[:n],
                        "best": t.best[:n],
                        "regret": t.regret,
                        "player": t.player[:n],
                    }
                )
            )
        return _concat(parts, ["policy", "seed", "step"])

    def weights_frame(self, only=None):
        """Ensembles only: one row per policy, seed, batch and live bandit (its weight).
        ``only``: as in :meth:`steps_frame`."""
        import pandas as pd

        parts = []
        for (label, k), t in self._selected(only):
            bw = t.batch_weights()
            if bw is not None:
                ends, ids, w = bw
                batch = np.repeat(np.arange(len(ends)), ids.shape[1])
                keep = ids.ravel() >= 0
                parts.append(
                    pd.DataFrame(
                        {
                            "policy": label,
                            "seed": k,
                            "batch": batch[keep],
                            "step": np.repeat(ends, ids.shape[1])[keep],
                            "bandit": ids.ravel()[keep],
                            "weight": w.ravel()[keep],
                        }
                    )
                )
        return _concat(parts, ["policy", "seed", "batch", "step", "bandit", "weight"])

    def events_frame(self, only=None):
        """Spawns and prunings: policy, seed and the event's fields. ``only``: as in
        :meth:`steps_frame`."""
        import pandas as pd

        parts = []
        for (label, k), t in self._selected(only):
            if t.events:
                ev = pd.DataFrame(t.events, columns=list(Event._fields))
                ev.insert(0, "seed", k)
                ev.insert(0, "policy", label)
                parts.append(ev)
        return _concat(parts, ["policy", "seed"] + list(Event._fields))

    def curves_frame(self, max_points: int | None = None):
        """The columns of the steps table that cumulative curves draw (``policy``, ``seed``,
        ``step``, ``state``, ``reward``, ``best``, ``regret``), for a race finished or still
        running (each trace up to its ``n_done``).

        Parameters
        ----------
        max_points : int, optional
            At most that many rows per (policy, seed), at the same sampled steps for every
            trace (:func:`sample_index`, the last step done included): ``reward``, ``best``
            and ``regret`` then hold the sums since the previous sampled step, so their
            cumulative sums are exact at the sampled steps, at a fraction of the rows.
            None: every step.

        Returns
        -------
        pandas.DataFrame
            One row per policy, seed and (sampled) step.
        """
        import pandas as pd

        names = ("policy", "seed", "step", "state", "reward", "best", "regret")
        parts: dict[str, list] = {name: [] for name in names}
        for (label, k), t in self.traces.items():
            n = t.n_done
            cols = {"reward": t.reward[:n], "best": t.best[:n], "regret": np.asarray(t.regret)}
            step, state = np.arange(n), t.state[:n]
            if max_points is not None and n > max_points:
                idx = sample_index(n, max_points)
                for name, v in cols.items():
                    cum = np.cumsum(v, dtype=np.float64)[idx]
                    cols[name] = np.diff(cum, prepend=0.0)
                step, state = idx, state[idx]
            for name, v in {
                "policy": np.full(len(step), label, dtype=object),
                "seed": np.full(len(step), k),
                "step": step,
                "state": state,
                **cols,
            }.items():
                parts[name].append(v)
        # one table from whole columns (a table per trace and a concat cost twice as much)
        return pd.DataFrame({name: np.concatenate(v) for name, v in parts.items()})

    def summary_frame(self):
        """:meth:`summary` as a table, one row per policy, with a boolean column
        ``reference`` (an oracle: drawn and ranked apart)."""
        import pandas as pd

        summary = pd.DataFrame.from_dict(self.summary(), orient="index")
        summary.index.name = "policy"
        refs = set(self.references())
        summary["reference"] = [label in refs for label in summary.index]
        return summary.reset_index()

    def seed_frame(self):
        """One row per policy and seed: ``mean_reward`` (per step) and ``cum_regret`` (the
        final cumulative pseudo-regret, the sum of best − expected over the steps done), and
        ``reference`` (an oracle) -- the distribution over seeds behind :meth:`summary`."""
        import pandas as pd

        refs = set(self.references())
        rows = [
            (
                label,
                k,
                float(t.reward[: t.n_done].mean()) if t.n_done else float("nan"),
                float(t.regret.sum()),
                label in refs,
            )
            for label in self.labels
            for k in range(self._race().n_seeds)
            for t in [self.traces[label, k]]
        ]
        return pd.DataFrame(
            rows, columns=["policy", "seed", "mean_reward", "cum_regret", "reference"]
        )

    def state_frame(self, only=None):
        """Per policy, seed and true state: ``n`` steps, mean ``reward`` and mean ``best``
        expected reward (the oracle's) -- the per-state table without the per-step one.
        ``only``: as in :meth:`steps_frame`."""
        import pandas as pd

        parts = []
        for (label, k), t in self._selected(only):
            n = t.n_done
            state = t.state[:n].astype(np.int64)
            count = np.bincount(state)
            seen = np.flatnonzero(count)
            parts.append(
                pd.DataFrame(
                    {
                        "policy": label,
                        "seed": k,
                        "state": seen,
                        "n": count[seen],
                        "reward": np.bincount(state, weights=t.reward[:n])[seen] / count[seen],
                        "best": np.bincount(state, weights=t.best[:n])[seen] / count[seen],
                    }
                )
            )
        return _concat(parts, ["policy", "seed", "state", "n", "reward", "best"])


def sample_index(n: int, max_points: int) -> np.ndarray:
    """At most ``max_points`` evenly spaced indices into ``range(n)``, first and last kept.

    >>> sample_index(10, 4).tolist()
    [0, 3, 6, 9]
    """
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max(int(max_points), 2)).round().astype(np.int64))


def gap_closed(
    means: dict[str, float], baselines, oracle: str | None, references=()
) -> dict[str, float]:
    """Share of the gap closed, per label: (m − b) / (o − b), where m is the label's mean
    reward (over seeds), b the best mean reward of the ``baselines`` (contestants that are
    neither All-Season nor references) and o that of ``oracle`` (oracle-state: perfect
    memory). 1 = as good as the oracle, 0 = as good as the best baseline, < 0 worse.
    NaN for the ``references`` themselves, and for everybody when there is no oracle, no
    baseline, or no gap (o − b <= 0).

        >>> gap_closed({"a": 0.5, "b": 0.25, "o": 0.75}, ["b"], "o", ["o"])
        {'a': 0.5, 'b': 0.0, 'o': nan}
    """
    base = [means[k] for k in baselines if k in means]
    refs = set(references) | ({oracle} if oracle is not None else set())
    nan = math.nan  # one object: summaries compare equal (containers compare by identity first)
    if oracle not in means or not base or means[oracle] - max(base) <= 0:
        return {k: nan for k in means}
    b = max(base)
    gap = means[oracle] - b
    return {k: nan if k in refs else float((m - b) / gap) for k, m in means.items()}


def _concat(parts: list, columns: list[str]):
    import pandas as pd

    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
