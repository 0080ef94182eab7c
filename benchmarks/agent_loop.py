"""The loop closed (issue 31): All-Season deployed through ``decide``/``learn`` only on a seasonal
world, its decision log written, then read back by ``python -m allseason replay`` AS IT IS and
evaluated offline. Prints one JSON document (the numbers of docs/agent.md).

    python benchmarks/agent_loop.py                 # 50,000 events, 5 replay seeds
    python benchmarks/agent_loop.py --events 5000   # what tests/agent/test_loop_closed.py runs

**The world** (:func:`world`): a *linear seasonal world* with a context. K = 4 arms, a context
c_t uniform in [-1, 1]^3; the season s_t follows the ``paper-synthetic`` pattern
(:func:`allseason.envs.patterns.preset`: 4 states, 8 change points) scaled to the events; arm
k pays 1 with probability ``p_t(k) = clip(a[s_t, k] + w[s_t, k] . c_t, 0.02, 0.98)`` (a
different best arm in each season), else 0: linear in ``e_k (x) [c_t, 1]``, the agent's
context mode, but for the clip. Common random numbers: one uniform per (event, arm).

**The agent**: ``api.Agent("allseason-sw", d=3, arms=[...], batch_size=10)``, the race's
default hyperparameters, a log attached; rewards come back **late and out of order** (each
after a random delay of 0-30 events), so rows reach ``decisions.csv`` in the order rewards
arrive; the timestamps (one second apart) give the decision order back.

**The check**: ``replay --json`` on ``decisions.csv`` with All-Season (SW), SW-LinTS and
D-LinTS: the logger's own value must equal the realised mean reward; the ESS of each
contestant is reported. :func:`true_values` gives the TRUE value of what All-Season's IPS
estimates (the world's p_t are known): the replayed agent, which learns on its kept events
only, at once, with replay's sigma2 = 0.25 (the deployed agent: late rewards, batches of 10,
sigma2 = 1), and the same for :func:`deployed_spec` (the deployed agent's hyperparameters) and
a frozen policy. ``--coverage N``: the interval's coverage over N smaller worlds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

K, D = 4, 3
LABELS = ["news", "sport", "weather", "music"]
T0 = 1_700_000_000  # the first decision's time (Unix seconds; 2023-11-14)
MAX_DELAY = 30  # events a reward may wait
CONTESTANTS = ("allseason-sw", "sw-lints", "d-lints")


def world(n: int, seed: int = 0):
    """(contexts (n, D), seasons (n,), p (n, K) reward probabilities, u (n, K) uniforms)."""
    from allseason.envs.patterns import preset

    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(31,)))
    seasons = preset("paper-synthetic", horizon=n).states()
    n_states = int(seasons.max()) + 1
    a = np.full((n_states, K), 0.25)
    a[np.arange(n_states), np.arange(n_states) % K] = 0.7  # a different best arm per season
    w = 0.1 * rng.standard_normal((n_states, K, D))
    c = rng.uniform(-1, 1, (n, D))
    p = np.clip(a[seasons] + np.einsum("tkd,td->tk", w[seasons], c), 0.02, 0.98)
    u = rng.random((n, K))
    return c, seasons, p, u


def deploy(n: int, folder, seed: int = 0, batch_size: int = 10) -> dict:
    """Run the agent for ``n`` events on :func:`world`, rewards late and out of order, the
    log in ``folder``; the realised rewards and the agent's counts."""
    from allseason import api

    c, seasons, p, u = world(n, seed)
    agent = api.Agent("allseason-sw", d=D, arms=LABELS, seed=seed, batch_size=batch_size)
    log = agent.attach_log(folder)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(32,)))
    due = rng.integers(0, MAX_DELAY + 1, n) + np.arange(n)  # when each reward comes back
    waiting: dict[int, list] = {}
    rewards = np.empty(n)
    props = np.empty(n)
    t0 = time.perf_counter()
    for t in range(n):
        rec = agent.decide(context=c[t], event_id=f"ev{t}", t=float(T0 + t))
        rewards[t] = float(u[t, rec.arm] < p[t, rec.arm])
        props[t] = rec.propensity
        waiting.setdefault(int(due[t]), []).append((f"ev{t}", rewards[t]))
        for event, r in waiting.pop(t, []):
            agent.learn(event, r)
    for step in sorted(waiting):
        for event, r in waiting[step]:
            agent.learn(event, r)
    agent.end_batch()
    seconds = time.perf_counter() - t0
    log.close()
    best = p.max(axis=1)
    return dict(
        events=n,
        realised_mean=float(rewards.mean()),
        best_mean=float(best.mean()),
        propensity_min=float(props.min()),
        seconds=seconds,
        counts=dict(agent.counts),
        version=int(agent.model_version),
        hyperparameters=dict(agent.hyperparameters),
    )


def evaluate(path, n_seeds: int = 5, in_process: bool = False) -> dict:
    """``python -m allseason replay PATH --json`` with :data:`CONTESTANTS`: its JSON."""
    args = ["replay", str(path), "--policies", ",".join(CONTESTANTS), "--seeds", str(n_seeds)]
    args += ["--json"]
    if in_process:
        import contextlib
        import io

        from allseason.cli import main

        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = main(args)
        assert rc == 0
        return json.loads(out.getvalue())
    run = subprocess.run(
        [sys.executable, "-m", "allseason", *args], capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout)


def world_probs(log, n: int, seed: int = 0) -> np.ndarray:
    """p_t(a) of :func:`world` in the order of ``log``'s arms (the reader sorts the labels:
    music, news, sport, weather), shape (n, K); checked against the log's contexts and
    rewards (the log is sorted by time: event t is row t)."""
    c, _, p, u = world(n, seed)
    cols = [LABELS.index(name) for name in log.arm_names]
    p, u = p[:, cols], u[:, cols]
    t = np.arange(n)
    if not (
        np.array_equal(log.contexts[:, :D], c)
        and np.array_equal(log.reward, u[t, log.arm] < p[t, log.arm])
    ):
        raise ValueError("the log is not the world's: contexts or rewards differ")
    return p


def deployed_spec(hyperparameters: dict | None = None):
    """All-Season (SW) with the DEPLOYED agent's hyperparameters (``api.Agent``'s defaults:
    sigma2 = 1), labelled "allseason-sw-deployed"; ``replay``'s own contestant of that name
    fills sigma2 = 0.25 (``allseason.logs.replay.SIGMA2``), a different agent."""
    from allseason.specs import PolicySpec

    if hyperparameters is None:
        from allseason import api

        hyperparameters = api.Agent("allseason-sw", d=D, arms=LABELS).hyperparameters
    return PolicySpec("allseason-sw", dict(hyperparameters), "allseason-sw-deployed")


def true_values(path, world_seed: int = 0, n_seeds: int = 5, seed: int = 0, name="allseason-sw"):
    """The estimator checked against the truth: the world's p_t(a) are known, so the TRUE
    value of the replayed policy is ``mean_t sum_a pi_t(a | x_t) p_t(a)`` (pi_t: its state
    before event t, as IPS uses it). Per replay seed k (the same policy, draws and kept events
    as ``replay``'s seed k): the true value, the mean p_t of its own realised draws (pi checked
    against the draws), kept events, IPS and its ESS; then IPS over the seeds with
    ``replay``'s interval (the same bootstrap stream), and a FROZEN policy (seed 0's final
    state, no learning) on every event: its true value and IPS with interval."""
    import zlib

    from allseason.logs import offline
    from allseason.logs.estimators import event_terms
    from allseason.logs.evaluate import METHODS, method_interval, offline_specs
    from allseason.logs.policy_probs import ProbRecorder, posterior_state, state_probs
    from allseason.logs.replay import build_policy, replay_fast

    log = offline.parse_log(Path(path).read_bytes())
    n, t = log.n_events, np.arange(log.n_events)
    p = world_probs(log, n, world_seed)
    (spec,) = offline_specs([name])  # a name, or a PolicySpec (e.g. deployed_spec())
    zeros = np.zeros(n)

    def stream():
        key = (zlib.crc32(spec.label.encode()), METHODS.index("ips"))
        return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))

    def ips(pi_a, keep):
        run = event_terms(log, keep, pi_a, zeros, zeros, True)
        return run, method_interval("ips", [run], run["ips"], run["ips_n"], stream())

    seeds, runs, frozen = [], [], None
    for k in range(n_seeds):
        policy = build_policy(spec, log, seed, k)
        rec, drawn = ProbRecorder(log), np.zeros(n, dtype=np.int64)
        keep = replay_fast(policy, log, on_state=rec.segment, drawn=drawn)
        run, _ = ips(rec.pi[t, log.arm], keep)
        runs.append(run)
        seeds.append(
            dict(
                true=float((rec.pi * p).sum(axis=1).mean()),
                realised_draws=float(p[t, drawn].mean()),
                kept=int(keep.sum()),
                ips=run["ips"],
                ess=run["ips_n"],
            )
        )
        if k == 0:
            pi = state_probs(
                posterior_state(policy, log.n_arms, log.contexts.shape[1]), log.contexts
            )
            run0, (lo, hi) = ips(pi[t, log.arm], np.zeros(n, dtype=bool))
            truth = float((pi * p).sum(axis=1).mean())
            frozen = dict(true=truth, ips=run0["ips"], low=lo, high=hi, ess=run0["ips_n"])
            frozen["covers"] = bool(lo <= truth <= hi)
    est = float(np.mean([r["ips"] for r in runs]))
    ess = float(np.mean([r["ips_n"] for r in runs]))
    lo, hi = method_interval("ips", runs, est, ess, stream())
    truth = float(np.mean([s["true"] for s in seeds]))
    return dict(
        policy=spec.label,
        params=dict(spec.params),
        seeds=seeds,
        true=truth,
        ips=dict(estimate=est, low=lo, high=hi, ess=ess),
        covers=bool(lo <= truth <= hi),
        frozen=frozen,
    )


def summarise(
    deployed: dict, report: dict, truth: dict | None = None, as_deployed: dict | None = None
) -> dict:
    """The numbers of the check: the logger's value against the realised mean; per
    contestant and method the estimate, its interval and the ESS (kept events for replay);
    with ``truth`` (:func:`true_values`), All-Season's IPS against the TRUE value of the
    agent it estimates (the same hyperparameters replayed on the log, learning on its kept
    events) and against the deployed agent's realised mean (a different agent: see
    docs/agent.md, "The loop closed"); with ``as_deployed`` (:func:`true_values` of
    :func:`deployed_spec`) the same for All-Season with the deployed agent's own
    hyperparameters."""
    logger = report["logger"]
    rows = {}
    for r in report["rows"][1:]:
        rows.setdefault(r["policy"], {})[r["method"]] = dict(
            estimate=r["estimate"], low=r["low"], high=r["high"], ess=r["events"]
        )
    own = rows["allseason-sw"]["ips"]
    out = dict(
        log=report["log"],
        realised_mean=deployed["realised_mean"],
        logger_value=logger["estimate"],
        logger_equals_realised=abs(logger["estimate"] - deployed["realised_mean"]) < 1e-12,
        allseason_ips=own,
        allseason_ips_contains_realised=own["low"] <= deployed["realised_mean"] <= own["high"],
        ess={name: rows[name]["ips"]["ess"] for name in rows},
        contestants=rows,
        too_sparse=report["too_sparse"],
    )
    if truth is not None:
        out["replayed_allseason_true"] = truth["true"]
        out["replayed_allseason_true_per_seed"] = [s["true"] for s in truth["seeds"]]
        out["allseason_ips_contains_true"] = own["low"] <= truth["true"] <= own["high"]
        out["same_ips_as_replay"] = abs(truth["ips"]["estimate"] - own["estimate"]) < 1e-9
        out["truth"] = truth
    if as_deployed is not None:
        ips = as_deployed["ips"]
        out["as_deployed"] = dict(
            ips=ips,
            true=as_deployed["true"],
            true_per_seed=[s["true"] for s in as_deployed["seeds"]],
            contains_true=ips["low"] <= as_deployed["true"] <= ips["high"],
            contains_realised=ips["low"] <= deployed["realised_mean"] <= ips["high"],
            frozen=as_deployed["frozen"],
        )
    return out


def coverage(n_worlds: int = 20, events: int = 2_000, first: int = 100) -> dict:
    """The interval's coverage on adaptive logs: for worlds ``first .. first + n_worlds - 1``
    (:func:`world`, deployed as in :func:`deploy`), does All-Season's IPS interval (one
    replay seed) contain the replayed agent's true value, the deployed agent's realised mean,
    and the frozen policy's true value?"""
    hits = dict(true=0, realised=0, frozen=0)
    rows = []
    for w in range(first, first + n_worlds):
        with tempfile.TemporaryDirectory(prefix="agent-loop-cov-") as folder:
            dep = deploy(events, folder, seed=w)
            tv = true_values(Path(folder) / "decisions.csv", world_seed=w, n_seeds=1)
        ips = tv["ips"]
        row = dict(
            world=w,
            realised=dep["realised_mean"],
            true=tv["true"],
            ips=ips["estimate"],
            low=ips["low"],
            high=ips["high"],
            ess=ips["ess"],
            frozen=tv["frozen"],
        )
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
        hits["true"] += bool(tv["covers"])
        hits["realised"] += bool(ips["low"] <= dep["realised_mean"] <= ips["high"])
        hits["frozen"] += bool(tv["frozen"]["covers"])
    gaps = [r["true"] - r["realised"] for r in rows]
    return dict(
        worlds=n_worlds,
        events=events,
        covers=hits,
        replayed_minus_realised=dict(
            mean=float(np.mean(gaps)),
            sd=float(np.std(gaps, ddof=1)),
            min=float(min(gaps)),
            max=float(max(gaps)),
        ),
        rows=rows,
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--seeds", type=int, default=5, help="replay seeds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", default=None, help="a folder to keep the log in")
    ap.add_argument(
        "--no-truth", action="store_true", help="skip the true values (a replay per seed)"
    )
    ap.add_argument(
        "--coverage",
        type=int,
        default=0,
        metavar="N",
        help="instead: the interval's coverage over N worlds of --events events",
    )
    args = ap.parse_args(argv)
    if args.coverage:
        print(json.dumps(coverage(args.coverage, args.events), indent=2))
        return 0
    folder = Path(args.keep or tempfile.mkdtemp(prefix="agent-loop-"))
    deployed = deploy(args.events, folder, seed=args.seed)
    t0 = time.perf_counter()
    report = evaluate(folder / "decisions.csv", args.seeds)
    seconds = time.perf_counter() - t0
    truth = mine = None
    if not args.no_truth:
        truth = true_values(folder / "decisions.csv", args.seed, args.seeds)
        spec = deployed_spec(deployed["hyperparameters"])
        mine = true_values(folder / "decisions.csv", args.seed, args.seeds, name=spec)
    out = dict(
        world="linear seasonal (benchmarks/agent_loop.py: paper-synthetic pattern, K=4, d=3)",
        deployed=deployed,
        replay_seconds=seconds,
        log_bytes=(folder / "decisions.csv").stat().st_size,
        **summarise(deployed, report, truth, mine),
    )
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
