"""Coverage of the intervals the Your data page shows, on synthetic sparse logs whose true
value is known (docs/your-data.md, "Coverage").

Each log: ``n`` events, K = 5 arms with click rates between 0.3% and 0.7%, logged either
uniformly (p = 1/K) or by a Thompson-like logger (a Gaussian Thompson sampler on its own
clicks, updated every 100 events, whose propensities are its exact argmax probabilities:
non-uniform, some below 1e-3). The target is a fixed stochastic policy (pi = 0.4, 0.25,
0.15, 0.1, 0.1 over the arms, best arm first), so its true value sum_a pi(a) mu_a is known.
Its estimates and intervals come from the same functions as the page's
(:func:`allseason.logs.estimators.run_terms`, :func:`allseason.logs.evaluate.method_interval`),
with its realised draw for replay. The logger row's Wilson interval is checked against the
logger's own expected click rate.

    python benchmarks/ope_coverage.py [--logs 200] [--events 10000] [--write]

``--write`` puts the table into docs/your-data.md between the COVERAGE markers.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np

from allseason.logs.estimators import reward_model, run_terms
from allseason.logs.evaluate import METHODS, method_interval
from allseason.logs.intervals import wilson
from allseason.logs.offline import Log
from allseason.logs.policy_probs import gaussian_argmax_probs

K = 5
TARGET = np.array([0.4, 0.25, 0.15, 0.1, 0.1])
LOGGINGS = ("uniform", "thompson")


def make_log(rng: np.random.Generator, n: int, logging: str) -> tuple[Log, float, float]:
    """(the log, the target's true value, the logger's expected click rate)."""
    mu = np.sort(rng.uniform(0.003, 0.007, K))[::-1]
    if logging == "uniform":
        prop_all = np.full((n, K), 1.0 / K)
        arms = rng.integers(0, K, n)
        clicks = (rng.random(n) < mu[arms]).astype(float)
    else:
        arms, clicks = np.empty(n, dtype=np.int64), np.empty(n)
        prop_all = np.empty((n, K))
        s, c = np.zeros(K), np.zeros(K)
        for start in range(0, n, 100):
            m = (s + 0.5) / (c + 100)  # a prior of 0.5 clicks in 100 views
            probs = gaussian_argmax_probs(m, m * (1 - m) / (c + 100) * 4)
            stop = min(start + 100, n)
            prop_all[start:stop] = probs
            a = rng.choice(K, size=stop - start, p=probs / probs.sum())
            r = (rng.random(stop - start) < mu[a]).astype(float)
            arms[start:stop], clicks[start:stop] = a, r
            np.add.at(s, a, r)
            np.add.at(c, a, 1)
    prop = prop_all[np.arange(n), arms]
    log = Log(
        np.arange(n, dtype=float),
        arms,
        clicks,
        np.ones((n, 1)),
        prop,
        np.arange(n) + 2,
        tuple(str(k) for k in range(K)),
    )
    return log, float(TARGET @ mu), float((prop_all * mu).sum(axis=1).mean())


def one_log(seed_seq: np.random.SeedSequence, n: int, logging: str) -> dict:
    """Per method: (estimate, covered) on one log; and the logger row's coverage."""
    data_ss, draw_ss, boot_ss = seed_seq.spawn(3)
    log, truth, logger_truth = make_log(np.random.default_rng(data_ss), n, logging)
    pi = np.tile(TARGET, (n, 1))
    drawn = np.random.default_rng(draw_ss).choice(K, size=n, p=TARGET)
    run = run_terms(log, drawn == log.arm, pi, reward_model(log), drawn)
    out = {"truth": truth}
    boots = boot_ss.spawn(len(METHODS))
    for method, ss in zip(METHODS, boots):
        est = run[method]
        lo, hi = method_interval(method, [run], est, run[f"{method}_n"], np.random.default_rng(ss))
        out[method] = (est, lo <= truth <= hi, hi - lo)
    lo, hi = wilson(float(log.reward.mean()), n)
    out["logged"] = (float(log.reward.mean()), lo <= logger_truth <= hi, hi - lo)
    out["logger_truth"] = logger_truth
    return out


def coverage(n_logs: int, n: int, seed: int = 0) -> dict:
    """Per (logging, method): coverage, mean estimate - truth, its Monte Carlo standard
    error, mean width."""
    table = {}
    for li, logging in enumerate(LOGGINGS):
        results = [
            one_log(ss, n, logging) for ss in np.random.SeedSequence([seed, li]).spawn(n_logs)
        ]
        for method in ("logged", *METHODS):
            truth_key = "logger_truth" if method == "logged" else "truth"
            errs = np.array([r[method][0] - r[truth_key] for r in results])
            table[logging, method] = dict(
                covered=float(np.mean([r[method][1] for r in results])),
                bias=float(errs.mean()),
                mc_se=float(errs.std(ddof=1) / np.sqrt(len(errs))),
                width=float(np.mean([r[method][2] for r in results])),
                truth=float(np.mean([r[truth_key] for r in results])),
            )
    return table


def markdown(table: dict, n_logs: int, n: int) -> str:
    names = {
        "logged": "the logger (Wilson)",
        "replay": "replay (Wilson)",
        "ips": "IPS",
        "snips": "self-normalised IPS",
        "dr": "doubly robust",
        "dm": "direct method",
    }
    lines = [
        f"| logging | estimator | covered (of {n_logs}) | mean error | its MC s.e. | mean width |",
        "|---|---|---|---|---|---|",
    ]
    for (logging, method), r in table.items():
        lines.append(
            f"| {logging} | {names[method]} | {r['covered']:.1%} | {r['bias']:+.5f} | "
            f"{r['mc_se']:.5f} | {r['width']:.4f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", type=int, default=200)
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    table = coverage(args.logs, args.events)
    md = markdown(table, args.logs, args.events)
    print(md)
    print(f"{time.perf_counter() - t0:.0f} s")
    if args.write:
        doc = Path(__file__).resolve().parents[1] / "docs" / "your-data.md"
        text = doc.read_text()
        new = f"<!-- COVERAGE -->\n{md}\n<!-- /COVERAGE -->"
        doc.write_text(re.sub(r"<!-- COVERAGE -->.*?<!-- /COVERAGE -->", new, text, flags=re.S))


if __name__ == "__main__":
    main()
