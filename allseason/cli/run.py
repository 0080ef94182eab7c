"""``python -m allseason run | patterns | policies``: a race on a seasonal pattern, and what
there is to race."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

from .. import api, files
from ..stats import t_quantile
from .common import MAX_FILE_BYTES, SEED_TYPE, CliError, write_output


def add_parsers(sub) -> None:
    """The ``run``, ``patterns`` and ``policies`` subcommands."""
    words = api.race_in_words()  # the default race's numbers, never typed
    run = sub.add_parser(
        "run",
        help="race policies on a seasonal pattern, print a leaderboard",
        description="Race policies on a seasonal pattern and print a leaderboard. With no "
        f"flags, the default race: the paper's synthetic experiment ({words['scenario']}), "
        f"{words['contestants']}, {words['seeds']}.",
    )
    run.add_argument(
        "--pattern",
        default="paper-synthetic",
        help="a preset (see `patterns`), FILE.json or FILE.csv (default: paper-synthetic)",
    )
    run.add_argument(
        "--policies",
        default=",".join(api.DEFAULT_POLICIES),
        help="comma-separated policy names (see `policies`)",
    )
    run.add_argument(
        "--seeds",
        type=int,
        default=api.DEFAULT_SEEDS,
        help=f"number of independent seeds ({api.DEFAULT_SEEDS})",
    )
    run.add_argument("--seed", type=SEED_TYPE, default=None, help="root random seed (0)")
    run.add_argument("--horizon", type=int, default=None, help="steps T (preset's default)")
    run.add_argument(
        "--states",
        type=int,
        default=None,
        help="distinct states of a preset (3; seattle-weather: its 4 regimes)",
    )
    run.add_argument(
        "--batch-size",
        type=_batch_size,
        default=None,
        help="B, or a list like 5,10,20 for inhomogeneous batches (1)",
    )
    run.add_argument("--d", type=int, default=None, help="dimension d (5)")
    run.add_argument("--arms", type=int, default=None, help="arms per step K (5)")
    run.add_argument("--sigma2", type=float, default=None, help="reward noise variance (0.1)")
    _hyperparameter_flags(run)
    run.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per policy (ci95: half-width of the 95%% "
        "Student's t interval over seeds; 0 with one seed)",
    )
    run.add_argument("--trace", metavar="FILE.csv", help="write the per-step trace as CSV")
    run.set_defaults(func=cmd_run)
    pat = sub.add_parser("patterns", help="list the preset season patterns")
    pat.set_defaults(func=cmd_patterns)
    pol = sub.add_parser("policies", help="list the policies and their hyperparameters")
    pol.set_defaults(func=cmd_policies)


def _hyperparameter_flags(run) -> None:
    """The hyperparameters ``run`` passes to every policy that takes them."""
    run.add_argument(
        "--tau",
        type=int,
        default=None,
        help="window of SW-LinTS and of All-Season's shadow (default race: "
        "All-Season 10, SW-LinTS tuned)",
    )
    run.add_argument(
        "--gamma",
        type=float,
        default=None,
        help="discount of D-LinTS and All-Season (Disc) (default race: "
        "All-Season 0.9, D-LinTS tuned)",
    )
    run.add_argument(
        "--n-max", type=int, default=None, help="All-Season's maximum number of base bandits (5)"
    )
    run.add_argument("--lam", type=float, default=None, help="prior precision lambda (1)")
    run.add_argument(
        "--weighting",
        choices=["fixed-share", "batch"],
        default=None,
        help="All-Season weights: 'fixed-share' (carried, the default) or "
        "'batch' (the paper's printed rule)",
    )
    run.add_argument("--share", type=float, default=None, help="fixed-share alpha (1e-4)")
    run.add_argument(
        "--spawn",
        choices=["handover", "copy"],
        default=None,
        help="how a newborn base bandit starts under fixed share: 'handover' (takes "
        "the shadow's weight, not pruned before it plays) or 'copy'",
    )


def _scenario(args) -> api.Scenario:
    """The scenario of a file (.json or .csv) or of a preset's flags, through the one entry
    point ``api.parse_scenario``; --d, --arms, ... fill in what a file leaves out."""
    common = dict(
        d=args.d, n_arms=args.arms, sigma2=args.sigma2, seed=args.seed, batch_size=args.batch_size
    )
    common = {k: v for k, v in common.items() if v is not None}
    name = args.pattern
    if name.lower().endswith((".json", ".csv")):
        kind = api.file_kind(name)
        text = files.read_text(name, "--pattern", MAX_FILE_BYTES, kind.upper(), utf16=True)
        try:
            return api.parse_scenario(text, kind, defaults=common)
        except api.SpecError as e:
            raise CliError(f"--pattern {name!r}: {e}") from None
    if name not in api.PRESETS:
        raise CliError(
            f"--pattern: unknown pattern {name!r}; known: {', '.join(api.PRESETS)}"
            " or a FILE.json / FILE.csv"
        )
    flags = {"preset": name, **common}
    if args.states is not None:
        flags["n_states"] = args.states
    if args.horizon is not None:
        flags["horizon"] = args.horizon
    return api.parse_scenario(flags, "query")


def _batch_size(text: str):
    """'10' -> 10; '5,10,20' -> (5, 10, 20) (inhomogeneous batches, repeated in turn)."""
    parts = [p for p in text.split(",") if p.strip()]
    try:
        sizes = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer or a comma-separated list of integers, got {text!r}"
        ) from None
    if not sizes:
        raise argparse.ArgumentTypeError("must not be empty")
    return sizes[0] if len(sizes) == 1 else sizes


def cmd_run(args) -> int:
    """``run``: race the policies, then print a leaderboard (or ``--json``)."""
    if args.trace:  # a FIFO or a device would hang or fill; only a regular file is written
        files.regular_output(args.trace, "--trace")
    race = _race(args)
    # numba's one-time load of the compiled kernels (about 0.5 s in a fresh process) would
    # otherwise be counted in the first policy's seconds: pay it before timing, report apart
    warm = api.warm_up()
    t0 = time.perf_counter()
    result = _run_with_progress(race, quiet=args.json)
    summary = result.summary()
    _check_finite(summary)
    _add_ensemble_numbers(summary, result, race)
    if args.trace:  # all or nothing: a full disk leaves no half-written trace
        write_output(
            args.trace,
            result.to_frames()["steps"].to_csv(index=False),
            "--trace",
            "no trace was written (no partial file): run again with --trace in a folder with room",
        )
    if args.json:  # a share of the gap with no meaning (NaN) is null, so the JSON is strict
        print(json.dumps({label: _strict(s) for label, s in summary.items()}, indent=2))
        return 0
    sc = race.scenario
    print(
        f"pattern {sc.preset} | T={sc.horizon} d={sc.d} K={sc.n_arms}"
        f" sigma2={sc.sigma2} batch={sc.batch_size} seeds={race.n_seeds}"
        f" seed={sc.seed} | {time.perf_counter() - t0:.2f} s"
    )
    _print_leaderboard(summary, set(result.references()), race.n_seeds)
    print(f"compiled kernels loaded in {warm:.2f} s (not counted above)")
    _print_notes(summary, bool(result.references()), race.n_seeds)
    if args.trace:
        print(f"trace written to {args.trace}")
    return 0


def _race(args) -> api.Race:
    """The race the flags ask for: each policy with the default race's values, then the flags
    it takes."""
    scenario = _scenario(args)
    flags = dict(
        tau=args.tau,
        gamma=args.gamma,
        n_max=args.n_max,
        lam=args.lam,
        weighting=args.weighting,
        share=args.share,
        spawn=args.spawn,
    )
    flags = {k: v for k, v in flags.items() if v is not None}
    specs = []
    for name in (n.strip() for n in args.policies.split(",") if n.strip()):
        taken = set(api.hyperparameters(name)) if name in api.policy_names() else set()
        mine = {k: v for k, v in flags.items() if k in taken}
        specs.append(api.PolicySpec(name, {**api.default_params(name), **mine}))
    return api.Race(scenario, api.policy_specs(specs), args.seeds)


def _run_with_progress(race: api.Race, quiet: bool) -> api.RaceResult:
    """Run the race, with a progress line on a terminal's stderr (none when ``quiet``)."""
    show = not quiet and sys.stderr.isatty()
    last, result = 0.0, None
    for progress in api.iter_race(race):
        result = progress.result
        if show and time.perf_counter() - last > 0.2:
            last = time.perf_counter()
            print(
                f"\r{progress.fraction:6.1%} of {race.n_seeds} x {race.scenario.horizon} steps",
                end="",
                file=sys.stderr,
            )
    if show:
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
    if result is None:  # iter_race yields at least once: its last progress is the whole race
        raise RuntimeError("the race reported no progress")
    return result


def _add_ensemble_numbers(summary: dict, result: api.RaceResult, race: api.Race) -> None:
    """For each ensemble (a policy with weights): how many bandits, how decided."""
    pattern = race.scenario.pattern
    for label, s in summary.items():
        traces = [result.traces[label, k] for k in range(race.n_seeds)]
        if traces[0].batch_weights() is not None:
            ens = [api.ensemble_summary(t, pattern) for t in traces]
            s["bandits_created_max"] = max(e["bandits_created"] for e in ens)
            s["top_share_mean"] = float(sum(e["top_share"] for e in ens) / len(ens))


def _strict(s: dict) -> dict:
    """A summary row for strict JSON: NaN as null."""
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in s.items()}


def _print_leaderboard(summary: dict, refs: set, n_seeds: int) -> None:
    """The contestants by mean reward, then the references (the oracles), ranked apart."""
    width = max(16, *(len(label) for label in summary))
    print(
        f"{'policy':<{width}} {'mean reward':>11} {'std':>7} {'95% (t)':>8} "
        f"{'cum. regret':>12} {'gap closed':>10} {'seconds':>8} {'bandits':>8} "
        f"{'top>0.9':>8}"
    )
    ranked = sorted(summary.items(), key=lambda kv: -kv[1]["mean_reward"])
    ordered = [kv for kv in ranked if kv[0] not in refs] + [kv for kv in ranked if kv[0] in refs]
    first_ref = True
    for label, s in ordered:
        if label in refs and first_ref:
            first_ref = False
            print("-- references: oracle (knows the seasons), ranked apart " + "-" * 20)
        ens = (
            f" {s['bandits_created_max']:>8} {s['top_share_mean']:>8.1%}"
            if "bandits_created_max" in s
            else ""
        )
        ci = f"±{s['ci95']:.4f}" if n_seeds > 1 else "—"
        gap = "—" if math.isnan(s["gap_closed"]) else f"{s['gap_closed']:.1%}"
        print(
            f"{label:<{width}} {s['mean_reward']:>11.4f} {s['std_reward']:>7.4f} {ci:>8} "
            f"{s['cum_regret']:>12.1f} {gap:>10} {s['seconds']:>8.3f}{ens}"
        )


def _print_notes(summary: dict, has_refs: bool, n_seeds: int) -> None:
    """What the leaderboard's columns mean."""
    if n_seeds > 1:
        print(
            f"95% (t): Student's t interval over {n_seeds} seeds, ± "
            f"{t_quantile(n_seeds):.3f} x std / sqrt({n_seeds})"
        )
    else:
        print("one seed: no std and no 95% interval (reported as 0 in --json)")
    if has_refs:
        print(
            "gap closed: (mean reward - best baseline's) / (oracle-state's - best baseline's);"
            " baselines: neither All-Season nor an oracle"
        )
    if any("bandits_created_max" in s for s in summary.values()):
        print(
            "bandits: most base bandits created in one run; top>0.9: share of batches "
            "whose top weight exceeds 0.9 (mean over seeds)"
        )


def _check_finite(summary: dict) -> None:
    """A race whose rewards or regret are not finite numbers is an error naming the policy
    and the number, never a NaN table with exit code 0."""
    for label, s in summary.items():
        for key in ("mean_reward", "std_reward", "cum_regret"):
            value = s.get(key)
            if isinstance(value, float) and not math.isfinite(value):
                raise CliError(
                    f"{label}: its {key} is {value} (the rewards or the policy's arithmetic "
                    f"overflowed on this scenario); no result is printed"
                )


def cmd_patterns(args) -> int:
    """``patterns``: the presets, one line each; the exit code."""
    for name in api.PRESETS:
        p = api.preset(name)
        print(
            f"{name:<16} T={p.horizon:<6} states={p.n_states} segments={len(p.segments)}: "
            + " ".join(f"{s}x{n}" for s, n in p.segments[:10])
            + (" ..." if len(p.segments) > 10 else "")
        )
    print(
        'custom           --pattern FILE.json: {"segments": [[state, length], ...]} '
        "(or a bare list of segments), or FILE.csv: a header state,length, one row "
        "per segment"
    )
    return 0


def cmd_policies(args) -> int:
    """``policies``: the registered policies with their hyperparameters; the exit code."""
    for name in api.policy_names():
        info = api.describe_policy(name)
        note = " Deterministic: the seed changes nothing." if info.deterministic else ""
        print(f"{name:<20} {info.title}: {info.help}.{note}")
        for k, p in info.params.items():
            print(f"  {f'{k}={p.default!r}':<22} {p.describe()}. {p.help}")
    return 0
